// name: sensitive_paths
// params: (none)
// returns: files that hold key material (tag "sensitive" or status secret_file), withheld
// from agents unless the vault owner sets share_sensitive = true
MATCH (a:Artifact)
MATCH (t:ArtifactText {path: a.path}) WHERE t.n = a.text_n AND (a.parse_status = 'secret_file' OR t.tags CONTAINS '"sensitive":"key_material"')
RETURN a.path AS path;
