// name: symbols_in_files
// params: paths LIST(STRING)
// returns: the symbols each named artifact defines (module symbols included)
MATCH (a:Artifact)-[:Defines]->(s:Symbol)
WHERE a.path IN $paths
RETURN s.id AS id, s.name AS name, s.qualified AS qualified, s.kind AS kind, s.path AS path,
       s.start_line AS `start`, s.end_line AS `end`
ORDER BY path, start, id;
