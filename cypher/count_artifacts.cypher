// name: count_artifacts
// params: (none)
// returns: n
MATCH (a:Artifact) RETURN count(a) AS n;
