"""Query benchmark: in-process latency, the cold CLI, and ripgrep on the same terms.

    python scripts/bench_query.py WORKSPACE [--queries 200] [--cold 10]

WORKSPACE is a built tree (``oracl build`` first; the synthetic 50k workspace of
scripts/synth_workspace.py is the reference). The 200 mixed queries are made
deterministically from the workspace's own file names and words: short concept queries,
identifiers, filtered and negated queries, ``file:`` fast paths, and long bug-report
style queries. Reports p50/p95 in process, the cold ``oracl query`` process (start to
exit), ``rg -l -i`` for the same terms over the same files, their ratio, and the peak
RSS of the query process. Needs ``rg`` (Debian package ripgrep).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

WORDS = ("auth", "cache", "session", "export", "token", "parser", "router", "queue", "schema",
         "snapshot", "billing", "ledger", "signer", "retry", "policy", "upload", "tracer", "vault")


def make_queries(root: Path, n: int, seed: int = 11) -> list[tuple[str, list[str]]]:
    """(query text, the plain terms rg searches for)."""
    rng = random.Random(seed)
    files = sorted(p for p in root.rglob("*.py") if ".oracl" not in p.parts)[:20000]
    rels = [str(p.relative_to(root)) for p in files]
    out: list[tuple[str, list[str]]] = []
    for i in range(n):
        kind = i % 6
        a, b = rng.choice(WORDS), rng.choice(WORDS)
        if kind == 0:
            out.append((f"{a} {b}", [a, b]))
        elif kind == 1:
            stem = rng.choice(rels).rsplit("/", 1)[-1][:-3]
            out.append((stem, [stem]))
        elif kind == 2:
            out.append((f"{a} domain:core", [a]))
        elif kind == 3:
            out.append((f"{a} {b} but not archived", [a, b]))
        elif kind == 4:
            path = rng.choice(rels)
            out.append((f"file:{path}", [path.rsplit("/", 1)[-1]]))
        else:
            path = rng.choice(rels)
            text = (f"Traceback (most recent call last):\n  File \"{path}\", line {rng.randint(1, 200)}, in "
                    f"{a}_{b}\nKeyError: '{a}' when the {b} {rng.choice(WORDS)} is retried without a session")
            out.append((text, [a, b]))
    return out


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--cold", type=int, default=10)
    a = ap.parse_args()
    from oracl.read.query.run import search
    from oracl.read.snapshot import Snapshot

    queries = make_queries(a.workspace, a.queries)
    snap = Snapshot.open(a.workspace)  # a long-lived reader: one snapshot, many queries
    search(snap, "warm up", log=False)
    lat = []
    for text, _ in queries:
        t0 = time.perf_counter()
        search(snap, text, limit=10)
        lat.append((time.perf_counter() - t0) * 1000)
    snap.close()
    oracl = str(Path(sys.executable).with_name("oracl"))
    cold = []
    for text, _ in queries[: a.cold]:
        t0 = time.perf_counter()
        subprocess.run([oracl, "query", text, "-r", str(a.workspace), "--json"], capture_output=True, check=True)
        cold.append(time.perf_counter() - t0)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    rg = shutil.which("rg")
    rg_times = []
    if rg:
        for _text, terms in queries[: a.cold]:
            args = [rg, "-l", "-i", "--no-messages", "-g", "!.oracl"]
            for t in terms:
                args += ["-e", t]
            t0 = time.perf_counter()
            subprocess.run(args + [str(a.workspace)], capture_output=True)
            rg_times.append(time.perf_counter() - t0)
    files = sum(1 for _ in a.workspace.rglob("*") if ".oracl" not in _.parts)
    print(f"files={files} queries={len(lat)} in-process p50={statistics.median(lat):.1f}ms "
          f"p95={pct(lat, 0.95):.1f}ms | cold CLI median={statistics.median(cold):.2f}s "
          f"| rg -l -i median={statistics.median(rg_times) if rg_times else float('nan'):.2f}s "
          f"| rg ÷ in-process p50 = {statistics.median(rg_times) * 1000 / statistics.median(lat) if rg_times else float('nan'):.1f}× "
          f"| rg ÷ cold CLI = {statistics.median(rg_times) / statistics.median(cold) if rg_times else float('nan'):.1f}× "
          f"| peak RSS of a query process {peak:.0f} MiB | cpus={os.cpu_count()}")


if __name__ == "__main__":
    main()
