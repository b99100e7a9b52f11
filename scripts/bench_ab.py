"""Before and after in one run: the three figures every issue reports, for an older
revision (A) and the working copy (B), interleaved on two copies of one workspace.

    python scripts/bench_ab.py WORKSPACE --base REV [--rebuilds 5] [--queries 6] [--query TEXT]

A is ``git worktree add`` of REV (in a scratch folder, removed at the end), run from this
environment with ``PYTHONPATH`` pointing at it; B is this checkout. WORKSPACE is copied
twice (one copy per side, so neither reuses the other's vault). Then, one side after the
other at every step:

* the floor (``scripts/bench_build.py``'s: read, hash and parse every file) once, and each
  full build (``oracl build --full``, a real subprocess) twice: build ÷ floor;
* ``--rebuilds`` one-file rebuilds: a comment appended to one Python file (a different one
  each time, an mtime an hour back), then ``oracl build``: the median and the range;
* ``--queries`` cold queries (``oracl query TEXT`` with ``ORACL_WARM=0``: process start,
  imports, opening the bundle): the median;
* the size of ``graph.kuzu`` after the last rebuild.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_build import floor  # noqa: E402

LAUNCH = "import sys; from oracl.face.launch import main; sys.argv[0] = 'oracl'; main()"


def oracl(side: dict[str, object], *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    env = {**os.environ, "ORACL_WARM": "0"}
    if side["pythonpath"]:
        env["PYTHONPATH"] = str(side["pythonpath"])
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", LAUNCH, *args], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"oracl {' '.join(args)} failed ({side['name']}): {proc.stderr.strip()[:500]}")
    return wall, proc


def touch(root: Path, n: int) -> None:
    files = sorted(p for p in root.rglob("*.py") if ".oracl" not in p.parts)
    path = files[(n * 7919) % len(files)]
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(f"\n# edit {n}\n")
    past = time.time() - 3600
    os.utime(path, (past, past))


def db_bytes(root: Path) -> int:
    import orjson

    latest = orjson.loads((root / ".oracl" / "mirror" / "LATEST.json").read_bytes())
    db = root / ".oracl" / "mirror" / latest["build_id"] / "graph.kuzu"
    return db.stat().st_size if db.is_file() else sum(p.stat().st_size for p in db.rglob("*") if p.is_file())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--base", required=True, help="the revision measured as A")
    ap.add_argument("--rebuilds", type=int, default=5)
    ap.add_argument("--queries", type=int, default=6)
    ap.add_argument("--query", default="auth cache session")
    a = ap.parse_args()
    repo = HERE.parent
    scratch = Path(tempfile.mkdtemp(prefix="oracl-ab-"))
    worktree = scratch / "base"
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", "--detach", str(worktree), a.base], check=True)
    sides = [{"name": f"A ({a.base})", "pythonpath": worktree, "root": scratch / "a"},
             {"name": "B (this checkout)", "pythonpath": "", "root": scratch / "b"}]
    try:
        for s in sides:
            shutil.copytree(a.workspace, s["root"], ignore=shutil.ignore_patterns(".oracl"))
        base_floor, files, _ = floor(sides[0]["root"])  # type: ignore[arg-type]
        print(f"floor: {base_floor:.2f} s over {files:,} files", flush=True)
        full: dict[str, list[float]] = {s["name"]: [] for s in sides}  # type: ignore[misc]
        for _ in range(2):
            for s in sides:
                wall, _ = oracl(s, "build", str(s["root"]), "--full", "-q")
                full[s["name"]].append(wall)  # type: ignore[index]
        rebuilds: dict[str, list[float]] = {s["name"]: [] for s in sides}  # type: ignore[misc]
        for n in range(a.rebuilds):
            for s in sides:
                touch(s["root"], n)  # type: ignore[arg-type]
                wall, _ = oracl(s, "build", str(s["root"]), "-q")
                rebuilds[s["name"]].append(wall)  # type: ignore[index]
        queries: dict[str, list[float]] = {s["name"]: [] for s in sides}  # type: ignore[misc]
        for _ in range(a.queries):
            for s in sides:
                wall, _ = oracl(s, "query", a.query, "-r", str(s["root"]))
                queries[s["name"]].append(wall)  # type: ignore[index]
        for s in sides:
            name = s["name"]
            f, r, q = full[name], rebuilds[name], queries[name]  # type: ignore[index]
            print(f"{name}: full build {', '.join(f'{x:.2f}' for x in f)} s "
                  f"({min(f) / base_floor:.2f}–{max(f) / base_floor:.2f} × floor); one-file rebuild median "
                  f"{statistics.median(r):.2f} s ({min(r):.2f}–{max(r):.2f}); cold query median "
                  f"{statistics.median(q):.3f} s; graph.kuzu {db_bytes(s['root']) / 1e6:.0f} MB")  # type: ignore[arg-type]
    finally:
        subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(worktree)], check=False)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
