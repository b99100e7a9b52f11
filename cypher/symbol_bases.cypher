// name: symbol_bases
// params: ids LIST(STRING)
// returns: the types the named symbols extend or implement, and the types that extend them
MATCH (a:Symbol)-[e:Inherits]->(b:Symbol) WHERE a.id IN $ids OR b.id IN $ids
RETURN a.id AS source, b.id AS target, b.qualified AS target_qualified, a.qualified AS source_qualified,
       e.relation AS relation, e.confidence AS confidence;
