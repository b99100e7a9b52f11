"""Symbol graph benchmark: what it adds to a full build, and how fast its questions answer.

    python scripts/bench_symbols.py WORKSPACE [--baseline DIR] [--repeat 3] [--queries 200]

* Build: ``oracl build WORKSPACE --full`` by this checkout, alternated ``--repeat`` times with
  the same command run by ``--baseline`` (a checkout of the commit before the symbol graph,
  e.g. ``git worktree add /tmp/baseline 3f34a5b``; run with this interpreter and
  ``PYTHONPATH=DIR``, so both use the same installed packages). Medians and their ratio,
  and the build's own ``symbols`` phase seconds.
* Questions: in process, on the latest build, ``callers``, ``callees`` and ``impact`` of
  ``--queries`` symbols sampled from the export (seeded), against a floor measured in the
  same run: one primary-key probe of the Symbol table. Medians and 95th percentiles.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import orjson


def build_once(root: Path, pythonpath: str | None) -> tuple[float, dict]:
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    code = "import sys; from oracl.face.cli import main; sys.argv = ['oracl'] + sys.argv[1:]; main()"
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-P", "-c", code, "build", str(root), "--full", "--json", "-q"],  # -P: not the cwd first
                          capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"build failed ({pythonpath or 'this checkout'}): {proc.stderr.strip()[:300]}")
    return wall, orjson.loads(proc.stdout)


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--baseline", type=Path, help="a checkout of the commit before the symbol graph")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--no-build", action="store_true", help="only the questions, on the existing build")
    args = ap.parse_args()
    root = args.workspace.resolve()
    if not args.no_build:
        ours, base, phase = [], [], []
        for i in range(args.repeat):
            if args.baseline:
                w, _ = build_once(root, str(args.baseline.resolve()))
                base.append(w)
                print(f"  run {i + 1}: baseline {w:.1f} s", flush=True)
            w, report = build_once(root, None)
            ours.append(w)
            phase.append(report["seconds"].get("symbols", 0.0))
            print(f"  run {i + 1}: with symbols {w:.1f} s (symbols phase {phase[-1]:.1f} s, "
                  f"{report['counts']['symbols']['symbols']:,} symbols, "
                  f"{report['counts']['symbols']['edges']:,} symbol edges)", flush=True)
        line = f"build: median {statistics.median(ours):.1f} s with the symbol graph"
        if base:
            line += (f", {statistics.median(base):.1f} s without (baseline) → "
                     f"+{(statistics.median(ours) / statistics.median(base) - 1) * 100:.1f} %")
        print(line + f"; symbols phase median {statistics.median(phase):.1f} s")
    from oracl.core.export import unpack_symbols
    from oracl.core.parts import latest_export
    from oracl.read import callgraph
    from oracl.read.snapshot import Snapshot

    nodes, edges = unpack_symbols(orjson.loads(latest_export(root)))
    called = {e["target"] for e in edges if e["relation"] == "calls"}
    pool = sorted(n["id"] for n in nodes if n["id"] in called and n["kind"] != "module")
    del nodes, edges
    ids = random.Random(args.seed).sample(pool, min(args.queries, len(pool)))
    times: dict[str, list[float]] = {"floor (PK probe)": [], "callers": [], "callees": [], "impact": []}
    with Snapshot.open(root) as snap:
        probe = "MATCH (s:Symbol) WHERE s.id = $id RETURN s.id AS id"
        callgraph.callers(snap, ids[0])  # warm the prepared statements
        callgraph.impact(snap, [ids[0]])
        calls = (("floor (PK probe)", lambda sid: snap.store.rows(probe, {"id": sid})),
                 ("callers", lambda sid: callgraph.callers(snap, sid)),
                 ("callees", lambda sid: callgraph.callees(snap, sid)),
                 ("impact", lambda sid: callgraph.impact(snap, [sid])))
        for sid in ids:
            for name, fn in calls:
                t0 = time.perf_counter()
                fn(sid)
                times[name].append((time.perf_counter() - t0) * 1000)
    print(f"questions on {len(pool):,} called symbols, {len(ids)} sampled (in process):")
    floor_median = statistics.median(times["floor (PK probe)"])
    for name, values in times.items():
        print(f"  {name:17} median {statistics.median(values):6.2f} ms  p95 {pct(values, 0.95):6.2f} ms  "
              f"({statistics.median(values) / floor_median:.1f} × the floor)")


if __name__ == "__main__":
    sys.exit(main())
