// name: hub_members
// params: hub STRING (hub:domain:<d>), k INT64 (members returned, best first)
// returns: the hub's members ranked by the association rank of their belongs_to edge
MATCH (a:Artifact)-[b:BelongsTo]->(h:Hub {id: $hub})
RETURN a.path AS neighbour, 'belongs_to' AS relation, b.association_rank AS rank,
       b.relation_weight AS weight, true AS outgoing, '' AS source_fragment, '' AS target_fragment,
       a.domain AS domain, a.priority AS priority
ORDER BY rank DESC, a.priority DESC, neighbour
LIMIT $k;
