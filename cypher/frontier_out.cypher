// name: frontier_out
// params: paths LIST(STRING)
// returns: the outgoing Link edges of the given artifacts, with the target's domain and
//          priority (a neighbourhood graph's second level)
MATCH (a:Artifact)-[l:Link]->(b:Artifact)
WHERE a.path IN $paths
RETURN a.path AS at, b.path AS neighbour, l.relation AS relation, l.relation_weight AS weight,
       /*=rank(l)*/ AS rank, true AS outgoing, l.source_fragment AS fragment,
       b.domain AS domain, /*=own(b)*/ AS priority;
