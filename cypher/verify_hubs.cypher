// name: verify_hubs
// params: (none)
// returns: every hub's id and weights, for `oracl verify`
MATCH (h:Hub) RETURN h.id AS id, h.association AS a, h.delta AS d, h.link_density AS l;
