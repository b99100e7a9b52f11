// Selective rebuild: a symbol that a changed or added file now has.
CREATE (s:Symbol {id: $id, name: $name, qualified: $qualified, kind: $kind, language: $language, path: $path,
  start_line: $start_line, end_line: $end_line, signature: $signature, doc: $doc, exported: $exported});
