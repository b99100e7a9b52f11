// name: frontier_in
// params: paths LIST(STRING)
// returns: the incoming Link edges of the given artifacts, with the source's domain and
//          priority (a neighbourhood graph's second level)
MATCH (a:Artifact)<-[l:Link]-(b:Artifact)
WHERE a.path IN $paths
RETURN a.path AS at, b.path AS neighbour, l.relation AS relation, l.relation_weight AS weight,
       /*=rank(l)*/ AS rank, false AS outgoing, l.target_fragment AS fragment,
       b.domain AS domain, /*=own(b)*/ AS priority;
