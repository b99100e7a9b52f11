// Selective rebuild: one signature-type edge of a changed file.
MATCH (a:Symbol {id: $source}), (b:Symbol {id: $target})
CREATE (a)-[:References {confidence: $confidence, resolution: $resolution, candidates: $candidates,
  line: $line}]->(b);
