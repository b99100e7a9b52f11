// name: verify_artifacts
// params: (none)
// returns: what readers serve of every artifact, for `oracl verify` to compare with the export
MATCH (a:Artifact)
RETURN a.path AS path, a.id AS id, a.checksum AS checksum, /*=own(a)*/ AS priority, a.tags AS tags,
       a.symbols AS symbols, a.headings AS headings, a.parse_status AS parse_status,
       a.history AS history;
