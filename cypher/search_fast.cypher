// name: search_fast
// params: value STRING, limit INT64, plus the filter parameters; the compiler inserts one
//         match predicate at /*MATCH*/ (path equality, file name, prefix)
// returns: the artifacts a file:/filename:/path:/prefix: directive names
MATCH (a:Artifact)
WHERE /*MATCH*/ /*AND_FILTERS*/
WITH a
ORDER BY a.path
LIMIT $limit
MATCH (t:ArtifactText {path: a.path}) WHERE t.n = a.text_n
RETURN a.path AS path, t.id AS id, a.name AS name, t.symbols AS symbols, t.headings AS headings,
       t.tags AS tags, /*=own(a)*/ AS priority, a.domain AS domain, a.content_type AS content_type,
       a.lifecycle AS lifecycle, a.format AS format, t.checksum AS checksum, 1.0 AS bm25
ORDER BY path;
