// name: verify_artifacts
// params: (none)
// returns: what readers serve of every artifact, for `oracl verify` to compare with the export
MATCH (a:Artifact)
MATCH (t:ArtifactText {path: a.path}) WHERE t.n = a.text_n
RETURN a.path AS path, t.id AS id, t.checksum AS checksum, /*=own(a)*/ AS priority, t.tags AS tags,
       t.symbols AS symbols, t.headings AS headings, a.parse_status AS parse_status,
       t.history AS history;
