// name: fts_probe
// params: q STRING, k INT64, fts_top INT64 (k and the superseded rows: Snapshot binds it)
// returns: path, score (BM25 over the Content text: path, name, symbols, headings, body terms)
CALL QUERY_FTS_INDEX('Content', 'content_fts', $q, top := $fts_top) WITH node, score WHERE node.live
RETURN node.path AS path, score ORDER BY score DESC, path LIMIT $k;
