// name: artifact_rows_one
// params: path STRING
// (one path: an equality uses the primary-key index, where IN scans the table)
// returns: the scoring row of the named artifact (as search_fts returns it, bm25 0)
MATCH (a:Artifact)
WHERE a.path = $path
RETURN a.path AS path, a.id AS id, a.name AS name, a.symbols AS symbols, a.headings AS headings,
       a.tags AS tags, /*=own(a)*/ AS priority, a.domain AS domain, a.content_type AS content_type,
       a.lifecycle AS lifecycle, a.format AS format, a.checksum AS checksum, 0.0 AS bm25;
