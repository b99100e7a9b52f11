// name: message_probe
// params: q STRING (the words of one message a report quotes), k INT64
//         (Snapshot binds $fts_every: the $k best live documents holding every word of $q)
// returns: path, score of the files whose text holds every word (conjunctive BM25)
UNWIND $fts_every AS hit
RETURN hit.path AS path, hit.score AS score ORDER BY score DESC, path;
