// name: symbol_dependents_calls
// params: ids LIST(STRING)
// returns: the callers of the named symbols (for impact; a UNION of the three dependents
// queries crashes the engine in 0.11.3, so each relation is its own query)
MATCH (c:Symbol)-[e:Calls]->(s:Symbol) WHERE s.id IN $ids
RETURN s.id AS target, c.id AS id, c.path AS path, 'calls' AS relation, e.confidence AS confidence;
