"""Web view benchmark: how long each page's data takes in process, and its HTML.

    python scripts/bench_web.py WORKSPACE [--repeat 9] [--star STAR]
    python scripts/bench_web.py --make-star STAR [--edges 6000]

WORKSPACE is a built tree (the 50,000-file polyglot workspace of
scripts/synth_workspace.py is the reference). For each page of ``oracl serve`` the
script times ``oracl.face.pages`` (the data the JSON API answers with) and ``oracl.face.webpage``
(the HTML drawn from it) through one ``Memory``, as the server does, and reports the
median and the slowest of ``--repeat`` warm runs, and the ratio of the median to a floor
measured in the same run: the primary-key lookup of one artifact (``artifact_by_path``).
The file pages are those of the largest hub's top member and of the file with the most
edges; the searches are five fixed queries.

``--make-star STAR`` writes a tree where one module, ``pkg/core.py``, is imported by
``--edges`` others (build it with ``oracl build STAR``); ``--star STAR`` then times the
neighbourhood graph around that module, past the query guard (5,000 edges a direction),
and the depth-2 graph of one of its importers (which expands the star).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

QUERIES = ("payment retry token refresh", "where is the session cache invalidated",
           "ledger export signer", "Traceback (most recent call last): KeyError 'tenant' in router",
           "upload quota policy but not archived")


def make_star(out: Path, edges: int) -> None:
    pkg = out / "pkg"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "core.py").write_text('"""The module every other one imports."""\n\n\ndef shared(x):\n    return x\n')
    for i in range(edges):
        (pkg / f"m{i:05d}.py").write_text(f"from pkg import core\n\n\ndef use_{i}(x):\n    return core.shared(x)\n")
    print(f"wrote {edges + 2} files under {out}; now: oracl build {out}")


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    result = fn()  # warm: the first call compiles the query and fills the snapshot's caches
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        runs.append((time.perf_counter() - t) * 1000)
    return statistics.median(runs), max(runs), result


def bench(root: Path, repeat: int, star: Path | None) -> None:
    from oracl.face import pages, webpage
    from oracl.read.memory import Memory

    rows: list[tuple[str, float, float, float]] = []
    with Memory.open(root) as mem:
        snap, _ = mem.snapshot()
        mem.build_info(wait=60.0)  # the first tree walk, done before timing
        hubs = pages.hubs(mem)["hubs"]
        big_hub = hubs[0]
        top = big_hub["top_member"]
        most = snap.store.rows("MATCH (a:Artifact)-[l:Link]-(:Artifact) RETURN a.path AS p, count(l) AS n "
                               "ORDER BY n DESC, p LIMIT 1")[0]
        sym = next((s for s in snap.named("symbols_in_files", {"paths": [top]}) if s["kind"] != "module"), None)
        floor, _, _ = timed(lambda: snap.named("artifact_by_path", {"path": top}), repeat)
        cases: list[tuple[str, Callable[[], dict[str, Any]], Callable[[dict[str, Any]], str]]] = [
            ("hub map", lambda: pages.hubs(mem), webpage.hubs_page),
            (f"hub {big_hub['domain']} (top 50)", lambda: pages.hub(mem, big_hub["domain"]), webpage.hub_page),
            ("file: largest hub's top", lambda: pages.file(mem, top), webpage.file_page),
            (f"file: most edges ({most['n']})", lambda: pages.file(mem, most["p"]), webpage.file_page),
            ("graph depth 1: top", lambda: pages.neighbourhood(mem, top, 1), webpage.graph_page),
            ("graph depth 2: top", lambda: pages.neighbourhood(mem, top, 2), webpage.graph_page),
            ("graph depth 1: most edges", lambda: pages.neighbourhood(mem, most["p"], 1), webpage.graph_page),
            ("graph depth 2: most edges", lambda: pages.neighbourhood(mem, most["p"], 2), webpage.graph_page),
        ]
        for i, q in enumerate(QUERIES):
            cases.append((f"search {i + 1}", lambda q=q: pages.search(mem, q), webpage.search_page))
        if sym is not None:
            where = f"{sym['path']}:{sym['start']}"
            cases.append((f"symbol {sym['qualified'][:24]}", lambda: pages.symbol(mem, where), webpage.symbol_page))
        cases.append(("impact: top (depth 2)", lambda: pages.impact(mem, top), webpage.impact_page))
        for name, data_fn, html_fn in cases:
            med, worst, data = timed(data_fn, repeat)
            html_med, _, _ = timed(lambda: html_fn(data), repeat)  # noqa: B023 – used at once
            rows.append((name, med, worst, html_med))
    if star is not None:
        with Memory.open(star) as mem:
            mem.build_info(wait=60.0)
            # the star itself, and a file that imports it (its depth 2 expands the star)
            for label, path, depth in (("star", "pkg/core.py", 1), ("star", "pkg/core.py", 2),
                                       ("star's leaf", "pkg/m00001.py", 2)):
                med, worst, data = timed(lambda p=path, d=depth: pages.neighbourhood(mem, p, d), repeat)
                html_med, _, _ = timed(lambda: webpage.graph_page(data), repeat)  # noqa: B023
                rows.append((f"{label} graph depth {depth}", med, worst, html_med))
                print(f"{label}, depth {depth}: {len(data['nodes'])} nodes, {len(data['edges'])} edges; "
                      f"cut note: {data['cut_note']}")
    print(f"floor (artifact_by_path, primary key): {floor:.2f} ms; {repeat} warm runs each")
    print(f"{'page':34s} {'data p50':>9s} {'data max':>9s} {'× floor':>8s} {'≤ 50 ms':>8s} {'html p50':>9s}")
    for name, med, worst, html_med in rows:
        print(f"{name:34s} {med:8.1f}  {worst:8.1f}  {med / floor:7.1f}  {'yes' if med <= 50 else 'NO':>7s}  "
              f"{html_med:8.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workspace", type=Path, nargs="?")
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--star", type=Path, help="a built tree made by --make-star")
    ap.add_argument("--make-star", type=Path, metavar="DIR")
    ap.add_argument("--edges", type=int, default=6000)
    args = ap.parse_args()
    if args.make_star:
        make_star(args.make_star, args.edges)
        return
    if args.workspace is None:
        ap.error("WORKSPACE is required (or --make-star DIR)")
    bench(args.workspace, args.repeat, args.star)


if __name__ == "__main__":
    sys.exit(main())
