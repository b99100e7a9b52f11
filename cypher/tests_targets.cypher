// name: tests_targets
// params: paths LIST(STRING) (test artifacts among the candidates)
// returns: test, target, w (relation_weight) of every `tests` edge out of them
MATCH (t:Artifact)-[l:Link]->(x:Artifact)
WHERE t.path IN $paths AND l.relation = 'tests'
RETURN t.path AS test, x.path AS target, l.relation_weight AS w
ORDER BY test, target;
