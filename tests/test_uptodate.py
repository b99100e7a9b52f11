"""A build with nothing to do publishes nothing (``builder/uptodate.py``): the latest bundle
already is what it would write. Every input a build's output depends on makes the next
build a real one when it moves, and the bundle an up-to-date build leaves serving equals
what a full build of the same tree writes."""

from __future__ import annotations

import os
import time
from pathlib import Path

import orjson
import pytest

from oracl.builder.orchestrator import build
from oracl.core.vault import Vault
from tests.conftest import export_of, git, write_learned, write_tree

KW = {"buffer_pool_bytes": 64 << 20, "workers": 1}
OLD = time.time_ns() - 86_400 * 10**9  # dated a day back: never "racily clean"

FILES = {
    "pkg/signer.py": 'import pkg.keys\n\ndef sign_export(data):\n    """Sign the export."""\n    return pkg.keys.load()\n',
    "pkg/keys.py": "def load():\n    return 1\n",
    "docs/guide.md": "# Guide\n\nSee [the signer](/pkg/signer.py).\n",
    "configs/app.yaml": "signer: pkg/signer.py\n",
}


def _tree(root: Path, files: dict[str, str | bytes] = FILES, dated: bool = True) -> Path:
    write_tree(root, files)
    if dated:
        for rel in files:
            os.utime(root / rel, ns=(OLD, OLD))
    return root


def _vault_state(root: Path) -> list[tuple[str, int, int]]:
    """Every file under the vault but the lock, with its size and mtime."""
    vault = root / ".oracl"
    return sorted((str(p.relative_to(vault)), p.stat().st_size, p.stat().st_mtime_ns)
                  for p in vault.rglob("*") if p.is_file() and p.name != "build.lock")


def _canonical(root: Path) -> dict:
    doc = orjson.loads(export_of(root))
    for key in ("build_id", "generated_at"):
        doc["schema"].pop(key)
    return doc


def test_a_build_with_nothing_changed_publishes_nothing_and_says_so(tmp_path: Path) -> None:
    root = _tree(tmp_path / "repo")
    first = build(root, **KW)
    assert first.mode.startswith("full")
    before = _vault_state(root)
    again = build(root, **KW)
    assert again.mode == f"up to date: nothing changed since build {first.build_id}"
    assert again.build_id == first.build_id and again.bundle_path == first.bundle_path
    assert (again.files_read, again.files_removed, again.files_indexed, again.files_seen) == (0, 0, 4, 4)
    assert again.symbols_mode == "symbols: unchanged"
    assert again.database_mode == "database: unchanged (the latest bundle serves)"
    # the latest build's own figures: counts, μ, σ, orphans, signature, export root, coverage
    assert (again.counts, again.mu, again.sigma, again.orphans, again.signature, again.export_root) == \
        (first.counts, first.mu, first.sigma, first.orphans, first.signature, first.export_root)
    assert (again.parse_status, again.languages, again.skipped, again.dropped_edges) == \
        (first.parse_status, first.languages, first.skipped, first.dropped_edges)
    assert list(again.seconds) == ["discover"]
    assert _vault_state(root) == before  # not a byte written: no bundle, no health line, no part
    # what serves is what a full build of the same tree writes
    served = _canonical(root)
    assert build(root, full=True, **KW).mode == "full: requested"
    assert _canonical(root) == served


def test_each_input_of_a_build_makes_the_next_one_real(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _tree(tmp_path / "repo")
    build(root, **KW)

    def real(expect_read: int = 0) -> str:
        report = build(root, **KW)
        assert not report.mode.startswith("up to date"), report.mode
        assert report.files_read == expect_read
        assert build(root, **KW).mode.startswith("up to date")  # and once built, nothing again
        return report.mode

    # a file's bytes (dated back: only its size and ctime say so)
    (root / "pkg/keys.py").write_text("def load():\n    return 22\n")
    os.utime(root / "pkg/keys.py", ns=(OLD, OLD))
    real(1)
    # the same bytes written again: the ctime moved, the file is read (and found the same)
    (root / "pkg/keys.py").write_text("def load():\n    return 22\n")
    os.utime(root / "pkg/keys.py", ns=(OLD, OLD))
    real(1)
    # a setting
    assert not build(root, alpha=0.5, **KW).mode.startswith("up to date")
    assert build(root, alpha=0.5, **KW).mode.startswith("up to date")
    assert not build(root, **KW).mode.startswith("up to date")  # back to the default α
    # a phase left out, then back
    assert not build(root, skip=("phase3",), **KW).mode.startswith("up to date")
    assert not build(root, **KW).mode.startswith("up to date")
    # a learned file merged by the next build
    write_learned(root / ".oracl" / "learned_edges.json",
                  orjson.dumps([{"source": "docs/guide.md", "target": "pkg/keys.py", "confidence": 0.8}]))
    real()
    assert build(root, **KW).counts["edges_by_relation"].get("learned_association") == 1
    # a signing key set since: the next build signs; the same key again: nothing to do
    monkeypatch.setenv("ORACL_HMAC_KEY", "k1")
    signed = build(root, **KW)
    assert signed.signature == "hmac-sha256" and not signed.mode.startswith("up to date")
    again = build(root, **KW)
    assert again.mode.startswith("up to date") and again.signature == "hmac-sha256"
    monkeypatch.setenv("ORACL_HMAC_KEY", "k2")  # another key: signed again
    assert not build(root, **KW).mode.startswith("up to date")
    monkeypatch.delenv("ORACL_HMAC_KEY")
    unsigned = build(root, **KW)
    assert unsigned.signature == "unsigned" and not unsigned.mode.startswith("up to date")
    # --full always builds
    assert build(root, full=True, **KW).mode == "full: requested"


def test_a_skipped_file_added_makes_the_next_build_real(tmp_path: Path) -> None:
    root = _tree(tmp_path / "repo")
    build(root, **KW)
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    report = build(root, **KW)
    assert not report.mode.startswith("up to date") and report.files_seen == 5 and report.files_indexed == 4
    assert build(root, **KW).mode.startswith("up to date")


def test_git_head_and_a_dirty_work_tree_make_the_next_build_real(tmp_path: Path) -> None:
    root = _tree(tmp_path / "repo")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "first: the signer")
    first = build(root, **KW)
    assert build(root, **KW).mode.startswith("up to date")
    git(root, "commit", "-q", "--allow-empty", "-m", "second")  # HEAD moved, no file did
    moved = build(root, **KW)
    assert not moved.mode.startswith("up to date") and moved.files_read == 0
    header = orjson.loads((Path(moved.bundle_path) / "header.json").read_bytes())
    assert header["source_commit"] == git(root, "rev-parse", "HEAD").strip() and header["dirty"] is False
    assert build(root, **KW).mode.startswith("up to date")
    git(root, "rm", "-q", "--cached", "pkg/keys.py")  # the work tree's files as they were; git's index not
    dirty = build(root, **KW)
    assert not dirty.mode.startswith("up to date")
    assert orjson.loads((Path(dirty.bundle_path) / "header.json").read_bytes())["dirty"] is True
    assert first.build_id != dirty.build_id


def test_files_written_just_before_the_build_are_hashed_not_read(tmp_path: Path) -> None:
    root = _tree(tmp_path / "repo", dated=False)  # as a fresh clone leaves them: racily clean
    first = build(root, **KW)
    again = build(root, **KW)
    assert again.mode == (f"up to date: nothing changed since build {first.build_id} "
                          "(4 written just before it, their bytes checked)")


def test_a_bundle_without_the_inputs_record_is_built_again(tmp_path: Path) -> None:
    """A bundle an older ORACL made has no ``inputs`` in its ``stat.bin``: never taken as current."""
    from oracl.builder.uptodate import latest_if_current
    from oracl.core.config import load_config
    from oracl.core.parts import get_map, put_map, store_of
    from oracl.core.vault import STAT_FILE
    from oracl.core.walk import walk

    root = _tree(tmp_path / "repo")
    report = build(root, **KW)
    stat = Path(report.bundle_path) / STAT_FILE
    doc = orjson.loads(stat.read_bytes())
    discovery = walk(root, load_config(root), stat=True)
    vault = Vault(root)
    inputs = doc["inputs"]
    assert latest_if_current(vault, root, discovery, inputs, "") is not None
    assert latest_if_current(vault, root, discovery, inputs, "the database is damaged") is None
    assert latest_if_current(vault, root, discovery, {**inputs, "skip": ["fts"]}, "") is None
    store = store_of(vault.dir)
    files = get_map(store, doc["parts"])
    files["pkg/keys.py"][3] = "unreadable"  # a file a build retries: never current
    stat.write_bytes(orjson.dumps({**doc, "parts": put_map(store, files)}))
    assert latest_if_current(vault, root, discovery, inputs, "") is None
    doc.pop("inputs")
    stat.write_bytes(orjson.dumps(doc))
    assert latest_if_current(vault, root, discovery, inputs, "") is None
