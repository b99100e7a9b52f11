// name: artifact_paths
// params: (none)
// returns: every artifact's path (to resolve the file paths a stack trace names)
MATCH (a:Artifact) RETURN a.path AS path ORDER BY path;
