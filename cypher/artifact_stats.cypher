// name: artifact_stats
// params: (none)
// returns: path, size_bytes, modified_at, checksum of every artifact (for `oracl status`)
MATCH (a:Artifact) RETURN a.path AS path, a.size_bytes AS size, a.modified_at AS mtime, a.checksum AS checksum;
