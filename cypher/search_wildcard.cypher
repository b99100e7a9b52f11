// name: search_wildcard
// params: limit INT64, plus the filter parameters of the inserted predicates
// returns: the filtered artifacts by priority (a query whose words were all filters)
MATCH (a:Artifact)
WHERE true /*AND_FILTERS*/
WITH a, /*=priority(a)*/ AS priority
ORDER BY priority DESC, a.path
LIMIT $limit
MATCH (t:ArtifactText {path: a.path}) WHERE t.n = a.text_n
RETURN a.path AS path, t.id AS id, a.name AS name, t.symbols AS symbols, t.headings AS headings,
       t.tags AS tags, priority, a.domain AS domain, a.content_type AS content_type,
       a.lifecycle AS lifecycle, a.format AS format, t.checksum AS checksum, 0.0 AS bm25
ORDER BY priority DESC, path;
