// name: search_history
// params: q STRING (bag of words), k INT64 (candidates), history_top INT64 (bound by Snapshot)
// returns: path and BM25 score of the files whose past commit subjects match (design §5c)
CALL QUERY_FTS_INDEX('History', 'history_fts', $q, top := $history_top)
WITH node, score WHERE node.live
RETURN node.path AS path, score
ORDER BY score DESC, path LIMIT $k;
