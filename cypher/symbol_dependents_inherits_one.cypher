// name: symbol_dependents_inherits_one
// params: id STRING
// (one id: an equality uses the primary-key index, where IN scans the table)
// returns: the types that extend or implement the named symbols (for impact)
MATCH (c:Symbol)-[e:Inherits]->(s:Symbol) WHERE s.id = $id
RETURN s.id AS target, c.id AS id, c.path AS path, e.relation AS relation, e.confidence AS confidence;
