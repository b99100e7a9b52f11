// name: symbol_dependents_references
// params: ids LIST(STRING)
// returns: the functions whose signature names the named symbols (for impact)
MATCH (c:Symbol)-[e:References]->(s:Symbol) WHERE s.id IN $ids
RETURN s.id AS target, c.id AS id, c.path AS path, 'references' AS relation, e.confidence AS confidence;
