// name: symbol_members
// params: ids LIST(STRING)
// returns: what the named symbols contain (a type's members)
MATCH (a:Symbol)-[:Contains]->(m:Symbol) WHERE a.id IN $ids
RETURN a.id AS parent, m.id AS id, m.name AS name, m.kind AS kind, m.start_line AS `start`, m.end_line AS `end`
ORDER BY parent, start;
