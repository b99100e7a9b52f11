"""The read plane's front door under bad input: a damaged LATEST while readers and an MCP
server run, files swapped for links, FIFOs, sockets and huge files after the build, and a
Memory open in the process that builds."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from oracl import Memory
from oracl.builder.orchestrator import build
from oracl.bundle.repair import repair_latest
from oracl.core.errors import ChildError, UnsafePathError, VaultError
from oracl.core.seal import write_sealed
from oracl.core.vault import LATEST_KIND
from oracl.core.workspace import Workspace
from oracl.read.snapshot import Snapshot

from .conftest import ORACL, SAMPLE, run_cli, write_tree

SMALL = {"buffer_pool_bytes": 64 << 20, "workers": 1}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = write_tree(tmp_path / "repo", SAMPLE)
    build(root, **SMALL)
    return root


def _latest(root: Path) -> Path:
    return root / ".oracl" / "mirror" / "LATEST.json"


def _no_leftovers(root: Path) -> None:
    assert not list((root / ".oracl" / "mirror").glob("*.tmp"))


# ---- LATEST deleted, truncated, or naming a missing bundle -------------------------------------

@pytest.mark.parametrize("damage", ["deleted", "truncated", "missing bundle"])
def test_a_damaged_latest_is_repaired_by_the_cli_and_refused_by_a_plain_snapshot(repo: Path, damage: str) -> None:
    latest = _latest(repo)
    if damage == "deleted":
        latest.unlink()
        problem = "LATEST.json is missing"
    elif damage == "truncated":
        latest.write_bytes(latest.read_bytes()[:10])
        problem = f"{latest} is unreadable or truncated"
    else:
        write_sealed(latest, LATEST_KIND, orjson.dumps({"build_id": "nope", "bundle": "nope"}))
        problem = "the bundle nope named by LATEST.json is missing"
    with pytest.raises(VaultError) as err:
        Snapshot.open(repo)
    assert str(err.value) == (f"{problem}; run `oracl repair {repo}` to rebuild it from the verified export, "
                              f"or `oracl build {repo}`")
    q = run_cli("query", "sign", "--root", str(repo), "--json")
    assert q.returncode == 0, q.stderr
    assert "terminate called" not in q.stderr and "rebuilt bundle" in q.stderr
    assert orjson.loads(q.stdout)["results"][0]["path"] == "pkg/auth.py"
    _no_leftovers(repo)
    assert run_cli("verify", str(repo)).returncode == 0


def test_oracl_repair_is_explicit_and_serialised_with_builds(repo: Path) -> None:
    _latest(repo).unlink()
    from oracl.bundle import provenance
    from oracl.core.vault import Vault

    with provenance.build_lock(Vault(repo)):  # a build is running: the reader says so and leaves
        q = run_cli("query", "sign", "--root", str(repo))
        assert q.returncode == 9 and q.stderr.strip() == (
            f"Error: LATEST.json is missing, and another oracl build is running on {repo / '.oracl'}: "
            "run the command again when it has finished")
        r = run_cli("repair", str(repo))
        assert r.returncode == 9 and len(r.stderr.strip().splitlines()) == 1
    r = run_cli("repair", str(repo))
    assert r.returncode == 0 and r.stdout.startswith("rebuilt bundle ") and r.stdout.strip().endswith(
        "from the unsigned export (no key configured: its digest matches and your vault key sealed it)")
    with Snapshot.open(repo) as snap:
        assert snap.build_id.endswith("-rebuilt") and snap.params.query_guard == 5000
    _no_leftovers(repo)


def test_repair_never_runs_from_a_thread(repo: Path) -> None:
    import threading

    _latest(repo).unlink()
    caught: list[BaseException] = []

    def reader() -> None:
        try:
            Snapshot.open(repo, repair=repair_latest)
        except BaseException as exc:  # noqa: BLE001
            caught.append(exc)

    t = threading.Thread(target=reader)
    t.start()
    t.join()
    assert isinstance(caught[0], VaultError) and str(caught[0]) == f"LATEST.json is missing; run `oracl repair {repo}`"
    assert not _latest(repo).exists()


def test_a_memory_keeps_answering_from_its_build_when_latest_breaks(repo: Path) -> None:
    with Memory.open(repo) as mem:
        first = mem.search("sign")
        _latest(repo).unlink()
        again = mem.search("sign")
        assert again["build_id"] == first["build_id"] and again["results"] == first["results"]
        assert again["notices"] == [f"LATEST.json is missing; answering from build {first['build_id']}"]
        report = build(repo, **SMALL)  # a new build lands: the memory moves on to it
        assert mem.stats()["build_id"] == report.build_id


async def _mcp(root: Path, steps: list[Any]) -> list[dict[str, Any]]:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    answers = []
    params = StdioServerParameters(command=ORACL, args=["mcp", str(root)], env={"ORACL_HOME": os.environ["ORACL_HOME"]})
    async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        for step in steps:
            if callable(step):
                step()
                continue
            res = await s.call_tool(*step)
            answers.append(orjson.loads(res.content[0].text))
    return answers


def test_an_mcp_server_survives_a_deleted_latest(repo: Path) -> None:
    pytest.importorskip("mcp")
    a = asyncio.run(asyncio.wait_for(_mcp(repo, [
        ("oracl_search", {"query": "sign", "k": 2}),
        lambda: _latest(repo).unlink(),
        ("oracl_search", {"query": "sign", "k": 2}),
        ("oracl_fragment", {"locator": "pkg/auth.py#L5-5"}),
    ]), timeout=120))
    before, after, frag = a
    assert after["results"] == before["results"] and after["build_id"] == before["build_id"]
    assert after["notices"] == [f"LATEST.json is missing; answering from build {before['build_id']}"]
    assert frag["lines"] == ["def sign(data):"]
    _no_leftovers(repo)


# ---- files swapped after the build ---------------------------------------------------------------

def _secret(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "util.py").write_text("TOP SECRET = 'do not serve'\n")
    return outside


@pytest.mark.parametrize("swap", ["file", "folder"])
def test_a_link_out_of_the_root_is_refused_on_every_surface(repo: Path, tmp_path: Path, swap: str) -> None:
    outside = _secret(tmp_path)
    if swap == "file":
        (repo / "pkg" / "util.py").unlink()
        os.symlink(outside / "util.py", repo / "pkg" / "util.py")
    else:
        shutil.move(repo / "pkg", tmp_path / "pkg_moved")
        os.symlink(outside, repo / "pkg")
    out = run_cli("fragment", "pkg/util.py#L1-1", "--root", str(repo))
    assert out.returncode == 16 and "SECRET" not in out.stdout + out.stderr
    assert out.stderr.startswith("Error: pkg/util.py resolves outside the root") and len(out.stderr.splitlines()) == 1
    with Memory.open(repo) as mem:
        with pytest.raises(UnsafePathError):
            mem.fragment("pkg/util.py#L1-1")
        pack = mem.context("helper util", budget_tokens=2000)
        assert "SECRET" not in pack.render()
        found = mem.search("helper", k=10)
        assert "SECRET" not in orjson.dumps(found).decode()
        assert {r["path"]: r["stale"] for r in found["results"]}.get("pkg/util.py") in (None, "refused")


def test_a_fifo_a_socket_and_a_device_are_refused_at_once(repo: Path) -> None:
    (repo / "pkg" / "util.py").unlink()
    os.mkfifo(repo / "pkg" / "util.py")
    (repo / "docs" / "guide.md").unlink()
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(repo / "docs" / "guide.md"))
    try:
        out = subprocess.run([ORACL, "fragment", "pkg/util.py#L1-1", "--root", str(repo)], capture_output=True,
                             text=True, timeout=20)
        assert out.returncode == 16 and out.stderr.strip() == "Error: pkg/util.py is a FIFO, not a regular file; refused"
        out = subprocess.run([ORACL, "fragment", "docs/guide.md", "--root", str(repo)], capture_output=True,
                             text=True, timeout=20)
        assert out.returncode == 16 and out.stderr.strip() == "Error: docs/guide.md is a socket, not a regular file; refused"
        for args in (["query", "helper util", "--root", str(repo)], ["status", str(repo)],
                     ["query", "guide usage", "--root", str(repo)]):
            done = subprocess.run([ORACL, *args], capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, (args, done.stderr)
        status = orjson.loads(subprocess.run([ORACL, "status", str(repo), "--json"], capture_output=True, text=True,
                                             timeout=60).stdout)
        assert "pkg/util.py" in status["modified"] + status["deleted"]
        ws = Workspace(repo)
        with pytest.raises(UnsafePathError, match="is a FIFO"):
            ws.sha256("pkg/util.py")
        os.symlink("/dev/zero", repo / "pkg" / "dev.py")
        with pytest.raises(UnsafePathError, match="resolves outside the root"):
            ws.read_head("pkg/dev.py", 10)
    finally:
        sock.close()
    # a build meets the same disk: it records them, it never blocks on them
    report = build(repo, **SMALL)
    assert report.parse_status.get("unreadable", 0) >= 1


def test_a_fragment_of_a_200_mb_file_reads_only_its_lines(repo: Path) -> None:
    big = repo / "docs" / "big.txt"
    big.write_text("first line\nsecond line\nthird\n")
    build(repo, **SMALL)
    with open(big, "r+b") as fh:
        fh.truncate(200 << 20)  # 200 MB: the lines, then zeros (sparse)
    code = ("import resource, sys, orjson\nfrom oracl import Memory\n"
            "m = Memory.open(sys.argv[1]); m.fragment('pkg/auth.py#L1-1')\n"
            "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "f = m.fragment('docs/big.txt#L1-2')\n"
            "whole = m.fragment('docs/big.txt')\n"
            "after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "print(orjson.dumps({'lines': f['lines'], 'stale': f['stale'], 'grew_kib': after - before,\n"
            "                   'whole': [len(x) for x in whole['lines']]}).decode())\n")
    out = subprocess.run([sys.executable, "-c", code, str(repo)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    got = orjson.loads(out.stdout)
    assert got["lines"] == ["first line", "second line"] and got["stale"] is True
    assert got["grew_kib"] < 32 * 1024  # a 200 MB file, and the reader grew by less than 32 MB
    # without a range: its lines, the last (200 MB of zeros, no newline) quoted up to 1 MiB
    assert got["whole"] == [10, 11, 5, 1 << 20]


# ---- a Memory open in the process that builds ------------------------------------------------------

def test_a_memory_and_a_build_share_one_process(repo: Path) -> None:
    with Memory.open(repo) as mem:
        before = mem.search("sign")["build_id"]
        (repo / "pkg" / "extra.py").write_text("def sign_twice(d):\n    return d\n")
        report = build(repo, **SMALL)  # in process: nothing forks beside the open engine
        assert report.build_id != before
        assert mem.search("sign_twice")["results"][0]["path"] == "pkg/extra.py"
        # (a build with work to do: one that finds the tree up to date forks nothing)
        (repo / "pkg" / "extra.py").write_text("def sign_thrice(d):\n    return d\n")
        with pytest.raises(ChildError, match="refusing to fork while this process holds an open database"):
            build(repo, executor_kind="processes", **SMALL)
    assert run_cli("verify", str(repo)).returncode == 0
    _no_leftovers(repo)


def test_a_memo_makes_each_value_once_and_keys_never_collide_by_name() -> None:
    """Two threads asking for one value: one makes it, the other waits and gets the same
    object; a second key with the same name is another slot."""
    import threading

    from oracl.read.snapshot import Memo, MemoKey

    memo, key, twin = Memo(), MemoKey[list[int]]("paths"), MemoKey[list[int]]("paths")
    entered, release, made = threading.Event(), threading.Event(), []

    def slow() -> list[int]:
        made.append("slow")
        entered.set()
        release.wait(10)
        return [1]

    got: dict[str, list[int]] = {}
    a = threading.Thread(target=lambda: got.setdefault("a", memo.once(key, slow)))
    a.start()
    entered.wait(10)
    b = threading.Thread(target=lambda: got.setdefault("b", memo.once(key, lambda: made.append("b") or [2])))
    b.start()
    b.join(0.2)
    assert b.is_alive()  # waiting for the value a is making, not making its own
    release.set()
    a.join(10)
    b.join(10)
    assert made == ["slow"] and got["a"] is got["b"] == [1]
    assert memo.get(twin) is None and memo.once(twin, lambda: [3]) == [3] and memo.get(key) == [1]
    with pytest.raises(ZeroDivisionError):  # a failed make stores nothing
        memo.once(MemoKey[int]("x"), lambda: 1 // 0)


def test_the_text_cache_keeps_its_bound_least_recently_used_first_out() -> None:
    from oracl.read.query.run import TextCache

    cache = TextCache(limit=10)
    cache.put("a", "aaaa")
    cache.put("b", "bbbb")
    assert cache.get("a") == "aaaa"  # a is now the most recent
    cache.put("c", "cccc")  # 12 > 10: b, the least recent, goes
    assert cache.paths() == ["a", "c"] and cache.size == 8
    cache.put("a", "a")  # replacing a text counts the difference
    assert cache.size == 5 and cache.paths() == ["c", "a"]
    cache.put("big", "x" * 30)  # one text over the bound is still kept alone
    assert cache.paths() == ["big"] and cache.size == 30


def test_scoring_rows_take_their_strings_by_key_as_the_join_by_path_gave_them(repo: Path) -> None:
    """``Snapshot._with_text``: the scoring queries return ``text_n`` and the snapshot adds
    the artifact's ArtifactText strings by key (``path|text_n``), in the columns' order: the
    same rows the join by path and number gives, after a full build and after a rebuild
    appended a second row for an edited file (``text_n`` 1, its row 0 still there)."""
    from oracl.read.snapshot import SCORING_ROW

    def joined(snap: Snapshot, paths: list[str]) -> dict[str, dict[str, Any]]:
        rows = snap.store.rows("MATCH (a:Artifact) WHERE a.path IN $paths MATCH (t:ArtifactText {path: a.path}) "
                               "WHERE t.n = a.text_n RETURN a.path AS path, a.text_n AS n, t.id AS id, "
                               "t.symbols AS symbols, t.headings AS headings, t.tags AS tags, t.checksum AS checksum",
                               {"paths": paths})
        return {r.pop("path"): r for r in rows}

    for step in range(2):
        with Snapshot.open(repo) as snap:
            paths = sorted(r["path"] for r in snap.store.rows("MATCH (a:Artifact) RETURN a.path AS path"))
            want = joined(snap, paths)
            got = snap.named("artifact_rows", {"paths": paths})
            assert [list(r) for r in got] == [list(SCORING_ROW)] * len(paths)
            assert {r["path"] for r in got} == set(paths)
            for r in got:
                w = want[r["path"]]
                assert (r["id"], r["symbols"], r["headings"], r["tags"], r["checksum"]) == \
                    (w["id"], w["symbols"], w["headings"], w["tags"], w["checksum"]), r["path"]
            assert {w["n"] for w in want.values()} == ({0} if step == 0 else {0, 1})
            one = snap.named("artifact_rows_one", {"path": "pkg/util.py"})
            assert [r["checksum"] for r in one] == [want["pkg/util.py"]["checksum"]]
        (repo / "pkg" / "util.py").write_text("def helper():\n    return 42\n")
        build(repo, **SMALL)
