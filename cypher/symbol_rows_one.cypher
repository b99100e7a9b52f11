// name: symbol_rows_one
// params: id STRING
// (one id: an equality uses the primary-key index, where IN scans the table)
// returns: every stored field of the named symbols
MATCH (s:Symbol)
WHERE s.id = $id
RETURN s.id AS id, s.name AS name, s.qualified AS qualified, s.kind AS kind, s.language AS language,
       s.path AS path, s.start_line AS `start`, s.end_line AS `end`, s.signature AS signature, s.doc AS doc,
       s.exported AS exported;
