"""``oracl build --executor ray``: the per-file work as Ray tasks on a local cluster
(issue 35). Each build runs as a real subprocess (Ray's threads never enter the test
process, whose other tests fork)."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

pytest.importorskip("ray")

from .conftest import SAMPLE, run_cli, write_tree  # noqa: E402

FILES = {**SAMPLE, **{f"pkg/gen/m{i}.py": f"from pkg.auth import sign\n\n\ndef f{i}(x):\n    return sign(x) + {i}\n"
                      for i in range(40)}}


def _export(root: Path, build_id: str) -> bytes:
    data = (root / ".oracl" / "weighted_graph_index.json").read_bytes()
    data = data.replace(build_id.encode(), b"BUILD")
    return re.sub(rb'"generated_at":"[^"]*"', b'"generated_at":"T"', data)


def _build(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    r = run_cli("build", str(root), "--full", "-q", *args, env={**os.environ, "ORACL_RAY_BATCH": "8", **(env or {})})
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout.split("\t")[2]


def test_the_ray_executor_gives_the_in_process_export_byte_for_byte(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", FILES)
    ids = [_build(root, "--executor", "in-process")]
    first = _export(root, ids[0])
    ids.append(_build(root, "--executor", "ray"))  # 46 files in batches of 8: six tasks
    assert _export(root, ids[1]) == first
    # a worker killed in the middle of its batch: Ray runs the batch again, the build completes
    marker = tmp_path / "killed-once"
    ids.append(_build(root, "--executor", "ray", env={"ORACL_FAULT": "ray worker", "ORACL_FAULT_MARKER": str(marker)}))
    assert marker.exists() and _export(root, ids[2]) == first


@pytest.mark.parametrize(("address", "line"), [
    ("127.0.0.1:1", "Error: cannot reach the Ray cluster at 127.0.0.1:1: Connection refused"),
    ("nohost", "Error: --executor ray=nohost: give HOST:PORT (the head's, `ray start --head` prints it) or auto"),
])
def test_a_cluster_that_cannot_be_reached_is_one_line_and_no_hang(tmp_path: Path, address: str, line: str) -> None:
    root = write_tree(tmp_path / "repo", SAMPLE)
    t0 = time.perf_counter()
    r = run_cli("build", str(root), "-q", "--executor", f"ray={address}")
    assert (r.returncode, r.stderr.strip()) == (2, line)
    assert time.perf_counter() - t0 < 30
    assert not (root / ".oracl" / "mirror").exists() or not any((root / ".oracl" / "mirror").iterdir())
