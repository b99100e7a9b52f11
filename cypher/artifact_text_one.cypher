// name: artifact_text_one
// params: key STRING
// returns: the ArtifactText row of one key, as cypher/artifact_text.cypher returns each.
//          A probe of the primary key's index: the snapshot asks key by key up to
//          oracl/read/snapshot.py `TEXT_ONE_BY_ONE` keys (26 keys 8 ms on a snapshot just
//          opened at 20k files, where the UNWIND of artifact_text.cypher read the table's
//          columns whole, 42 ms however few the keys).
MATCH (t:ArtifactText)
WHERE t.key = $key
RETURN t.key AS key, t.id AS id, t.symbols AS symbols, t.headings AS headings, t.tags AS tags,
       t.checksum AS checksum;
