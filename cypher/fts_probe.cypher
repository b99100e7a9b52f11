// name: fts_probe
// params: q STRING, k INT64 (Snapshot binds $fts_hits: the $k best live documents for $q)
// returns: path, score (BM25 over the full-text document: path, name, symbols, headings, body terms)
UNWIND $fts_hits AS hit
RETURN hit.path AS path, hit.score AS score ORDER BY score DESC, path;
