// Selective rebuild: symbols_patch_old_contains, from each changed file's artifact along Defines.
MATCH (a:Artifact)-[d:Defines]->(s:Symbol)-[e:Contains]->(t:Symbol) WHERE a.path IN $paths
HINT (((a JOIN d) JOIN s) JOIN e) JOIN t
RETURN s.id AS source, t.id AS target;
