// name: search_history
// params: q STRING (bag of words), k INT64 (candidates)
// returns: path and BM25 score of the files whose past commit subjects match (design §5c)
CALL QUERY_FTS_INDEX('History', 'history_fts', $q, top := $k)
RETURN node.path AS path, score
ORDER BY score DESC, path;
