// Selective rebuild: a changed file's symbol keeps its id, name and kind (its file's interface
// did not change); its lines and export flag are set again when they moved. Whole-number and
// boolean columns are updated in place: setting them does not grow the database file.
MATCH (s:Symbol {id: $id}) SET s.start_line = $start_line, s.end_line = $end_line, s.exported = $exported;
