// name: message_probe
// params: q STRING (the words of one message a report quotes), k INT64, fts_top INT64 (bound by Snapshot)
// returns: path, score of the files whose text holds every word (conjunctive BM25)
CALL QUERY_FTS_INDEX('Content', 'content_fts', $q, conjunctive := true, top := $fts_top)
WITH node, score WHERE node.live
RETURN node.path AS path, score ORDER BY score DESC, path LIMIT $k;
