// name: hub_summary
// params: (none)
// returns: hub, members, mean_priority, top_member (the first of `oracl hub DOMAIN`: the
//          highest association rank of the hub edge, then the highest priority, then the path)
MATCH (a:Artifact)-[b:BelongsTo]->(h:Hub)
WITH h, count(a) AS members, avg(a.priority) AS mean_priority, max(b.association_rank) AS best
MATCH (t:Artifact)-[c:BelongsTo]->(h) WHERE c.association_rank = best
WITH h, members, mean_priority, best, max(t.priority) AS best_priority
MATCH (u:Artifact)-[d:BelongsTo]->(h) WHERE d.association_rank = best AND u.priority = best_priority
WITH h, members, mean_priority, min(u.path) AS top_member
RETURN h.id AS hub, members, mean_priority, top_member ORDER BY members DESC, hub;
