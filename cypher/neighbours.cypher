// name: neighbours
// params: path STRING, guard INT64 (edges considered per direction, +1 to detect the cut),
//         skip_out, skip_in LIST(STRING) (relations left out: co_change unless asked for; the same
//         list twice: one LIST parameter used in both branches of a UNION segfaults Kùzu 0.11.3)
// returns: the artifact's edges in both directions with the neighbour (its domain, priority
//          and link density: its edge count over the build's nodes - 1)
MATCH (a:Artifact {path: $path})-[l:Link]->(b:Artifact)
WHERE NOT l.relation IN $skip_out
WITH b, l, /*=rank(l)*/ AS rank ORDER BY rank DESC, b.path LIMIT $guard
RETURN b.path AS neighbour, l.relation AS relation, rank,
       l.relation_weight AS weight, true AS outgoing, l.source_fragment AS source_fragment,
       l.target_fragment AS target_fragment, b.domain AS domain, /*=own(b)*/ AS priority, /*=density(b)*/ AS density
UNION ALL
MATCH (a:Artifact {path: $path})<-[l:Link]-(b:Artifact)
WHERE NOT l.relation IN $skip_in
WITH b, l, /*=rank(l)*/ AS rank ORDER BY rank DESC, b.path LIMIT $guard
RETURN b.path AS neighbour, l.relation AS relation, rank,
       l.relation_weight AS weight, false AS outgoing, l.source_fragment AS source_fragment,
       l.target_fragment AS target_fragment, b.domain AS domain, /*=own(b)*/ AS priority, /*=density(b)*/ AS density;
