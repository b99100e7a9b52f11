// Full-text rows, COPY from an Arrow table (memory-mapped from the build's spool).
// Loaded first, so the FTS index can be built while the graph is still being weighed.
COPY Content FROM $content;
