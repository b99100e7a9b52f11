// name: links_out
// params: paths LIST(STRING)
// returns: the outgoing Link edges of the given artifacts
MATCH (a:Artifact)-[l:Link]->(b:Artifact)
WHERE a.path IN $paths
RETURN a.path AS source, b.path AS target, l.relation AS relation, l.relation_weight AS weight,
       /*=rank(l)*/ AS rank, l.confidence AS confidence, l.source_fragment AS source_fragment,
       l.target_fragment AS target_fragment
ORDER BY source, rank DESC, target;
