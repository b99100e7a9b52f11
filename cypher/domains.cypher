// name: domains
// params: (none)
// returns: domain (every hub's domain, for the parser's type pass)
MATCH (h:Hub) RETURN h.domain AS domain ORDER BY domain;
