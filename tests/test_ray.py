"""``oracl build --executor ray``: the per-file work as Ray tasks on a local cluster
(issue 35). Each build runs as a real subprocess (Ray's threads never enter the test
process, whose other tests fork)."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from tests.conftest import export_of

pytest.importorskip("ray")

from .conftest import SAMPLE, run_cli, write_tree  # noqa: E402

FILES = {**SAMPLE, **{f"pkg/gen/m{i}.py": f"from pkg.auth import sign\n\n\ndef f{i}(x):\n    return sign(x) + {i}\n"
                      for i in range(40)}}


def _export(root: Path, build_id: str) -> bytes:
    data = export_of(root)
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


def _tree_of(pid: int) -> set[int]:
    """``pid`` and every live process descended from it."""
    parents: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = Path(f"/proc/{d}/stat").read_text()
            except OSError:
                continue
            parents[int(d)] = int(stat.rsplit(")", 1)[1].split()[1])
    out, grew = {pid}, True
    while grew:
        more = {p for p, pp in parents.items() if pp in out} - out
        out |= more
        grew = bool(more)
    return out


def _listening(pids: set[int]) -> set[tuple[str, bool]]:
    """(address, on loopback) of every TCP socket these processes listen on (/proc/net)."""
    inodes = set()
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:["):
                    inodes.add(link[8:-1])
        except OSError:
            continue
    out = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            cols = line.split()
            if cols[3] != "0A" or cols[9] not in inodes:  # 0A: LISTEN
                continue
            addr = cols[1].split(":")[0]
            if len(addr) == 8:  # IPv4, little-endian: 0100007F is 127.0.0.1
                loop = int(addr, 16) & 0xFF == 127
            else:  # IPv6: ::1, or ::ffff:127.x.x.x
                loop = addr == "00000000000000000000000001000000" or (
                    addr.startswith("0000000000000000FFFF0000") and int(addr[24:], 16) & 0xFF == 127)
            out.add((cols[1], loop))
    return out


def test_ray_workers_never_import_the_tree_and_a_local_cluster_listens_on_loopback(tmp_path: Path) -> None:
    """A tree holding ``pyarrow/``, ``pickle.py``, ``sitecustomize.py``, … built from inside
    with ``--executor ray``: no module of it runs in a worker, and every socket the build's
    processes listen on is on loopback."""
    import subprocess

    from .conftest import ORACL
    from .test_trust_isolation import _hostile_tree

    root, marks = _hostile_tree(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    proc = subprocess.Popen([ORACL, "build", "--executor", "ray", "-q", "."], cwd=root, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: set[tuple[str, bool]] = set()
    while proc.poll() is None:
        seen |= _listening(_tree_of(proc.pid))
        time.sleep(0.05)
    out, err = proc.communicate()
    assert proc.returncode == 0, err[-2000:]
    assert sorted(p.name for p in marks.iterdir()) == []
    assert seen, "the local cluster was never seen listening"
    assert [a for a, loop in seen if not loop] == []
