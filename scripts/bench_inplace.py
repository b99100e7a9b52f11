"""What a one-file change costs the database written in place, against the copy a build
makes today (issue 49, step 2: the measurement its choice is made by; docs/decisions.md).

    python scripts/bench_inplace.py WORKSPACE [--rounds 10] [--scratch DIR]

WORKSPACE must hold a build (``oracl build WORKSPACE``). Its latest bundle's database is
copied once to a scratch folder (not timed); then, on that copy:

* ``copy``: ``shutil.copyfile`` of the database, as every rebuild does today;
* ``open``: opening it read-write;
* ``--rounds`` one-file updates, each one transaction and a checkpoint: one artifact's
  stored terms (numbers) and checksum (a string) set, its outgoing Link edges unlinked and
  created again, the stored terms of its neighbours set, and the raw rank of the edges of
  its neighbours set (what an edit reaches through the 2-path term); the seconds, the bytes
  the process wrote (``/proc/self/io`` write_bytes) and the file's size after each.

Every figure comes from this one run; nothing is written to WORKSPACE.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import orjson  # noqa: E402

from oracl.core.store import Store, close  # noqa: E402


def written() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("write_bytes:"):
            return int(line.split()[1])
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--scratch", type=Path, default=None)
    ap.add_argument("--numbers-only", action="store_true",
                    help="set numbers only: no string, no edge unlinked or created (what they cost, by difference)")
    args = ap.parse_args()
    mirror = args.workspace / ".oracl" / "mirror"
    build_id = orjson.loads((mirror / "LATEST.json").read_bytes())["build_id"]
    db = mirror / build_id / "graph.kuzu"
    scratch = Path(tempfile.mkdtemp(dir=args.scratch))
    try:
        work = scratch / "graph.kuzu"
        shutil.copyfile(db, work)
        w0, t0 = written(), time.perf_counter()
        shutil.copyfile(db, scratch / "copy.kuzu")
        os.fsync(os.open(scratch / "copy.kuzu", os.O_RDONLY))
        print(f"copy: {time.perf_counter() - t0:.3f} s, {(written() - w0) / 1e6:.1f} MB written "
              f"({db.stat().st_size / 1e6:.0f} MB database)")
        (scratch / "copy.kuzu").unlink()
        t0 = time.perf_counter()
        store = Store.open(work, read_only=False, buffer_pool_bytes=1 << 30, threads=2)
        print(f"open read-write: {time.perf_counter() - t0:.3f} s")
        rng = random.Random(49)
        paths = [r["p"] for r in store.rows("MATCH (a:Artifact) WHERE a.size_bytes > 0 RETURN a.path AS p")]
        secs, wrote = [], []
        for i in range(args.rounds):
            p = rng.choice(paths)
            out = store.rows("MATCH (a:Artifact {path: $p})-[l:Link]->(b:Artifact) RETURN b.path AS t, "
                             "l.relation AS relation, l.confidence AS confidence, l.relation_weight AS w, "
                             "l.rank_raw AS r, l.source_fragment AS sf, l.target_fragment AS tf, "
                             "l.producer AS producer, l.provider AS provider", {"p": p})
            nbrs = sorted({r["t"] for r in out} | {r["s"] for r in store.rows(
                "MATCH (a:Artifact)-[:Link]->(b:Artifact {path: $p}) RETURN a.path AS s", {"p": p})})
            w0, t0 = written(), time.perf_counter()
            store.execute("BEGIN TRANSACTION")
            store.execute("MATCH (a:Artifact {path: $p}) SET a.p_sum = a.p_sum + 1e-9, a.association = a.association + 1e-9, "
                          "a.degree = a.degree + 0, a.fresh_e = a.fresh_e * 1.0000001", {"p": p})
            if not args.numbers_only:
                store.execute("MATCH (a:Artifact {path: $p}) SET a.checksum = $c", {"p": p, "c": f"{i:064x}"})
                store.execute("MATCH (a:Artifact {path: $p})-[l:Link]->(:Artifact) DELETE l", {"p": p})
            for r in ([] if args.numbers_only else out):
                store.execute("MATCH (a:Artifact {path: $p}), (b:Artifact {path: $t}) CREATE (a)-[:Link {relation: $relation, "
                              "confidence: $confidence, relation_weight: $w, rank_raw: $r, source_fragment: $sf, "
                              "target_fragment: $tf, producer: $producer, provider: $provider}]->(b)", {"p": p, **r})
            for n in nbrs:
                store.execute("MATCH (a:Artifact {path: $n}) SET a.association = a.association + 1e-9, a.p_sum = a.p_sum + 1e-9",
                              {"n": n})
            store.execute("MATCH (a:Artifact)-[l:Link]->(:Artifact) WHERE a.path IN $ns SET l.rank_raw = l.rank_raw + 1e-9",
                          {"ns": nbrs})
            store.execute("COMMIT")
            store.execute("CHECKPOINT")
            secs.append(time.perf_counter() - t0)
            wrote.append(written() - w0)
            print(f"round {i + 1}: {p}: {len(out)} edges made again, {len(nbrs)} neighbours: {secs[-1]:.3f} s, "
                  f"{wrote[-1] / 1e6:.1f} MB written, database {work.stat().st_size / 1e6:.1f} MB")
        close(work)
        print(f"one-file update in place: median {statistics.median(secs):.3f} s "
              f"({min(secs):.3f}–{max(secs):.3f}), median {statistics.median(wrote) / 1e6:.1f} MB written; "
              f"database {db.stat().st_size / 1e6:.1f} → {work.stat().st_size / 1e6:.1f} MB after {args.rounds}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
