// name: artifact_rows_one
// params: path STRING
// (one path: an equality uses the primary-key index, where IN scans the table)
// returns: the scoring row of the named artifact (as search_fts returns it, bm25 0)
MATCH (a:Artifact)
WHERE a.path = $path
MATCH (t:ArtifactText {path: a.path}) WHERE t.n = a.text_n
RETURN a.path AS path, t.id AS id, a.name AS name, t.symbols AS symbols, t.headings AS headings,
       t.tags AS tags, /*=own(a)*/ AS priority, a.domain AS domain, a.content_type AS content_type,
       a.lifecycle AS lifecycle, a.format AS format, t.checksum AS checksum, 0.0 AS bm25;
