// name: symbol_dependents_calls_one
// params: id STRING
// (one id: an equality uses the primary-key index, where IN scans the table)
// returns: the callers of the named symbols (for impact; a UNION of the three dependents
// queries crashes the engine in 0.11.3, so each relation is its own query)
MATCH (c:Symbol)-[e:Calls]->(s:Symbol) WHERE s.id = $id
RETURN s.id AS target, c.id AS id, c.path AS path, 'calls' AS relation, e.confidence AS confidence;
