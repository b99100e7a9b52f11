// Selective rebuild: one containment edge of a changed file.
MATCH (a:Symbol {id: $source}), (b:Symbol {id: $target}) CREATE (a)-[:Contains]->(b);
