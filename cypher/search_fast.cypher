// name: search_fast
// params: value STRING, limit INT64, plus the filter parameters; the compiler inserts one
//         match predicate at /*MATCH*/ (path equality, file name, prefix)
// returns: the artifacts a file:/filename:/path:/prefix: directive names
// (its ArtifactText strings, id, symbols, headings, tags and checksum, are added by the
// snapshot from `text_n`, by key: cypher/artifact_text.cypher)
MATCH (a:Artifact)
WHERE /*MATCH*/ /*AND_FILTERS*/
WITH a
ORDER BY a.path
LIMIT $limit
RETURN a.path AS path, a.text_n AS text_n, a.name AS name,
       /*=own(a)*/ AS priority, a.domain AS domain, a.content_type AS content_type,
       a.lifecycle AS lifecycle, a.format AS format, 1.0 AS bm25
ORDER BY path;
