"""Impact against history: does ``oracl impact`` of a commit's changed source files list the
test files the commit also changed?

    python scripts/eval_impact.py CLONE SET.jsonl [--cache DIR] [--rows N] [--out rows.jsonl]

For each commit-bench row with ``test_files``, the row's ``parent`` tree is exported and
built (as ``scripts/eval_commit_bench.py`` does, sharing its cache), and ``impact`` runs on
the row's ``gold_files`` (the source files the commit changed) that exist at the parent.
Recall@k is the share of the row's test files found among the first k tests of the answer,
over the test files that exist at the parent (a test file the commit adds cannot be
found; those rows are counted apart), averaged over rows.

Two variants are reported: ``files`` (impact of the changed files, whole: every definition
they hold changed) and ``hunks`` (impact of the lines the commit changed in them, at the
parent: the definitions those lines fall in, as ``oracl impact --diff`` sees a change).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_commit_bench import ensure_build, export_tree, old_hunks  # noqa: E402

from oracl.read import callgraph  # noqa: E402
from oracl.read.snapshot import Snapshot  # noqa: E402

KS = (5, 10, 20)
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("clone", type=Path)
    ap.add_argument("set", type=Path)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/oracl-eval"))
    ap.add_argument("--rows", type=int, default=0, help="only the first N rows that change tests")
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--rebuild", action="store_true", help="build every tree again (after a code change)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    rows = [orjson.loads(line) for line in args.set.read_bytes().splitlines() if line.strip()]
    rows = [r for r in rows if r["test_files"]]
    if args.rows:
        rows = rows[: args.rows]
    name = args.set.stem.removeprefix("commit_bench_")
    recalls = {(v, k): [] for v in ("files", "hunks") for k in KS}
    out_rows = []
    skipped_new = 0
    latency: list[float] = []
    rebuilt: set[str] = set()
    for r in rows:
        tree = args.cache / name / r["parent"][:12]
        export_tree(args.clone, r["parent"], tree)
        ensure_build(tree, args.rebuild and r["parent"] not in rebuilt)
        rebuilt.add(r["parent"])
        with Snapshot.open(tree) as snap:
            have = {x["path"] for x in snap.named("artifact_domains", {"paths": r["gold_files"] + r["test_files"]})}
            sources = [p for p in r["gold_files"] if p in have]
            tests = [p for p in r["test_files"] if p in have]
            if not tests or not sources:
                skipped_new += 1
                continue
            t0 = time.perf_counter()
            answers = {"files": callgraph.impact(snap, sources, depth=args.depth, k=max(KS))}
            latency.append((time.perf_counter() - t0) * 1000)
            answers["hunks"] = callgraph.impact(snap, [], changed_lines=old_hunks(args.clone, r["parent"], r["commit"],
                                                                                  sources),
                                                depth=args.depth, k=max(KS))
        row = {"commit": r["commit"], "sources": sources, "tests": tests}
        for variant, ans in answers.items():
            ranked = [t["path"] for t in ans["tests"]]
            row[f"ranked_{variant}"] = ranked[: max(KS)]
            for k in KS:
                hit = len(set(tests) & set(ranked[:k])) / len(tests)
                recalls[(variant, k)].append(hit)
                row[f"{variant}_recall@{k}"] = hit
        out_rows.append(row)
    n = len(out_rows)
    figures = "  ".join(f"{v} recall@{k} {sum(x) / n:.3f}" for (v, k), x in recalls.items()) if n else "no rows"
    lat = sorted(latency)
    median = lat[len(lat) // 2] if lat else 0.0
    print(f"{name}: {n} rows ({skipped_new} left out: their test files or sources are new in the commit)  "
          f"{figures}  (median impact {median:.1f} ms)")
    if args.out:
        args.out.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in out_rows))


if __name__ == "__main__":
    sys.exit(main())
