// Selective rebuild: a base-class edge that is still there with other properties.
MATCH (a:Symbol {id: $source})-[e:Inherits]->(b:Symbol {id: $target})
SET e.relation = $relation, e.confidence = $confidence, e.resolution = $resolution,
  e.candidates = $candidates, e.line = $line;
