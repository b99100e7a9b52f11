// name: artifact_stats
// params: (none)
// returns: path, size_bytes, modified_at, checksum of every artifact (for `oracl status`)
MATCH (a:Artifact)
MATCH (t:ArtifactText {path: a.path}) WHERE t.n = a.text_n
RETURN a.path AS path, a.size_bytes AS size, a.modified_at AS mtime, t.checksum AS checksum;
