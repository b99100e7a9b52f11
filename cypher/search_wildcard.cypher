// name: search_wildcard
// params: limit INT64, plus the filter parameters of the inserted predicates
// returns: the filtered artifacts by priority (a query whose words were all filters)
// (its ArtifactText strings, id, symbols, headings, tags and checksum, are added by the
// snapshot from `text_n`, by key: cypher/artifact_text.cypher)
MATCH (a:Artifact)
WHERE true /*AND_FILTERS*/
WITH a, /*=priority(a)*/ AS priority
ORDER BY priority DESC, a.path
LIMIT $limit
RETURN a.path AS path, a.text_n AS text_n, a.name AS name,
       priority, a.domain AS domain, a.content_type AS content_type,
       a.lifecycle AS lifecycle, a.format AS format, 0.0 AS bm25
ORDER BY priority DESC, path;
