"""Extractor cost per language: grammar load, parse and full extraction, over real trees.

    python scripts/bench_extract.py TREE [TREE ...] [--repeat 3]

For every file of the trees whose language has an extractor, reads it once, then times
(best of --repeat) the tree-sitter parse alone and ORACL's whole extraction (parse, query,
qualified names, signatures, docs, imports, calls, test markers; for Python the ``ast``
analyzer and the call scan). Prints MB/s per language and the extraction ÷ parse ratio,
plus the one-off cost of importing the grammar pack and loading each grammar.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

SKIP_DIRS = {".git", ".oracl", "node_modules", ".venv", "__pycache__"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", type=Path, nargs="+")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()

    t0 = time.perf_counter()
    from tree_sitter_language_pack import get_parser
    import_ms = (time.perf_counter() - t0) * 1000

    from oracl.builder.extractors.code import QUERIES, _grammar, extract, python_calls
    from oracl.builder.extractors.python_ast import analyze_python
    from oracl.builder.pipeline.linguist import held_back, language_of

    texts: dict[str, list[str]] = {}
    for tree in a.trees:
        for dirpath, dirnames, filenames in os.walk(tree):
            dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
            for name in filenames:
                path = os.path.join(dirpath, name)
                lang = language_of(os.path.relpath(path, tree))
                if lang not in QUERIES and lang != "python":
                    continue
                data = Path(path).read_bytes()
                if b"\0" in data[:8192] or held_back(os.path.relpath(path, tree), data[:8192]):
                    continue
                texts.setdefault(lang, []).append(data.decode("utf-8", "replace"))
    print(f"import tree_sitter_language_pack: {import_ms:.0f} ms")
    print("| language | files | MB | grammar load ms | parse MB/s | extract MB/s | extract ÷ parse |")
    print("|---|---|---|---|---|---|---|")
    for lang in sorted(texts):
        docs = texts[lang]
        size = sum(len(t.encode()) for t in docs) / 1e6
        t1 = time.perf_counter()
        if lang != "python":
            _grammar(lang)
        load_ms = (time.perf_counter() - t1) * 1000
        parser = get_parser(lang)  # type: ignore[arg-type]
        encoded = [t.encode() for t in docs]

        def best(fn) -> float:  # type: ignore[no-untyped-def]
            out = float("inf")
            for _ in range(a.repeat):
                s = time.perf_counter()
                fn()
                out = min(out, time.perf_counter() - s)
            return out

        parse = best(lambda p=parser, e=encoded: [p.parse(b) for b in e])
        if lang == "python":
            full = best(lambda d=docs: [(analyze_python(t), python_calls(t)) for t in d])
        else:
            full = best(lambda lang=lang, d=docs: [extract(lang, t) for t in d])
        print(f"| {lang} | {len(docs)} | {size:.2f} | {load_ms:.1f} | {size / parse:.1f} | {size / full:.1f} "
              f"| {full / parse:.1f} |")


if __name__ == "__main__":
    main()
