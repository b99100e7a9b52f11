// name: fts_probe
// params: q STRING, k INT64
// returns: path, score (BM25 over the Content text: path, name, symbols, headings, body terms)
CALL QUERY_FTS_INDEX('Content', 'content_fts', $q, top := $k) RETURN node.path AS path, score ORDER BY score DESC, path;
