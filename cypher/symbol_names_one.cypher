// name: symbol_names_one
// params: key STRING (lower-cased names or qualified names)
// (one key: an equality uses the primary-key index, where IN scans the table)
// returns: key, ids of the symbols each key names
MATCH (n:SymbolName)
WHERE n.key = $key
RETURN n.key AS key, n.ids AS ids;
