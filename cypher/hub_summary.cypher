// name: hub_summary
// params: (none)
// returns: hub, members, and the members that may be its top member (the first
//          of `oracl hub DOMAIN`): among the members with something to read when the hub has
//          any – not empty, binary or unreadable – those with the highest association rank of
//          the hub edge, with their stored terms; the reader picks the highest priority, then
//          the path (derive.top_member: one priority expression less to prepare, 0.1 s cold)
MATCH (a:Artifact)-[b:BelongsTo]->(h:Hub)
WITH h, count(a) AS members,
     min(CASE WHEN a.size_bytes = 0 OR a.parse_status IN ['binary', 'non_utf8', 'unreadable', 'vanished', 'secret_file']
              THEN 1 ELSE 0 END) AS mute
MATCH (t:Artifact)-[c:BelongsTo]->(h)
WHERE (CASE WHEN t.size_bytes = 0 OR t.parse_status IN ['binary', 'non_utf8', 'unreadable', 'vanished', 'secret_file']
            THEN 1 ELSE 0 END) = mute
WITH h, members, mute, max(/*=rank(c)*/) AS best
MATCH (u:Artifact)-[d:BelongsTo]->(h)
WHERE /*=rank(d)*/ = best
  AND (CASE WHEN u.size_bytes = 0 OR u.parse_status IN ['binary', 'non_utf8', 'unreadable', 'vanished', 'secret_file']
            THEN 1 ELSE 0 END) = mute
RETURN h.id AS hub, members, collect(u.path) AS tops, collect(/*=own(u)*/) AS top_terms
ORDER BY members DESC, hub;
