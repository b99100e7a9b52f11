"""Build benchmark: ``oracl build`` against a floor measured in the same run.

    python scripts/bench_build.py WORKSPACE [--files 50000] [--repeat 1] [--polyglot]

The floor is one process walking the same tree, reading every file the build reads (every
file not named as binary), SHA-256-hashing it and parsing the code: ``ast.parse`` for
Python, the tree-sitter grammar of its language (the same pinned grammars the build
uses) for every other language ORACL extracts. The build runs as a real ``oracl build``
subprocess (process start included). A missing WORKSPACE is generated first with
scripts/synth_workspace.py (``--polyglot`` for the polyglot mix). Prints wall times,
build ÷ floor, the floor's parse seconds per language and the peak RSS of the build's
largest process.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SKIP_DIRS = {".git", ".oracl", "__pycache__", ".venv", "node_modules"}


def floor(root: Path) -> tuple[float, int, dict[str, float]]:
    from tree_sitter_language_pack import get_parser

    from oracl.builder.extractors.code import QUERIES
    from oracl.builder.pipeline.linguist import language_of
    from oracl.core.paths import binary_suffix

    parsers: dict[str, object] = {}
    per_language: dict[str, float] = {}
    t0 = time.perf_counter()
    n = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
        for name in filenames:
            if binary_suffix(name):
                continue
            with open(os.path.join(dirpath, name), "rb") as fh:
                data = fh.read()
            hashlib.sha256(data).hexdigest()
            lang = language_of(name)
            t1 = time.perf_counter()
            if lang == "python":
                try:
                    ast.parse(data)
                except (SyntaxError, ValueError):
                    pass
            elif lang in QUERIES:
                if lang not in parsers:
                    parsers[lang] = get_parser(lang)  # type: ignore[arg-type]
                parsers[lang].parse(data)  # type: ignore[attr-defined]
            if lang:
                per_language[lang] = per_language.get(lang, 0.0) + time.perf_counter() - t1
            n += 1
    return time.perf_counter() - t0, n, per_language


def run_build(root: Path, extra: list[str]) -> tuple[float, int, str]:
    oracl = Path(sys.executable).with_name("oracl")
    shutil.rmtree(root / ".oracl", ignore_errors=True)
    t0 = time.perf_counter()
    proc = subprocess.run([str(oracl), "build", str(root), "--json", *extra], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"oracl build failed: {proc.stderr.strip()}")
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, peak_kib, proc.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--files", type=int, default=50_000)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--polyglot", action="store_true", help="generate the polyglot mix (a missing WORKSPACE)")
    ap.add_argument("build_args", nargs="*", help="extra arguments for oracl build (after --)")
    a = ap.parse_args()
    if not a.workspace.exists():
        subprocess.run([sys.executable, str(HERE / "synth_workspace.py"), str(a.workspace),
                        "--files", str(a.files), *(["--polyglot"] if a.polyglot else [])], check=True)
    import orjson

    for i in range(a.repeat):
        # warm the page cache once so neither side pays the first cold read
        floor(a.workspace) if i == 0 else None
        f_wall, n, parse = floor(a.workspace)
        b_wall, peak_kib, out = run_build(a.workspace, a.build_args)
        report = orjson.loads(out)
        phases = " ".join(f"{k}={v:.1f}" for k, v in report["seconds"].items())
        print(f"files={n} floor={f_wall:.2f}s build={b_wall:.2f}s ratio={b_wall / f_wall:.2f} "
              f"peak_rss={peak_kib / 1024:.0f}MiB nodes={report['counts']['nodes']} "
              f"edges={report['counts']['edges']} phases: {phases}")
        top = sorted(parse.items(), key=lambda kv: -kv[1])[:8]
        print("floor parse seconds: " + " ".join(f"{k}={v:.2f}" for k, v in top))


if __name__ == "__main__":
    main()
