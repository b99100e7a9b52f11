"""Build time on real repositories, against the same floor as scripts/bench_build.py.

    python scripts/bench_repos.py TREE [TREE ...] [--repeat 3]

Each TREE is a checkout (never committed; `git archive` of a `fetch`ed clone does). For
each, the median of --repeat full builds (`oracl build --full --json`, process start
included) and of the floor (one process walking, reading, hashing and parsing the same
files: ``ast`` for Python, tree-sitter for every other language with an extractor), the
files indexed, the three largest languages and the edge count. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", type=Path, nargs="+")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    sys.path.insert(0, str(HERE))
    import orjson
    from bench_build import floor

    oracl = str(Path(sys.executable).with_name("oracl"))
    print("| repository | files indexed | languages | edges | floor | build | build ÷ floor |")
    print("|---|---|---|---|---|---|---|")
    for tree in a.trees:
        floor(tree)  # warm the page cache
        floors, builds, report = [], [], {}
        for _ in range(a.repeat):
            floors.append(floor(tree)[0])
            t0 = time.perf_counter()
            proc = subprocess.run([oracl, "build", str(tree), "--full", "--json", "-q"], capture_output=True, text=True)
            builds.append(time.perf_counter() - t0)
            if proc.returncode != 0:
                raise SystemExit(f"build of {tree} failed: {proc.stderr.strip()}")
            report = orjson.loads(proc.stdout)
        f, b = statistics.median(floors), statistics.median(builds)
        top = sorted(report["languages"].items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        langs = ", ".join(f"{k} {v}" for k, v in top)
        print(f"| {tree.name} | {report['files_indexed']} | {langs} | {report['counts']['edges']} "
              f"| {f:.2f} s | {b:.2f} s | {b / f:.1f} |")


if __name__ == "__main__":
    main()
