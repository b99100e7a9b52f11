// name: cochange_partners
// params: paths LIST(STRING) (the best candidates of a search)
// returns: source, target, k (κ) of every `co_change` edge out of them (design §5c)
MATCH (s:Artifact)-[l:Link]->(t:Artifact)
WHERE s.path IN $paths AND l.relation = 'co_change'
RETURN s.path AS source, t.path AS target, l.confidence AS k
ORDER BY source, target;
