"""The console can only read the graph (design §11).

The gate parses with the engine's own grammar: a generated corpus of hostile statements
(``scripts/console_corpus.py``: the suite's earlier statements and the families that broke the
old lexical gate — comment forms, numbers glued to keywords, unicode look-alikes, settings
calls) is refused, or, where the engine's grammar reads a statement as a harmless read,
runs in the sandbox without reading or writing anything outside the graph. Behind the
gate, statements that would do harm if they ran are run in the sandbox directly: each
fails there, and a crash costs only its child. A stray WAL in a published bundle never
breaks a reader."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import orjson
import pytest

from oracl.core.errors import QueryError, RefusedError, SandboxError
from oracl.face.readonly import READ_FUNCTIONS, check
from oracl.face.sandbox import landlock_abi, run_statement
from tests.conftest import SAMPLE, run_cli, write_tree

_spec = importlib.util.spec_from_file_location("console_corpus", Path(__file__).parents[1] / "scripts" / "console_corpus.py")
assert _spec is not None and _spec.loader is not None
corpus_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus_module)
CORPUS = corpus_module.corpus()
# the engine's grammar reads these as plain reads: they run, and must run harmlessly
HARMLESS = {s for s in CORPUS if corpus_module.harmless_read(s)}


def test_the_corpus_is_the_probes_size_and_more() -> None:
    assert len(CORPUS) >= 508
    assert len(set(CORPUS)) == len(CORPUS)
    for family in ("comment", "glue", "unicode", "setting", "nesting"):
        assert sum(1 for s in CORPUS if corpus_module.family(s) == family) >= 20, family


@pytest.mark.parametrize("statement", [s for s in CORPUS if s not in HARMLESS])
def test_every_hostile_statement_is_refused_in_one_line(statement: str) -> None:
    with pytest.raises(QueryError) as err:
        check(statement)
    msg = str(err.value)
    assert "\n" not in msg and (msg.startswith("refused: ") or msg == "empty statement")
    if msg != "empty statement":
        assert isinstance(err.value, RefusedError) and err.value.exit_code == 18


def test_the_two_bypasses_of_the_lexical_gate_are_refused() -> None:
    """The engine ends no comment on ``**/`` and reads ``0LOAD`` as 0 then LOAD: so does the gate."""
    comment = ("/* **/ RETURN ' */ LOAD FROM \"/etc/passwd\" (header=false, delim='|', file_format='csv') "
               "RETURN * LIMIT 3 //'")
    glued = ("UNWIND [1] AS x WITH x SKIP 0LOAD FROM '/etc/passwd' (header=false, delim='|', file_format='csv') "
             "RETURN * LIMIT 2")
    for statement in (comment, glued):
        with pytest.raises(RefusedError, match="^refused: LOAD FROM reads files outside the graph; "):
            check(statement)


@pytest.mark.parametrize(("statement", "expected"), [
    ("MATCH (a:Artifact) RETURN a.path LIMIT 3;", None),
    ("MATCH (a:Artifact) RETURN a.path // trailing;", None),
    ("MATCH (a:Artifact) RETURN a.path LIMIT 3 // a comment the engine ends at the end", None),
    ("MATCH (a:Artifact) WHERE a.path STARTS WITH 'pkg' RETURN a.path SKIP 0 LIMIT 2", None),
    ("RETURN CASE WHEN 1 > 0 THEN 'yes' ELSE 'no' END AS c", None),
    ("MATCH (a:Artifact)-[:Link*1..2]->(b:Artifact) RETURN count(b)", None),
    ("MATCH (a:Artifact) WHERE EXISTS { MATCH (a)-[:Link]->(b) } RETURN a.path", None),
    ("CALL show_tables() RETURN *", None),
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
    ("/* a comment with ' and \" */ RETURN 1", None),
])
def test_read_queries_pass(statement: str, expected: str | None) -> None:
    assert check(statement) == (expected if expected is not None else statement)


def test_the_read_functions_are_a_fixed_list() -> None:
    assert "query_fts_index" in READ_FUNCTIONS and "show_functions" not in READ_FUNCTIONS


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from oracl.builder.orchestrator import build

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
         "COPY … TO writes files outside the graph"),
        (f"/* ' */ EXPORT DATABASE '{dump}' /* ' */", "EXPORT DATABASE writes files"),
        ("/* ' */ CHECKPOINT /* ' */", "a transaction statement controls transactions or checkpoints"),
        ("LOAD FROM '/etc/passwd' (header=false, delim='|') RETURN *", "LOAD FROM reads files outside the graph"),
    ]:
        r = run_cli("cypher", stmt, "-r", str(repo))
        assert (r.returncode, r.stderr.strip()) == (18, f"Error: refused: {reason}; the console only reads the graph")
    r = run_cli("cypher", "RETURN 1; RETURN 2", "-r", str(repo))
    assert (r.returncode, r.stderr.strip()) == (18, "Error: refused: more than one statement; run them one at a time")
    assert not out.exists() and not dump.exists()
    assert sorted(p.name for p in bundle.iterdir()) == before
    ok = run_cli("cypher", "MATCH (a:Artifact) RETURN count(*) AS n;", "-r", str(repo), "--json")
    assert ok.returncode == 0 and orjson.loads(ok.stdout) == {"columns": ["n"], "rows": [[7]]}


def test_harmless_reads_of_the_corpus_run_and_touch_nothing(repo: Path, tmp_path: Path) -> None:
    """What the engine's grammar reads as a plain read runs in the sandbox: it answers or
    fails in one line, and nothing outside the graph is read or written."""
    bundle = _bundle(repo)
    before = {p.name: p.stat().st_size for p in bundle.iterdir()}
    passwd = Path("/etc/passwd").read_text().splitlines()[0]
    assert HARMLESS, "the corpus has statements the grammar reads as reads"
    for statement in sorted(HARMLESS):
        text = check(statement)
        try:
            out = orjson.dumps(run_statement(bundle / "graph.kuzu", text, {})).decode()
        except QueryError as exc:
            out = str(exc)
        assert passwd not in out
    assert {p.name: p.stat().st_size for p in bundle.iterdir()} == before


@pytest.mark.parametrize(("statement", "fails_with"), [
    ("LOAD FROM '/etc/passwd' (header=false, delim='|', file_format='csv') RETURN * LIMIT 2",
     "Cannot open file /etc/passwd: Permission denied"),
    ("COPY (MATCH (a:Artifact) RETURN a.path) TO '{tmp}/out.csv'", "Permission denied"),
    ("EXPORT DATABASE '{tmp}/dump'", "cannot be created"),
    ("LOAD '/usr/lib/x86_64-linux-gnu/libm.so.6'", "Failed to load library"),
    ("CHECKPOINT", "Permission denied"),
    ("CALL home_directory='{tmp}'", None),
])
def test_behind_the_gate_the_sandbox_stops_what_would_harm(repo: Path, tmp_path: Path, statement: str,
                                                             fails_with: str | None) -> None:
    """Defence in depth: statements the gate refuses, run in the sandbox as if a bypass
    had let them through: they cannot read, write, load or checkpoint."""
    assert landlock_abi() >= 1, "this machine's kernel has Landlock; the sandbox relies on it"
    bundle = _bundle(repo)
    before = {p.name: p.stat().st_size for p in bundle.iterdir()}
    text = statement.format(tmp=tmp_path)
    if fails_with is None:  # a setting: it lives and dies with its child
        run_statement(bundle / "graph.kuzu", text, {})
    else:
        with pytest.raises(QueryError, match=fails_with):
            run_statement(bundle / "graph.kuzu", text, {})
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    assert {p.name: p.stat().st_size for p in bundle.iterdir()} == before
    after = run_statement(bundle / "graph.kuzu", "CALL current_setting('home_directory') RETURN *", {})
    assert after["rows"] == [["/nonexistent/oracl-console"]]  # a setting never outlives its child


def test_a_crash_a_runaway_and_a_flood_cost_the_child_only(repo: Path) -> None:
    db = _bundle(repo) / "graph.kuzu"
    deep = "RETURN " + "[" * 1000 + "1" + "]" * 1000  # the engine's binder overflows its stack
    with pytest.raises(SandboxError, match=r"^the engine stopped on this statement \(SIGSEGV\); nothing else"):
        run_statement(db, deep, {})
    with pytest.raises(SandboxError, match=r"^the statement ran past 1 s and was stopped$"):
        run_statement(db, "RETURN " + "CASE WHEN true THEN " * 22 + "1" + " END" * 22, {},
                      {"timeout_ms": 1000}, grace=1.0)
    big = run_statement(db, "UNWIND range(1, 5000) AS x RETURN x", {}, {"max_rows": 1000})
    assert (len(big["rows"]), big["truncated"], big["rows"][-1]) == (1000, 1000, [1000])
    with pytest.raises(QueryError, match="bad_alloc|memory"):
        run_statement(db, "UNWIND range(1, 200000000) AS x RETURN count(x)", {}, {"memory_bytes": 512 << 20})
    assert run_statement(db, "MATCH (a:Artifact) RETURN count(*) AS n", {}) == {"columns": ["n"], "rows": [[7]]}


def _bundle(repo: Path) -> Path:
    latest = orjson.loads((repo / ".oracl" / "mirror" / "LATEST.json").read_bytes())
    return repo / ".oracl" / "mirror" / latest["bundle"]


def test_a_stray_wal_and_shadow_never_break_a_reader(repo: Path) -> None:
    """The engine itself leaves .wal/.shadow beside a read-only database when told to
    CHECKPOINT (what the console used to allow); the next reader sets them aside."""
    from oracl.core.store import Store, close

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


def test_the_generated_parser_is_the_one_its_vendor_record_names() -> None:
    """``oracl/cypher_grammar`` holds what ``scripts/vendor_cypher_grammar.py`` generated from
    kuzu==0.11.3's own grammar (its ``--check`` regenerates from the package index)."""
    import hashlib

    import antlr4

    folder = Path(__file__).parents[1] / "oracl" / "face" / "cypher_grammar"
    vendor = orjson.loads((folder / "VENDOR.json").read_bytes())
    assert vendor["kuzu"]["package"] == "kuzu==0.11.3"
    for name, digest in vendor["files"].items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest, name
    assert (folder / "CypherParser.py").read_text().startswith("# Generated from Cypher.g4 by ANTLR 4.13.2")
    assert Path(antlr4.__file__).parent.joinpath("Parser.py").is_file()
    from importlib.metadata import version

    assert version("antlr4-python3-runtime") == "4.13.2" == vendor["generator"]["runtime"].split("==")[1]


def test_the_gate_stops_a_parse_that_runs_past_its_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 48: a 1,029-character CASE and bracket statement kept the parser busy for
    214.7 s of CPU before it was accepted; the parse now has a deadline."""
    from oracl.face import readonly

    statement = "RETURN " + "[x IN [" * 12 + "1" + "] | CASE x WHEN 1 THEN x END]" * 12
    # (its parse takes 3–6 s of CPU on this machine, more under load: the test does not time it)
    monkeypatch.setattr(readonly, "PARSE_SECONDS", 600.0)
    assert readonly.check(statement) == statement  # read to its end within the deadline: accepted
    monkeypatch.setattr(readonly, "PARSE_SECONDS", 0.0)
    with pytest.raises(RefusedError) as err:
        readonly.check(statement)
    assert str(err.value) == "refused: the statement took over 0 s to read; the console only reads the graph"


def test_bytes_that_are_not_utf8_are_one_line_and_the_console_goes_on(repo: Path) -> None:
    """Issue 48 (LOW): invalid UTF-8 typed into the console crashed it with a traceback."""
    import subprocess

    from tests.conftest import ORACL

    one = subprocess.run([ORACL.encode(), b"cypher", b'RETURN "\xff" AS y', b"-r", str(repo).encode()],
                         capture_output=True)
    assert one.returncode == QueryError.exit_code
    assert one.stderr.decode().strip() == "Error: the statement is not UTF-8 text (at character 9)"
    typed = subprocess.run([ORACL, "cypher", "-r", str(repo)], input=b'RETURN "\xff" AS y;\nRETURN 2 AS z;\n',
                           capture_output=True)
    out = typed.stdout.decode() + typed.stderr.decode()
    assert "Traceback" not in out and "not UTF-8 text" in out and "\n2\n" in out
