"""Print what a hand check of ``oracl callers`` needs, for languages without an independent
resolver at hand: for each sampled function or method, its definition, the call sites ORACL
reports (at the default confidence floor) and every line of the repository that names it
followed by ``(`` (the candidates a reader judges).

    python scripts/handcheck_callers.py CHECKOUT --language go [--sample 20] [--seed 7]

The reader marks each candidate as a call of the symbol or not; precision is the share of
ORACL's sites that are calls of it, recall the share of the calls ORACL reports. The
judgements behind the figures in docs/evaluation.md are listed there.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from pathlib import Path

import orjson

from oracl.core.export import unpack_symbols
from oracl.core.parts import latest_export
from oracl.core.paths import is_test_path
from oracl.read import callgraph
from oracl.read.snapshot import Snapshot


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", type=Path)
    ap.add_argument("--language", required=True, nargs="+")
    ap.add_argument("--sample", type=int, default=20)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    root = args.checkout.resolve()
    every, _ = unpack_symbols(orjson.loads(latest_export(root)))
    nodes = [n for n in every if n["language"] in args.language
             and n["kind"] in ("function", "method") and not is_test_path(n["path"]) and len(n["name"]) >= 3]
    nodes.sort(key=lambda n: n["id"])
    sample = random.Random(args.seed).sample(nodes, min(args.sample, len(nodes)))
    files = sorted({n["path"] for n in every if n["language"] in args.language})
    texts = {p: (root / p).read_text("utf-8", "replace").splitlines() for p in files}
    with Snapshot.open(root) as snap:
        for n in sample:
            ans = callgraph.callers(snap, n["id"], k=500)
            sites = {(r["path"], line): (r["resolution"], r["confidence"]) for r in ans["callers"] for line in r["lines"]}
            rx = re.compile(rf"(?<![\w$]){re.escape(n['name'])}\s*[(<]")
            print(f"== {n['id']}  ({n['kind']}, {n['path']}:{n['start']}) {n['signature'][:80]}")
            for path in files:
                for i, line in enumerate(texts[path], 1):
                    if rx.search(line) and not (path == n["path"] and i == n["start"]):
                        mark = sites.pop((path, i), None)
                        tag = f"ORACL {mark[0]} {mark[1]:.2f}" if mark else "-"
                        print(f"   {tag:28} {path}:{i}: {line.strip()[:110]}")
            for (path, i), mark in sorted(sites.items()):
                print(f"   ORACL {mark[0]} {mark[1]:.2f} (no candidate) {path}:{i}: {texts[path][i - 1].strip()[:100]}")


if __name__ == "__main__":
    sys.exit(main())
