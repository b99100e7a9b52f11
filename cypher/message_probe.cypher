// name: message_probe
// params: q STRING (the words of one message a report quotes), k INT64
// returns: path, score of the files whose text holds every word (conjunctive BM25)
CALL QUERY_FTS_INDEX('Content', 'content_fts', $q, conjunctive := true, top := $k)
RETURN node.path AS path, score ORDER BY score DESC, path;
