// name: symbol_names
// params: keys LIST(STRING) (lower-cased names or qualified names)
// returns: key, ids of the symbols each key names
MATCH (n:SymbolName)
WHERE n.key IN $keys
RETURN n.key AS key, n.ids AS ids;
