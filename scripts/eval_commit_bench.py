"""Retrieval evaluation on the commit-bench sets: ORACL against plain BM25, same trees.

    python scripts/eval_commit_bench.py CLONE SET.jsonl [--cache DIR] [--rows N]

CLONE is a git clone of the set's repository (never committed; `fetch` one); SET is a
commit-bench file made by ``scripts/make_commit_bench.py`` (docs/evaluation.md). For each row the script exports the
row's `parent` commit into a scratch tree under --cache (one per parent, reused across
runs), builds it with `oracl build` (cached: a tree that already has a build is not
rebuilt unless --rebuild), runs the row's query through `oracl.read.query.run.search`, and ranks
the same tree's files with a plain BM25 baseline (`bm25s`, English stop words, no stemming,
whole file contents) over *every* text file of the tree, as a user's grep would see it
(no NUL byte in the first 8 KiB; `.git` and the vault left out). A hit needs *every* gold file:

* Acc@k: all gold files in the top k;  Recall@10: the share of gold files in the top 10;
* MRR: 1 / rank of the first gold file (0 when none is in the top 100);
* span hit rate: of the gold files that are in the row's context pack (``Memory.context``,
  4,000 tokens), the share whose quoted lines overlap a hunk the commit changed (lines of
  the file at `parent`; a file the commit adds has none and is not counted).

With ``--history`` each scratch tree is also given the clone's git history ending at the
row's `parent` (a shared clone whose HEAD is `parent`: ``git log HEAD`` reaches no later
commit), so the build reads co-change edges and commit messages as a user's clone at that
commit would give them.

Needs `pip install bm25s` (not a dependency of ORACL itself).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tarfile
import time
from io import BytesIO
from pathlib import Path

import orjson

DEPTH = 100
PACK_TOKENS = 4000
SNIFF = 8192


def export_tree(clone: Path, commit: str, dest: Path) -> None:
    """The files of ``commit`` written to ``dest`` (git archive; no worktree bookkeeping).
    A clone missing some blobs (a partial or snapshot clone leaves large files out) is
    exported blob by blob, and the missing files are reported and left out."""
    if dest.is_dir() and any(dest.iterdir()):
        return
    dest.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["git", "-C", str(clone), "archive", "--format=tar", commit], capture_output=True)
    if proc.returncode == 0:
        with tarfile.open(fileobj=BytesIO(proc.stdout)) as tar:
            tar.extractall(dest, filter="data")
        return
    listing = subprocess.run(["git", "-C", str(clone), "ls-tree", "-r", "-z", commit], check=True,
                             capture_output=True).stdout.split(b"\0")
    missing = 0
    for item in listing:
        if not item:
            continue
        meta, path = item.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind != b"blob" or mode == b"120000":
            continue
        blob = subprocess.run(["git", "-C", str(clone), "cat-file", "blob", sha.decode()], capture_output=True)
        if blob.returncode != 0:
            missing += 1
            continue
        out = dest / path.decode("utf-8", "surrogateescape")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(blob.stdout)
    print(f"  {commit[:12]}: {missing} blob(s) missing from the clone, left out", file=sys.stderr)


def attach_history(clone: Path, commit: str, tree: Path) -> None:
    """Give ``tree`` (the files of ``commit``) a ``.git`` whose HEAD is ``commit``: a shared
    clone (objects borrowed from ``clone``), detached at ``commit``, index reset to it."""
    if (tree / ".git").exists():
        return
    scratch = tree.parent / f".{tree.name}.clone"
    subprocess.run(["rm", "-rf", str(scratch)], check=True)
    subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(clone), str(scratch)], check=True)
    (scratch / ".git").rename(tree / ".git")
    scratch.rmdir()
    subprocess.run(["git", "-C", str(tree), "update-ref", "--no-deref", "HEAD", commit], check=True)
    subprocess.run(["git", "-C", str(tree), "reset", "-q"], check=True)


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? ")


def old_hunks(clone: Path, parent: str, commit: str, paths: list[str]) -> dict[str, list[tuple[int, int]]]:
    """The line ranges of ``paths`` at ``parent`` that ``commit`` changed (a pure insertion is
    the line it follows)."""
    out = subprocess.run(["git", "-C", str(clone), "diff", "--no-color", "--unified=0", "--no-renames", parent,
                          commit, "--", *paths], capture_output=True, text=True, errors="replace").stdout
    spans: dict[str, list[tuple[int, int]]] = {}
    current = None
    for line in out.splitlines():
        if line.startswith("--- "):
            current = line[6:] if line.startswith("--- a/") else None
        elif line.startswith("@@") and current is not None:
            m = _HUNK.match(line)
            if m:
                start, count = int(m.group(1)), int(m.group(2) or 1)
                spans.setdefault(current, []).append((max(1, start), max(1, start + max(count, 1) - 1)))
    return spans


def span_hits(items: list[tuple[str, int, int]], hunks: dict[str, list[tuple[int, int]]],
              gold: list[str]) -> tuple[int, int]:
    """(gold files in the pack that have hunks at parent, those whose quoted lines overlap one)."""
    seen = hit = 0
    for path in gold:
        quoted = [(a, b) for p, a, b in items if p == path]
        if not quoted or not hunks.get(path):
            continue
        seen += 1
        hit += any(a <= h1 and h0 <= b for a, b in quoted for h0, h1 in hunks[path])
    return seen, hit


def ensure_build(tree: Path, rebuild: bool = False) -> float:
    if (tree / ".oracl" / "mirror" / "LATEST.json").is_file() and not rebuild:
        return 0.0
    t0 = time.perf_counter()
    proc = subprocess.run([str(Path(sys.executable).with_name("oracl")), "build", str(tree), "-q", "--json",
                           *(["--full"] if rebuild else [])],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"build of {tree} failed: {proc.stderr.strip()}")
    return time.perf_counter() - t0


def text_files(tree: Path) -> tuple[list[str], list[str]]:
    """(paths, texts) of every text file below ``tree``: what grep would search."""
    paths, texts = [], []
    for dirpath, dirnames, filenames in os.walk(tree):
        dirnames[:] = sorted(d for d in dirnames if d not in (".git", ".oracl"))
        for name in sorted(filenames):
            full = Path(dirpath) / name
            try:
                data = full.read_bytes()
            except OSError:
                continue
            if b"\0" in data[:SNIFF]:
                continue
            texts.append(data.decode("utf-8", errors="replace"))
            paths.append(str(full.relative_to(tree)))
    return paths, texts


_CORPUS: dict[Path, tuple[list[str], object]] = {}


def bm25_rank(tree: Path, query: str) -> list[str]:
    import bm25s

    if tree not in _CORPUS:
        paths, texts = text_files(tree)
        retriever = bm25s.BM25()
        retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
        _CORPUS.clear()
        _CORPUS[tree] = (paths, retriever)
    paths, retriever = _CORPUS[tree]
    k = min(DEPTH, len(paths))
    docs, _ = retriever.retrieve(bm25s.tokenize([query], stopwords="en", show_progress=False), k=k,
                                 show_progress=False)
    return [paths[i] for i in docs[0]]


def metrics(ranked: list[str], gold: list[str]) -> dict[str, float]:
    gold_set = set(gold)
    out = {f"acc@{k}": float(gold_set <= set(ranked[:k])) for k in (1, 5, 10)}
    out["recall@10"] = len(gold_set & set(ranked[:10])) / len(gold_set)
    first = next((i for i, p in enumerate(ranked[:DEPTH], 1) if p in gold_set), None)
    out["mrr"] = 1.0 / first if first else 0.0
    return out


def mean(rows: list[dict[str, float]]) -> dict[str, float]:
    return {k: sum(r[k] for r in rows) / len(rows) for k in rows[0]} if rows else {}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("clone", type=Path)
    ap.add_argument("set", type=Path)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/oracl-eval"))
    ap.add_argument("--rows", type=int, default=0, help="only the first N rows")
    ap.add_argument("--out", type=Path, help="write per-row results as JSON lines here")
    ap.add_argument("--rebuild", action="store_true", help="build every tree again (after a code change)")
    ap.add_argument("--history", action="store_true", help="give each tree the git history ending at its parent")
    a = ap.parse_args()
    from oracl.read.memory import _context
    from oracl.read.query.run import search
    from oracl.read.snapshot import Snapshot
    from oracl.read.status import FreshnessCheck

    rows = [orjson.loads(line) for line in a.set.read_bytes().splitlines() if line.strip()]
    if a.rows:
        rows = rows[: a.rows]
    name = a.set.stem.removeprefix("commit_bench_")
    ours, base, per_row = [], [], []
    spans_seen = spans_hit = 0
    build_seconds = 0.0
    rebuilt: set[Path] = set()
    t_start = time.perf_counter()
    for i, row in enumerate(rows, 1):
        tree = a.cache / name / row["parent"][:12]
        export_tree(a.clone, row["parent"], tree)
        if a.history:
            attach_history(a.clone, row["parent"], tree)
        build_seconds += ensure_build(tree, a.rebuild and tree not in rebuilt)
        rebuilt.add(tree)
        with Snapshot.open(tree) as snap:
            result = search(snap, row["query"], limit=DEPTH, log=False)
            pack = _context(snap, row["query"], PACK_TOKENS, 12, FreshnessCheck(snap), log=False)
        items = [(i.path, i.start, i.end) for i in pack.items]
        seen, hit = span_hits(items, old_hunks(a.clone, row["parent"], row["commit"], row["gold_files"]),
                              row["gold_files"])
        spans_seen += seen
        spans_hit += hit
        ranked = [r["path"] for r in result.results]
        baseline = bm25_rank(tree, row["query"])
        m_ours, m_base = metrics(ranked, row["gold_files"]), metrics(baseline, row["gold_files"])
        ours.append(m_ours)
        base.append(m_base)
        per_row.append({"commit": row["commit"], "query": row["query"][:200], "gold": row["gold_files"],
                        "oracl_top5": ranked[:5], "bm25_top5": baseline[:5], "oracl": m_ours, "bm25": m_base,
                        "pack": items, "span_seen": seen, "span_hit": hit})
        if i % 10 == 0:
            print(f"  {i}/{len(rows)} rows, {time.perf_counter() - t_start:.0f} s", file=sys.stderr, flush=True)
    if a.out:
        a.out.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in per_row))
    mo, mb = mean(ours), mean(base)
    print(f"set={name} rows={len(rows)} builds={build_seconds:.0f}s")
    print("| system | Acc@1 | Acc@5 | Acc@10 | Recall@10 | MRR |")
    print("|---|---|---|---|---|---|")
    for label, m in (("ORACL", mo), ("BM25 (bm25s)", mb)):
        print(f"| {label} | {m['acc@1']:.3f} | {m['acc@5']:.3f} | {m['acc@10']:.3f} | {m['recall@10']:.3f} | {m['mrr']:.3f} |")
    print(f"Acc@5 difference: {100 * (mo['acc@5'] - mb['acc@5']):+.1f} points")
    rate = spans_hit / spans_seen if spans_seen else 0.0
    print(f"span hit rate: {rate:.3f} ({spans_hit} of {spans_seen} gold files in the {PACK_TOKENS}-token pack)")


if __name__ == "__main__":
    main()
