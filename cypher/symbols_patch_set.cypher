// Selective rebuild: a changed file's symbol keeps its id, name and kind (its file's interface
// did not change); its lines, signature, doc and export flag are set again.
MATCH (s:Symbol {id: $id}) SET s.start_line = $start_line, s.end_line = $end_line, s.signature = $signature,
  s.doc = $doc, s.exported = $exported;
