// Selective rebuild: the contains edges between one pair of symbols, which the changed file no longer has as they were.
MATCH (a:Symbol {id: $source})-[e:Contains]->(b:Symbol {id: $target}) DELETE e;
