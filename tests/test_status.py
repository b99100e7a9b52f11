"""`oracl status`: added, modified, deleted since the build; touched-but-identical is fresh."""

from __future__ import annotations

import os
from pathlib import Path

from oracl.builder import build
from oracl.status import status

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
