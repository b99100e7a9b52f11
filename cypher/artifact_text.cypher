// name: artifact_text
// params: keys LIST(STRING)
// returns: the ArtifactText row of each key (`path|text_n`: oracl/core/records.py `text_key`),
//          the strings the scoring rows (search_fts, search_fast, search_wildcard,
//          artifact_rows) take from it. Looked up by the primary key, a probe each: joined
//          by path in those queries, the join read every path (0.07–0.15 s for 200 rows at
//          20k files, against 0.02–0.08 s for this).
UNWIND $keys AS k
MATCH (t:ArtifactText {key: k})
RETURN t.key AS key, t.id AS id, t.symbols AS symbols, t.headings AS headings, t.tags AS tags,
       t.checksum AS checksum;
