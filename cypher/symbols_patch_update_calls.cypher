// Selective rebuild: a call edge that is still there with other properties (its lines moved).
MATCH (a:Symbol {id: $source})-[e:Calls]->(b:Symbol {id: $target})
SET e.confidence = $confidence, e.resolution = $resolution, e.candidates = $candidates, e.lines = $lines;
