// Selective rebuild: one row of what a patch changed of the name lookup (a key, a symbol it
// finds or no longer finds, the patch's number), created, never set or deleted.
CREATE (:SymbolNameDelta {pk: $pk, key: $key, id: $id, seq: $seq, alive: $alive});
