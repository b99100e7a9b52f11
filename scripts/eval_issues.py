"""Retrieval on real issue reports (issue 31): ORACL against plain BM25 on the SWE-bench
development set, the file a fix changed as gold.

    python scripts/eval_issues.py SET.jsonl --clone OWNER/NAME=GITDIR … [--cache DIR]
                                  [--repos OWNER/NAME,…] [--rows N] [--out rows.jsonl] [--rebuild]
                                  [--history] [--ablate [--vary MODULE.NAME=V1,V2,…]]

SET is ``swebench_verified_dev.jsonl`` (``{"instance_id", "repo", "base_commit",
"problem_statement", "gold_files", "patch"}``). Each ``--clone`` names a git directory of a
repository (``fetch github:OWNER/NAME`` gives one; never committed). For each row the tree at
``base_commit`` is exported under ``--cache`` (``git archive``: no history, so no signal
from after the base commit) and built with ``oracl build`` once (cached); with
``--history`` the tree also gets the clone's git history ending at the base commit (a shared
clone: what a user's own checkout has, so co-change and commit subjects count; give it its
own ``--cache``). The problem statement, as its reporter wrote it, is the query, run with default settings through
``oracl.read.query.run.search``; the same tree's files are ranked by plain BM25 (``bm25s``,
English stop words, every text file, as in ``eval_commit_bench.py``).

``--ablate`` reruns the queries on the cached builds with each rule of the query plane
switched off in turn (``ABLATIONS``), or with the values ``--vary`` gives, and prints
pooled Acc@1/5/10, MRR and each repository's Acc@5 change.

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
from eval_commit_bench import DEPTH, attach_history, bm25_rank, ensure_build, export_tree  # noqa: E402

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


# (label, module, attribute, value): each rule of the query plane switched off (or set) in turn
ABLATIONS: tuple[tuple[str, str, str, object], ...] = (
    ("title words weigh as plain words (entity → type class)", "parse", "TITLE_ENTITY", False),
    ("environment dumps kept", "parse", "ENV_RUN", 10**9),
    ("names reached through an imported package do not anchor (0.5 → 0)", "run", "API_ANCHOR", 0.0),
    ("symbol anchors off (names the report gives → their definitions)", "run", "ANCHOR", 0.0),
    ("a long text's mere identifiers do not anchor (0.25 → 0)", "run", "LONG_QUERY_ANCHOR", 0.0),
    ("frame anchors off (traceback frames, paths named)", "run", "FRAME_ANCHOR", 0.0),
    ("message anchors off (a quoted message → the code writing it)", "run", "MESSAGE_ANCHOR", 0.0),
    ("tests → subject vote off", "score", "PROPAGATION", 0.0),
    ("co-change vote off", "score", "COCHANGE", 0.0),
    ("best-chunk BM25 off", "score", "B_CHUNK", 0.0),
    ("commit-subject BM25 off", "score", "B_HISTORY", 0.0),
    ("metadata prior off (config, CI, packaging, templates in a long query: 0.4 → 1)", "score", "METADATA_PRIOR", 1.0),
    ("prose prior off (0.4 → 1)", "score", "PROSE_PRIOR", 1.0),
    ("docs-folder code not docs", "score", "DOC_DIRS", frozenset()),
    ("tests prior off (0.4 → 1)", "score", "TEST_PRIOR", 1.0),
    ("role prior off (examples, fixtures, vendored, built: 0.5 → 1)", "score", "ROLE_PRIOR", 1.0),
)


def ablate(rows: list[dict], cache: Path, variants: tuple[tuple[str, str, str, object], ...]) -> list[str]:
    """Markdown lines: pooled Acc@1/5/10 and MRR with every rule as it is, then with each
    variant, and each repository's Acc@5 change; every query of a row runs on one open
    snapshot of its cached build."""
    from oracl.core.errors import OraclError
    from oracl.read.query import parse, run, score
    from oracl.read.snapshot import Snapshot

    modules = {"parse": parse, "run": run, "score": score}
    results: list[list[dict]] = [[] for _ in range(len(variants) + 1)]
    for row in rows:
        tree = cache / row["repo"].replace("/", "+") / row["base_commit"][:12]
        gold = [g for g in row["gold_files"] if (tree / g).is_file()]
        if not gold or not (tree / ".oracl").is_dir():
            continue
        with Snapshot.open(tree) as snap:
            for i, variant in enumerate([None, *variants]):
                saved = None
                if variant is not None:
                    module = modules[variant[1]]
                    saved = getattr(module, variant[2])
                    setattr(module, variant[2], variant[3])
                try:
                    ranked = [r["path"] for r in run.search(snap, row["problem_statement"], limit=DEPTH,
                                                            log=False).results]
                except OraclError:
                    ranked = []
                finally:
                    if variant is not None:
                        setattr(modules[variant[1]], variant[2], saved)
                results[i].append({"repo": row["repo"], "oracl": metrics(ranked, gold)})
    repos = sorted({r["repo"] for r in results[0]})

    def pooled(rs: list[dict], repo: str = "") -> dict[str, float]:
        rs = [r for r in rs if not repo or r["repo"] == repo]
        return {m: sum(r["oracl"][m] for r in rs) / len(rs) for m in rs[0]["oracl"]}

    base = pooled(results[0])
    short = [r.split("/")[1] for r in repos]
    out = [f"| rule | Acc@1 | Acc@5 | Acc@10 | MRR | Acc@5 Δ | {' | '.join(short)} |",
           "|---|---|---|---|---|---|" + "---|" * len(repos),
           f"| everything on ({len(results[0])} rows) | {100 * base['acc@1']:.1f} | {100 * base['acc@5']:.1f} | "
           f"{100 * base['acc@10']:.1f} | {base['mrr']:.3f} | | "
           + " | ".join(f"{100 * pooled(results[0], r)['acc@5']:.1f}" for r in repos) + " |"]
    for variant, rs in zip(variants, results[1:], strict=True):
        p = pooled(rs)
        deltas = " | ".join(f"{100 * (pooled(rs, r)['acc@5'] - pooled(results[0], r)['acc@5']):+.1f}" for r in repos)
        out.append(f"| {variant[0]} | {100 * p['acc@1']:.1f} | {100 * p['acc@5']:.1f} | {100 * p['acc@10']:.1f} | "
                   f"{p['mrr']:.3f} | {100 * (p['acc@5'] - base['acc@5']):+.1f} | {deltas} |")
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
    ap.add_argument("--history", action="store_true", help="give each tree the git history ending at its base commit")
    ap.add_argument("--ablate", action="store_true",
                    help="on the cached builds: switch each rule off in turn and print the table")
    ap.add_argument("--vary", action="append", default=[], metavar="MODULE.NAME=V1,V2,…",
                    help="with --ablate: these values instead (module parse, run or score), e.g. score.TEST_PRIOR=0.25,0.6")
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
    if a.ablate:
        variants = tuple((f"{spec.split('=')[0]} = {v}", *spec.split("=")[0].split("."), float(v))
                         for spec in a.vary for v in spec.split("=", 1)[1].split(","))
        print("\n".join(ablate(rows, a.cache, variants or ABLATIONS)))
        return
    out: list[dict] = []
    latency: list[float] = []
    build_seconds = 0.0
    rebuilt: set[Path] = set()
    t_start = time.perf_counter()
    for i, row in enumerate(rows, 1):
        tree = a.cache / row["repo"].replace("/", "+") / row["base_commit"][:12]
        export_tree(Path(clones[row["repo"]]), row["base_commit"], tree)
        if a.history:
            attach_history(Path(clones[row["repo"]]), row["base_commit"], tree)
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
