// name: verify_links
// params: (none)
// returns: every Link with its endpoints' paths, κ, w, rank and fragments, for `oracl verify`
MATCH (a:Artifact)-[l:Link]->(b:Artifact)
RETURN a.path AS source, b.path AS target, l.relation AS relation, l.confidence AS confidence,
       l.relation_weight AS weight, /*=rank(l)*/ AS rank, l.source_fragment AS source_fragment,
       l.target_fragment AS target_fragment;
