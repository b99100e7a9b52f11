"""A vault that came with the tree is never trusted (design §11, issue 48): a committed
``.oracl/`` — journals, a whole build, learned files, events — is ignored or refused by
name, and a journal is followed only for paths inside the root."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import orjson
import pytest

from oracl.core.errors import NoBuildError, UndoError, UnsafePathError
from oracl.core.seal import (
    is_sealed,
    line_sealed,
    mac,
    read_sealed,
    seal_line,
    user_key,
    write_sealed,
)
from oracl.core.vault import Vault
from oracl.edit import apply as ap

from .conftest import SAMPLE, export_of, git, run_cli, write_tree

PAYLOAD = b"#!/bin/sh\necho pwned\n"


def _journal(edit_id: str, path: str, state: str = "applied") -> bytes:
    return orjson.dumps({"id": edit_id, "label": "apply", "state": state, "at": "2026-01-01T00:00:00Z",
                         "files": [{"path": path, "before": hashlib.sha256(PAYLOAD).hexdigest(), "after": None,
                                    "mode": 0o755}]})


def _clone_of(tmp_path: Path, files: dict[str, str | bytes]) -> Path:
    return _commit_and_clone(write_tree(tmp_path / "origin", files), tmp_path / "c" / "clone")


def _commit_and_clone(origin: Path, clone: Path) -> Path:
    """``origin`` committed whole (its ``.oracl/`` forced in) and cloned to ``clone``."""
    git(origin, "init", "-q", ".")
    git(origin, "add", "-f", "-A")
    git(origin, "commit", "-qm", "a repository carrying a vault")
    clone.parent.mkdir(parents=True, exist_ok=True)
    git(origin.parent, "clone", "-q", str(origin), str(clone))
    return clone


def test_a_committed_journal_never_writes_outside_the_root(tmp_path: Path) -> None:
    """The reproduction of issue 48: a journal committed with the tree, ``applied`` (for
    undo) and ``applying`` (for the recovery every apply runs first), each naming a file
    two folders above the root; after clone, build, undo and a dry-run apply, nothing exists
    there."""
    outside = tmp_path / "outside"
    outside.mkdir()
    files: dict[str, str | bytes] = {**SAMPLE}
    for edit_id, state in (("20260101T000000000000Z-aaaaaa", "applied"), ("20260101T000000000001Z-bbbbbb", "applying")):
        files[f".oracl/edits/{edit_id}/journal.json"] = _journal(edit_id, f"../../outside/{state}.sh", state)
        files[f".oracl/edits/{edit_id}/before/0"] = PAYLOAD
    clone = _clone_of(tmp_path, files)
    assert run_cli("build", str(clone), "-q").returncode == 0
    undo = run_cli("undo", "-r", str(clone))
    assert undo.returncode == UndoError.exit_code == 28
    assert undo.stderr.strip() == ("Error: no applied mutation to undo (ignored 2 journals your oracl did not write: "
                                   "20260101T000000000000Z-aaaaaa, 20260101T000000000001Z-bbbbbb)")
    mutation = "@@FILE pkg/util.py\n@@REPLACE\n    return 1\n@@WITH\n    return 2\n@@END\n"
    dry = run_cli("apply", "-", "-r", str(clone), "--dry-run", "--json", input=mutation)
    assert dry.returncode == 0, dry.stderr
    assert orjson.loads(dry.stdout)["recovered"] == []
    assert sorted(p.name for p in outside.iterdir()) == []
    assert (clone / "pkg" / "util.py").read_text() == SAMPLE["pkg/util.py"]


def test_a_sealed_journal_naming_a_path_outside_is_still_not_followed(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", SAMPLE)
    (tmp_path / "x").mkdir()
    edit_id = "20260101T000000000000Z-cccccc"
    folder = root / ".oracl" / "edits" / edit_id
    (folder / "before").mkdir(parents=True)
    (folder / "before" / "0").write_bytes(PAYLOAD)
    write_sealed(folder / "journal.json", ap.JOURNAL_KIND, _journal(edit_id, "../x/y.sh"))
    vault = Vault(root)
    assert ap.journals(vault) == [] and ap.foreign_journals(vault) == [edit_id]
    for bad in ("../x/y.sh", "pkg/../../x/y.sh", "/etc/passwd", "pkg//a.py", "./pkg/a.py", ""):
        with pytest.raises(UnsafePathError):
            ap._put(os.path.realpath(root), bad, PAYLOAD, None, 0o644)
    assert list((tmp_path / "x").iterdir()) == []


def test_a_journal_whose_kept_copy_was_swapped_puts_nothing_back(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {"a.py": "x = 1\n"})
    vault = Vault(root)
    vault.create()
    with ap.edit_lock(vault):
        edit_id = ap.commit(root, vault, [("a.py", b"x = 1\n", b"x = 2\n", 0o644)], "apply")
    (vault.dir / "edits" / edit_id / "before" / "0").write_bytes(PAYLOAD)  # a pull over an ignored file
    with ap.edit_lock(vault), pytest.raises(UndoError, match="does not match its checksum"):
        ap.undo(root, vault)
    assert (root / "a.py").read_text() == "x = 2\n"


def test_a_committed_build_is_not_trusted_and_a_build_starts_afresh(tmp_path: Path) -> None:
    """A whole vault built by someone else (another user's key), learned files and events
    included, committed and cloned: readers refuse it by name, repair will not launder it,
    the build ignores its learned files and events and starts from nothing."""
    other = tmp_path / "other-home"
    origin = write_tree(tmp_path / "origin", SAMPLE)
    env = {**os.environ, "ORACL_HOME": str(other)}
    assert run_cli("build", str(origin), "-q", env=env).returncode == 0
    vault = origin / ".oracl"
    (vault / "learned_edges.json").write_bytes(orjson.dumps(
        [{"source": "pkg/util.py", "target": "docs/guide.md", "confidence": 1.0}]))
    (vault / "events").mkdir()
    row = {"schema_version": "1.0", "timestamp_utc": "2026-12-01T00:00:00Z", "source_type": "ci", "source_name": "x",
           "decision": "fail", "summary": "planted", "reason_codes": ["x"], "event_type": "anomaly",
           "artifacts": {"path": "pkg/util.py", "report": "junit"}, "ingested_at": "2026-12-01T00:00:00Z"}
    (vault / "events" / "events.jsonl").write_bytes(orjson.dumps(row, option=orjson.OPT_SORT_KEYS) + b"\n")
    clone = _commit_and_clone(origin, tmp_path / "clone")
    assert (clone / ".oracl" / "mirror" / "LATEST.json").is_file()

    q = run_cli("query", "sign", "-r", str(clone))
    assert q.returncode == NoBuildError.exit_code == 4
    assert "was not written by your oracl" in q.stderr and len(q.stderr.strip().splitlines()) == 1
    rep = run_cli("repair", str(clone))
    assert rep.returncode == 4 and "nothing is rebuilt from it" in rep.stderr
    b = run_cli("build", str(clone), "--json")
    assert b.returncode == 0, b.stderr
    report = orjson.loads(b.stdout)
    assert report["mode"] == "full: no previous build"
    assert report["untrusted"] == ["learned_edges.json"]
    header = orjson.loads((clone / ".oracl" / "mirror" / report["build_id"] / "header.json").read_bytes())
    assert header["events"]["count"] == 0 and header["events"]["dropped"] == {"not sealed by your oracl": 1}
    assert b"learned_association" not in export_of(clone)
    assert run_cli("query", "sign", "-r", str(clone)).returncode == 0
    # the learned file is taken once a person says so
    t = run_cli("learn", "trust", "-r", str(clone))
    assert t.returncode == 0 and t.stdout.strip() == "sealed as yours: learned_edges.json"
    again = orjson.loads(run_cli("build", str(clone), "--json").stdout)
    assert again["untrusted"] == []


def test_a_pull_over_the_users_latest_is_refused_and_repaired_from_the_users_export(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", SAMPLE)
    assert run_cli("build", str(root), "-q").returncode == 0
    latest = root / ".oracl" / "mirror" / "LATEST.json"
    latest.write_bytes(latest.read_bytes().replace(b'"build_id"', b'"build_id" ', 1))  # same meaning, not ours
    with pytest.raises(NoBuildError, match="not written by your oracl"):
        Vault(root).read_latest()
    q = run_cli("query", "sign", "-r", str(root))
    assert q.returncode == 0 and "LATEST.json is not sealed by your oracl; rebuilt bundle" in q.stderr


def test_the_seals_by_hand() -> None:
    key = bytes(range(32))
    # HMAC-SHA256(key, b"latest\0" + b"{}"), computed independently with the standard library
    import hmac

    assert mac(key, "latest", b"{}") == hmac.new(key, b"latest\x00{}", hashlib.sha256).hexdigest()
    assert mac(key, "latest", b"{}") != mac(key, "learned:x", b"{}")  # bound to what the file is
    line = seal_line(key, "event", b'{"a":1,"b":"x"}')
    assert line.startswith(b'{"a":1,"b":"x","~seal":"') and orjson.loads(line)["a"] == 1
    assert line_sealed(key, "event", line + b"\n")
    assert not line_sealed(key, "event", line.replace(b'"a":1', b'"a":2'))
    assert not line_sealed(bytes(32), "event", line)
    assert not line_sealed(key, "event", b'{"a":1}')


def test_a_writer_killed_between_the_seal_and_the_file_leaves_a_file_that_checks(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    write_sealed(path, "k", b"old")
    from oracl.core.seal import seal_next

    seal_next(path, "k", b"new")  # the process dies here, before the file is replaced
    assert read_sealed(path, "k") == b"old"
    path.write_bytes(b"new")
    assert is_sealed(path, "k", b"new")
    path.write_bytes(b"third")  # anything else is not ours
    assert read_sealed(path, "k") is None


def test_a_key_others_can_read_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from oracl.core import seal
    from oracl.core.errors import VaultError

    monkeypatch.setenv("ORACL_HOME", str(tmp_path / "h"))
    monkeypatch.setattr(seal, "_cached", {})
    key = user_key()
    f = tmp_path / "h" / "vault.key"
    assert len(key) == 32 and f.stat().st_mode & 0o777 == 0o600 and user_key() == key
    seal._cached.clear()
    f.chmod(0o644)
    with pytest.raises(VaultError, match="not a file only you can read and write"):
        user_key()
    seal._cached.clear()
    f.unlink()
    f.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(VaultError):
        user_key()
    shutil.rmtree(tmp_path / "h")


def test_the_doctests_of_the_trust_helpers_hold() -> None:
    import doctest

    from oracl.core import children, seal, store

    for module in (seal, children, store):
        result = doctest.testmod(module)
        assert result.failed == 0 and result.attempted > 0, module.__name__


def test_a_reader_sizes_its_buffer_pool_from_the_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 48: 10⁶ tiny files built, then query, hub and verify failed with "buffer pool
    too small" (a fixed 256 MiB). A reader's pool now follows the database's size."""
    from oracl.core import store

    opened: list[int] = []
    real = store.kuzu.Database

    def spy(path: str, **kw):  # type: ignore[no-untyped-def]
        opened.append(kw["buffer_pool_size"])
        return real(path, **kw)

    root = write_tree(tmp_path / "repo", SAMPLE)
    assert run_cli("build", str(root), "-q").returncode == 0
    monkeypatch.setattr(store.kuzu, "Database", spy)
    from oracl.read.snapshot import Snapshot

    with Snapshot.open(root) as snap:
        snap.store.rows("MATCH (a:Artifact) RETURN count(a) AS n")
        size = (snap.bundle / "graph.kuzu").stat().st_size
    assert opened == [store.read_pool(size)] and opened[0] == max(256 << 20, 2 * size + (128 << 20))
    monkeypatch.setenv(store.READ_POOL_ENV, "700")
    with Snapshot.open(root) as snap:
        snap.store.rows("MATCH (a:Artifact) RETURN count(a) AS n")
    assert opened[-1] == 700 << 20


def test_a_committed_vault_of_links_to_dev_zero_never_hangs_a_command(tmp_path: Path) -> None:
    """A vault file that came with the tree as a symlink to /dev/zero (git commits links) is
    never read through: LATEST, the events, a learned file, the decisions log, a journal."""
    import subprocess

    from .conftest import ORACL

    origin = write_tree(tmp_path / "origin", SAMPLE)
    for rel in (".oracl/mirror/LATEST.json", ".oracl/events/events.jsonl", ".oracl/learned_terms.json",
                ".oracl/learn/decisions.jsonl", ".oracl/edits/20260101T000000000000Z-dddddd/journal.json",
                ".oracl/graph_health_history.jsonl"):
        (origin / rel).parent.mkdir(parents=True, exist_ok=True)
        (origin / rel).symlink_to("/dev/zero")
    clone = _commit_and_clone(origin, tmp_path / "clone")
    assert (clone / ".oracl" / "mirror" / "LATEST.json").is_symlink()
    for args in (("query", "sign", "-r", str(clone)), ("build", str(clone), "-q"), ("query", "sign", "-r", str(clone)),
                 ("undo", "-r", str(clone)), ("verify", str(clone)), ("learn", "-r", str(clone))):
        r = subprocess.run([ORACL, *args], capture_output=True, text=True, timeout=120)
        assert "Traceback" not in r.stderr, (args, r.stderr[-2000:])
        if args[0] == "build":
            assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("link", [".oracl", ".oracl/mirror", ".oracl/events", ".oracl/logs", ".oracl/edits",
                                  ".oracl/learn"])
def test_a_vault_folder_that_came_as_a_link_is_never_written_through(tmp_path: Path, link: str) -> None:
    """A committed ``.oracl/events -> /elsewhere`` (or the vault itself as a link) would
    have every append and every write of the vault land outside the root."""
    outside = tmp_path / "outside"
    outside.mkdir()
    origin = write_tree(tmp_path / "origin", SAMPLE)
    (origin / link).parent.mkdir(parents=True, exist_ok=True)
    (origin / link).symlink_to(outside)
    clone = _commit_and_clone(origin, tmp_path / "clone")
    junit = tmp_path / "junit.xml"
    junit.write_text('<testsuite><testcase classname="tests.test_auth" name="test_sign"/></testsuite>')
    mutation = "@@FILE pkg/util.py\n@@REPLACE\n    return 1\n@@WITH\n    return 2\n@@END\n"
    codes = []
    for args, stdin in ((("build", str(clone), "-q"), None), (("query", "sign", "-r", str(clone)), None),
                        (("ingest", str(junit), "-r", str(clone)), None), (("learn", "-r", str(clone)), None),
                        (("apply", "-", "-r", str(clone), "--no-build"), mutation)):
        r = run_cli(*args, input=stdin)
        assert "Traceback" not in r.stderr, (args, r.stderr[-1500:])
        codes.append(r.returncode)
    assert sorted(p.name for p in outside.iterdir()) == []
    assert codes[0] == 7  # the build refuses by name: nothing of the vault is written through the link
    assert run_cli("build", str(clone), "-q").stderr.strip() == (
        f"Error: {clone / link} is a symbolic link (it came with the tree?); the vault writes nothing through it: "
        "remove it")
