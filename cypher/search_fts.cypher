// name: search_fts
// params: q STRING (bag of words), k INT64 (candidates), plus the filter parameters of the
//         predicates the compiler inserts at /*AND_FILTERS*/ (see oracl/query/compile.py);
//         the path exclusion goes at /*NODE_FILTERS*/, on the full-text hits before the join
//         (after the join Kùzu applied it to every artifact: 345 ms instead of 32 at 50k)
// returns: one row per candidate artifact with its BM25 score over its full-text document
// $fts_hits is bound by Snapshot: the $k best live documents for $q, {path, score} each
// (oracl/core/fulltext.py: the bundle's postings, scored as the engine's index scored them)
// (its ArtifactText strings, id, symbols, headings, tags and checksum, are added by the
// snapshot from `text_n`, by key: cypher/artifact_text.cypher)
UNWIND $fts_hits AS hit
WITH hit.path AS hit_path, hit.score AS score WHERE true /*NODE_FILTERS*/
MATCH (a:Artifact {path: hit_path})
WHERE true /*AND_FILTERS*/
RETURN a.path AS path, a.text_n AS text_n, a.name AS name,
       /*=own(a)*/ AS priority, a.domain AS domain, a.content_type AS content_type,
       a.lifecycle AS lifecycle, a.format AS format, score AS bm25;
