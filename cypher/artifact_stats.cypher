// name: artifact_stats
// params: (none)
// returns: path, size_bytes, modified_at, checksum of every artifact (for `oracl status`)
MATCH (a:Artifact)
MATCH (t:ArtifactText {key: a.path + '|' + CAST(a.text_n AS STRING)})
RETURN a.path AS path, a.size_bytes AS size, a.modified_at AS mtime, t.checksum AS checksum;
