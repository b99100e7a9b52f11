// Selective rebuild: the containment edges the previous build holds that start in the changed files.
MATCH (s:Symbol)-[e:Contains]->(t:Symbol) WHERE s.path IN $paths RETURN s.id AS source, t.id AS target;
