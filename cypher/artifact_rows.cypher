// name: artifact_rows
// params: paths LIST(STRING)
// returns: the scoring row of each named artifact (as search_fts returns it, bm25 0)
MATCH (a:Artifact)
WHERE a.path IN $paths
RETURN a.path AS path, a.id AS id, a.name AS name, a.symbols AS symbols, a.headings AS headings,
       a.tags AS tags, /*=own(a)*/ AS priority, a.domain AS domain, a.content_type AS content_type,
       a.lifecycle AS lifecycle, a.format AS format, a.checksum AS checksum, 0.0 AS bm25;
