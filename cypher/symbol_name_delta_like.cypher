// name: symbol_name_delta_like
// params: part STRING (lower-cased)
// returns: key, id, seq, alive of the changed keys that contain `part` (the fuzzy fallback)
MATCH (d:SymbolNameDelta)
WHERE d.key CONTAINS $part
RETURN d.key AS key, d.id AS id, d.seq AS seq, d.alive AS alive;
