"""What many repositories and a Ray cluster cost (issue 35; docs/scale.md).

    python scripts/bench_scale.py DIR [--members 20] [--files 400] [--extra ROOT…]
        [--ray-tree TREE] [--runs 2] [--query TEXT]

1. **A simulated organisation**: ``--members`` synthetic services (``synth_workspace.py``,
   ``--files`` files each, one seed per member, polyglot every other one) written under
   DIR, each built (``oracl build -q``), plus ``--extra`` roots already built (fetched
   repositories); all added to one workspace file. Reported: the builds' total and median
   seconds, then ``oracl query --workspace`` cold (a process per query) with 1, 5, 10 and
   every member: median seconds over ``--runs``, and how many members answered.
2. **The Ray executor** on ``--ray-tree`` (e.g. a copy of the 20,000-file workspace):
   ``oracl build --full`` with ``--executor in-process``, ``processes`` and ``ray`` (a local
   cluster of this machine's cores), alternated ``--runs`` times: each median, and each
   against in-process.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from synth_workspace import generate  # noqa: E402

ORACL = str(Path(sys.executable).with_name("oracl"))


def oracl(*args: str) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run([ORACL, *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"oracl {' '.join(args[:3])} failed: {proc.stderr.strip()[-400:]}")
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--members", type=int, default=20)
    ap.add_argument("--files", type=int, default=400)
    ap.add_argument("--extra", type=Path, nargs="*", default=[])
    ap.add_argument("--ray-tree", type=Path)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--query", default="ledger balance cache invalidation")
    a = ap.parse_args()
    a.dir.mkdir(parents=True, exist_ok=True)
    roots = []
    builds = []
    for i in range(a.members):
        root = a.dir / f"svc{i:02d}"
        if not root.exists():
            generate(root, a.files, seed=100 + i, polyglot=i % 2 == 1)
        builds.append(oracl("build", str(root), "-q"))
        roots.append(root)
    roots += [r.resolve() for r in a.extra]
    print(f"{a.members} synthetic members of {a.files} files built: {sum(builds):.1f} s in all, "
          f"median {statistics.median(builds):.2f} s", flush=True)
    for n in sorted({1, 5, 10, len(roots)}):
        if n > len(roots):
            continue
        wsf = a.dir / f"ws{n}.toml"
        wsf.unlink(missing_ok=True)
        oracl("workspace", "add", *map(str, roots[:n]), "--workspace", str(wsf))
        times = [oracl("query", a.query, "--workspace", str(wsf), "-k", "10") for _ in range(a.runs)]
        print(f"query --workspace, {n} member(s): median {statistics.median(times):.3f} s "
              f"({', '.join(f'{t:.3f}' for t in times)})", flush=True)
    if a.ray_tree is not None:
        kinds = ("in-process", "processes", "ray")
        times: dict[str, list[float]] = {k: [] for k in kinds}
        for _ in range(a.runs):
            for k in kinds:
                times[k].append(oracl("build", str(a.ray_tree), "--full", "-q", "--executor", k))
        base = statistics.median(times["in-process"])
        for k in kinds:
            med = statistics.median(times[k])
            print(f"build --full --executor {k}: median {med:.2f} s ({', '.join(f'{t:.2f}' for t in times[k])}); "
                  f"{base / med:.2f}× in-process", flush=True)


if __name__ == "__main__":
    main()
