// name: symbol_name_delta
// params: keys LIST(STRING) (lower-cased names or qualified names)
// returns: key, id, seq, alive: what selective rebuilds changed of those keys since SymbolName was made whole
MATCH (d:SymbolNameDelta)
WHERE d.key IN $keys
RETURN d.key AS key, d.id AS id, d.seq AS seq, d.alive AS alive;
