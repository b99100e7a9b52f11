// Selective rebuild: what the previous build holds of the changed files' symbols (only the
// properties a patch may set, and the names a symbol is found by), so that only the symbols
// whose properties moved are set again.
MATCH (s:Symbol) WHERE s.path IN $paths
RETURN s.id AS id, s.start_line AS start_line, s.end_line AS end_line, s.signature AS signature,
  s.doc AS doc, s.exported AS exported, s.name AS name, s.qualified AS qualified, s.kind AS kind;
