// name: verify_belongs
// params: (none)
// returns: every hub membership with its κ, w and rank, for `oracl verify`
MATCH (a:Artifact)-[b:BelongsTo]->(h:Hub)
RETURN a.path AS source, h.id AS hub, b.confidence AS confidence, b.relation_weight AS weight,
       /*=rank(b)*/ AS rank;
