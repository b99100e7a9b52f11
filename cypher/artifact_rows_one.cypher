// name: artifact_rows_one
// params: path STRING
// (one path: an equality uses the primary-key index, where IN scans the table)
// returns: the scoring row of the named artifact (as search_fts returns it, bm25 0)
// (its ArtifactText strings, id, symbols, headings, tags and checksum, are added by the
// snapshot from `text_n`, by key: cypher/artifact_text.cypher)
MATCH (a:Artifact)
WHERE a.path = $path
RETURN a.path AS path, a.text_n AS text_n, a.name AS name,
       /*=own(a)*/ AS priority, a.domain AS domain, a.content_type AS content_type,
       a.lifecycle AS lifecycle, a.format AS format, 0.0 AS bm25;
