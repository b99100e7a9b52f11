// name: sensitive_paths
// params: (none)
// returns: files that hold key material (tag "sensitive" or status secret_file), withheld
// from agents unless the vault owner sets share_sensitive = true
MATCH (a:Artifact)
MATCH (t:ArtifactText {key: a.path + '|' + CAST(a.text_n AS STRING)})
WHERE (a.parse_status = 'secret_file' OR t.tags CONTAINS '"sensitive":"key_material"')
RETURN a.path AS path;
