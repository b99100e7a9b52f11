// Selective rebuild: symbols_patch_old_symbols, found from each changed file's artifact along its
// Defines edges (the hint makes the engine follow the adjacency lists: a Symbol.path filter
// scanned all 219k symbols, 11-14 ms a query at 20k files, against 2-5 ms).
MATCH (a:Artifact)-[d:Defines]->(s:Symbol) WHERE a.path IN $paths
HINT (a JOIN d) JOIN s
RETURN s.id AS id, s.start_line AS start_line, s.end_line AS end_line, s.signature AS signature,
  s.doc AS doc, s.exported AS exported, s.name AS name, s.qualified AS qualified, s.kind AS kind;
