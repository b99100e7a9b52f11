// name: symbol_callees_one
// params: id STRING, min_confidence DOUBLE
// (one id: an equality uses the primary-key index, where IN scans the table)
// returns: each call edge out of the named symbols: the caller (source), the callee and its fields
MATCH (c:Symbol)-[e:Calls]->(s:Symbol)
WHERE c.id = $id AND e.confidence >= $min_confidence
RETURN c.id AS source, s.id AS id, s.name AS name, s.qualified AS qualified, s.kind AS kind, s.path AS path,
       s.start_line AS `start`, s.end_line AS `end`, e.confidence AS confidence, e.resolution AS resolution,
       e.candidates AS candidates, e.lines AS lines
ORDER BY source, lines[1], confidence DESC, path;
