// name: symbol_names_like
// params: part STRING (lower-cased), k INT64
// returns: key, ids of the names that start with or contain `part` (the fuzzy fallback)
MATCH (n:SymbolName)
WHERE n.key CONTAINS $part
RETURN n.key AS key, n.ids AS ids
ORDER BY size(n.key), n.key
LIMIT $k;
