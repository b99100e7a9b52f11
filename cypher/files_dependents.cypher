// name: files_dependents
// params: paths LIST(STRING)
// returns: the files that import or test the named files, with the edge's weight
MATCH (a:Artifact)-[l:Link]->(b:Artifact)
WHERE b.path IN $paths AND l.relation IN ['imports', 'tests']
RETURN b.path AS target, a.path AS source, l.relation AS relation, l.relation_weight AS weight;
