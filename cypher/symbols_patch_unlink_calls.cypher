// Selective rebuild: the calls edges between one pair of symbols, which the changed file no longer has as they were.
MATCH (a:Symbol {id: $source})-[e:Calls]->(b:Symbol {id: $target}) DELETE e;
