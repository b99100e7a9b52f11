"""Callers against an independent resolver: ``oracl callers`` vs jedi's reference search.

For a sample of functions and methods of a built Python checkout, jedi (installed
separately: ``pip install jedi``; it is not one of ORACL's dependencies) lists every
reference to the definition across the project; the references that are calls (the name
followed by ``(``) are the truth. ORACL's answer is the call sites of ``oracl callers``.
Both are compared as (file, line) call sites, micro-averaged over the sample, at several
confidence floors.

    python scripts/eval_callers.py CHECKOUT [--sample 50] [--seed 7] [--out rows.jsonl]

CHECKOUT must hold a build (``oracl build CHECKOUT``).
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from pathlib import Path

import orjson

from oracl.core.export import unpack_symbols
from oracl.core.parts import latest_export
from oracl.core.paths import is_test_path
from oracl.read import callgraph
from oracl.read.snapshot import Snapshot

FLOORS = (0.0, 0.5, 0.7, 0.85)
SCOPES = ("all", "non-test")  # jedi cannot type a pytest fixture (`def test_x(app)`): call sites in
                              # tests are also reported apart


def sample(snap: Snapshot, n: int, seed: int) -> list[dict]:
    nodes, _ = unpack_symbols(orjson.loads(latest_export(snap.root)))
    rows = [s for s in nodes
            if s["kind"] in ("function", "method", "async_function") and s["language"] == "python"
            and not is_test_path(s["path"]) and not s["name"].startswith("__")
            and not s["path"].startswith(("examples/", "docs/"))]
    rows.sort(key=lambda s: s["id"])
    return random.Random(seed).sample(rows, min(n, len(rows)))


def jedi_calls(root: Path, sym: dict, project) -> set[tuple[str, int]] | None:
    import jedi

    path = root / sym["path"]
    lines = path.read_text("utf-8").splitlines()
    rx = re.compile(rf"\b(?:def|class)\s+({re.escape(sym['name'])})\b")
    for ln in range(sym["start"], min(sym["start"] + 30, len(lines) + 1)):
        m = rx.search(lines[ln - 1])
        if m:
            break
    else:
        return None
    script = jedi.Script(path=str(path), project=project)
    out: set[tuple[str, int]] = set()
    for ref in script.get_references(ln, m.start(1), scope="project"):
        if ref.is_definition() or ref.module_path is None:
            continue
        try:
            rel = Path(ref.module_path).resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            continue
        try:
            text = (root / rel).read_text("utf-8").splitlines()[ref.line - 1]
        except (OSError, IndexError):
            continue
        after = text[ref.column + len(sym["name"]):]
        if after.lstrip().startswith("("):
            out.add((rel, ref.line))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", type=Path)
    ap.add_argument("--sample", type=int, default=50)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    import jedi

    root = args.checkout.resolve()
    extra = [str(root / "src")] if (root / "src").is_dir() else []
    project = jedi.Project(path=str(root), added_sys_path=extra)
    tp = {(s, f): 0 for s in SCOPES for f in FLOORS}
    fp = dict(tp)
    fn = dict(tp)
    rows = []
    t0 = time.perf_counter()
    with Snapshot.open(root) as snap:
        for sym in sample(snap, args.sample, args.seed):
            truth = jedi_calls(root, sym, project)
            if truth is None:
                continue
            got_at = {}
            for floor in FLOORS:
                ans = callgraph.callers(snap, sym["id"], min_confidence=floor, k=500)
                got = {(r["path"], line) for r in ans["callers"] for line in r["lines"]}
                got_at[floor] = got
                for scope in SCOPES:
                    keep = (lambda site: True) if scope == "all" else (lambda site: not is_test_path(site[0]))
                    g = {x for x in got if keep(x)}
                    tr = {x for x in truth if keep(x)}
                    tp[(scope, floor)] += len(g & tr)
                    fp[(scope, floor)] += len(g - tr)
                    fn[(scope, floor)] += len(tr - g)
            rows.append({"id": sym["id"], "truth": sorted(truth), "oracl": sorted(got_at[0.0]),
                         "missed": sorted(truth - got_at[0.0]), "extra": sorted(got_at[0.0] - truth)})
    print(f"{args.checkout.name}: {len(rows)} symbols, {sum(len(r['truth']) for r in rows)} jedi call sites "
          f"({time.perf_counter() - t0:.1f} s)")
    for scope in SCOPES:
        for floor in FLOORS:
            k = (scope, floor)
            p = tp[k] / (tp[k] + fp[k]) if tp[k] + fp[k] else 1.0
            r = tp[k] / (tp[k] + fn[k]) if tp[k] + fn[k] else 1.0
            print(f"  {scope:8} call sites, confidence ≥ {floor:.2f}: precision {p:.3f}  recall {r:.3f}  "
                  f"(tp {tp[k]}, fp {fp[k]}, fn {fn[k]})")
    if args.out:
        args.out.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))


if __name__ == "__main__":
    sys.exit(main())
