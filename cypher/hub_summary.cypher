// name: hub_summary
// params: (none)
// returns: hub, members, mean_priority, top_member (highest priority, ties by path)
MATCH (a:Artifact)-[:BelongsTo]->(h:Hub)
WITH h, count(a) AS members, avg(a.priority) AS mean_priority, max(a.priority) AS best
MATCH (t:Artifact)-[:BelongsTo]->(h) WHERE t.priority = best
WITH h, members, mean_priority, min(t.path) AS top_member
RETURN h.id AS hub, members, mean_priority, top_member ORDER BY members DESC, hub;
