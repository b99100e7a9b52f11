// Selective rebuild: the call edges the previous build holds that start in the changed files.
MATCH (s:Symbol)-[e:Calls]->(t:Symbol) WHERE s.path IN $paths
RETURN s.id AS source, t.id AS target, e.confidence AS confidence, e.resolution AS resolution,
  e.candidates AS candidates, e.lines AS lines;
