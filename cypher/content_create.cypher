// Selective rebuild: the full-text row of one changed or added file, keyed path|n. CREATE,
// not COPY: COPY into a table with an FTS index leaves the rows out of the index, and an
// `UNWIND $rows … CREATE` of several rows indexes every row with the first row's text
// (both measured on Kùzu 0.11.3). One prepared CREATE per row is exact.
CREATE (c:Content {key: $key, path: $path, n: $n, live: true, text: $text});
