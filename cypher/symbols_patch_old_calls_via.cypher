// Selective rebuild: symbols_patch_old_calls, from each changed file's artifact along Defines.
MATCH (a:Artifact)-[d:Defines]->(s:Symbol)-[e:Calls]->(t:Symbol) WHERE a.path IN $paths
HINT (((a JOIN d) JOIN s) JOIN e) JOIN t
RETURN s.id AS source, t.id AS target, e.confidence AS confidence, e.resolution AS resolution,
  e.candidates AS candidates, e.lines AS lines;
