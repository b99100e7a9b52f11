"""The CLI as a user runs it: a real `oracl` subprocess."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from .conftest import run_cli, run_tty


def test_build_json_and_stats(sample_repo: Path) -> None:
    r = run_cli("build", str(sample_repo), "--json", "--workers", "1")
    assert r.returncode == 0, r.stderr
    report = orjson.loads(r.stdout)
    assert report["files_indexed"] == 7 and report["counts"]["nodes_by_kind"]["hub"] == 4
    assert set(report["seconds"]) >= {"discover", "read", "phase2", "phase3", "merge", "weigh", "export", "load"}
    s = run_cli("stats", str(sample_repo), "--json")
    assert s.returncode == 0, s.stderr
    assert orjson.loads(s.stdout)["artifacts"] == 7


def test_build_summary_is_readable(sample_repo: Path) -> None:
    code, shown = run_tty("build", str(sample_repo), "--quiet", "--workers", "1", cols=120)
    assert code == 0, shown
    for needle in ("Files", "indexed", "edges: imports", "μ (association mean)", "Seconds per phase", "sha256"):
        assert needle in shown
    code, shown = run_tty("stats", str(sample_repo), cols=120)
    assert code == 0 and "hub:domain:core" in shown and "Domain hubs" in shown
    piped = run_cli("stats", str(sample_repo)).stdout.splitlines()  # in a pipe: tab-separated, one record a line
    assert "graph\tartifacts\t7" in piped and any(line.startswith("hub\thub:domain:core\t") for line in piped)


@pytest.mark.parametrize(("args", "line", "code"), [
    (("build", "/nonexistent/oracl-root"), "Error: root '/nonexistent/oracl-root' does not exist", 3),
    (("stats", "/nonexistent/oracl-root"), "Error: root '/nonexistent/oracl-root' does not exist", 3),
    (("build", ".", "--skip-phase", "weigh"),
     "Error: cannot skip weigh: skippable phases are phase2, phase3, fts", 2),
    (("build", ".", "--gamma", "2"), "Error: gamma must be between 0 and 1, not 2.0", 2),
])
def test_errors_are_one_line_with_exit_codes(tmp_path: Path, args: tuple, line: str, code: int) -> None:
    r = run_cli(*args, cwd=tmp_path)
    assert (r.returncode, r.stderr.strip()) == (code, line)
    assert r.stdout == ""


def test_stats_without_a_build(tmp_path: Path) -> None:
    r = run_cli("stats", str(tmp_path))
    assert r.returncode == 4
    assert r.stderr.strip() == f"Error: no build in {tmp_path}/.oracl: run `oracl build {tmp_path}` first"


def test_help_lists_options() -> None:
    r = run_cli("build", "--help", env={**os.environ, "COLUMNS": "200"})
    for opt in ("--alpha", "--beta", "--gamma", "--lambda", "--neighbour-cap", "--priority-cap",
                "--skip-phase", "--two-layer", "--no-gitignore", "--json"):
        assert opt in r.stdout


def _without_dac_override() -> list[str]:
    """A command prefix under which even root obeys file permissions (as root, chmod 000
    stops nobody). Empty when not root; None-like [] plus a skip when setpriv is missing."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("root without setpriv cannot be made to obey chmod 000")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]


def test_unreadable_file_gets_a_record(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    (root / "ok.py").write_text("x = 1\n")
    (root / "locked.py").write_text("secret = 1\n")
    os.chmod(root / "locked.py", 0)
    code = ("import sys, orjson; from oracl.builder.orchestrator import build; "
            "r = build(sys.argv[1], workers=1, buffer_pool_bytes=64 << 20); "
            "print(orjson.dumps(r.parse_status).decode())")
    r = subprocess.run([*_without_dac_override(), sys.executable, "-c", code, str(root)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert orjson.loads(r.stdout.strip().splitlines()[-1]) == {"ok": 1, "unreadable": 1}
    doc = orjson.loads((root / ".oracl" / "weighted_graph_index.json").read_bytes())
    locked = next(n for n in doc["nodes"] if n.get("path") == "locked.py")
    assert locked["tags"]["parse_error"] == "unreadable" and locked["checksum"] == ""
