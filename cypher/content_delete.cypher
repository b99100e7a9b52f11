// Selective rebuild: the full-text rows of changed and removed files superseded. Never
// DELETE: Kùzu 0.11.3's full-text delete drops another document's postings (schema note).
MATCH (c:Content) WHERE c.path IN $paths AND c.live SET c.live = false;
