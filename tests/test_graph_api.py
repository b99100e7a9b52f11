"""Graph primitives, oracl.Memory and the Cypher console against a real built graph."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time
from pathlib import Path

import orjson
import pytest

from oracl import Memory
from oracl.builder.orchestrator import build
from oracl.core.errors import QueryError
from oracl.read import graph
from oracl.read.memory import estimate_tokens

from .conftest import ORACL, SAMPLE, git, on_latest, run_cli, run_tty, write_tree

SMALL = {"buffer_pool_bytes": 64 << 20, "workers": 1}
FILES = {
    **SAMPLE,
    "pkg/export.py": ('"""Write the canonical export."""\nfrom pkg import auth\n\n\n'
                      "def sign_export(data):\n    \"\"\"Sign the export bytes.\"\"\"\n"
                      "    return auth.sign(data)\n\n\ndef other():\n    return 1\n"),
    "pkg/cycle_a.py": "from pkg import cycle_b\n", "pkg/cycle_b.py": "from pkg import cycle_a\n",
}


def trace(root, *a, **kw):  # type: ignore[no-untyped-def]
    return on_latest(graph.trace, root, *a, **kw)


def related(root, *a, **kw):  # type: ignore[no-untyped-def]
    return on_latest(graph.related, root, *a, **kw)


def hub(root, *a, **kw):  # type: ignore[no-untyped-def]
    return on_latest(graph.hub, root, *a, **kw)


def show(root, *a, **kw):  # type: ignore[no-untyped-def]
    return on_latest(graph.show, root, *a, **kw)


def fragment(root, *a, **kw):  # type: ignore[no-untyped-def]
    return on_latest(graph.fragment, root, *a, **kw)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = write_tree(tmp_path / "repo", FILES)
    build(root, **SMALL)
    return root


def test_trace_out_in_both_depth_and_cycles(repo: Path) -> None:
    out = trace(repo, "pkg/export.py", "out", 2)
    level1 = {(e["node"], e["relation"]) for e in out["levels"][0]}
    assert ("pkg/auth.py", "imports") in level1
    assert any(e["node"] == "pkg/util.py" for e in out["levels"][1])  # export → auth → util
    inbound = trace(repo, "pkg/auth.py", "in", 1)
    assert {e["node"] for e in inbound["levels"][0]} >= {"pkg/export.py", "tests/test_auth.py", "docs/guide.md"}
    cyc = trace(repo, "pkg/cycle_a.py", "out", 5)
    assert [e["node"] for lvl in cyc["levels"] for e in lvl] == ["pkg/cycle_b.py", "pkg/cycle_a.py"]
    assert cyc["levels"][1][0]["repeat"] is True  # the cycle is shown once, not expanded again
    only_tests = trace(repo, "pkg/auth.py", "in", 1, relation="tests")
    assert {e["relation"] for e in only_tests["levels"][0]} == {"tests"}
    with pytest.raises(QueryError, match="--depth must be between 1 and 5"):
        trace(repo, "pkg/auth.py", "out", 6)
    with pytest.raises(QueryError, match="is not in the latest build"):
        trace(repo, "nope.py")


def test_related_orders_by_rank_and_reports_the_guard(repo: Path) -> None:
    r = related(repo, "pkg/auth.py", k=3)
    ranks = [n["rank"] for n in r["neighbours"]]
    assert len(ranks) == 3 and ranks == sorted(ranks, reverse=True) and not r["guard_cut"]
    assert r["guard"] == 5000 and r["staleness"].startswith("fresh")


def test_readers_use_the_parameters_the_build_recorded(repo: Path) -> None:
    """related, hub and show after a build with non-default --query-guard, --alpha and
    --priority-cap: the guard, the cap and α they use and show are the build's."""
    build(repo, query_neighbour_guard=2, alpha=0.5, priority_cap=0.75, **SMALL)
    cut = related(repo, "pkg/auth.py", k=50)
    assert cut["guard"] == 2 and cut["guard_cut"] is True and len(cut["neighbours"]) <= 3
    core = hub(repo, "core", k=10)
    assert core["guard"] == 2 and core["guard_cut"] is True and len(core["members"]) == 2
    p = show(repo, "pkg/auth.py")["priority"]
    assert (p["cap"], p["alpha"]) == (0.75, 0.5)
    assert p["base"] == pytest.approx(min(0.75, p["uncapped"]), abs=1e-6)
    assert p["final"] == pytest.approx(p["base"] + 0.5 * p["delta"], abs=1e-6)
    out = run_cli("show", "pkg/auth.py", "--root", str(repo))
    assert out.returncode == 0 and "min(cap 0.75," in out.stdout
    assert "priority\tfinal = m_role·(P0 + α·max(δ,0)) + α·min(δ,0), m_role 1 (product), α 0.5" in out.stdout
    code, shown = run_tty("related", "pkg/auth.py", "--root", str(repo), "-k", "50")
    assert code == 0 and "only the 2 highest-ranked edges were considered" in shown
    out = run_cli("related", "pkg/auth.py", "--root", str(repo), "-k", "50")  # in a pipe: said on stderr
    assert out.returncode == 0 and out.stderr == "Note: only the 2 highest-ranked edges were considered\n"


def test_hub_listing_and_members(repo: Path) -> None:
    listing = hub(repo)
    assert {h["hub"] for h in listing["hubs"]} == {"hub:domain:core", "hub:domain:docs", "hub:domain:tests",
                                                   "hub:domain:root"}
    core = hub(repo, "core", k=2)
    assert core["hub"] == "hub:domain:core" and len(core["members"]) == 2 and core["total"] == 6
    assert [m["rank"] for m in core["members"]] == sorted((m["rank"] for m in core["members"]), reverse=True)
    with pytest.raises(QueryError, match="no domain 'nope'"):
        hub(repo, "nope")


def test_show_breakdown_recomputes_the_priority(repo: Path) -> None:
    s = show(repo, "./pkg/auth.py")
    p = s["priority"]
    total = sum(b["weight"] * b["signal"] for b in p["buckets"])
    assert total == pytest.approx(p["weighted_sum"])
    p0 = min(p["cap"], total * p["m_cls"] * p["m_sens"])
    assert p0 == pytest.approx(p["base"], abs=1e-6)
    assert p["alpha"] == 0.35 and p["final"] == pytest.approx(p0 + p["alpha"] * p["delta"], abs=1e-6)
    assert s["artifact"]["tags"]["domain"] == "core" and s["hub"] == "hub:domain:core"
    assert set(s["edges"]) >= {"imports", "tests", "references"}


def test_fragment_ranges_staleness_and_errors(repo: Path) -> None:
    f = fragment(repo, "pkg/export.py#L5-7")
    assert f["lines"] == ["def sign_export(data):", '    """Sign the export bytes."""', "    return auth.sign(data)"]
    assert f["stale"] is False
    assert fragment(repo, "pkg/export.py", "L1")["lines"] == ['"""Write the canonical export."""']
    with pytest.raises(QueryError, match="has 11 lines; L20-30 is outside it"):
        fragment(repo, "pkg/export.py#L20-30")
    with pytest.raises(QueryError, match="a line range looks like L40-60"):
        fragment(repo, "pkg/export.py#lines")
    (repo / "pkg" / "export.py").write_text("changed\n" * 20)
    g = fragment(repo, "pkg/export.py#L1-2")
    assert g["stale"] and "changed since build" in g["warning"]


def test_memory_api(repo: Path) -> None:
    with Memory.open(repo) as mem:  # (closed: an engine left open forbids a fork later in this process)
        found = mem.search("sign the export", k=3)
        assert found["results"][0]["path"] == "pkg/export.py" and found["results"][0]["stale"] == "fresh"
        assert mem.query_knowledge_graph("path:pkg/auth.py")["mode"] == "node"
        assert mem.query_knowledge_graph("hub:core", k=2)["hub"] == "hub:domain:core"
        assert mem.query_knowledge_graph("signing", k=2)["mode"] == "concept"
        assert mem.query_knowledge_graph("pkg/auth.py", mode="neighbors")["neighbours"]


@pytest.mark.parametrize("budget", [120, 400, 4000])
def test_context_pack_respects_the_budget(repo: Path, budget: int) -> None:
    with Memory.open(repo) as mem:
        pack = mem.context("where is the export signed", budget_tokens=budget)
    assert pack.used_tokens <= budget
    assert estimate_tokens(pack.render()) <= budget + len(pack.items) + 1
    if budget >= 400:
        first = pack.items[0]
        assert first.path == "pkg/export.py" and "symbol sign_export" in first.why
        assert (first.start, first.end) == (5, 7) and "return auth.sign(data)" in first.lines


def test_context_says_when_files_changed_and_finds_the_moved_symbol(repo: Path) -> None:
    (repo / "pkg" / "export.py").write_text("# two new lines\n# at the top\n" + (repo / "pkg" / "export.py").read_text())
    with Memory.open(repo) as mem:
        pack = mem.context("sign export", budget_tokens=2000)
    assert pack.staleness.startswith("stale: 1 of")
    item = next(i for i in pack.items if i.path == "pkg/export.py")
    assert item.stale == "modified" and (item.start, item.end) == (7, 9)
    assert item.lines.startswith("def sign_export(data):")


def test_cypher_one_statement_json_params_and_refusal(repo: Path) -> None:
    r = run_cli("cypher", "MATCH (a:Artifact) WHERE a.domain = $d RETURN count(*) AS n", "-r", str(repo),
                "--param", "d=core", "--json")
    assert r.returncode == 0, r.stderr
    assert orjson.loads(r.stdout) == {"columns": ["n"], "rows": [[6]]}
    for stmt, word in (("MATCH (a:Artifact) DETACH DELETE a", "DETACH DELETE"), ("CREATE (h:Hub {id: 'x'})", "CREATE"),
                       ("MATCH (a:Artifact) SET a.priority = 1", "SET")):
        w = run_cli("cypher", stmt, "-r", str(repo))
        assert (w.returncode, w.stderr.strip()) == (
            18, f"Error: refused: {word} writes to the graph; the console only reads the graph")
    bad = run_cli("cypher", "MATCH (a:Nope) RETURN a", "-r", str(repo))
    assert bad.returncode == 8 and bad.stderr.startswith("Error: Binder exception")


def _read_until(fd: int, needle: bytes, timeout: float = 30.0) -> bytes:
    buf = b""
    end = time.time() + timeout
    while needle not in buf and time.time() < end:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
    return buf


def test_interactive_console_through_a_pty(repo: Path, tmp_path: Path) -> None:
    history = tmp_path / "hist"
    pid, fd = pty.fork()
    if pid == 0:  # the child: the real CLI on a pseudo-terminal
        os.environ.update({"ORACL_CYPHER_HISTORY": str(history), "COLUMNS": "100", "TERM": "dumb"})
        os.execv(ORACL, [ORACL, "cypher", "-r", str(repo)])
    try:
        assert b"read-only" in _read_until(fd, b"oracl> ")
        os.write(fd, b"MATCH (a:Artifact)\r")
        assert b"....> " in _read_until(fd, b"....> ")
        os.write(fd, b"RETURN count(*) AS n;\r")
        out = _read_until(fd, b"row(s)")
        assert b"10" in out and b"1 row(s)" in out
        os.write(fd, b":schema\r")
        assert b"Artifact" in _read_until(fd, b"row(s)")
        os.write(fd, b"MATCH (a:Artifact) DELETE a;\r")
        assert b"refused: DELETE writes to the graph" in _read_until(fd, b"graph")
        os.write(fd, b":quit\r")
        _read_until(fd, b"\x00", timeout=5)
    finally:
        for _ in range(50):  # a failed assertion above must not leave the child waiting for input
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            time.sleep(0.1)
        else:
            os.kill(pid, 9)
            _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert os.WEXITSTATUS(status) == 0
    assert "RETURN count(*) AS n;" in history.read_text()  # persistent history


def test_cli_graph_commands(repo: Path) -> None:
    env = {**os.environ, "COLUMNS": "140"}
    t = run_cli("trace", "pkg/export.py", "-r", str(repo), "--depth", "2", env=env)
    assert t.returncode == 0 and "pkg/auth.py" in t.stdout and "imports" in t.stdout
    assert "pkg/util.py" in run_cli("related", "pkg/auth.py", "-r", str(repo), env=env).stdout
    assert "hub:domain:core" in run_cli("hub", "-r", str(repo), env=env).stdout
    assert "pkg/export.py" in run_cli("hub", "core", "-r", str(repo), env=env).stdout
    code, shown = run_tty("show", "pkg/auth.py", "-r", str(repo), cols=140)
    assert code == 0 and "Priority breakdown" in shown and "m_role 1 (product), α 0.35" in shown
    f = run_cli("fragment", "pkg/export.py#L5-7", "-r", str(repo), env=env)
    assert "def sign_export" in f.stdout
    e = run_cli("fragment", "pkg/export.py", "L50-60", "-r", str(repo), env=env)
    assert (e.returncode, e.stderr.strip()) == (8, "Error: pkg/export.py has 11 lines; L50-60 is outside it")
    assert subprocess.run([ORACL, "show", "x.py", "-r", str(repo)], capture_output=True).returncode == 8


def test_show_says_the_formula_the_build_computed_for_an_example(tmp_path: Path) -> None:
    """An example keeps half of what it earns (m_role 0.5): show's numbers recompute its
    final priority by Eq. 5 with the role, and P0 + α·δ (what show used to print) does not."""
    root = write_tree(tmp_path / "r", {**SAMPLE, "examples/demo.py": "from pkg.auth import sign\n\nprint(sign(b'x'))\n"})
    build(root, **SMALL)
    p = show(root, "examples/demo.py")["priority"]
    assert (p["role"], p["m_role"], p["formula"]) == ("example", 0.5, "m_role·(P0 + α·max(δ,0)) + α·min(δ,0)")
    by_hand = 0.5 * (p["base"] + p["alpha"] * max(p["delta"], 0.0)) + p["alpha"] * min(p["delta"], 0.0)
    assert p["final"] == pytest.approx(by_hand, abs=1e-6)
    assert p["final"] != pytest.approx(p["base"] + p["alpha"] * p["delta"], abs=1e-6)
    out = run_cli("show", "examples/demo.py", "-r", str(root))
    assert out.returncode == 0 and "m_role 0.5 (example), α 0.35" in out.stdout


def test_trace_and_related_are_structural_by_default_and_bounded(tmp_path: Path) -> None:
    """Co-change (files committed together) only when asked for; trace draws at most
    --limit branches, the best-ranked first, and says how many it found."""
    files = {"app.py": "import store\n" + "".join(f"import m{i}\n" for i in range(8)), "store.py": "X = 1\n",
             "notes.md": "# notes\n", **{f"m{i}.py": f"V = {i}\n" for i in range(8)}}
    root = write_tree(tmp_path / "co", files)
    git(root, "init", "-q")
    git(root, "add", "-A", ".")
    git(root, "commit", "-qm", "import")
    for n in range(2):  # app.py and notes.md change together twice more
        (root / "app.py").write_text(files["app.py"] + f"# {n}\n")
        (root / "notes.md").write_text(files["notes.md"] + f"{n}\n")
        git(root, "commit", "-qam", f"edit {n}")
    build(root, **SMALL)
    plain = trace(root, "app.py", "out", 1)
    assert {e["relation"] for e in plain["levels"][0]} == {"imports"} and plain["cochange"] is False
    assert (plain["shown"], plain["total"]) == (9, 9)
    co = trace(root, "app.py", "out", 1, cochange=True)
    assert ("notes.md", "co_change") in {(e["node"], e["relation"]) for e in co["levels"][0]} and co["total"] == 10
    assert [e["node"] for e in trace(root, "app.py", "out", 1, relation="co_change")["levels"][0]] == ["notes.md"]
    three = trace(root, "app.py", "out", 1, limit=3)
    ranks = sorted((-e["rank"], e["node"]) for e in plain["levels"][0])[:3]
    assert [e["node"] for e in three["levels"][0]] == [n for _, n in ranks] and (three["shown"], three["total"]) == (3, 9)
    assert "notes.md" not in {n["path"] for n in related(root, "app.py", k=20)["neighbours"]}
    assert "notes.md" in {n["path"] for n in related(root, "app.py", k=20, cochange=True)["neighbours"]}
    proc = run_cli("trace", "app.py", "--limit", "3", "-r", str(root))
    assert proc.returncode == 0 and len(proc.stdout.splitlines()) == 3
    assert proc.stderr == "3 of 9 branches drawn (--limit N for more) · 1 co-change branch(es) left out (--cochange)\n"
    assert plain["cochange_left_out"] == 1 and co["cochange_left_out"] == 0
    code, shown = run_tty("trace", "app.py", "-r", str(root))
    assert code == 0 and f"10 files · build {plain['build_id']} · 1 co-change branch(es) left out (--cochange)" in shown


def test_an_empty_or_binary_file_never_leads_a_hub(tmp_path: Path) -> None:
    """flask's empty ``py.typed`` outranked ``blueprints.py``, and binary ``.ai`` files led
    hubs: a lone belongs_to edge gives a file a high association rank. Such members come
    after every member with something to read, in the listing and as the hub's top member."""
    files = {"app/py.typed": "", "app/logo.ai": "%PDF\0binary\0",
             "app/blueprints.py": "import os\nimport sys\n\n\ndef register():\n    return 1\n",
             "app/guide.md": "# Guide\n\nSee blueprints.py, views.py, models.py and helpers.py for details.\n",
             "app/views.py": "def index():\n    return 1\n", "app/models.py": "def load():\n    return 1\n",
             "app/helpers.py": "def h():\n    return 1\n"}
    root = write_tree(tmp_path / "h", files)
    build(root, **SMALL)
    members = hub(root, "app", k=10)["members"]
    paths = [m["path"] for m in members]
    assert paths == ["app/guide.md", "app/blueprints.py", "app/helpers.py", "app/models.py", "app/views.py",
                     "app/py.typed", "app/logo.ai"]
    rank = {m["path"]: m["rank"] for m in members}
    assert rank["app/py.typed"] > rank["app/logo.ai"] > rank["app/blueprints.py"]  # what put them first before
    assert {h["hub"]: h["top_member"] for h in hub(root)["hubs"]}["hub:domain:app"] == "app/guide.md"
    alone = write_tree(tmp_path / "only", {"bin/empty.txt": "", "bin/blob.dat": "\0\0"})
    build(alone, **SMALL)  # a hub of nothing but such files still has a top member
    assert {h["hub"]: h["top_member"] for h in hub(alone)["hubs"]}["hub:domain:bin"] in {"bin/blob.dat", "bin/empty.txt"}
