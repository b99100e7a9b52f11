// Selective rebuild: a symbol of a changed, added or removed file that is no longer there,
// removed with its edges (the files whose edges ended in it are patched too).
MATCH (s:Symbol {id: $id}) DETACH DELETE s;
