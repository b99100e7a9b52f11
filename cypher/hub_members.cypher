// name: hub_members
// params: hub STRING (hub:domain:<d>), k INT64 (members returned, best first)
// returns: the hub's members ranked by the association rank of their belongs_to edge, the
//          members with nothing to read (empty, binary, unreadable) after all the others: a
//          lone edge gives a file a high association, and such a file never leads a hub
MATCH (a:Artifact)-[b:BelongsTo]->(h:Hub {id: $hub})
WITH a, b, CASE WHEN a.size_bytes = 0 OR a.parse_status IN ['binary', 'non_utf8', 'unreadable', 'vanished', 'secret_file']
                THEN 1 ELSE 0 END AS mute
RETURN a.path AS neighbour, 'belongs_to' AS relation, /*=rank(b)*/ AS rank,
       b.relation_weight AS weight, true AS outgoing, '' AS source_fragment, '' AS target_fragment,
       a.domain AS domain, /*=priority(a)*/ AS priority
ORDER BY mute, rank DESC, priority DESC, neighbour
LIMIT $k;
