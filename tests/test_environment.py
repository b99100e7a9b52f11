"""The suite's environment is its own: a signing key, a fault point or a terminal setting
exported in the developer's shell reaches no test (``conftest._isolated_environment``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .conftest import SAMPLE, TERMINAL_VARIABLES, write_tree

ROOT = Path(__file__).resolve().parents[1]


def test_no_oracl_or_terminal_variable_reaches_a_test(oracl_home: Path) -> None:
    leaked = sorted(k for k in os.environ if k.startswith("ORACL_") or k in TERMINAL_VARIABLES)
    assert leaked == ["ORACL_HOME"] and os.environ["ORACL_HOME"] == str(oracl_home)  # the session's key, never yours


def test_a_build_in_a_test_is_unsigned_and_whole(tmp_path: Path) -> None:
    from oracl.builder.orchestrator import build

    report = build(write_tree(tmp_path / "r", SAMPLE), buffer_pool_bytes=64 << 20, workers=1)
    assert report.signature == "unsigned" and report.files_indexed == len(SAMPLE)


def test_an_exported_signing_key_and_fault_point_do_not_reach_the_tests(tmp_path: Path) -> None:
    """The two tests above, in a pytest started with a signing key (one that does not
    exist: a build that saw it would fail), a fault point (a build that saw it would be
    killed) and COLUMNS exported."""
    env = {**os.environ, "ORACL_ED25519_PRIVATE_KEY": str(tmp_path / "no-such-key"), "ORACL_FAULT": "read",
           "COLUMNS": "7"}
    me = "tests/test_environment.py::"
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        me + "test_no_oracl_or_terminal_variable_reaches_a_test",
                        me + "test_a_build_in_a_test_is_unsigned_and_whole"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "2 passed" in r.stdout
