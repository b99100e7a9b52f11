// Selective rebuild: a changed file's symbol whose doc changed. Only when it changed: any SET
// of a string column (even to the value it holds) grows the database file by a rewritten
// column chunk in Kùzu 0.11.3, and the space is not reused.
MATCH (s:Symbol {id: $id}) SET s.doc = $doc;
