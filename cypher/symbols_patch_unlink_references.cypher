// Selective rebuild: the references edges between one pair of symbols, which the changed file no longer has as they were.
MATCH (a:Symbol {id: $source})-[e:References]->(b:Symbol {id: $target}) DELETE e;
