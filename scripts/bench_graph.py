"""Graph-primitive benchmark: p50 of related, hub and trace --depth 2 in process, and
Memory.context() with a 4,000-token budget.

    python scripts/bench_graph.py WORKSPACE [--n 200]

WORKSPACE must be built. Start files are drawn deterministically from its Python files.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from pathlib import Path


def timed(fn, *args, **kw) -> float:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    fn(*args, **kw)
    return (time.perf_counter() - t0) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--n", type=int, default=200)
    a = ap.parse_args()
    from oracl import Memory
    from oracl.read.graph import hub, related, trace
    from oracl.read.snapshot import Snapshot

    snap = Snapshot.open(a.workspace)
    paths = [r["path"] for r in snap.store.rows(
        "MATCH (a:Artifact) WHERE a.format = 'py' RETURN a.path AS path ORDER BY path")]
    domains = [r["domain"] for r in snap.named("domains")]
    rng = random.Random(5)
    picks = [rng.choice(paths) for _ in range(a.n)]
    related(snap, picks[0])  # warm
    rel = [timed(related, snap, p, 10) for p in picks]
    hubs = [timed(hub, snap, rng.choice(domains), 20) for _ in range(a.n)]
    tr = [timed(trace, snap, p, "out", 2) for p in picks]
    snap.close()
    mem = Memory.open(a.workspace)
    words = ("auth", "cache", "session", "export", "token", "parser", "router", "queue", "schema", "snapshot")
    ctx = [timed(mem.context, f"{rng.choice(words)} {rng.choice(words)}", 4000) for _ in range(min(a.n, 100))]
    med = statistics.median
    print(f"artifacts={len(paths)}(py) n={a.n} p50: related={med(rel):.1f}ms hub={med(hubs):.1f}ms "
          f"trace_depth2={med(tr):.1f}ms context_4000={med(ctx):.1f}ms")


if __name__ == "__main__":
    main()
