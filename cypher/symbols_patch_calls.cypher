// Selective rebuild: one call edge of a changed file (a prepared CREATE per edge, in one transaction).
MATCH (a:Symbol {id: $source}), (b:Symbol {id: $target})
CREATE (a)-[:Calls {confidence: $confidence, resolution: $resolution, candidates: $candidates, lines: $lines}]->(b);
