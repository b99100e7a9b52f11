// One Artifact→Artifact rel table with a relation property, and a separate
// Artifact→Hub table (a multi-pair rel table makes 2-hop queries ~100× slower). `rank_raw`
// is the DuoRanker's R; association_rank = R / max R is derived when read (`/*=rank(l)*/`).
CREATE REL TABLE Link(FROM Artifact TO Artifact, relation STRING, confidence DOUBLE,
  relation_weight DOUBLE, rank_raw DOUBLE, source_fragment STRING,
  target_fragment STRING, producer STRING, provider STRING);
CREATE REL TABLE BelongsTo(FROM Artifact TO Hub, confidence DOUBLE, relation_weight DOUBLE,
  rank_raw DOUBLE);
// Symbol edges: one rel table per relation (a multi-pair or property-typed table makes
// traversals slower). Every resolved edge carries its confidence, how it was resolved
// (same_scope, imported, inherited, same_package, receiver, unique, unique_member,
// ambiguous), the candidate count, and the lines it was found at.
CREATE REL TABLE Defines(FROM Artifact TO Symbol);
CREATE REL TABLE Contains(FROM Symbol TO Symbol);
// A call's `lines` are the text of their list ("[6,12]"; readers CAST it to INT64[]): an
// INT64[] property read another edge's list in one direction after in-place patches in Kùzu
// 0.11.3 (the forward and backward copies of the rel disagreed; docs/decisions.md).
CREATE REL TABLE Calls(FROM Symbol TO Symbol, confidence DOUBLE, resolution STRING,
  candidates INT64, lines STRING);
CREATE REL TABLE Inherits(FROM Symbol TO Symbol, relation STRING, confidence DOUBLE,
  resolution STRING, candidates INT64, line INT64);
CREATE REL TABLE References(FROM Symbol TO Symbol, confidence DOUBLE, resolution STRING,
  candidates INT64, line INT64);
