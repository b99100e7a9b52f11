// name: symbol_dependents_inherits
// params: ids LIST(STRING)
// returns: the types that extend or implement the named symbols (for impact)
MATCH (c:Symbol)-[e:Inherits]->(s:Symbol) WHERE s.id IN $ids
RETURN s.id AS target, c.id AS id, c.path AS path, e.relation AS relation, e.confidence AS confidence;
