// name: hub_of
// params: path STRING
// returns: the hub an artifact belongs to, with the edge's rank
MATCH (a:Artifact {path: $path})-[b:BelongsTo]->(h:Hub)
RETURN h.id AS hub, /*=rank(b)*/ AS rank, b.relation_weight AS weight;
