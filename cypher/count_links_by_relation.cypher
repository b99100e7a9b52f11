// name: count_links_by_relation
// params: (none)
// returns: relation, n
MATCH ()-[l:Link]->() RETURN l.relation AS relation, count(*) AS n ORDER BY relation;
