// name: symbol_rows
// params: ids LIST(STRING)
// returns: every stored field of the named symbols
MATCH (s:Symbol)
WHERE s.id IN $ids
RETURN s.id AS id, s.name AS name, s.qualified AS qualified, s.kind AS kind, s.language AS language,
       s.path AS path, s.start_line AS `start`, s.end_line AS `end`, s.signature AS signature, s.doc AS doc,
       s.exported AS exported;
