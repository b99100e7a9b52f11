// name: verify_symbol_calls
// params: (none)
// returns: every call edge with its confidence and lines, for `oracl verify`
MATCH (a:Symbol)-[c:Calls]->(b:Symbol)
RETURN a.id AS source, b.id AS target, c.confidence AS confidence, c.lines AS lines;
