// name: symbol_callers_one
// params: id STRING, min_confidence DOUBLE
// (one id: an equality uses the primary-key index, where IN scans the table)
// returns: each call edge into the named symbols: the callee (target), the caller and its fields
MATCH (c:Symbol)-[e:Calls]->(s:Symbol)
WHERE s.id = $id AND e.confidence >= $min_confidence
RETURN s.id AS target, c.id AS id, c.name AS name, c.qualified AS qualified, c.kind AS kind, c.path AS path,
       c.start_line AS `start`, c.end_line AS `end`, e.confidence AS confidence, e.resolution AS resolution,
       e.candidates AS candidates, e.lines AS lines
ORDER BY target, confidence DESC, path, start;
