// The full-text index of the files' past commit subjects (design §5c), after their COPY;
// left out when no file has history (a tree outside git).
CALL CREATE_FTS_INDEX('History', 'history_fts', ['text'], stemmer := 'porter');
