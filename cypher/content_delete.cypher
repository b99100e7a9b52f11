// Selective rebuild: the full-text rows of changed and removed files (the FTS index follows DELETE).
MATCH (c:Content) WHERE c.path IN $paths DELETE c;
