"""The learning loop (design §9, "Learning"): what was used is logged, mined into
proposals with hand-computed confidences, reviewed, and only then merged and signed."""

from __future__ import annotations

import hashlib
import math
import os
import subprocess
import sys
import tracemalloc
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest

from oracl.builder.orchestrator import build
from oracl.core import telemetry
from oracl.core.errors import LearnedDataError
from oracl.read.learn import mine as M
from oracl.read.learn.usage import TIME, used_paths
from oracl.read.memory import Memory

from .conftest import export_of, run_cli, write_learned, write_tree

SMALL = {"buffer_pool_bytes": 64 << 20, "workers": 1}
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


class View:
    """A build of the listed files; ``words`` are the stems each file's text holds."""

    def __init__(self, files: dict[str, set[str]], withheld: set[str] = frozenset(),  # type: ignore[assignment]
                 domains: dict[str, str] | None = None) -> None:
        self.files, self.hidden, self.domains = files, withheld, domains or {}

    def exists(self, path: str) -> bool:
        return path in self.files

    def withheld(self, path: str) -> bool:
        return path in self.hidden

    def has_term(self, path: str, stem: str) -> bool:
        return stem in self.files.get(path, set())

    def domain(self, path: str) -> str | None:
        return self.domains.get(path)


def row(session: str, path: str, rank: int | None, query: str | None, at: datetime = NOW) -> dict:
    return {"timestamp": at.strftime(TIME), "session_id": session, "action": "show", "path": path,
            "rank": rank, "query": query}


# ---- the formulas, by hand -----------------------------------------------------------------

def test_formulas_by_hand() -> None:
    assert M.weight(0) == 1.0 and M.weight(90) == 0.5 and M.weight(180) == 0.25 and M.weight(-5) == 1.0
    assert M.pmi(2, 2, 2, 10) == pytest.approx(math.log(5))
    assert M.npmi(2, 2, 2, 10) == pytest.approx(1.0)
    # n_ab 2, n_a 4, n_b 2, N 10: PMI ln 2.5 = 0.916291, nPMI 0.916291 / ln 5 (1.609438) = 0.569323
    assert M.npmi(2, 4, 2, 10) == pytest.approx(0.569323, abs=1e-6)
    assert M.confidence(0.569323, 2.0) == 0.3795  # × 2/3
    assert M.confidence(1.0, 2.0) == 0.6667
    assert M.confidence(1.0, 1.0) == 0.5  # two sessions 90 days old: s = 0.5 + 0.5
    assert M.npmi(3, 3, 3, 3) == 0.0  # always together in every session: no information


def _sessions() -> list[dict]:
    """10 sessions: s0, s1 search "signing" and use verify.py (rank 3) and archive.py (not
    returned); eight others use one helper each at rank 2."""
    rows = []
    for s in ("s0", "s1"):
        rows += [row(s, "verify.py", 3, "signing bundle"), row(s, "archive.py", None, "signing bundle")]
    for i in range(8):
        rows.append(row(f"o{i}", f"h{i}.py", 2, f"helper number {i}"))
    return rows


def test_association_and_term_proposals_by_hand() -> None:
    files = {"verify.py": {"digest"}, "archive.py": {"bundle", "archiv"}, **{f"h{i}.py": set() for i in range(8)}}
    mined = M.mine(_sessions(), View(files), NOW)
    assert mined.sessions == 10 and mined.rows == 12
    by = {(p["kind"], p.get("term", p.get("source")), p.get("path", p.get("target"))): p for p in mined.proposals}
    assoc = by[("association", "archive.py", "verify.py")]
    # n_ab 2, n_a 2, n_b 2, N 10, both sessions today (s = 2): PMI ln 5, nPMI 1, κ 2/3
    assert (assoc["support"], assoc["pmi"], assoc["lift"], assoc["confidence"]) == (2, 1.6094, 5.0, 0.6667)
    assert assoc["examples"] == ["signing bundle"] and assoc["status"] == "pending"
    assert assoc["id"] == hashlib.sha256(b"association\0archive.py\0verify.py").hexdigest()[:12]
    # "sign" (the stem of signing) is in neither file: a gap for both; "bundle" is in archive.py: none there
    assert by[("term", "sign", "verify.py")]["confidence"] == 0.6667
    assert by[("term", "sign", "archive.py")]["confidence"] == 0.6667
    assert ("term", "bundle", "archive.py") not in by and by[("term", "bundle", "verify.py")]["support"] == 2
    assert mined.skipped["word already in the file"] == 1
    # each helper was used in one session only: below the support gate
    assert not [p for p in mined.proposals if p.get("path", "").startswith("h") or p.get("source", "").startswith("h")]


def test_decay_halves_the_support_of_old_sessions() -> None:
    old = NOW - timedelta(days=90)
    rows = [row(s, p, None, "signing bundle", old) for s in ("s0", "s1") for p in ("a.py", "b.py")]
    rows += [row(f"o{i}", f"h{i}.py", 2, "other words", NOW) for i in range(8)]
    mined = M.mine(rows, View({"a.py": set(), "b.py": set(), **{f"h{i}.py": set() for i in range(8)}}), NOW)
    assoc = next(p for p in mined.proposals if p["kind"] == "association")
    assert (assoc["weighted_support"], assoc["confidence"]) == (1.0, 0.5)  # nPMI 1 × 1/(1+1)


def test_first_result_followed_up_is_not_evidence() -> None:
    """The guard against self-reinforcement: a file followed up at rank 1 teaches nothing."""
    rows = [row(f"s{i}", p, 1, "signing bundle") for i in range(5) for p in ("a.py",)]
    rows += [row(f"s{i}", "b.py", 1, "signing bundle") for i in range(5)]
    rows += [row(f"o{i}", f"h{i}.py", 2, "other words") for i in range(8)]
    mined = M.mine(rows, View({"a.py": set(), "b.py": set(), **{f"h{i}.py": set() for i in range(8)}}), NOW)
    assert mined.proposals == []


def test_sessions_split_where_they_pause() -> None:
    late = NOW + timedelta(hours=2)
    rows = [row("s", "a.py", None, "q"), row("s", "b.py", None, "q", late)]
    m = M.Miner(View({"a.py": set(), "b.py": set()}), NOW)
    for r in rows:
        m.add(r)
    assert m.result().sessions == 2  # two hours apart: two sessions, no pair


def test_tag_correction_from_filters() -> None:
    rows = [row(f"s{i}", "pkg/keys.py", None, "domain:security rotate") for i in range(3)]
    rows += [row(f"o{i}", f"h{i}.py", 2, "other") for i in range(3)]
    view = View({"pkg/keys.py": set(), **{f"h{i}.py": set() for i in range(3)}}, domains={"pkg/keys.py": "pkg"})
    mined = M.mine(rows, view, NOW)
    tag = next(p for p in mined.proposals if p["kind"] == "tag")
    # 3 of the 3 filtered sessions using it, s = 3: κ = 1 × 3/4
    assert (tag["path"], tag["tag"], tag["value"], tag["support"], tag["confidence"]) == (
        "pkg/keys.py", "domain", "security", 3, 0.75)
    view.domains["pkg/keys.py"] = "security"  # already there: nothing to correct
    assert not [p for p in M.mine(rows, view, NOW).proposals if p["kind"] == "tag"]


def test_withheld_and_vanished_files_are_never_proposed() -> None:
    rows = [row(s, p, None, "signing bundle") for s in ("s0", "s1") for p in ("a.py", "id_rsa", "gone.py")]
    rows += [row(f"o{i}", f"h{i}.py", 2, "other") for i in range(8)]
    view = View({"a.py": set(), "id_rsa": set(), **{f"h{i}.py": set() for i in range(8)}}, withheld={"id_rsa"})
    mined = M.mine(rows, view, NOW)
    named = {x for p in mined.proposals for x in (p.get("path"), p.get("source"), p.get("target"))}
    assert "id_rsa" not in named and "gone.py" not in named
    assert mined.skipped["withheld file"] >= 1 and mined.skipped["file not in the build"] >= 1


def test_a_secret_in_a_log_line_never_reaches_a_proposal() -> None:
    key = "AKIA" + "ABCDEFGHIJKLMNOP"
    rows = [row(s, p, None, f"deploy with {key} fails") for s in ("s0", "s1") for p in ("a.py", "b.py")]
    rows += [row(f"o{i}", f"h{i}.py", 2, "other") for i in range(8)]
    mined = M.mine(rows, View({"a.py": set(), "b.py": set(), **{f"h{i}.py": set() for i in range(8)}}), NOW)
    text = orjson.dumps(mined.proposals).decode()
    assert mined.proposals and key not in text and key.lower() not in text and "«redacted:" in text


@pytest.mark.parametrize("bad", [
    {"timestamp": "yesterday", "session_id": "s", "path": "a.py", "rank": None},
    {"timestamp": NOW.strftime(TIME), "session_id": "", "path": "a.py", "rank": None},
    {"timestamp": NOW.strftime(TIME), "session_id": "s", "path": 7, "rank": None},
    {"timestamp": NOW.strftime(TIME), "session_id": "s", "path": "a.py", "rank": -1},
    {"timestamp": NOW.strftime(TIME), "session_id": "s", "path": "a.py", "rank": True},
])
def test_unreadable_rows_are_counted_and_skipped(bad: dict) -> None:
    mined = M.mine([bad], View({"a.py": set()}), NOW)
    assert (mined.rows, mined.skipped["unreadable row"], mined.proposals) == (0, 1, [])


# ---- the log: rotation, concurrency, streaming ----------------------------------------------

def test_used_paths_of_each_answer() -> None:
    assert used_paths("show", {"artifact": {"path": "a.py"}}) == ["a.py"]
    assert used_paths("fragment", {"path": "b.py"}) == ["b.py"]
    assert used_paths("trace", {"root": "c.py"}) == ["c.py"]
    assert used_paths("callers", {"targets": [{"path": "d.py"}, {"path": "d.py"}, {"path": "e.py"}]}) == ["d.py", "e.py"]
    assert used_paths("impact", {"changed": ["f.py"]}) == ["f.py"]
    assert used_paths("hub", {"path": "x"}) == []


def test_a_log_rotates_and_is_read_back_oldest_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(telemetry.LOG_BYTES_ENV, "1024")
    for i in range(400):
        assert telemetry.append(tmp_path, "t.jsonl", {"i": i, "pad": "x" * 40})
    logs = sorted(p.name for p in (tmp_path / "logs").iterdir() if not p.name.startswith("."))
    assert logs == ["t.jsonl", "t.jsonl.1", "t.jsonl.2", "t.jsonl.3"]  # bounded: KEEP generations and the live one
    assert all((tmp_path / "logs" / n).stat().st_size <= 1024 + 64 for n in logs)
    got = [r["i"] for r in telemetry.lines(tmp_path, "t.jsonl")]
    assert got == list(range(got[0], 400))  # the newest lines, in order, none lost between generations


_WRITER = """
import sys
from pathlib import Path
from oracl.core import telemetry
for i in range(int(sys.argv[3])):
    assert telemetry.append(Path(sys.argv[1]), "c.jsonl", {"w": sys.argv[2], "i": i, "pad": "y" * 100})
"""


@pytest.mark.parametrize("limit", [str(1 << 30), "4096"])
def test_processes_append_at_once(tmp_path: Path, limit: str) -> None:
    env = {**os.environ, telemetry.LOG_BYTES_ENV: limit}
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path), str(w), "300"], env=env)
             for w in range(4)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    count = telemetry.LineCount()
    rows = list(telemetry.lines(tmp_path, "c.jsonl", count))
    assert count.bad == 0  # no line interleaved or cut
    if limit != "4096":
        assert sorted((r["w"], r["i"]) for r in rows) == sorted((str(w), i) for w in range(4) for i in range(300))
    else:  # rotated many times: what is kept is the newest lines (bounded), each writer's in its order
        assert rows and len(rows) <= (telemetry.KEEP + 1) * (4096 // 100 + 1)
        assert any(r["i"] == 299 for r in rows)
        for w in range(4):
            mine = [r["i"] for r in rows if r["w"] == str(w)]
            assert mine == sorted(mine)


def test_a_huge_or_cut_log_is_streamed_in_bounded_memory(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    path = logs / "usage.jsonl"
    with open(path, "wb") as fh:
        fh.write(b'{"a": 1}\n')
        fh.truncate(1 << 30)  # a 1 GiB hole: one line of zero bytes with no end
        fh.seek(1 << 30)
        fh.write(b'\n{"a": 2}\nnot json\n[1]\n{"a": 3')  # then a good line, garbage, a cut last line
    count = telemetry.LineCount()
    tracemalloc.start()
    rows = list(telemetry.lines(tmp_path, "usage.jsonl", count))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert rows == [{"a": 1}, {"a": 2}] and (count.rows, count.bad) == (2, 4)
    assert peak < 8 << 20


# ---- end to end: Memory, CLI sessions, review, build, signature ------------------------------

FILES = {
    "pkg/signer.py": 'def sign_export(data):\n    """Sign the canonical export."""\n    return data\n',
    "pkg/archive.py": 'def archive_copy(path):\n    """Keep an archived copy of a bundle."""\n    return path\n',
    "pkg/verify.py": "def check_digest(blob):\n    return len(blob) > 0\n",
    "pkg/keys.pem": "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----\n",
    **{f"pkg/h{i}.py": f"def helper{i}():\n    return {i}\n" for i in range(6)},
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = write_tree(tmp_path / "repo", FILES)
    build(root, **SMALL)
    return root


def _use(root: Path, session: str, query: str, *paths: str) -> None:
    with Memory.open(root, session=session) as mem:
        mem.search(query, k=5, freshness=False)
        for p in paths:
            mem.fragment(p)


def _header(root: Path) -> dict:
    from oracl.read.snapshot import Snapshot

    with Snapshot.open(root) as snap:
        return dict(snap.header)


def _usage(root: Path) -> list[dict]:
    return list(telemetry.lines(root / ".oracl", "usage.jsonl"))


def test_follow_ups_are_logged_with_rank_and_query(repo: Path) -> None:
    with Memory.open(repo, session="m1") as mem:
        mem.search("signing export bundle", k=5, freshness=False)
        mem.show("pkg/archive.py")
        mem.fragment("pkg/verify.py")
        mem.callers("sign_export")
    rows = _usage(repo)
    assert [(r["action"], r["path"], r["session_id"]) for r in rows] == [
        ("show", "pkg/archive.py", "m1"), ("fragment", "pkg/verify.py", "m1"), ("callers", "pkg/signer.py", "m1")]
    assert rows[0]["rank"] == 2 and rows[1]["rank"] is None and rows[2]["rank"] == 1
    assert {r["query"] for r in rows} == {"signing export bundle"}
    with Memory.open(repo, session="other") as mem:  # another session's follow-up joins no search
        mem.show("pkg/archive.py")
    assert _usage(repo)[-1]["query"] is None and _usage(repo)[-1]["rank"] is None


def test_follow_ups_are_not_logged_when_the_search_log_is_off(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORACL_SEARCH_LOG", "0")
    _use(repo, "m", "signing export", "pkg/verify.py")
    assert _usage(repo) == []


def test_a_follow_up_never_fails_an_answer(repo: Path) -> None:
    (repo / ".oracl" / "logs").write_text("not a folder")  # (tests run as root: a mode would not stop a write)
    with Memory.open(repo, session="m") as mem:
        assert mem.search("signing", freshness=False)["results"]
        assert mem.show("pkg/verify.py")["artifact"]["path"] == "pkg/verify.py"
        assert mem.used("web", ["pkg/verify.py"]) == 0


def test_cli_commands_of_one_terminal_share_a_session(repo: Path) -> None:
    """Two commands started by one parent without a terminal: one session (its key is the
    parent process), so the follow-up finds the search before it."""
    env = {k: v for k, v in os.environ.items() if k != "ORACL_SESSION"}
    env["ORACL_WARM"] = "0"
    assert run_cli("query", "signing export bundle", "-r", str(repo), env=env).returncode == 0
    assert run_cli("show", "pkg/archive.py", "-r", str(repo), env=env).returncode == 0
    last = _usage(repo)[-1]
    assert last["path"] == "pkg/archive.py" and last["query"] == "signing export bundle" and last["rank"] == 2
    assert last["session_id"].startswith("t")


def _teach(root: Path) -> None:
    for s in ("s1", "s2", "s3"):
        _use(root, s, "signing bundle", "pkg/verify.py", "pkg/archive.py")
    for i in range(6):
        _use(root, f"o{i}", f"helper{i}", f"pkg/h{i}.py")


def test_the_loop_end_to_end(repo: Path) -> None:
    _teach(repo)
    def ranking() -> list[tuple[str, float]]:
        out = orjson.loads(run_cli("query", "signing", "-r", str(repo), "--json").stdout)
        return [(r["path"], r["score"]) for r in out["results"]]

    before = ranking()
    r = run_cli("learn", "-r", str(repo), "--json")
    assert r.returncode == 0, r.stderr
    summary = orjson.loads(r.stdout)
    assert summary["sessions"] == 9 and summary["by_kind"]["association"]["pending"] == 1
    # proposals wait in the vault: nothing reaches the graph before a decision
    build(repo, **SMALL)
    header = _header(repo)
    assert "learned" not in header
    assert ranking() == before
    props = orjson.loads(run_cli("learn", "review", "-r", str(repo), "--json").stdout)["proposals"]
    assoc = next(p for p in props if p["kind"] == "association")
    # 3 sessions of 9 use both, nothing else uses either: PMI ln 3, nPMI 1, κ = 3/4
    assert (assoc["source"], assoc["target"], assoc["support"], assoc["confidence"]) == (
        "pkg/archive.py", "pkg/verify.py", 3, 0.75)
    term = next(p for p in props if p["kind"] == "term" and p["path"] == "pkg/verify.py" and p["term"] == "sign")
    r = run_cli("learn", "accept", assoc["id"], term["id"], "-r", str(repo))
    assert r.returncode == 0 and r.stdout.startswith("accepted: 2;"), r.stderr
    build(repo, **SMALL)
    vault = repo / ".oracl"
    header = _header(repo)
    for kind, name in (("edges", "learned_edges.json"), ("terms", "learned_terms.json")):
        assert header["learned"][kind]["sha256"] == hashlib.sha256((vault / name).read_bytes()).hexdigest()
    assert (header["learned"]["edges"]["rows"], header["learned"]["terms"]["rows"]) == (2, 1)
    decisions_log = (vault / "learn" / "decisions.jsonl").read_bytes()
    assert header["learned"]["decisions"] == {"file": "learn/decisions.jsonl", "rows": 2,
                                              "sha256": hashlib.sha256(decisions_log).hexdigest()}
    export = orjson.loads(export_of(repo))
    assert export["schema"]["learned"] == header["learned"]  # inside the signed export
    assert run_cli("verify", "-r", str(repo)).returncode == 0
    why = run_cli("query", "signing", "-r", str(repo), "--explain").stdout
    assert "sign (learned from 3 sessions)→learned" in why
    shown = run_cli("show", "pkg/verify.py", "-r", str(repo)).stdout
    assert "learned\tterm\tsign\t0.75\tlearned from 3 sessions" in shown
    assert "learned\tassociation\tpkg/archive.py\t0.75\tlearned from 3 sessions" in shown
    # rejecting takes it out of the learned files; mining again keeps the decision
    assert run_cli("learn", "reject", term["id"], "-r", str(repo)).returncode == 0
    assert orjson.loads((vault / "learned_terms.json").read_bytes()) == []
    run_cli("learn", "-r", str(repo))
    again = orjson.loads(run_cli("learn", "review", "-r", str(repo), "--json").stdout)["proposals"]
    assert {p["id"]: p["status"] for p in again}[term["id"]] == "rejected"
    decisions = [orjson.loads(x) for x in (vault / "learn" / "decisions.jsonl").read_bytes().splitlines()]
    assert [(d["id"], d["decision"]) for d in decisions] == [
        (assoc["id"], "accepted"), (term["id"], "accepted"), (term["id"], "rejected")]


def test_hand_written_learned_rows_are_kept(repo: Path) -> None:
    vault = repo / ".oracl"
    write_learned(vault / "learned_edges.json", '[{"source": "pkg/h0.py", "target": "pkg/h1.py", "confidence": 0.4}]')
    _teach(repo)
    run_cli("learn", "-r", str(repo))
    assert run_cli("learn", "accept", "--all", "-r", str(repo)).returncode == 0
    edges = orjson.loads((vault / "learned_edges.json").read_bytes())
    assert edges[0] == {"source": "pkg/h0.py", "target": "pkg/h1.py", "confidence": 0.4}
    assert len(edges) == 3


@pytest.mark.parametrize(("name", "text", "line"), [
    ("learn/proposals.json", "{not json", "Error: proposals.json is not readable JSON"),
    ("learn/proposals.json", '{"proposals": [{"id": "0123456789ab", "kind": "term", "status": "pending", '
     '"confidence": 2, "term": "x", "path": "pkg/h0.py"}]}',
     "Error: learn/proposals.json, proposal 1 (0123456789ab): confidence must be a number in (0, 1]"),
    ("learned_terms.json", '{"terms": 1}', "Error: learned_terms.json must be a list of terms"),
])
def test_a_bad_hand_edited_file_is_one_line_and_nothing_is_lost(repo: Path, name: str, text: str, line: str) -> None:
    _teach(repo)
    if name != "learn/proposals.json":
        run_cli("learn", "-r", str(repo))
    path = repo / ".oracl" / name
    write_learned(path, text)
    cmd = ("learn", "accept", "--all") if name != "learn/proposals.json" else ("learn", "review")
    r = run_cli(*cmd, "-r", str(repo))
    assert r.returncode == LearnedDataError.exit_code == 24
    assert r.stderr.startswith(line) and len(r.stderr.strip().splitlines()) == 1
    assert path.read_text() == text


def test_a_bad_learned_file_stops_the_build_and_keeps_the_previous_one(repo: Path) -> None:
    latest = _header(repo)["build_id"]
    write_learned(repo / ".oracl" / "learned_terms.json", '[{"term": "x", "path": "pkg/h0.py", "confidence": 7}]')
    r = run_cli("build", str(repo), "-q")
    assert r.returncode == 24 and r.stderr.strip() == (
        "Error: each learned term needs a term, a path and a confidence in (0, 1]")
    assert _header(repo)["build_id"] == latest


def test_learned_rows_naming_deleted_files_are_dropped_and_counted(repo: Path) -> None:
    vault = repo / ".oracl"
    write_learned(vault / "learned_edges.json", orjson.dumps([
        {"source": "pkg/h0.py", "target": "pkg/gone.py", "confidence": 0.5},
        {"source": "pkg/h0.py", "target": "pkg/keys.pem", "confidence": 0.5},
        {"source": "pkg/h0.py", "target": "pkg/h1.py", "confidence": 0.5}]).decode())
    write_learned(vault / "learned_terms.json", orjson.dumps([
        {"term": "x", "path": "pkg/renamed.py", "confidence": 0.5}]).decode())
    build(repo, **SMALL)
    header = _header(repo)
    assert (header["learned"]["edges"]["rows"], header["learned"]["edges"]["dropped"]) == (1, 2)
    assert (header["learned"]["terms"]["rows"], header["learned"]["terms"]["dropped"]) == (0, 1)


def test_accepting_is_gated_on_the_current_build(repo: Path) -> None:
    _teach(repo)
    run_cli("learn", "-r", str(repo))
    (repo / "pkg" / "archive.py").unlink()
    build(repo, **SMALL)
    r = run_cli("learn", "accept", "--all", "-r", str(repo))
    assert r.returncode == 0 and "gate in-build (pkg/archive.py)" in r.stderr
    edges = orjson.loads((repo / ".oracl" / "learned_edges.json").read_bytes())
    assert edges == []


def test_adversarial_sessions_move_nothing_outside_them(repo: Path) -> None:
    """1,000 sessions that follow up one unrelated file after every query: without review
    the answers do not move at all; accepted unattended (``--auto``), no answer to a query
    outside those sessions changes its top 5, and the file's learned words are those the
    adversary typed."""
    outside = ["signing export", "archived copy bundle", "check digest blob", "helper3"]
    with Memory.open(repo) as mem:
        before = {q: [r["path"] for r in mem.search(q, k=5, freshness=False)["results"]] for q in outside}
    logs = repo / ".oracl" / "logs"
    words = ["rotate", "tokens", "quota", "retry", "timeout"]
    lines = []
    for i in range(1000):  # written as Memory would, at the speed of a test
        at = (NOW - timedelta(minutes=i)).strftime(TIME)
        lines.append(orjson.dumps({"timestamp": at, "session_id": f"adv{i}", "action": "show",
                                   "path": "pkg/h5.py", "rank": None, "query": words[i % 5] + " handling"}))
    for i in range(300):  # beside the people who use the memory as it is meant
        at = (NOW - timedelta(minutes=i, seconds=30)).strftime(TIME)
        lines.append(orjson.dumps({"timestamp": at, "session_id": f"user{i}", "action": "show",
                                   "path": f"pkg/h{i % 5}.py", "rank": 2, "query": f"helper{i % 5}"}))
    (logs / "usage.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    assert run_cli("learn", "-r", str(repo)).returncode == 0
    build(repo, **SMALL)
    with Memory.open(repo) as mem:
        assert {q: [r["path"] for r in mem.search(q, k=5, freshness=False)["results"]] for q in outside} == before
    assert run_cli("learn", "--auto", "0.05", "-r", str(repo)).returncode == 0
    build(repo, **SMALL)
    with Memory.open(repo) as mem:
        after = {q: [r["path"] for r in mem.search(q, k=5, freshness=False)["results"]] for q in outside}
        assert after == before
        shown = mem.show("pkg/h5.py")["learned"]
    assert shown and {x["term"] for x in shown} <= {"rotate", "token", "quota", "retry", "timeout", "handl"}
