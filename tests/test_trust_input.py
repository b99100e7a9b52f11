"""No single file can stop a build, and every configuration key is validated."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from oracl.builder.orchestrator import build
from oracl.core.config import Config, load_config
from oracl.core.errors import ConfigError
from tests.conftest import git, run_cli, write_tree


def test_hostile_files_become_recorded_failures(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "r", {
        "deep.toml": "a = " + "[" * 50_000 + "]" * 50_000 + "\n",
        "deep.json": "[" * 50_000 + "]" * 50_000,
        "deep.py": "x = " + "(" * 50_000 + ")" * 50_000 + "\n",
        "deep.yaml": "a:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 400)),
        "ok.py": "def f():\n    return 1\n",
    })
    bad = os.fsencode(root) + b"/caf\xe9.py"  # a name that is not UTF-8
    with open(bad, "wb") as fh:
        fh.write(b"x = 1\n")
    os.mkdir(os.fsencode(root) + b"/d\xff")
    with open(os.fsencode(root) + b"/d\xff/inside.py", "wb") as fh:
        fh.write(b"y = 2\n")
    r = run_cli("build", str(root), "--workers", "1", "--json")
    assert r.returncode == 0, r.stderr
    report = orjson.loads(r.stdout)
    assert report["skipped"] == {"undecodable_name": 1}
    assert report["excluded_dirs"].get("undecodable_name") == 1
    status = report["parse_status"]
    assert status["ok"] >= 2 and sum(status.values()) == 5
    show = orjson.loads(run_cli("show", "deep.toml", "-r", str(root), "--json").stdout)["artifact"]
    assert (show["parse_status"], show["tags"]["parse_error"]) == ("malformed", "malformed")
    assert orjson.loads(run_cli("show", "deep.py", "-r", str(root), "--json").stdout)["artifact"]["parse_status"] in (
        "syntax_error", "parse_error")
    assert orjson.loads(run_cli("show", "ok.py", "-r", str(root), "--json").stdout)["artifact"]["parse_status"] == "ok"


def test_a_crashing_extractor_is_a_parse_error_not_a_failed_build(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import oracl.builder.pipeline.discover as discover

    def boom(text: str) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(discover, "analyze_python", boom)
    root = write_tree(tmp_path / "r", {"a.py": "x = 1\n", "b.md": "# B\n"})
    report = build(root, cfg=Config(buffer_pool_bytes=64 << 20, workers=1))
    assert report.parse_status == {"ok": 1, "parse_error": 1}


@pytest.mark.parametrize(("text", "message"), [
    ("workers = -5", "workers must be between 0 and 1024, not -5"),
    ("db_threads = 0", "db_threads must be between 1 and 1024, not 0"),
    ("priority_cap = nan", "[tool.oracl] priority_cap must be a finite number"),
    ("alpha = inf", "[tool.oracl] alpha must be a finite number"),
    ('suffixes = [""]', "[tool.oracl] suffixes must be a list of non-empty strings"),
    ('suffixes = ["py"]', "suffixes must look like '.py', not 'py'"),
    ("neighbour_cap = 1e308", "[tool.oracl] neighbour_cap must be a whole number"),
    ("neighbour_cap = 10_000_000", "neighbour_cap must be between 1 and 1e+06, not 10000000"),
    ("workers = true", "[tool.oracl] workers must be a whole number"),
    ("buffer_pool_bytes = 5", "buffer_pool_bytes must be 0 (sized from the text) or at least 16777216"),
    ("keep_bundles = 0", "keep_bundles must be between 1 and 1000, not 0"),
    ("max_read_bytes = 0", "max_read_bytes must be between 1 and 6.87195e+10, not 0"),
    ('sensitivity_globs = { "a/**" = "extreme" }',
     "[tool.oracl] sensitivity_globs values must be one of low, medium, high, not 'extreme'"),
    ('domain_map = { src = 5 }', "[tool.oracl] domain_map must map non-empty strings to non-empty strings"),
    ("share_sensitive = 1", "[tool.oracl] share_sensitive must be true or false"),
    ("tool = 5", "pyproject.toml: [tool] must be a table"),
    ("[tool]\noracl = 5", "pyproject.toml: [tool.oracl] must be a table"),
])
def test_every_bad_value_is_one_config_error(tmp_path: Path, text: str, message: str) -> None:
    body = text if text.startswith(("tool", "[tool]")) else "[tool.oracl]\n" + text
    (tmp_path / "pyproject.toml").write_text(body + "\n")
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path)
    assert str(err.value) == message
    r = run_cli("build", str(tmp_path))
    assert (r.returncode, r.stderr.strip()) == (2, f"Error: {message}")


def test_a_deeply_nested_pyproject_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("a = " + "[" * 50_000 + "]" * 50_000 + "\n")
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path)
    assert str(err.value) == "pyproject.toml is nested too deeply to read"


def test_flags_and_library_configs_are_checked_too(tmp_path: Path) -> None:
    r = run_cli("build", str(tmp_path), "--workers", "-3")
    assert (r.returncode, r.stderr.strip()) == (2, "Error: workers must be between 0 and 1024, not -3")
    with pytest.raises(ConfigError, match="db_threads must be between 1 and 1024, not 0"):
        build(tmp_path, cfg=Config(db_threads=0))


def test_a_file_name_that_is_not_utf8_never_stops_a_build(tmp_path: Path) -> None:
    """Issue 48: one such name, committed then modified, or untracked, made every build die
    with a traceback in git's status (rc 1)."""
    root = write_tree(tmp_path / "repo", {"a.py": "x = 1\n"})
    bad = os.fsencode(str(root)) + b"/bad\xff\xfe.py"
    with open(bad, "w") as fh:
        fh.write("y = 1\n")
    git(root, "init", "-q", ".")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one")
    with open(bad, "w") as fh:
        fh.write("y = 2\n")
    with open(os.fsencode(str(root)) + b"/new\xc3(.py", "w") as fh:
        fh.write("z = 1\n")
    r = run_cli("build", str(root), "--json")
    assert r.returncode == 0, r.stderr
    assert orjson.loads(r.stdout)["skipped"].get("undecodable_name") == 2
    for args in (("impact", "--diff", "-r", str(root)), ("status", "-r", str(root)), ("query", "x", "-r", str(root))):
        out = run_cli(*args)
        assert out.returncode == 0 and "Traceback" not in out.stderr, (args, out.stderr)
