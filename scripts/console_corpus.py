"""The console's hostile corpus: every statement the console must refuse, by family, and
the few that the engine's grammar reads as plain reads (an attack hidden in a comment or a
string, unicode dashes in a pattern), which must run harmlessly.

``corpus()`` is the whole list (distinct, in a fixed order); ``family(s)`` names the
family a statement came from; ``harmless_read(s)`` is True for the statements built to be
reads. ``python scripts/console_corpus.py`` prints the corpus, one JSON string a line, and
the count of each family on stderr. The families:

* ``probe``: the statements this suite held before (writes, loads, copies, exports, settings,
  several statements) under ten comment and whitespace wrappings, lower and swapped case;
* ``comment``: comment forms the engine and a hand-written lexer can read two ways
  (``/* **/``, ``/***/``, ``//`` ended by CR alone, nested openers);
* ``glue``: a number glued to the keyword after it, in every clause position;
* ``unicode``: look-alike letters, zero-width characters and the engine's own unicode
  whitespace between an attack's words;
* ``setting``: ``CALL name=value`` in every spelling (they stayed in force for a session);
* ``nesting``: lists, parentheses and CASEs nested past the gate's bounds, long sums;
* ``function``: sequence functions and table functions outside the read list.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections import Counter

ATTACKS = [
    "LOAD '/usr/lib/x86_64-linux-gnu/libc.so.6'",
    "LOAD EXTENSION fts",
    "load from '/etc/shadow' (header=false, delim='|') RETURN *",
    "COPY (MATCH (a:Artifact) RETURN a.path) TO '/tmp/out.csv'",
    "COPY Artifact FROM '/tmp/x.csv'",
    "EXPORT DATABASE '/tmp/dump'",
    "IMPORT DATABASE '/tmp/dump'",
    "CHECKPOINT",
    "BEGIN TRANSACTION",
    "COMMIT",
    "ROLLBACK",
    "ATTACH '/tmp/x.kuzu' AS x (dbtype kuzu)",
    "DETACH x",
    "USE x",
    "INSTALL json",
    "MATCH (a:Artifact) DETACH DELETE a",
    "MATCH (a:Artifact) DELETE a",
    "CREATE (h:Hub {id: 'x'})",
    "MERGE (h:Hub {id: 'x'})",
    "MATCH (a:Artifact) SET a.priority = 1",
    "MATCH (a:Artifact) REMOVE a.priority",
    "DROP TABLE Artifact",
    "ALTER TABLE Artifact ADD x INT64",
    "CREATE MACRO m(x) AS x",
    "CREATE SEQUENCE s",
    "RETURN nextval('s')",
    "CALL threads=1",
    "CALL spill_to_disk=true",
    "CALL home_directory='/tmp'",
    "CALL show_functions() RETURN *",
    "CALL project_graph('g', ['Artifact'], ['Link'])",
    "CALL read_csv('/etc/passwd') RETURN *",
    "WITH 1 AS x LOAD FROM '/etc/passwd' RETURN *",
    "UNWIND [1] AS x CREATE (h:Hub {id: 'y'})",
    "RETURN 1; RETURN 2",
    "RETURN 1; CHECKPOINT",
    "MATCH (a) RETURN a; ;MATCH (b) RETURN b",
    "LOAD FROM $file RETURN *",
    "COPY (MATCH (a:Artifact) RETURN a.path) TO $out",
    "MATCH (a:Artifact) WHERE a.path = $p SET a.priority = $x",
]
WRAPS = [
    "{}",
    "/* ' */ {} /* ' */",
    '/* " */ {} /* " */',
    "/* ` */ {}",
    "// '\n{}",
    "{} // '",
    "/**/{}",
    "/* a */ /* b */ {}",
    "\n\t {} \n",
    "{};",
]


PROBE_EXTRAS = [
    "COPY/**/(MATCH (a) RETURN a) TO 'x'",
    "MATCH (a) RETURN a /* ; */ ; COPY (MATCH (b) RETURN b) TO 'x'",
    "RETURN '\\'' ; COPY (MATCH (b) RETURN b) TO 'x'",
    "RETURN \"\\\"\" ; CHECKPOINT",
    "RETURN 'unterminated",
    "RETURN 1 /* unterminated",
    "RETURN `unterminated",
    "MATCH (a:Artifact) WHERE a.path = $p CHECKPOINT",
    "EXPLAIN CHECKPOINT",
    "PROFILE COPY (MATCH (a) RETURN a) TO 'x'",
    "CALL show_tables() RETURN * ; CALL threads=4",
    "CALL `threads`=1",
    "CALL current_setting",
    "OPTIONAL MATCH (a) SET a.x = 1",
    "", "   ", ";", "/* only a comment */", "// only a comment",
]
LOADS = ["LOAD FROM '/etc/passwd' (header=false, delim='|', file_format='csv') RETURN * LIMIT 3",
         "COPY (MATCH (a:Artifact) RETURN a.path) TO '/tmp/oracl-corpus.csv'",
         "EXPORT DATABASE '/tmp/oracl-corpus-dump'", "CHECKPOINT", "LOAD '/usr/lib/x86_64-linux-gnu/libm.so.6'",
         "CALL timeout=0", "CREATE (h:Hub {id: 'c'})"]
COMMENTS = [
    "/* **/ RETURN ' */ {} //'",
    "/***/ {}",
    "/* * / */ {}",
    "/* /* */ {} /* */",
    "/*/ {} /*/",
    "RETURN 1 //\r{}",
    "//\r{}",
    "/**/{}/**/",
    "/* ** */{}",
    "{} /* ** /",
]
# an attack the engine reads inside a comment or a string: the statement is a plain read
HIDDEN = [
    "RETURN 1 /* {} */",
    "RETURN 1 // {}",
    "RETURN '{}' AS s",
    "MATCH (a:Artifact) WHERE a.path = \"{}\" RETURN count(*)",
    "/* {} */ RETURN 2",
]
NUMBERS = ["0", "1", "12", "1.5", ".5", "1e3", "0.0", "007"]
GLUE_SITES = [
    "UNWIND [1] AS x WITH x SKIP {n}{k}",
    "UNWIND [1] AS x WITH x LIMIT {n}{k}",
    "RETURN {n}{k}",
    "WITH {n}{k}",
    "UNWIND [{n}{k}] AS x RETURN x",
    "MATCH (a:Artifact) WHERE a.priority > {n}{k} RETURN a",
    "RETURN {{a: {n}{k}}} AS m",
    "MATCH (a:Artifact) RETURN a SKIP {n}{k}",
]
GLUE_WORDS = ["LOAD FROM '/etc/passwd' RETURN *", "COPY (MATCH (a) RETURN a) TO 'x'", "CHECKPOINT",
              "CREATE (h:Hub {id: 'g'})", "EXPORT DATABASE 'x'", " LOAD FROM '/etc/passwd' RETURN *"]
SPACES = ["\u00a0", "\u2000", "\u2003", "\u2028", "\u2029", "\u3000", "\u1680", "\u202f", "\x1c", "\x1f", "\x0b",
          "\u180e", "\u205f"]
LOOKALIKE = {"C": ["\uff23", "\u0421", "\u216d"], "O": ["\uff2f", "\u041e", "\u039f"], "L": ["\uff2c", "\u216c"],
             "E": ["\uff25", "\u0415", "\u0395"]}
ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u202e", "\u00ad"]
SETTINGS = ["timeout=0", "file_search_path='/'", "home_directory='/tmp'", "threads=1", "spill_to_disk=true",
            "enable_zone_map=false", "progress_bar=true", "checkpoint_threshold=1", "warning_limit=0",
            "debug_enable_multi_writes=true", "var_length_extend_max_depth=1000"]
FUNCTIONS = ["RETURN nextval('s')", "RETURN setval('s', 1)", "MATCH (a) RETURN nextval('s') AS n",
             "CALL show_functions() RETURN *", "CALL project_graph('g', ['Artifact'], ['Link']) RETURN *",
             "CALL create_fts_index('Artifact', 'x', ['path']) RETURN *", "CALL drop_fts_index('Artifact', 'x')",
             "CALL read_csv('/etc/passwd') RETURN *", "CALL page_rank('g') RETURN *",
             "CALL clear_warnings() RETURN *", "CALL `show_functions`() RETURN *", "CALL SHOW_FUNCTIONS() RETURN *",
             "CALL create_vector_index('Artifact', 'v', 'e') RETURN *", "CALL stats_info('Artifact') RETURN *",
             "CALL storage_info('Artifact') RETURN *", "CALL show_attached_databases() RETURN *",
             "CALL fs_glob('/etc/*') RETURN *", "CALL show_loaded_extensions() RETURN *",
             "CALL show_official_extensions() RETURN *", "CALL weakly_connected_components('g') RETURN *"]
# reads the grammar allows that use its unicode forms: they must run harmlessly
UNICODE_READS = [
    "MATCH (a:Artifact)\u2010[l:Link]\u2010\u27e9(b:Artifact) RETURN count(*)",
    "MATCH (a:Artifact)\u27e8\u2014[l:Link]\u2014(b:Artifact) RETURN count(*)",
    "MATCH (a:Artifact)\uff0d[l:Link]\uff0d\uff1e(b:Artifact) RETURN count(*)",
    "RETURN\u00a01\u2003AS\u3000x",
    "MATCH\u2028(a:Artifact)\u2029RETURN\x1ccount(*)",
]
NESTED_READS = ["RETURN " + "[" * 10 + "1" + "]" * 10, "RETURN " + "CASE WHEN true THEN " * 4 + "1" + " END" * 4,
                "RETURN " + "+".join(["1"] * 100), "RETURN " + "(" * 20 + "1" + ")" * 20]


def _families() -> dict[str, list[str]]:
    probe = [w.format(a) for a, w in itertools.product(ATTACKS, WRAPS)]
    probe += [a.lower() for a in ATTACKS] + [a.swapcase() for a in ATTACKS] + PROBE_EXTRAS
    comment = [c.format(a) for c, a in itertools.product(COMMENTS, LOADS)]
    glue = [site.format(n=n, k=k) for site, n, k in itertools.product(GLUE_SITES, NUMBERS[:4], GLUE_WORDS[:3])]
    glue += [site.format(n=n, k=k) for site, n, k in itertools.product(GLUE_SITES[:2], NUMBERS[4:], GLUE_WORDS[3:])]
    unicode = [f"MATCH (a) RETURN a{sp}LOAD FROM '/etc/passwd' RETURN *" for sp in SPACES]
    unicode += [f"RETURN 1{sp}CHECKPOINT" for sp in SPACES]
    unicode += [f"COPY{sp}(MATCH (a) RETURN a) TO 'x'" for sp in SPACES]
    unicode += ["".join(LOOKALIKE.get(ch, [ch])[i % len(LOOKALIKE.get(ch, [ch]))] if ch in LOOKALIKE else ch
                        for ch in word) + rest for i, (word, rest) in
                enumerate(itertools.product(["COPY", "LOAD", "CHECKPOINT", "EXPORT", "CREATE"],
                                            [" (MATCH (a) RETURN a) TO 'x'", " FROM '/etc/passwd' RETURN *",
                                             " DATABASE 'x'"]))]
    unicode += [f"CO{z}PY (MATCH (a) RETURN a) TO 'x'" for z in ZERO_WIDTH]
    unicode += [f"RETURN 1 {z}; CHECKPOINT" for z in ZERO_WIDTH]
    unicode += [f"MATCH (a) RETURN a {semi} CHECKPOINT" for semi in ("\u037e", "\ufe54", "\uff1b", "\u061b")]
    setting = []
    for s in SETTINGS:
        name, _, value = s.partition("=")
        setting += [f"CALL {s}", f"call {name.upper()} = {value}", f"CALL `{name}`={value}", f"/* x */ CALL {s};",
                    f"CALL {s} // trailing", f"EXPLAIN CALL {s}"]
    nesting = ["RETURN " + "[" * n + "1" + "]" * n for n in (49, 64, 200, 1000)]
    nesting += ["RETURN " + "(" * n + "1" + ")" * n for n in (49, 100, 1000)]
    nesting += ["RETURN " + "{a: " * n + "1" + "}" * n for n in (49, 300)]
    nesting += ["RETURN " + "CASE WHEN true THEN " * n + "1" + " END" * n for n in (13, 18, 30, 48, 200)]
    nesting += ["RETURN " + op.join(["1"] * n) for op, n in itertools.product(("+", "*", " OR ", " AND "),
                                                                           (2_001, 5_000, 10_000))]
    nesting += ["MATCH (a:Artifact) WHERE " + " OR ".join(f"a.path = 'p{i}'" for i in range(2_000)) + " RETURN a",
                "RETURN '" + "x" * 100_001 + "'", "UNWIND " + "[" + ",".join(["1"] * 3_000) + "] AS x RETURN x"]
    read = [h.format(a) for h, a in itertools.product(HIDDEN, LOADS) if "'" not in a or not h.startswith("RETURN '")]
    read += [h.format(a.replace("'", "\\'")) for h, a in itertools.product(HIDDEN[2:3], LOADS) if "'" in a]
    read += UNICODE_READS + NESTED_READS + [
        "CALL current_setting('threads') RETURN *", "CALL `show_tables`() RETURN name",
        "CALL show_tables() RETURN name"]
    return {"probe": probe, "comment": comment, "glue": glue, "unicode": unicode, "setting": setting,
            "nesting": nesting, "function": FUNCTIONS, "read": read}


_FAMILY: dict[str, str] = {}
for _name, _items in _families().items():
    for _s in _items:
        _FAMILY.setdefault(_s, _name)


def corpus() -> list[str]:
    """Every statement, distinct, in a fixed order."""
    return list(_FAMILY)


def family(statement: str) -> str:
    return _FAMILY[statement]


def harmless_read(statement: str) -> bool:
    """Built to be a read the engine's grammar accepts (family ``read``)."""
    return _FAMILY.get(statement) == "read"


if __name__ == "__main__":
    for s in corpus():
        print(json.dumps(s))
    counts = Counter(_FAMILY.values())
    print(f"{len(_FAMILY)} statements: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), file=sys.stderr)
