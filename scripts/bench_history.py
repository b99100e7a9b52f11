"""What reading the git history costs a build (design §5c).

    python scripts/bench_history.py CLONE [--repeat 3]

CLONE is a git checkout with its history (never committed; `fetch` one and clone it). Runs
``oracl build CLONE --full --json`` ``--repeat`` times and reports the median wall time of
the build, the median of its ``history`` phase and their ratio, beside the floor: the same
``git log --name-only`` alone, timed in the same run.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import orjson


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("clone", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    from oracl.builder.pipeline.history import MAX_COMMITS

    oracl = str(Path(sys.executable).with_name("oracl"))
    walls, phases, floors = [], [], []
    commits = 0
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        proc = subprocess.run([oracl, "build", str(a.clone), "--full", "--json", "-q"], capture_output=True,
                              text=True, check=True)
        walls.append(time.perf_counter() - t0)
        report = orjson.loads(proc.stdout)
        phases.append(report["seconds"]["history"])
        t0 = time.perf_counter()
        out = subprocess.run(["git", "-C", str(a.clone), "log", "HEAD", f"--max-count={MAX_COMMITS}", "--no-merges",
                              "--no-renames", "--relative", "--name-only", "--format=%x1e%H%x1f%ct%x1f%s%x1f"],
                             capture_output=True, check=True).stdout
        floors.append(time.perf_counter() - t0)
        commits = out.count(b"\x1e")
    wall, phase, floor = statistics.median(walls), statistics.median(phases), statistics.median(floors)
    print(f"{a.clone}: {commits} commits read")
    print(f"  build (wall)        median {wall:7.2f} s")
    print(f"  history phase       median {phase:7.3f} s  = {100 * phase / wall:.1f} % of the build")
    print(f"  floor: git log alone median {floor:7.3f} s  (the phase is {phase / floor if floor else 0:.2f} × the floor)")


if __name__ == "__main__":
    main()
