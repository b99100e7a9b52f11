"""Incremental-build benchmark: selective rebuilds and ``oracl status`` against floors
measured in the same run.

    python scripts/bench_incremental.py WORKSPACE [--fraction 0.01] [--seed 7] [--no-full] [--edit middle]

The floor is a bare stat walk of the same tree (``os.walk`` + ``os.stat`` of every file
with an included suffix) in one process. Every ``oracl`` call is a real subprocess,
process start included. Steps: a full build (``--full``; skipped with ``--no-full`` when a
build exists), ``oracl status`` on the unchanged tree, a rebuild after changing one file,
a rebuild after changing ``--fraction`` of the files. Changed files get new bytes and an
mtime an hour back (so none is "racily clean"); the edits are appended comments, which
the next run's edits simply extend (``--edit middle``: each comment goes before a Python
file's middle line instead, so the lines below it and the calls on them move). Prints one line per step, the three ratios the
issue sets targets for, and the "bundle floor": the I/O any new bundle of this design
costs (process start, copying and hashing the previous database, writing and hashing an
export of the same size), measured in the same run.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import orjson

SUFFIXES = (".py", ".md", ".txt", ".json", ".jsonl", ".yaml", ".yml", ".ini", ".cfg", ".toml", ".ps1", ".sh")
SKIP_DIRS = {".git", ".oracl", "__pycache__", ".venv", "node_modules"}
ORACL = str(Path(sys.executable).with_name("oracl"))


def stat_walk(root: Path) -> tuple[float, list[str]]:
    t0 = time.perf_counter()
    files: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
        for name in filenames:
            if name.endswith(SUFFIXES):
                path = os.path.join(dirpath, name)
                os.stat(path)
                files.append(path)
    return time.perf_counter() - t0, files


def bundle_floor(root: Path) -> tuple[float, str]:
    """What any new bundle of this design costs before a single fact is recomputed: start
    the interpreter with the CLI imported, copy the previous database, hash it (the
    manifest), write and hash an export of the previous one's size."""
    import hashlib
    import shutil
    import tempfile

    latest = orjson.loads((root / ".oracl" / "mirror" / "LATEST.json").read_bytes())
    bundle = root / ".oracl" / "mirror" / latest["bundle"]
    parts: dict[str, float] = {}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import oracl.face.cli"], check=True)
    parts["start"] = time.perf_counter() - t0
    with tempfile.TemporaryDirectory(dir=root / ".oracl") as tmp:
        t0 = time.perf_counter()
        shutil.copyfile(bundle / "graph.kuzu", Path(tmp) / "graph.kuzu")
        parts["copy db"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        with open(Path(tmp) / "graph.kuzu", "rb") as fh:
            hashlib.file_digest(fh, "sha256")
        parts["hash db"] = time.perf_counter() - t0
        from oracl.core.parts import latest_export

        data = latest_export(root)
        t0 = time.perf_counter()
        (Path(tmp) / "export.json").write_bytes(data)
        hashlib.sha256(data).hexdigest()
        parts["write+hash export"] = time.perf_counter() - t0
    total = sum(parts.values())
    return total, ", ".join(f"{k} {v:.2f}" for k, v in parts.items())


def run(*args: str) -> tuple[float, dict]:
    t0 = time.perf_counter()
    proc = subprocess.run([ORACL, *args, "--json"], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"oracl {args[0]} failed: {proc.stderr.strip()}")
    return wall, orjson.loads(proc.stdout)


def touch(paths: list[str], tag: str, middle: bool = False) -> None:
    """``middle``: the comment goes before the middle line of the file (so every line
    below it, and the calls on them, move), else at the end."""
    back = time.time_ns() - 3600 * 10**9
    for i, path in enumerate(paths):
        comment = "<!-- edit -->\n" if path.endswith(".md") else "\n" if path.endswith(".json") else f"# edit {tag}\n"
        if middle and path.endswith(".py"):
            with open(path, encoding="utf-8") as fh:
                lines = fh.readlines()
            lines.insert(len(lines) // 2, comment)
            with open(path, "w", encoding="utf-8") as fh:
                fh.writelines(lines)
        elif path.endswith((".json", ".jsonl")):
            with open(path, "rb") as fh:
                data = fh.read()
            data = data + b" " if not data.endswith(b"  ") else data[:-1]  # whitespace keeps JSON valid
            with open(path, "wb") as fh:
                fh.write(data)
        else:
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(comment)
        os.utime(path, ns=(back + i, back + i))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--fraction", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--no-full", action="store_true", help="start from the existing build")
    ap.add_argument("--edit", choices=("append", "middle"), default="append",
                    help="where the edit's comment goes: the end of each file, or (Python files) its middle line")
    args = ap.parse_args()
    root = args.workspace.resolve()
    rng = random.Random(args.seed)

    walk_s, files = stat_walk(root)
    walk_s = min(walk_s, stat_walk(root)[0], stat_walk(root)[0])  # warm: the same cache the builds see
    print(f"stat walk        {walk_s:7.3f} s   {len(files):,} files")
    full_s = None
    if not args.no_full:
        full_s, r = run("build", str(root), "--full", "-q")
        print(f"full build       {full_s:7.3f} s   {r['mode']}")
    status_s, st = run("status", str(root))
    print(f"status           {status_s:7.3f} s   {st['verdict']}")
    floor_s, parts = bundle_floor(root)
    print(f"bundle floor     {floor_s:7.3f} s   ({parts})")

    middle = args.edit == "middle"
    one = rng.sample([f for f in files if f.endswith(".py")] if middle else files, 1)
    touch(one, "one", middle)
    one_s, r = run("build", str(root), "-q")
    print(f"1-file rebuild   {one_s:7.3f} s   {r['mode']}")
    phases = " ".join(f"{k}={v:.2f}" for k, v in r["seconds"].items())
    print(f"                 phases: {phases}")

    many = rng.sample(files, max(1, int(len(files) * args.fraction)))
    touch(many, "many", middle)
    many_s, r = run("build", str(root), "-q")
    print(f"{args.fraction:.0%} rebuild     {many_s:7.3f} s   {r['mode']}")
    phases = " ".join(f"{k}={v:.2f}" for k, v in r["seconds"].items())
    print(f"                 phases: {phases}")

    status2_s, st = run("status", str(root))
    print(f"status (fresh)   {status2_s:7.3f} s   {st['verdict']}")
    print(f"1-file rebuild ÷ (2·walk + 1 s) = {one_s / (2 * walk_s + 1):.2f}   (target ≤ 1)")
    if full_s:
        print(f"{args.fraction:.0%} rebuild ÷ full build = {many_s / full_s:.3f}   (target ≤ 0.10)")
    print(f"status − walk = {status2_s - walk_s:.3f} s   (target ≤ 0.3 s)")
    print(f"1-file rebuild ÷ bundle floor = {one_s / floor_s:.2f}   (the target allows {(2 * walk_s + 1) / floor_s:.2f})")


if __name__ == "__main__":
    main()
