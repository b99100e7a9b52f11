// The full-text index is created after COPY (COPY does not feed an existing FTS index).
// Default stopwords only: custom stopwords make later writes segfault in 0.11.3.
CALL CREATE_FTS_INDEX('Content', 'content_fts', ['text'], stemmer := 'porter');
