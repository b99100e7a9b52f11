// Selective rebuild: the base-class edges the previous build holds that start in the changed files.
MATCH (s:Symbol)-[e:Inherits]->(t:Symbol) WHERE s.path IN $paths
RETURN s.id AS source, t.id AS target, e.relation AS relation, e.confidence AS confidence,
  e.resolution AS resolution, e.candidates AS candidates, e.line AS line;
