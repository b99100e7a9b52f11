// name: files_dependents_one
// params: path STRING
// (one path: an equality uses the primary-key index, where IN scans the table)
// returns: the files that import or test the named files, with the edge's weight
MATCH (a:Artifact)-[l:Link]->(b:Artifact)
WHERE b.path = $path AND l.relation IN ['imports', 'tests']
RETURN b.path AS target, a.path AS source, l.relation AS relation, l.relation_weight AS weight;
