"""The CLI as a user runs it: a real `oracl` subprocess."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.conftest import export_of

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
    code, shown = run_tty("build", str(sample_repo), "--workers", "1", cols=120)
    assert code == 0, shown
    for needle in ("Files", "indexed", "edges: imports", "μ (association mean)", "Seconds per phase", "root"):
        assert needle in shown
    code, quiet = run_tty("build", str(sample_repo), "-q", "--workers", "1", cols=120)  # -q: one line
    lines = quiet.strip().splitlines()  # (nothing changed since: the build it names serves)
    assert code == 0 and len(lines) == 1 and lines[0].startswith(f"up to date {sample_repo} build ")
    assert re.fullmatch(r"7 files \(0 read\), 20 edges, \d+\.\d s", lines[0].split(": ", 1)[1]), lines
    piped = run_cli("build", str(sample_repo), "-q", "--workers", "1", "--full", env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"})
    fields = piped.stdout.rstrip("\n").split("\t")
    assert piped.stdout.count("\n") == 1 and fields[:2] == ["built", str(sample_repo)] and fields[3] == "7"
    assert fields[5] == "20" and float(fields[6]) > 0
    # (in a pipe, -q prints through face/plain.py: rich, 60–70 ms of imports, is not loaded)
    imported = {line.rsplit("|", 1)[-1].strip() for line in piped.stderr.splitlines() if line.startswith("import time:")}
    assert "oracl.face.plain" in imported and not any(m == "rich" or m.startswith("rich.") for m in imported)
    # a comment added: the build says how it had the weighting's structure (a first build does not);
    # its whole summary in a pipe loads no rich either (face/render.py imports it to draw a terminal)
    summary = run_cli("build", str(sample_repo), "--workers", "1", "--full",
                      env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"})
    assert not any(line.startswith("weigh\t") for line in summary.stdout.splitlines())
    imported = {line.rsplit("|", 1)[-1].strip() for line in summary.stderr.splitlines() if line.startswith("import time:")}
    assert "oracl.face.render" in imported and not any(m == "rich" or m.startswith("rich.") for m in imported)
    path = next(p for p in sorted(sample_repo.rglob("*.py")) if ".oracl" not in p.parts)
    path.write_text(path.read_text() + "# a comment\n")
    said = [line for line in run_cli("build", str(sample_repo), "--workers", "1").stdout.splitlines()
            if line.startswith("weigh\t")]
    assert said == ["weigh\tthe structure is the latest's, 1 file's edges compared"], said
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


@pytest.mark.parametrize(("args", "line", "code"), [
    (("query", "sign", "-k", "0"), "Error: --limit must be between 1 and 1000, not 0", 8),
    (("related", "pkg/auth.py", "-k", "-3"), "Error: --limit must be between 1 and 500, not -3", 8),
    (("trace", "pkg/auth.py", "--limit", "0"), "Error: --limit must be between 1 and 500, not 0", 8),
    (("hub", "core", "-k", "100000"), "Error: -k must be between 1 and 500, not 100000", 8),
    (("graph", "pkg/auth.py", "-k", "0"), "Error: -k must be between 1 and 500, not 0", 8),
    (("trace", "pkg/auth.py", "--depth", "9"), "Error: --depth must be between 1 and 5, not 9", 8),
    (("fragment", "pkg/auth.py", "--context", "-1"), "Error: --context must be between 0 and 2000, not -1", 8),
    (("symbols", "sign", "-k", "0"), "Error: -k must be between 1 and 500, not 0", 8),
    (("callers", "sign", "--min-confidence", "1.5"),
     "Error: --min-confidence must be between 0 and 1, not 1.5", 8),
    (("impact", "pkg/auth.py", "--depth", "0"), "Error: --depth must be between 1 and 5, not 0", 8),
    (("health", "--last", "0"), "Error: --last must be at least 1 and --threshold between 0 and 100", 2),
    (("watch", "--max-builds", "-1"), "Error: --settle must be ≥ 0, --interval > 0 and --max-builds ≥ 0", 2),
])
def test_numeric_arguments_out_of_bounds_are_one_line(built_sample: tuple, args: tuple, line: str,
                                                       code: int) -> None:
    root, _ = built_sample
    r = run_cli(*args, cwd=root)
    assert (r.returncode, r.stderr.strip(), r.stdout) == (code, line, "")


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
    doc = orjson.loads(export_of(root))
    locked = next(n for n in doc["nodes"] if n.get("path") == "locked.py")
    assert locked["tags"]["parse_error"] == "unreadable" and locked["checksum"] == ""


def test_a_query_process_loads_only_the_read_plane(built_sample) -> None:  # type: ignore[no-untyped-def]
    """A healthy query never imports the build plane, the bundle writer (repair is handed
    in lazily), the parsers, the signing library, the web stack or the MCP SDK."""
    root, _ = built_sample
    probe = (
        "import sys\n"
        "from oracl.face.cli import main\n"
        f"sys.argv = ['oracl', 'query', 'auth login', '-r', {str(root)!r}]\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    assert not exc.code, exc.code\n"
        "print(' '.join(sorted(sys.modules)), file=sys.stderr)\n")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    loaded = set(r.stderr.split())
    assert "oracl.read.query.run" in loaded and "oracl.core.store" in loaded  # the probe did query
    heavy = ("oracl.builder", "oracl.bundle", "tree_sitter", "cryptography", "yaml", "antlr4", "pyarrow",
             "starlette", "uvicorn", "mcp", "pydantic")
    assert sorted(m for m in loaded if m.split(".")[0] in heavy or m.startswith(heavy)) == []


def test_the_version_is_answered_before_the_cli_is_imported() -> None:
    """``oracl --version`` (the console script's own entry) loads no CLI stack (typer, click,
    rich), no engine and no JSON library, yet names the kuzu the environment holds."""
    from importlib.metadata import version

    probe = ("import sys\nfrom oracl.face.launch import main\nsys.argv = ['oracl', '--version']\nmain()\n"
             "print(' '.join(sorted(sys.modules)), file=sys.stderr)\n")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert f"kuzu {version('kuzu')}," in r.stdout
    loaded = set(r.stderr.split())
    assert "oracl.face.launch" in loaded
    assert sorted(m for m in loaded if m.split(".")[0] in ("typer", "click", "rich", "kuzu", "orjson", "typing")
                  or m in ("importlib.metadata", "oracl.face.cli")) == []
