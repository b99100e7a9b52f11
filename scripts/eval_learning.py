"""Held-out replay of the learning loop (design §9, "Learning") on the commit-bench sets.

    python scripts/eval_learning.py SET.jsonl=CLONE [SET.jsonl=CLONE …] [--cache DIR]
        [--train 0.7] [--min-confidence κ] [--history] [--out rows.jsonl]

For each set, its rows in time order: the older ``--train`` share are *sessions* and the
newer rest are *questions*. One tree is made per set: the files at the parent of the
oldest question (the memory as it stood when those questions were asked; `git archive`
of CLONE, cached under --cache), built once. Then, on that tree:

1. every question is asked (``oracl.read.query.run.search``, not logged): Acc@1/5/10 and
   MRR **without** learned data;
2. every session is replayed through ``oracl.Memory`` as a user would leave it: one Memory
   per session (its own session id), the commit message searched (10 results), then each
   file the commit changed and the tree holds followed up with ``fragment``; the vault
   starts with no logs, proposals or learned files (and was built without them);
3. ``Memory.learn()`` mines the log, ``Memory.decide(…, "accepted")`` accepts every
   pending proposal (or those at or above ``--min-confidence``), and the tree is built
   again (a selective build: no file changed, the learned files did);
4. every question is asked again: the same metrics **with** the accepted learned data.

Gold is the set of files the question's commit changed; a question with a gold file the
tree does not hold cannot be answered by either arm and is left out (counted). Pooled
figures weigh every question of every set alike.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from datetime import datetime
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_commit_bench import attach_history, ensure_build, export_tree, metrics  # noqa: E402

DEPTH = 100


METRICS = ("acc@1", "acc@5", "acc@10", "recall@10", "mrr")


def mean(rows: list[dict]) -> dict[str, float]:
    return {k: sum(r[k] for r in rows) / len(rows) if rows else 0.0 for k in METRICS}


def split(rows: list[dict], train: float) -> tuple[list[dict], list[dict]]:
    """Rows in time order (their commit dates), cut at ``train``."""
    ordered = sorted(rows, key=lambda r: (datetime.fromisoformat(r["date"]), r["commit"]))
    cut = int(round(len(ordered) * train))
    return ordered[:cut], ordered[cut:]


def ask(tree: Path, questions: list[dict], known: set[str]) -> list[dict]:
    from oracl.read.query.run import search
    from oracl.read.snapshot import Snapshot

    out = []
    with Snapshot.open(tree) as snap:
        for row in questions:
            if not set(row["gold_files"]) <= known:
                continue
            ranked = [r["path"] for r in search(snap, row["query"], limit=DEPTH, log=False).results]
            out.append({"commit": row["commit"], "gold": row["gold_files"], "top5": ranked[:5],
                        **metrics(ranked, row["gold_files"])})
    return out


def replay(tree: Path, sessions: list[dict], known: set[str], min_confidence: float | None) -> dict:
    from oracl.core.errors import OraclError
    from oracl.read.memory import Memory

    follow_ups = 0
    for i, row in enumerate(sessions):
        with Memory.open(tree, session=f"replay-{i:04d}") as mem:
            mem.search(row["query"], k=10, freshness=False)
            for path in row["gold_files"]:
                if path in known:
                    try:
                        mem.fragment(path)
                    except OraclError:  # a file that cannot be quoted (deleted, unreadable) is not a follow-up
                        continue
                    follow_ups += 1
    with Memory.open(tree) as mem:
        learned = mem.learn()
        decided = mem.decide([], "accepted", every=min_confidence is None, min_confidence=min_confidence)
    return {"follow_ups": follow_ups, "learned": learned, "accepted": len(decided["decided"]),
            "refused": len(decided["refused"])}


def forget(tree: Path) -> None:
    """The vault as a fresh one: no logs, proposals or learned files (an earlier run's)."""
    vault = tree / ".oracl"
    for name in ("logs", "learn"):
        shutil.rmtree(vault / name, ignore_errors=True)
    for name in ("learned_edges.json", "learned_terms.json", "learned_tags.json"):
        (vault / name).unlink(missing_ok=True)


def known_files(tree: Path) -> set[str]:
    from oracl.read.snapshot import Snapshot

    with Snapshot.open(tree) as snap:
        return set(snap.built_files()[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="+", help="SET.jsonl=CLONE (a commit-bench set and a git clone of its repository)")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/oracl-learn"))
    ap.add_argument("--train", type=float, default=0.7)
    ap.add_argument("--min-confidence", type=float, default=None)
    ap.add_argument("--history", action="store_true", help="give the tree the clone's history to its commit")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--no-gap-rule", action="store_true",
                    help="ablation: learn a word for a file even when the file's text holds it")
    ap.add_argument("--vary", action="append", default=[], metavar="run.NAME=V1,V2,…",
                    help="also ask the questions with a query-plane constant set to each value (after learning)")
    a = ap.parse_args()
    from oracl.read.query import run

    if a.no_gap_rule:
        from oracl.read.learn import review

        review.SnapshotView.has_term = lambda self, path, stem: False  # type: ignore[method-assign]

    variants = [(spec.split("=", 1)[0].removeprefix("run."), float(v)) for spec in a.vary
                for v in spec.split("=", 1)[1].split(",")]
    varied: dict[tuple[str, float], list[dict]] = {v: [] for v in variants}
    pooled_without: list[dict] = []
    pooled_with: list[dict] = []
    lines = ["| set | sessions | follow-ups | proposals (association / term / tag) | accepted | questions "
             "(answerable) | Acc@1 | **Acc@5** | Acc@10 | MRR |", "|---|---|---|---|---|---|---|---|---|---|"]
    per_row = []
    for spec in a.sets:
        set_path, _, clone = spec.partition("=")
        rows = [orjson.loads(x) for x in Path(set_path).read_bytes().splitlines() if x.strip()]
        name = Path(set_path).stem.removeprefix("commit_bench_")
        sessions, questions = split(rows, a.train)
        at = questions[0]["parent"]
        tree = a.cache / name / f"split-{at[:12]}"
        export_tree(Path(clone), at, tree)
        if a.history:
            attach_history(Path(clone), at, tree)
        t0 = time.perf_counter()
        forget(tree)
        ensure_build(tree, rebuild=True)
        known = known_files(tree)
        without = ask(tree, questions, known)
        info = replay(tree, sessions, known, a.min_confidence)
        from oracl.core.vault import Vault

        built = subprocess_build(tree)
        with_ = ask(tree, questions, known)
        for name_value in variants:
            saved = getattr(run, name_value[0])
            setattr(run, name_value[0], name_value[1])
            try:
                varied[name_value] += ask(tree, questions, known)
            finally:
                setattr(run, name_value[0], saved)
        kinds = info["learned"]["by_kind"]
        mo, mw = mean(without), mean(with_)
        pooled_without += without
        pooled_with += with_
        lines.append(
            f"| {name} | {len(sessions)} | {info['follow_ups']} | "
            f"{sum(kinds['association'].values())} / {sum(kinds['term'].values())} / {sum(kinds['tag'].values())} | "
            f"{info['accepted']} | {len(questions)} ({len(without)}) | "
            f"{100 * mo['acc@1']:.1f} → {100 * mw['acc@1']:.1f} | **{100 * mo['acc@5']:.1f} → {100 * mw['acc@5']:.1f}** | "
            f"{100 * mo['acc@10']:.1f} → {100 * mw['acc@10']:.1f} | {mo['mrr']:.3f} → {mw['mrr']:.3f} |")
        for x, y in zip(without, with_, strict=True):
            per_row.append({"set": name, "commit": x["commit"], "gold": x["gold"], "without": x, "with": y})
        print(f"  {name}: {time.perf_counter() - t0:.0f} s, rebuild {built}, {Vault(tree).dir}", file=sys.stderr,
              flush=True)
    mo, mw = mean(pooled_without), mean(pooled_with)
    lines.append(f"| **pooled** | | | | | {len(pooled_without)} | {100 * mo['acc@1']:.1f} → {100 * mw['acc@1']:.1f} | "
                 f"**{100 * mo['acc@5']:.1f} → {100 * mw['acc@5']:.1f}** | {100 * mo['acc@10']:.1f} → "
                 f"{100 * mw['acc@10']:.1f} | {mo['mrr']:.3f} → {mw['mrr']:.3f} |")
    print("\n".join(lines))
    for (name, value), got in varied.items():
        m = mean(got)
        print(f"{name}={value:g}: pooled Acc@1 {100 * m['acc@1']:.1f}, Acc@5 {100 * m['acc@5']:.1f}, "
              f"Acc@10 {100 * m['acc@10']:.1f}, MRR {m['mrr']:.3f}")
    if a.out:
        a.out.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in per_row))


def subprocess_build(tree: Path) -> str:
    """The tree built again (selective: only the learned files changed); its mode line."""
    import subprocess

    proc = subprocess.run([str(Path(sys.executable).with_name("oracl")), "build", str(tree), "--json", "-q"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"build of {tree} failed: {proc.stderr.strip()}")
    doc = orjson.loads(proc.stdout)
    return f"{doc.get('mode', '')} ({doc['seconds'].get('read', 0):.1f} s read)"


if __name__ == "__main__":
    main()
