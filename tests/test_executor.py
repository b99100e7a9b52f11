"""The executor's one error protocol, its refusals, and a damaged previous bundle under a
selective build."""

from __future__ import annotations

import hashlib
import operator
import os
import threading
import time
from pathlib import Path

import orjson
import pytest

from oracl.builder.executor import InProcess, Processes
from oracl.builder.orchestrator import build
from oracl.core.errors import ChildError, QueryError
from oracl.core.vault import DB_FILE, MANIFEST, Vault
from oracl.read.graph import parse_range
from tests.conftest import export_of

from .conftest import SAMPLE, write_tree

SMALL = {"buffer_pool_bytes": 64 << 20, "workers": 1}


def _fail_with_query_error() -> None:
    raise QueryError("one sentence")


def _fail_with_a_bug() -> None:
    raise ValueError("not an OraclError")


@pytest.mark.parametrize("ex", [InProcess(), Processes()], ids=["in-process", "processes"])
def test_one_error_protocol(ex) -> None:  # type: ignore[no-untyped-def]
    ok = ex.submit("adding", lambda: 40 + 2)
    bad = ex.submit("asking", _fail_with_query_error)  # never raised by submit
    bug = ex.submit("computing", _fail_with_a_bug)
    assert ex.join(ok) == 42
    with pytest.raises(QueryError, match="^one sentence$"):
        ex.join(bad)
    if isinstance(ex, InProcess):
        with pytest.raises(ValueError, match="not an OraclError"):
            ex.join(bug)
    else:
        with pytest.raises(ChildError, match="^computing failed: ValueError: not an OraclError$"):
            ex.join(bug)
    assert sorted(ex.map("doubling", lambda x: 2 * x, list(range(300)), workers=2)) == [2 * x for x in range(300)]
    # a fresh interpreter for work that must not share this process's memory: the same protocol
    assert ex.join(ex.submit_fresh("adding", operator.add, 40, 2)) == 42
    with pytest.raises(QueryError, match="^a line range looks like L40-60, not 'bad'$"):
        ex.join(ex.submit_fresh("parsing", parse_range, "bad"))
    ex.close()


def test_a_child_that_dies_and_children_still_running() -> None:
    ex = Processes()
    dead = ex.submit("dying", lambda: os._exit(3))
    with pytest.raises(ChildError, match=r"^dying: the process died \(wait status 768\)$"):
        ex.join(dead)
    slow = ex.submit("sleeping", lambda: time.sleep(60))
    t0 = time.monotonic()
    ex.close()  # a failed build ends its children at once
    assert time.monotonic() - t0 < 5 and ex.running == []
    with pytest.raises(ProcessLookupError):
        os.kill(slow.pid, 0)


def test_a_task_told_later_gets_what_its_parent_tells_it_and_one_told_nothing_is_ended() -> None:
    """``Later``: a task forked before its parent knows all of its work waits for one
    frame; a sibling forked in between holds the pipe's write end open, and the frame still
    arrives (length-prefixed, no end of file needed). A task whose answer is no longer
    wanted is ended by ``cancel``, and one whose parent closed its end gets None."""
    from oracl.builder.executor import Later

    ex = Processes()
    later = Later()
    waiting = ex.submit("waiting", lambda: ("got", later.receive()))
    later.forked()
    sibling = ex.submit("a sibling", lambda: os.getpid())  # (forked while the write end is open)
    later.tell(("again", {"a.py": "iface"}, ["b.py"]))
    assert ex.join(waiting) == ("got", ("again", {"a.py": "iface"}, ["b.py"]))
    assert isinstance(ex.join(sibling), int)
    never = Later()
    stuck = ex.submit("never told", lambda: never.receive())
    never.forked()
    ex.cancel(stuck)
    assert stuck.done and stuck not in ex.running
    never.close()
    closed = Later()
    nothing = ex.submit("told nothing", lambda: closed.receive())
    closed.forked()
    closed.close()
    closed.tell("too late")  # (told once at most: nothing written on a closed end)
    assert ex.join(nothing) is None


def test_no_fork_beside_a_thread_or_an_open_engine(tmp_path: Path) -> None:
    ex = Processes()
    stop = threading.Event()
    t = threading.Thread(target=stop.wait, name="a-reader-thread")
    t.start()
    try:
        with pytest.raises(ChildError, match="refusing to fork while other threads run \\(a-reader-thread\\)"):
            ex.submit("anything", lambda: 1)
    finally:
        stop.set()
        t.join()
    from oracl.core import store

    s = store.Store.open(tmp_path / "x.kuzu", read_only=False, buffer_pool_bytes=64 << 20)
    try:
        with pytest.raises(ChildError, match="refusing to fork while this process holds an open database"):
            ex.submit("anything", lambda: 1)
    finally:
        s.release()
    assert ex.join(ex.submit("anything", lambda: 1)) == 1


def _export(root: Path) -> dict:
    doc = orjson.loads(export_of(root))
    for key in ("build_id", "generated_at"):
        doc["schema"].pop(key)
    return doc


@pytest.mark.parametrize("kind", ["in-process", "processes"])
def test_a_damaged_previous_database_makes_the_build_full(tmp_path: Path, kind: str) -> None:
    root = write_tree(tmp_path / "r", SAMPLE)
    build(root, executor_kind=kind, **SMALL)
    vault = Vault(root)
    db = vault.bundle(vault.read_latest()["bundle"]) / DB_FILE
    data = bytearray(db.read_bytes())
    data[64] ^= 1  # one flipped bit near the start
    db.write_bytes(bytes(data))
    report = build(root, executor_kind=kind, **SMALL)
    assert report.mode == "full: the previous bundle's database does not match its manifest"
    assert report.files_read == len(SAMPLE)
    assert build(root, executor_kind=kind, **SMALL).mode.startswith("up to date: ")
    (root / next(iter(SAMPLE))).write_text("# changed\n")
    again = build(root, executor_kind=kind, **SMALL)  # and the next one is selective again
    assert again.mode.startswith("incremental: ")


def test_an_engine_error_on_the_previous_database_makes_the_build_full(tmp_path: Path) -> None:
    """A database the engine refuses even though its manifest matches (re-sealed after
    damage): the selective build starts again, full, and says why."""
    root = write_tree(tmp_path / "r", SAMPLE)
    build(root, **SMALL)
    vault = Vault(root)
    bundle = vault.bundle(vault.read_latest()["bundle"])
    db = bundle / DB_FILE
    db.write_bytes(b"\0" * db.stat().st_size)
    manifest = orjson.loads((bundle / MANIFEST).read_bytes())
    manifest["files"][DB_FILE] = hashlib.sha256(db.read_bytes()).hexdigest()
    (bundle / MANIFEST).write_bytes(orjson.dumps(manifest, option=orjson.OPT_SORT_KEYS))
    # (a change: with none the build is up to date and never opens a database; `oracl verify` would say this)
    (root / next(iter(SAMPLE))).write_text("# changed\n")
    report = build(root, **SMALL)
    # (the content task no longer opens the copy: the load finds it unusable, and says so)
    assert report.mode.startswith("full: the engine failed while it brought an earlier build's database up to date "
                                  "(cannot open "), report.mode
    full = build(root, full=True, **SMALL)
    assert full.export_root != "" and _export(root)["nodes"]
    assert not list(vault.mirror.glob("*.tmp"))


def test_a_rebuilds_content_task_is_forked_and_a_full_builds_runs_in_a_fresh_interpreter(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build from scratch writes every file's postings in a fresh interpreter (its memory
    stays out of this process's copy); a rebuild's content task, a few files' postings, is
    forked: no interpreter to start, nothing imported again. Both serve the same search."""
    from oracl.read.snapshot import Snapshot

    fresh: list[str] = []
    real = Processes.submit_fresh

    def spy(self: Processes, what: str, fn: object, *args: object) -> object:
        fresh.append(what)
        return real(self, what, fn, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(Processes, "submit_fresh", spy)
    root = write_tree(tmp_path / "r", SAMPLE)
    build(root, executor_kind="processes", **SMALL)
    assert fresh == ["writing the full-text postings"]
    first = next(iter(SAMPLE))
    (root / first).write_text((root / first).read_text() + "\n# quokka\n")
    report = build(root, executor_kind="processes", **SMALL)
    assert report.mode.startswith("incremental: ") and fresh == ["writing the full-text postings"]
    with Snapshot.open(root) as snap:
        assert [p for p, _ in snap.search_text("quokka", 5)] == [first]
