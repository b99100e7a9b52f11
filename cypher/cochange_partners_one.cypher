// name: cochange_partners_one
// params: path STRING (one of the best candidates of a search)
// (one path: an equality uses the primary-key index, where IN scans the table)
// returns: source, target, k (κ) of every `co_change` edge out of it (design §5c)
MATCH (s:Artifact)-[l:Link]->(t:Artifact)
WHERE s.path = $path AND l.relation = 'co_change'
RETURN s.path AS source, t.path AS target, l.confidence AS k
ORDER BY source, target;
