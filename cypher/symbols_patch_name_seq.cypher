// Selective rebuild: the largest build number the SymbolNameDelta rows carry (0: none yet).
MATCH (d:SymbolNameDelta) RETURN coalesce(max(d.seq), 0) AS seq;
