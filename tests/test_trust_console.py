"""The console can only read the graph: a corpus of hostile statements is refused before
the engine sees it, read queries pass, and a stray WAL in a published bundle never breaks
a reader."""

from __future__ import annotations

import itertools
from pathlib import Path

import orjson
import pytest

from oracl.errors import QueryError, RefusedError
from oracl.readonly import READ_FUNCTIONS, check, tokenize
from tests.conftest import SAMPLE, run_cli, write_tree

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


def _cases() -> list[str]:
    out = [w.format(a) for a, w in itertools.product(ATTACKS, WRAPS)]
    out += [a.lower() for a in ATTACKS] + [a.swapcase() for a in ATTACKS]
    out += [
        "COPY/**/(MATCH (a) RETURN a) TO 'x'",             # a comment as the only separator
        "MATCH (a) RETURN a /* ; */ ; COPY (MATCH (b) RETURN b) TO 'x'",
        "RETURN '\\'' ; COPY (MATCH (b) RETURN b) TO 'x'",  # an escaped quote does not end the string
        "RETURN \"\\\"\" ; CHECKPOINT",
        "RETURN 'unterminated",
        "RETURN 1 /* unterminated",
        "RETURN `unterminated",
        "ＣＯＰＹ (MATCH (a) RETURN a) TO 'x'",             # full-width look-alikes
        "MATCH (a) RETURN a\u00a0COPY",                     # a no-break space
        "RETURN 1\u2028CHECKPOINT",                          # a line separator
        "MATCH (a) RETURN a\x1cCHECKPOINT",                  # an ASCII file separator (engine whitespace)
        "RETURN 1 \u037e CHECKPOINT",                        # a Greek question mark that looks like ';'
        "\u0421OPY (MATCH (a) RETURN a) TO 'x'",              # a Cyrillic С
        "CO\u200bPY (MATCH (a) RETURN a) TO 'x'",             # a zero-width space inside the keyword
        "MATCH (a) RETURN a \ufe54 CHECKPOINT",              # a small semicolon
        "MATCH (a:Artifact) WHERE a.path = $p CHECKPOINT",
        "EXPLAIN CHECKPOINT",
        "PROFILE COPY (MATCH (a) RETURN a) TO 'x'",
        "CALL show_tables() RETURN * ; CALL threads=4",
        "CALL `threads`=1",
        "CALL current_setting",                              # a CALL without its parentheses
        "OPTIONAL MATCH (a) SET a.x = 1",
        "", "   ", ";", "/* only a comment */", "// only a comment",
    ]
    return list(dict.fromkeys(out))  # distinct, in order


CORPUS = _cases()


def test_the_corpus_is_large() -> None:
    assert len(CORPUS) >= 200


@pytest.mark.parametrize("statement", CORPUS)
def test_every_hostile_statement_is_refused_in_one_line(statement: str) -> None:
    with pytest.raises(QueryError) as err:
        check(statement)
    msg = str(err.value)
    assert "\n" not in msg and (msg.startswith("refused: ") or msg == "empty statement")
    if msg != "empty statement":
        assert isinstance(err.value, RefusedError) and err.value.exit_code == 18


@pytest.mark.parametrize(("statement", "expected"), [
    ("MATCH (a:Artifact) RETURN a.path LIMIT 3;", "MATCH (a:Artifact) RETURN a.path LIMIT 3"),
    ("MATCH (a:Artifact) RETURN a.path // trailing;", "MATCH (a:Artifact) RETURN a.path"),
    ("MATCH (a:Artifact) WHERE a.path CONTAINS 'COPY; CHECKPOINT' RETURN a", None),
    ("MATCH (a:Artifact) WHERE a.path = \"LOAD FROM '/etc/shadow'\" RETURN a", None),
    ("MATCH (a:Artifact) RETURN a.path AS `copy`", None),
    ("MATCH (a:Artifact)-[l:Link]->(b) WHERE l.relation = 'imports' RETURN b.path, l.relation", None),
    ("OPTIONAL MATCH (a:Artifact) WITH a ORDER BY a.priority DESC SKIP 1 LIMIT 2 RETURN a.path", None),
    ("UNWIND [1, 2] AS x RETURN x UNION RETURN 3 AS x", None),
    ("RETURN {set: 1, load: 2} AS m", None),
    ("MATCH (a:Artifact) RETURN a.set, a.delete", None),
    ("CALL QUERY_FTS_INDEX('Content', 'content_fts', 'export sign', top := 5) RETURN node.path, score", None),
    ("CALL show_tables() RETURN name", None),
    ("EXPLAIN MATCH (a) RETURN count(*)", None),
    ("RETURN 'é ünïcode in a string' AS s", None),
    ("/* a comment with ' and \" */ RETURN 1", "/* a comment with ' and \" */ RETURN 1"),
])
def test_read_queries_pass(statement: str, expected: str | None) -> None:
    assert check(statement) == (expected if expected is not None else statement)


def test_the_tokeniser_reads_comments_first_as_the_engine_does() -> None:
    toks = [t.text for t in tokenize("/* ' */ RETURN 'a/*b' // ' \n , \"c\\\"d\"")]
    assert toks == ["RETURN", "'a/*b'", ",", '"c\\"d"']
    assert "query_fts_index" in READ_FUNCTIONS and "show_functions" not in READ_FUNCTIONS


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from oracl.builder import build

    root = write_tree(tmp_path_factory.mktemp("console") / "repo", SAMPLE)
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    return root


def test_the_cli_refuses_before_the_engine_and_nothing_is_written(repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.csv"
    dump = tmp_path / "dump"
    bundle = _bundle(repo)
    before = sorted(p.name for p in bundle.iterdir())
    for stmt, reason in [
        (f"/* ' */ COPY (MATCH (a:Artifact) RETURN a.path) TO '{out}' /* ' */",
         "COPY reads or writes files outside the graph"),
        (f"/* ' */ EXPORT DATABASE '{dump}' /* ' */", "EXPORT reads or writes files outside the graph"),
        ("/* ' */ CHECKPOINT /* ' */", "CHECKPOINT writes the database files"),
        ("LOAD FROM '/etc/passwd' (header=false, delim='|') RETURN *", "LOAD reads or writes files outside the graph"),
    ]:
        r = run_cli("cypher", stmt, "-r", str(repo))
        assert (r.returncode, r.stderr.strip()) == (18, f"Error: refused: {reason}; the console only reads the graph")
    r = run_cli("cypher", "RETURN 1; RETURN 2", "-r", str(repo))
    assert (r.returncode, r.stderr.strip()) == (18, "Error: refused: more than one statement; run them one at a time")
    assert not out.exists() and not dump.exists()
    assert sorted(p.name for p in bundle.iterdir()) == before
    ok = run_cli("cypher", "MATCH (a:Artifact) RETURN count(*) AS n;", "-r", str(repo), "--json")
    assert ok.returncode == 0 and orjson.loads(ok.stdout) == {"columns": ["n"], "rows": [[7]]}


def _bundle(repo: Path) -> Path:
    latest = orjson.loads((repo / ".oracl" / "mirror" / "LATEST.json").read_bytes())
    return repo / ".oracl" / "mirror" / latest["bundle"]


def test_a_stray_wal_and_shadow_never_break_a_reader(repo: Path) -> None:
    """The engine itself leaves .wal/.shadow beside a read-only database when told to
    CHECKPOINT (what the console used to allow); the next reader sets them aside."""
    from oracl.store import Store, close

    bundle = _bundle(repo)
    db = bundle / "graph.kuzu"
    store = Store.open(db, read_only=True)
    try:
        with pytest.raises(Exception):  # noqa: B017 - the engine's own failure
            store.execute("CHECKPOINT")
    finally:
        close(db)
    assert (bundle / "graph.kuzu.shadow").exists() and (bundle / "graph.kuzu.wal").exists()
    q = run_cli("query", "sign", "-r", str(repo), "--json")
    assert q.returncode == 0, q.stderr
    assert orjson.loads(q.stdout)["results"][0]["path"] == "pkg/auth.py"
    assert not (bundle / "graph.kuzu.shadow").exists() and not (bundle / "graph.kuzu.wal").exists()
    aside = sorted(p.name.split(".stray-")[0] for p in bundle.iterdir() if ".stray-" in p.name)
    assert aside == ["graph.kuzu.shadow", "graph.kuzu.wal"]
    v = run_cli("verify", str(repo))
    assert v.returncode == 0, v.stderr
