// name: verify_hubs
// params: (none)
// returns: every hub's id and weights, for `oracl verify`
MATCH (h:Hub) RETURN h.id AS id, h.association AS a, /*=delta(h)*/ AS d, /*=density(h)*/ AS l;
