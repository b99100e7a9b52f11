// name: symbols_in_files_one
// params: path STRING
// (one path: an equality uses the primary-key index, where IN scans the table)
// returns: the symbols each named artifact defines (module symbols included)
MATCH (a:Artifact)-[:Defines]->(s:Symbol)
WHERE a.path = $path
RETURN s.id AS id, s.name AS name, s.qualified AS qualified, s.kind AS kind, s.path AS path,
       s.start_line AS `start`, s.end_line AS `end`
ORDER BY path, start, id;
