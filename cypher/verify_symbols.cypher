// name: verify_symbols
// params: (none)
// returns: every symbol's id, path, lines and kind, for `oracl verify`
MATCH (s:Symbol)
RETURN s.id AS id, s.path AS path, s.start_line AS a, s.end_line AS b, s.kind AS kind;
