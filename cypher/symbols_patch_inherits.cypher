// Selective rebuild: one base-class edge of a changed file.
MATCH (a:Symbol {id: $source}), (b:Symbol {id: $target})
CREATE (a)-[:Inherits {relation: $relation, confidence: $confidence, resolution: $resolution,
  candidates: $candidates, line: $line}]->(b);
