// name: hub_member_terms
// params: (none)
// returns: every hub membership with the member's stored priority terms: the hub summary's
//          mean priority is derived from them in Python (fetched as Arrow: 0.07 s cold at 20k
//          files, with 0.03 s to derive, against 0.24 s for the engine to prepare and average
//          the expression over every artifact)
MATCH (a:Artifact)-[:BelongsTo]->(h:Hub)
RETURN h.id AS hub, a.p_sum AS p_sum, a.p_mult AS p_mult, a.fresh_e AS fresh_e, a.m_role AS m_role,
       a.association AS association, a.size_bytes AS size_bytes;
