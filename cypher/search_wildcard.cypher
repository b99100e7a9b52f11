// name: search_wildcard
// params: limit INT64, plus the filter parameters of the inserted predicates
// returns: the filtered artifacts by priority (a query whose words were all filters)
MATCH (a:Artifact)
WHERE true /*AND_FILTERS*/
RETURN a.path AS path, a.id AS id, a.name AS name, a.symbols AS symbols, a.headings AS headings,
       a.tags AS tags, /*=priority(a)*/ AS priority, a.domain AS domain, a.content_type AS content_type,
       a.lifecycle AS lifecycle, a.format AS format, a.checksum AS checksum, 0.0 AS bm25
ORDER BY priority DESC, a.path
LIMIT $limit;
