// name: search_fast
// params: value STRING, limit INT64, plus the filter parameters; the compiler inserts one
//         match predicate at /*MATCH*/ (path equality, file name, prefix)
// returns: the artifacts a file:/filename:/path:/prefix: directive names
MATCH (a:Artifact)
WHERE /*MATCH*/ /*AND_FILTERS*/
RETURN a.path AS path, a.id AS id, a.name AS name, a.symbols AS symbols, a.headings AS headings,
       a.tags AS tags, /*=own(a)*/ AS priority, a.domain AS domain, a.content_type AS content_type,
       a.lifecycle AS lifecycle, a.format AS format, a.checksum AS checksum, 1.0 AS bm25
ORDER BY a.path
LIMIT $limit;
