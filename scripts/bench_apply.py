"""The time from ``oracl apply`` to a fresh answer, on a large workspace (issue 34).

    python scripts/bench_apply.py WORKSPACE [--runs 3]

WORKSPACE is built first, twice (``scripts/synth_workspace.py`` makes one).
Each run changes one line of a different Python file through ``oracl apply`` (every gate,
the write, the selective rebuild), then asks ``oracl show`` for the file: the run counts
only when the answer holds the new checksum. Prints each run's seconds (apply, and apply +
the answer) and the medians; beside them, the same edit written directly plus
``oracl build`` (what an agent editing outside the gates would pay for a fresh memory).
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import subprocess
import sys
import time
from pathlib import Path

import orjson

ORACL = str(Path(sys.executable).with_name("oracl"))


def run(*args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([ORACL, *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"oracl {' '.join(args[:2])} failed: {proc.stderr.strip()[:400]}")
    return proc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    root = a.workspace
    # built (and built again: a tree written seconds before its first build has every file
    # "racy" (its mtime too close to the scan), so the next build reads them all once more)
    run("build", str(root), "-q")
    run("build", str(root), "-q")
    files = sorted(p for p in root.rglob("*.py") if ".oracl" not in p.parts and p.stat().st_size > 0)
    gated, answered, direct = [], [], []
    for n in range(a.runs):
        for mode in ("apply", "direct"):
            path = files[(n * 2 + (mode == "direct")) * 7919 % len(files)]
            rel = path.relative_to(root).as_posix()
            text = path.read_text()
            first = text.splitlines(keepends=True)[0]
            new = first.rstrip("\n") + f"  # edit {n} {mode}\n"
            t0 = time.perf_counter()
            if mode == "apply":
                m = root.parent / "bench-mutation.txt"
                m.write_text(f"@@FILE {rel}\n@@REPLACE\n{first}@@WITH\n{new}@@END\n")
                run("apply", str(m), "-r", str(root), "--json", "--allow", "generated", "--allow", "vendored",
                    "--allow", "archived", "--confirm")
                t1 = time.perf_counter()
            else:
                path.write_text(text.replace(first, new, 1))
                run("build", str(root), "-q")
                t1 = time.perf_counter()
            shown = orjson.loads(run("show", rel, "-r", str(root), "--json").stdout)
            t2 = time.perf_counter()
            fresh = shown["artifact"]["checksum"] == hashlib.sha256(path.read_bytes()).hexdigest()
            print(f"run {n} {mode}: {t1 - t0:.2f} s, with the answer {t2 - t0:.2f} s, fresh: {fresh}", flush=True)
            if not fresh:
                raise SystemExit("the answer after the edit is not fresh")
            if mode == "apply":
                gated.append(t1 - t0)
                answered.append(t2 - t0)
            else:
                direct.append(t2 - t0)
    print(f"apply → fresh answer: median {statistics.median(answered):.2f} s (apply alone {statistics.median(gated):.2f} s); "
          f"direct write + oracl build → answer: median {statistics.median(direct):.2f} s")


if __name__ == "__main__":
    main()
