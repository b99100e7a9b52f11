"""`oracl status`: added, modified, deleted since the build; touched-but-identical is fresh."""

from __future__ import annotations

import os
from pathlib import Path

import orjson

from oracl.builder.orchestrator import build
from oracl.bundle.repair import repair_latest
from oracl.read.status import FRESHNESS, status

from .conftest import SAMPLE, run_cli, write_tree


def test_status_follows_the_working_tree(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "r", SAMPLE)
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    s = status(root)
    assert s["fresh"] and s["verdict"] == "fresh: the build matches the working tree"
    util = root / "pkg" / "util.py"
    st = util.stat()
    os.utime(util, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # touched, same bytes
    assert status(root)["fresh"]
    (root / "pkg" / "auth.py").write_text("changed = True\n")
    (root / "docs" / "guide.md").unlink()
    (root / "pkg" / "new.py").write_text("x = 1\n")
    s = status(root)
    assert (s["added"], s["modified"], s["deleted"]) == (["pkg/new.py"], ["pkg/auth.py"], ["docs/guide.md"])
    assert s["verdict"] == "stale: 1 added, 1 modified, 1 deleted since the build; run `oracl build`"
    out = run_cli("status", str(root))
    assert out.returncode == 0 and "stale: 1 added" in out.stdout


def test_status_without_stat_file_asks_the_database(tmp_path: Path) -> None:
    """A bundle from before stat.bin (or rebuilt from the export) gives the same answer."""
    from oracl.core.vault import STAT_FILE, Vault

    root = write_tree(tmp_path / "r", SAMPLE)
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    (root / "pkg" / "auth.py").write_text("changed = True\n")
    (root / "pkg" / "new.py").write_text("x = 1\n")
    with_stat = status(root)
    vault = Vault(root)
    (vault.bundle(vault.read_latest()["bundle"]) / STAT_FILE).unlink()
    assert status(root) == with_stat
    assert with_stat["verdict"] == "stale: 1 added, 1 modified, 0 deleted since the build; run `oracl build`"


def test_answers_carry_the_tree_freshness(tmp_path: Path) -> None:
    import re

    from oracl.read.memory import Memory

    root = write_tree(tmp_path / "r", SAMPLE)
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    mem = Memory(root)
    assert mem.search("sign")["freshness"] == "fresh: the build matches the working tree"
    # a second answer within the TTL says how old its check is
    assert re.fullmatch(r"fresh: the build matches the working tree \(checked \d+ s ago\)", mem.show("pkg/auth.py")["freshness"])
    (root / "pkg" / "util.py").write_text("def helper():\n    return 2\n")
    mem.snapshot()[0].memo.forget(FRESHNESS)  # the snapshot's cached verdict: forget it
    stale = "stale: 0 added, 1 modified, 0 deleted since the build; run `oracl build`"
    pack = mem.context("signing helpers", budget_tokens=400)
    assert pack.to_json()["freshness"] == stale
    assert pack.render().splitlines()[0].endswith(f"tree {stale})")
    assert pack.used_tokens <= 400
    out = run_cli("query", "sign", "--root", str(root))  # in a pipe the verdict goes to stderr
    assert out.returncode == 0 and out.stderr == f"tree: {stale}\n" and out.stdout.startswith("pkg/auth.py\t")
    out = run_cli("show", "pkg/auth.py", "--root", str(root), "--json")
    assert out.returncode == 0 and orjson.loads(out.stdout)["freshness"] == stale


def test_status_fails_open_like_the_readers(tmp_path: Path) -> None:
    """A truncated LATEST: status rebuilds the bundle from the verified export, as a query would."""
    root = write_tree(tmp_path / "r", SAMPLE)
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    latest = root / ".oracl" / "mirror" / "LATEST.json"
    latest.write_bytes(latest.read_bytes()[:10])
    assert status(root, repair=repair_latest)["fresh"]
    empty = tmp_path / "empty"
    empty.mkdir()
    out = run_cli("status", str(empty))
    assert out.returncode == 4 and out.stderr.startswith("Error: no build in")
