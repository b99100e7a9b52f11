// Selective rebuild, when symbols came or went: what every symbol is found by, to make the
// SymbolName table again (dropped and loaded: per-key writes to it were not kept exact
// across checkpoints in Kùzu 0.11.3, measured by the 200-step incremental test).
MATCH (s:Symbol) RETURN s.id AS id, s.name AS name, s.qualified AS qualified, s.kind AS kind;
