// Node tables of the ORACL graph. Applied in file order by oracl/store.py.
// Artifact is keyed by its repo-relative path (the query plane's handle). Tags that every
// node has are plain columns. A row holds only what the file and its edges determine:
// priority, δ and link density are derived when read, from these columns and the build's
// aggregates (oracl/core/derive.py; `/*=priority(a)*/` in a query). `text_n` numbers the
// ArtifactText row that holds its strings.
CREATE NODE TABLE Artifact(
  path STRING PRIMARY KEY, file_type STRING, size_bytes INT64,
  created_at TIMESTAMP, modified_at TIMESTAMP, domain STRING, component STRING,
  lifecycle STRING, classification STRING, content_type STRING, format STRING,
  placeholder BOOLEAN, parse_status STRING, p_sum DOUBLE,
  p_mult DOUBLE, fresh_e DOUBLE, m_role DOUBLE, association DOUBLE, degree INT64,
  link_count INT64, backrefs INT64, usage INT64, line_count INT64, name STRING, text_n INT64);
// The artifact's strings that move when its bytes, its edges or its history move: `id` is
// the export's node id (the §2 artifact_id), the full tag object is JSON in `tags`. An
// artifact's row is the one keyed `path + '|' + text_n` (a path's rows differ in the
// number after the last '|'; readers join by path and `n = text_n`). When they move, a row is appended under a new number and
// the artifact's `text_n` set (an INT64): a row is never SET nor deleted until the next
// full build. In Kùzu 0.11.3 the checkpoint after a SET of one string rewrites that
// column's whole chunk (~3.4 × the column's bytes, and the file grows by as much: 17.8 MB
// for `tags` of one row at 20k files); deleting rows here made a later call edge's list
// read another's after a reopen (docs/decisions.md).
CREATE NODE TABLE ArtifactText(
  key STRING PRIMARY KEY, path STRING, n INT64, id STRING, checksum STRING, tags STRING,
  symbols STRING, headings STRING, detail STRING, history STRING);
CREATE NODE TABLE Hub(id STRING PRIMARY KEY, domain STRING, association DOUBLE, degree INT64);
// Past commit subjects of each file that has any (design §5c), with the engine's full-text
// index. A path's live row is the one with `live` true; an update never deletes a row
// (Kùzu 0.11.3's full-text delete takes another document's postings with it:
// docs/decisions.md) but sets the old row's `live` false and creates one keyed
// `path + '|' + n` under a larger `n`; the superseded rows go when the index is made again
// (`core/derive.py`: `fts_superseded_max`). Readers keep `live` rows only. (The files' own
// text is not in the database: ORACL's postings, `oracl/core/fulltext.py`, hold it.)
CREATE NODE TABLE History(key STRING PRIMARY KEY, path STRING, n INT64, live BOOLEAN, text STRING);
// The symbol graph (design §5b): one row per definition, and one `module` row per code file
// (id `path#`). `start_line`/`end_line` are the definition's lines; `exported` says whether
// the language makes it visible outside its file or package.
CREATE NODE TABLE Symbol(id STRING PRIMARY KEY, name STRING, qualified STRING, kind STRING,
  language STRING, path STRING, start_line INT64, end_line INT64, signature STRING, doc STRING,
  exported BOOLEAN);
// Name lookup for symbols (a primary-key probe instead of a scan of every Symbol): keyed by
// the lower-cased short name and qualified name, each with the ids of the symbols it names.
CREATE NODE TABLE SymbolName(key STRING PRIMARY KEY, ids STRING[]);
// What a selective rebuild changed of that lookup since the table was last made whole:
// one row per (key, symbol id, build) — `alive` whether the key finds the symbol after that
// build — only ever created, never set or deleted (per-key writes to SymbolName did not stay
// exact across checkpoints in Kùzu 0.11.3). A reader takes each id's row of the largest
// `seq` over SymbolName's list (oracl/read/callgraph.py `symbol_ids`); a whole symbol pass
// empties it.
CREATE NODE TABLE SymbolNameDelta(pk STRING PRIMARY KEY, key STRING, id STRING, seq INT64, alive BOOLEAN);
