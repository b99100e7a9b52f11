// Selective rebuild: a signature-type edge that is still there with other properties.
MATCH (a:Symbol {id: $source})-[e:References]->(b:Symbol {id: $target})
SET e.confidence = $confidence, e.resolution = $resolution, e.candidates = $candidates, e.line = $line;
