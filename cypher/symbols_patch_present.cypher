// Selective rebuild: which of the changed files the database holds an artifact of (their
// old symbols are then found through the artifact's Defines edges, not by a scan of Symbol).
MATCH (a:Artifact) WHERE a.path IN $paths RETURN a.path AS path;
