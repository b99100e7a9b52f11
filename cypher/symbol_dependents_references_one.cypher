// name: symbol_dependents_references_one
// params: id STRING
// (one id: an equality uses the primary-key index, where IN scans the table)
// returns: the functions whose signature names the named symbols (for impact)
MATCH (c:Symbol)-[e:References]->(s:Symbol) WHERE s.id = $id
RETURN s.id AS target, c.id AS id, c.path AS path, 'references' AS relation, e.confidence AS confidence;
