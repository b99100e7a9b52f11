// One Artifact→Artifact rel table with a relation property, and a separate
// Artifact→Hub table (a multi-pair rel table makes 2-hop queries ~100× slower).
CREATE REL TABLE Link(FROM Artifact TO Artifact, relation STRING, confidence DOUBLE,
  relation_weight DOUBLE, association_rank DOUBLE, source_fragment STRING,
  target_fragment STRING, producer STRING, provider STRING);
CREATE REL TABLE BelongsTo(FROM Artifact TO Hub, confidence DOUBLE, relation_weight DOUBLE,
  association_rank DOUBLE);
