// name: search_fts
// params: q STRING (bag of words), k INT64 (candidates), fts_top INT64 (Snapshot binds it),
//         plus the filter parameters of the
//         predicates the compiler inserts at /*AND_FILTERS*/ (see oracl/query/compile.py);
//         the path exclusion goes at /*NODE_FILTERS*/, on the FTS rows before the join
//         (after the join Kùzu applied it to every artifact: 345 ms instead of 32 at 50k)
// returns: one row per candidate artifact with its BM25 score over the Content text
// $fts_top is $k plus the rows an update superseded (the snapshot binds it): the live rows
// are then the k best, as a full build's index gives them
CALL QUERY_FTS_INDEX('Content', 'content_fts', $q, top := $fts_top)
WITH node, score WHERE node.live
WITH node, score ORDER BY score DESC, node.path LIMIT $k
WHERE true /*NODE_FILTERS*/
MATCH (a:Artifact {path: node.path})
WHERE true /*AND_FILTERS*/
MATCH (t:ArtifactText {path: a.path}) WHERE t.n = a.text_n
RETURN a.path AS path, t.id AS id, a.name AS name, t.symbols AS symbols, t.headings AS headings,
       t.tags AS tags, /*=own(a)*/ AS priority, a.domain AS domain, a.content_type AS content_type,
       a.lifecycle AS lifecycle, a.format AS format, t.checksum AS checksum, score AS bm25;
