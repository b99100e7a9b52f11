// name: hub_summary
// params: (none)
// returns: hub, members, mean_priority, top_member (the first of `oracl hub DOMAIN`: among the
//          members with something to read when the hub has any – not empty, binary or
//          unreadable – the highest association rank of the hub edge, then the highest
//          priority, then the path)
MATCH (a:Artifact)-[b:BelongsTo]->(h:Hub)
WITH h, count(a) AS members, avg(/*=priority(a)*/) AS mean_priority,
     min(CASE WHEN a.size_bytes = 0 OR a.parse_status IN ['binary', 'non_utf8', 'unreadable', 'vanished', 'secret_file']
              THEN 1 ELSE 0 END) AS mute
MATCH (t:Artifact)-[c:BelongsTo]->(h)
WHERE (CASE WHEN t.size_bytes = 0 OR t.parse_status IN ['binary', 'non_utf8', 'unreadable', 'vanished', 'secret_file']
            THEN 1 ELSE 0 END) = mute
WITH h, members, mean_priority, mute, max(/*=rank(c)*/) AS best
MATCH (u:Artifact)-[d:BelongsTo]->(h)
WHERE /*=rank(d)*/ = best
  AND (CASE WHEN u.size_bytes = 0 OR u.parse_status IN ['binary', 'non_utf8', 'unreadable', 'vanished', 'secret_file']
            THEN 1 ELSE 0 END) = mute
WITH h, members, mean_priority, mute, best, max(/*=priority(u)*/) AS best_priority
MATCH (v:Artifact)-[e:BelongsTo]->(h)
WHERE /*=rank(e)*/ = best AND /*=priority(v)*/ = best_priority
  AND (CASE WHEN v.size_bytes = 0 OR v.parse_status IN ['binary', 'non_utf8', 'unreadable', 'vanished', 'secret_file']
            THEN 1 ELSE 0 END) = mute
WITH h, members, mean_priority, min(v.path) AS top_member
RETURN h.id AS hub, members, mean_priority, top_member ORDER BY members DESC, hub;
