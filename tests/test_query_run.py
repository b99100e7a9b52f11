"""The query plane end to end on a real built graph, through the library and the CLI."""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oracl.builder.orchestrator import build
from oracl.core.errors import OraclError
from oracl.read.query import run
from oracl.read.snapshot import Snapshot
from tests.conftest import export_of

from .conftest import SAMPLE, on_latest, run_cli, run_tty, write_learned, write_tree

SMALL = {"buffer_pool_bytes": 64 << 20, "workers": 1}
FILES = {
    **SAMPLE,
    "pkg/export.py": '"""Write the canonical export and sign it."""\ndef sign_export(data):\n    return data\n',
    "archive/old_export.py": "def sign_export(data):\n    return None\n",
    "docs/reports/weekly_report.md": "# Weekly report\nexport signing went fine\n",
    "docs/reports/q3_report.md": "# Q3 report\nnothing\n",
    "scripts/deploy.sh": "#!/bin/sh\n# deploy the export\npython pkg/export.py\n",
}


def search(root, text, **kw):  # type: ignore[no-untyped-def]
    return on_latest(run.search, root, text, **kw)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_tree(tmp_path_factory.mktemp("q") / "repo", FILES)
    build(root, **SMALL)
    return root


def paths(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [r["path"] for r in result.results]


def test_concept_query_finds_the_code(repo: Path) -> None:
    r = search(repo, "where is the export signed", log=False)
    assert paths(r)[0] == "pkg/export.py"
    assert r.query_class == "concept" and r.results[0]["provenance"] == "fts"
    assert "filename" in r.results[0]["matched_fields"]


def test_negated_query_drops_archived_copies(repo: Path) -> None:
    with_archive = paths(search(repo, "sign export", log=False))
    assert "archive/old_export.py" in with_archive
    without = paths(search(repo, "sign export but not archived", log=False))
    assert "archive/old_export.py" not in without and without[0] == "pkg/export.py"


def test_filtered_queries(repo: Path) -> None:
    r = search(repo, "reports", log=False)  # a plain word is evidence and a hint, not a filter
    assert r.query_class == "concept" and sorted(paths(r)[:2]) == ["docs/reports/q3_report.md",
                                                                  "docs/reports/weekly_report.md"]
    assert search(repo, "type:report", log=False).query_class == "wildcard"
    r = search(repo, "export ext:sh", log=False)
    assert paths(r) == ["scripts/deploy.sh"]
    r = search(repo, "sign domain:core", log=False)
    assert all(x["domain"] == "core" for x in r.results) and paths(r)[0] == "pkg/export.py"


def test_fast_path_and_its_fallback(repo: Path) -> None:
    r = search(repo, "file:pkg/auth.py", log=False)
    assert paths(r) == ["pkg/auth.py"] and r.results[0]["score"] == 1.0
    assert r.results[0]["provenance"] == "mirror" and r.query_class == "fast_path"
    assert paths(search(repo, "filename:export.py", log=False)) == ["pkg/export.py"]
    assert paths(search(repo, "prefix:docs/reports/", log=False)) == [
        "docs/reports/q3_report.md", "docs/reports/weekly_report.md"]
    assert paths(search(repo, "prefix:docs/ -weekly", log=False)) == ["docs/guide.md", "docs/reports/q3_report.md"]
    fallback = search(repo, "file:signing", log=False)
    assert fallback.notices and fallback.results[0]["provenance"] == "fts"


def test_json_schema_and_explain(repo: Path) -> None:
    out = run_cli("query", "sign export", "-r", str(repo), "--json", "--explain", "-k", "3")
    assert out.returncode == 0, out.stderr
    doc = orjson.loads(out.stdout)
    assert doc["schema"] == "oracl.search/1" and len(doc["results"]) == 3
    assert set(doc["results"][0]) == {"rank", "path", "id", "score", "domain", "content_type", "lifecycle",
                                      "format", "priority", "matched_fields", "provenance", "checksum", "spans",
                                      "stale", "why"}
    assert doc["staleness"] == "fresh: the files named are unchanged since the build" and {r["stale"] for r in doc["results"]} == {"fresh"}
    assert doc["results"][0]["why"] == doc["explain"]["results"][0]["why"]
    first = doc["results"][0]  # pkg/export.py: its best chunk is the whole 3-line file (docstring and def)
    assert first["path"] == "pkg/export.py" and first["spans"] == [{"start": 1, "end": 3, "label": "lines"}]
    assert [p[0] for p in doc["explain"]["passes"]] == ["directives", "negation", "tokens", "hints", "time", "weights"]
    assert "$fts_hits" in doc["explain"]["cypher"][0]["text"] and "sign" in doc["explain"]["cypher"][0]["params"]["q"]
    assert doc["explain"]["results"][0]["matches"]
    code, shown = run_tty("query", "sign", "export", "-r", str(repo), "--explain", cols=160)
    assert code == 0 and "pkg/export.py" in shown and "Cypher" in shown and "A(m)=" in shown
    piped = run_cli("query", "sign", "export", "-r", str(repo), "--explain").stdout.splitlines()
    assert "parse\ttokens\tsign export" in piped and any(line.startswith("cypher\t") for line in piped)
    assert any(line.startswith("pkg/export.py\t") for line in piped)
    assert any(line.startswith("why\tpkg/export.py\tA(m)=") for line in piped)


def test_telemetry_is_written_and_never_fails_a_search(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "r", SAMPLE)
    build(root, **SMALL)
    search(root, "hashlib")
    logs = root / ".oracl" / "logs"
    hist = orjson.loads((logs / "search_history.jsonl").read_bytes().splitlines()[-1])
    assert {"timestamp", "session_id", "query", "parsed", "returned_ids", "result_count", "latency_ms"} <= set(hist)
    metrics = orjson.loads((logs / "agent_metrics.jsonl").read_bytes().splitlines()[-1])
    assert metrics["query_class"] == "concept" and "estimated_cost_usd" in metrics
    # a vault whose logs cannot be written: the search still answers
    for f in logs.iterdir():
        f.unlink()
    logs.rmdir()
    logs.write_text("not a folder")
    r = search(root, "hashlib")
    assert r.results


def test_searches_and_learned_data_leave_priority_alone(tmp_path: Path) -> None:
    """Being returned is not evidence (design §9): searches leave ``usage`` at 0, and so
    does accepted learned data (query-local: a global prior would move unrelated answers)."""
    root = write_tree(tmp_path / "r", SAMPLE)
    build(root, **SMALL)
    for _ in range(3):
        search(root, "file:pkg/util.py")
    write_learned(root / ".oracl" / "learned_terms.json",
        '[{"term": "helper", "path": "pkg/util.py", "confidence": 0.5, "sessions": 3}]')
    build(root, **SMALL)
    doc = orjson.loads(export_of(root))
    util = next(n for n in doc["nodes"] if n.get("path") == "pkg/util.py")
    assert util["usage"] == 0 and util["priority_detail"]["components"]["usage"] == 0.0


@pytest.mark.parametrize(("args", "code", "line"), [
    (("query", "the of"), 8, "Error: the query is empty: give words to search for, or a filter such as domain:core"),
    (("query", "x", "--persona", "pirate"), 8, "Error: unknown persona 'pirate': choose one of default, developer, operator, writer, security"),
    (("query", "since:tomorrow x"), 8, "Error: since: expects a date like 2026-01-31, not 'tomorrow'"),
])
def test_query_errors(repo: Path, args: tuple, code: int, line: str) -> None:
    r = run_cli(*args, "-r", str(repo))
    assert (r.returncode, r.stderr.strip()) == (code, line)


HOSTILE = st.one_of(
    st.sampled_from(['"}) DETACH DELETE n //', "') MATCH (n) DETACH DELETE n //", "CALL db.clear()",
                     "LOAD FROM 'x.csv' RETURN *", "\\", "\\'", "\x00", "domain:'; DROP", "file:\"",
                     "-", "NOT", "but not", "since:", "ext:,,,", "prefix:", "$q", "/*AND_FILTERS*/",
                     "x" * 10_000, "🙂 ü ß ∑", "\u202e", "{}", "[[", "a:b:c:d"]),
    st.text(min_size=0, max_size=300),
    st.lists(st.sampled_from(["auth", "NOT", "-x", "domain:core", "file:a.py", "'", '"', "})", "//",
                              "DELETE", "CALL", "LOAD", "\\", "\x00", "since:2026-01-01", "recent"]),
             max_size=12).map(" ".join),
)


def test_hostile_strings_only_give_results_or_one_line_errors(tmp_path_factory: pytest.TempPathFactory) -> None:
    root = write_tree(tmp_path_factory.mktemp("h") / "r", SAMPLE)
    build(root, **SMALL)
    export = root / ".oracl" / "export.idx"
    digest = hashlib.sha256(export.read_bytes()).hexdigest()
    from oracl.read.stats import stats

    before = on_latest(stats, root)
    snap = Snapshot.open(root)

    @settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
    @given(text=HOSTILE)
    def accept(text: str) -> None:
        try:
            r = run.search(snap, text, limit=5, log=False)
        except OraclError as exc:
            assert "\n" not in str(exc) and str(exc)
            return
        assert len(r.results) <= 5

    accept()
    snap.close()
    after = on_latest(stats, root)
    assert (after["artifacts"], after["edges"], after["edges_by_relation"]) == (
        before["artifacts"], before["edges"], before["edges_by_relation"])
    assert hashlib.sha256(export.read_bytes()).hexdigest() == digest
    from oracl.core.store import open_engines

    assert not [p for p in open_engines() if p.startswith(str(root.resolve()))]  # the snapshots closed it


def test_the_cli_search_is_memory_search_with_each_results_staleness(tmp_path: Path) -> None:
    """`oracl query` goes through `Memory.search` (the entrance MCP and the web view use):
    a result whose file changed since the build says so, in the table and in --json."""
    from oracl.read.memory import Memory

    root = write_tree(tmp_path / "repo", FILES)
    build(root, **SMALL)
    (root / "pkg" / "export.py").write_text((root / "pkg" / "export.py").read_text() + "# edited\n")
    doc = orjson.loads(run_cli("query", "sign export", "-r", str(root), "--json", "-k", "3").stdout)
    with Memory.open(root) as mem:
        same = mem.search("sign export", k=3)
    assert [(r["path"], r["stale"]) for r in doc["results"]] == [(r["path"], r["stale"]) for r in same["results"]]
    assert dict((r["path"], r["stale"]) for r in doc["results"])["pkg/export.py"] == "modified"
    assert doc["staleness"].startswith("stale: 1 of 3 named files changed since the build (pkg/export.py modified")
    piped = run_cli("query", "sign", "export", "-r", str(root), "-k", "3").stdout.splitlines()
    assert any(line.startswith("pkg/export.py (modified)\t") for line in piped), piped
