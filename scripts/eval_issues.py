"""Retrieval on real issue reports (issue 31): ORACL against plain BM25 on the SWE-bench
development set, the file a fix changed as gold.

    python scripts/eval_issues.py SET.jsonl --clone OWNER/NAME=GITDIR … [--cache DIR]
                                  [--repos OWNER/NAME,…] [--rows N] [--out rows.jsonl] [--rebuild]

SET is ``swebench_verified_dev.jsonl`` (``{"instance_id", "repo", "base_commit",
"problem_statement", "gold_files", "patch"}``). Each ``--clone`` names a git directory of a
repository (``fetch github:OWNER/NAME`` gives one; never committed). For each row the tree at
``base_commit`` is exported under ``--cache`` (``git archive``: no history, so no signal
from after the base commit) and built with ``oracl build`` once (cached); the problem
statement, as its reporter wrote it, is the query, run with default settings through
``oracl.read.query.run.search``; the same tree's files are ranked by plain BM25 (``bm25s``,
English stop words, every text file, as in ``eval_commit_bench.py``).

Acc@k needs every gold file in the top k; MRR is 1 / the rank of the first gold file (0
beyond 100). Printed per repository and pooled, ORACL beside BM25, with the in-process
query time. Needs ``pip install bm25s`` (evaluation only).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_commit_bench import DEPTH, bm25_rank, ensure_build, export_tree  # noqa: E402

KS = (1, 5, 10)


def metrics(ranked: list[str], gold: list[str]) -> dict[str, float]:
    gold_set = set(gold)
    out = {f"acc@{k}": float(gold_set <= set(ranked[:k])) for k in KS}
    first = next((i for i, p in enumerate(ranked[:DEPTH], 1) if p in gold_set), None)
    out["mrr"] = 1.0 / first if first else 0.0
    return out


def table(rows: list[dict]) -> list[str]:
    """Markdown lines: one per repository and the pooled row, ORACL and BM25 side by side."""
    by_repo: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_repo[r["repo"]].append(r)
    out = ["| repository | rows | ORACL Acc@1 | @5 | @10 | MRR | BM25 Acc@1 | @5 | @10 | MRR | Acc@5 Δ |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for repo, rs in [*sorted(by_repo.items(), key=lambda kv: (-len(kv[1]), kv[0])), ("pooled", rows)]:
        o = {m: 100 * sum(r["oracl"][m] for r in rs) / len(rs) for m in rs[0]["oracl"]}
        b = {m: 100 * sum(r["bm25"][m] for r in rs) / len(rs) for m in rs[0]["bm25"]}
        out.append(f"| {repo} | {len(rs)} | {o['acc@1']:.1f} | {o['acc@5']:.1f} | {o['acc@10']:.1f} | "
                   f"{o['mrr'] / 100:.3f} | {b['acc@1']:.1f} | {b['acc@5']:.1f} | {b['acc@10']:.1f} | "
                   f"{b['mrr'] / 100:.3f} | {o['acc@5'] - b['acc@5']:+.1f} |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("set", type=Path)
    ap.add_argument("--clone", action="append", default=[], metavar="OWNER/NAME=GITDIR")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/oracl-issues"))
    ap.add_argument("--repos", default="", help="only these repositories (comma-separated OWNER/NAME)")
    ap.add_argument("--rows", type=int, default=0, help="only the first N rows of each repository")
    ap.add_argument("--out", type=Path, help="per-row results as JSON lines")
    ap.add_argument("--rebuild", action="store_true", help="build every tree again (after a code change)")
    a = ap.parse_args()
    from oracl.core.errors import OraclError
    from oracl.read.query.run import search
    from oracl.read.snapshot import Snapshot

    clones = dict(c.split("=", 1) for c in a.clone)
    rows = [orjson.loads(line) for line in a.set.read_bytes().splitlines() if line.strip()]
    wanted = set(filter(None, a.repos.split(",")))
    rows = [r for r in rows if r["repo"] in clones and (not wanted or r["repo"] in wanted)]
    if a.rows:
        seen: dict[str, int] = defaultdict(int)
        rows = [r for r in rows if (seen.__setitem__(r["repo"], seen[r["repo"]] + 1) or seen[r["repo"]]) <= a.rows]
    missing = sorted({r["repo"] for r in orjson.loads(b"[" + b",".join(
        line for line in a.set.read_bytes().splitlines() if line.strip()) + b"]")} - set(clones))
    if missing:
        print(f"no --clone for {', '.join(missing)}: their rows are left out", file=sys.stderr)
    out: list[dict] = []
    latency: list[float] = []
    build_seconds = 0.0
    rebuilt: set[Path] = set()
    t_start = time.perf_counter()
    for i, row in enumerate(rows, 1):
        tree = a.cache / row["repo"].replace("/", "+") / row["base_commit"][:12]
        export_tree(Path(clones[row["repo"]]), row["base_commit"], tree)
        build_seconds += ensure_build(tree, a.rebuild and tree not in rebuilt)
        rebuilt.add(tree)
        gold = [g for g in row["gold_files"] if (tree / g).is_file()]
        if not gold:
            print(f"{row['instance_id']}: no gold file at the base commit, left out", file=sys.stderr)
            continue
        error = ""
        with Snapshot.open(tree) as snap:
            t0 = time.perf_counter()
            try:
                ranked = [r["path"] for r in search(snap, row["problem_statement"], limit=DEPTH, log=False).results]
            except OraclError as exc:  # counted as a miss, and said
                ranked, error = [], str(exc)
                print(f"{row['instance_id']}: {error}", file=sys.stderr)
            latency.append((time.perf_counter() - t0) * 1000)
        baseline = bm25_rank(tree, row["problem_statement"])
        out.append({"instance_id": row["instance_id"], "repo": row["repo"], "gold": gold,
                    "oracl_top10": ranked[:10], "bm25_top10": baseline[:10],
                    "oracl": metrics(ranked, gold), "bm25": metrics(baseline, gold),
                    "chars": len(row["problem_statement"]), "ms": round(latency[-1], 1), "error": error})
        if a.out:  # as it goes: a long run that stops keeps its rows
            with a.out.open("ab" if len(out) > 1 else "wb") as fh:
                fh.write(orjson.dumps(out[-1]) + b"\n")
        if i % 10 == 0:
            print(f"  {i}/{len(rows)} rows, {time.perf_counter() - t_start:.0f} s", file=sys.stderr, flush=True)
    if not out:
        raise SystemExit("no rows")
    print(f"rows={len(out)} builds={build_seconds:.0f}s median query {statistics.median(latency):.0f} ms "
          f"(max {max(latency):.0f} ms, in process, warm cache after the first)")
    print("\n".join(table(out)))


if __name__ == "__main__":
    main()
