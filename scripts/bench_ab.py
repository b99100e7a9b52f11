"""Before and after in one run: the three figures every issue reports, for an older
revision (A) and the working copy (B), interleaved on two copies of one workspace.

    python scripts/bench_ab.py WORKSPACE --base REV [--head REV] [--rebuilds 5] [--queries 6] [--query TEXT]

A is ``git worktree add`` of REV (in a scratch folder, removed at the end), run from this
environment with ``PYTHONPATH`` pointing at it; B is this checkout, or with ``--head REV`` a
second worktree of that revision (the checkout can then change while the run goes on). WORKSPACE is copied
twice (one copy per side, so neither reuses the other's vault). Then, one side after the
other at every step:

* the floor (``scripts/bench_build.py``'s: read, hash and parse every file) once, and each
  full build (``oracl build --full``, a real subprocess) twice: build ÷ floor;
* ``--rebuilds`` one-file rebuilds: a comment appended to one Python file (a different one
  each time, an mtime an hour back), then ``oracl build``: the median and the range;
* ``--queries`` cold queries (``oracl query TEXT`` with ``ORACL_WARM=0``: process start,
  imports, opening the bundle): the median;
* the size of ``graph.kuzu`` after the last rebuild; the bytes each rebuild wrote (its
  process and the children it reaped: ``getrusage(RUSAGE_CHILDREN).ru_oublock`` × 512, which
  Linux counts from ``/proc/<pid>/io``'s ``write_bytes``); the vault ÷ the tree after them.

``--after-copy N`` also times, N times a side, the first rebuild after a copy of the
workspace (``shutil.copyfile``: every file written just before its first build, as a fresh
clone's are): the copy, ``oracl build``, then ``oracl build`` again, timed, with the files
it read and its ratio to the target (2 × a bare stat walk + 2 s).

``--changes N`` also times, N rounds a side, a cold ``oracl build`` after each of the other
changes issue 49's table names: a new function defined at the end of a Python file (an
edit that moves the file's interface, as most edits that add code do), the same in a
package's ``__init__.py`` (``init``: it roots a tree of imports), a Python file added
(a copy of another, under a new name), that file deleted, a Python file renamed, those
changes committed (``commit``, in a git repository only: the history moves), and
nothing changed at all; each median with the
bytes it wrote and its ratio to the target (2 × a bare stat walk + 1 s, the walk taken in
the same round).

``--resident N`` also runs ``scripts/bench_resident.py`` on each side's copy (after the
rebuilds): one long-lived builder, as ``oracl watch``, timing N saves → fresh answers; the
two sides take turns, twice each.

``--coverage N`` first ingests, on both sides, a coverage.py JSON report with test contexts
over the first N Python files (29 lines each, run by 50 tests: one event per file and test,
as ``oracl ingest`` makes of ``pytest --cov-context=test``'s contexts; N = 2,000 gives
100,000 events): then every rebuild is of a vault
holding those events, rebuilds alternate between a covered and an uncovered file, and
``oracl impact`` of a covered file is timed cold beside the query.
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
from bench_incremental import stat_walk  # noqa: E402

LAUNCH = "import sys; from oracl.face.launch import main; sys.argv[0] = 'oracl'; main()"


WRITTEN: list[int] = [0]  # the bytes the last ``oracl`` call wrote, its children included


def oracl(side: dict[str, object], *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    import resource

    env = {**os.environ, "ORACL_WARM": "0"}
    blocks = resource.getrusage(resource.RUSAGE_CHILDREN).ru_oublock
    if side["pythonpath"]:
        env["PYTHONPATH"] = str(side["pythonpath"])
    t0 = time.perf_counter()
    # -P: the current folder is not put first on sys.path. Without it, run from a checkout,
    # `-c` imported the checkout's oracl before PYTHONPATH's (A measured B's code).
    proc = subprocess.run([sys.executable, "-P", "-c", LAUNCH, *args], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    WRITTEN[0] = (resource.getrusage(resource.RUSAGE_CHILDREN).ru_oublock - blocks) * 512
    if proc.returncode != 0:
        raise SystemExit(f"oracl {' '.join(args)} failed ({side['name']}): {proc.stderr.strip()[:500]}")
    return wall, proc


def resident_run(side: dict[str, object], edits: int) -> dict[str, object]:
    """``bench_resident.py`` on the side's copy, under the side's code."""
    import orjson

    env = dict(os.environ)
    if side["pythonpath"]:
        env["PYTHONPATH"] = str(side["pythonpath"])
    proc = subprocess.run([sys.executable, "-P", str(HERE / "bench_resident.py"), str(side["root"]), "--edits",
                           str(edits), "--json"], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"bench_resident.py failed ({side['name']}): {proc.stderr.strip()[-500:]}")
    out: dict[str, object] = orjson.loads(proc.stdout.strip().splitlines()[-1])
    return out


def touch(root: Path, n: int) -> None:
    files = sorted(p for p in root.rglob("*.py") if ".oracl" not in p.parts)
    path = files[(n * 7919) % len(files)]
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(f"\n# edit {n}\n")
    past = time.time() - 3600
    os.utime(path, (past, past))


def change(root: Path, kind: str, n: int) -> None:
    """One of ``--changes``'s changes: ``define`` a new top-level function at the end of a
    Python file (an edit that moves what other files' names and edges read of it; ``init``:
    of a package's ``__init__.py``), ``add``
    a copy of a Python file under a new name (an hour back), ``delete`` the file the last
    add made, ``rename`` a Python file, or ``nothing``."""
    if kind == "nothing":
        return
    if kind == "commit":  # (the round's changes, committed a minute after HEAD's)
        head = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%ct"], check=True, capture_output=True,
                              text=True).stdout.strip()
        stamp = f"@{int(head) + 60} +0000"
        env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
               "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
               "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
        for args in (["add", "-A", "--", ".", ":(exclude).oracl"], ["commit", "-q", "-m", f"bench: round {n}"]):
            subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)
        return
    files = sorted(p for p in root.rglob("*.py") if ".oracl" not in p.parts and "bench_" not in p.name)
    path = files[(n * 7907 + 13) % len(files)]
    if kind in ("define", "init"):
        if kind == "init":  # (a package's __init__.py: it roots the imports of its tree)
            inits = [p for p in files if p.name == "__init__.py"]
            path = inits[(n * 7883 + 101) % len(inits)]
        else:
            path = files[(n * 7883 + 101) % len(files)]
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"\n\ndef bench_defined_{n}(x):\n    return x\n")
        past = time.time() - 3600
        os.utime(path, (past, past))
    elif kind == "add":
        new = path.with_name(f"bench_added_{n}.py")
        new.write_bytes(path.read_bytes())
        past = time.time() - 3600
        os.utime(new, (past, past))
    elif kind == "delete":
        (path.parent / f"bench_added_{n}.py").unlink()  # (the add's file: the same listing without it)
    else:
        path.rename(path.with_name(f"bench_renamed_{n}_{path.name}"))


def covered(root: Path, n: int) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if ".oracl" not in p.parts)[:n]


def coverage_report(root: Path, n: int) -> Path:
    """A coverage.py JSON report with test contexts over the first ``n`` Python files."""
    import orjson

    files = {}
    for i, path in enumerate(covered(root, n)):
        rel = path.relative_to(root).as_posix()
        tests = [f"tests/test_cov_{(i + j) % 50}.py::test_{i + j}|run" for j in range(50)]
        files[rel] = {"contexts": {str(line): tests for line in range(1, 30)}}
    out = root.parent / f"{root.name}-coverage.json"
    out.write_bytes(orjson.dumps({"meta": {"version": "7.6.1"}, "files": files}))
    return out


def db_bytes(root: Path) -> int:
    import orjson

    latest = orjson.loads((root / ".oracl" / "mirror" / "LATEST.json").read_bytes())
    db = root / ".oracl" / "mirror" / latest["build_id"] / "graph.kuzu"
    return db.stat().st_size if db.is_file() else sum(p.stat().st_size for p in db.rglob("*") if p.is_file())


def tree_bytes(root: Path) -> tuple[int, int]:
    """(the vault's bytes, the working tree's bytes: neither the vault's nor a git
    repository's own, ``.git``), as allocated on disk."""
    vault = tree = 0
    for p in root.rglob("*"):
        if p.is_file() and not p.is_symlink():
            size = p.stat().st_blocks * 512
            parts = p.relative_to(root).parts
            if ".oracl" in parts:
                vault += size
            elif ".git" not in parts:
                tree += size
    return vault, tree


def which(side: dict[str, object]) -> str:
    """The folder side's ``oracl`` package is imported from (checked before anything is timed)."""
    env = {**os.environ}
    if side["pythonpath"]:
        env["PYTHONPATH"] = str(side["pythonpath"])
    code = "import oracl, os; print(os.path.dirname(os.path.dirname(oracl.__file__)))"
    return subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, env=env,
                          check=True).stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--base", required=True, help="the revision measured as A")
    ap.add_argument("--head", help="the revision measured as B (default: this checkout as it is)")
    ap.add_argument("--rebuilds", type=int, default=5)
    ap.add_argument("--queries", type=int, default=6)
    ap.add_argument("--query", default="auth cache session")
    ap.add_argument("--after-copy", type=int, default=0, metavar="N",
                    help="time N first rebuilds after a fresh copy of the workspace, per side")
    ap.add_argument("--coverage", type=int, default=0, metavar="N",
                    help="ingest a coverage report over N Python files first (events in every build)")
    ap.add_argument("--changes", type=int, default=0, metavar="N",
                    help="time N rounds of a new function, an add, a delete, a rename and no change (cold builds), "
                         "per side")
    ap.add_argument("--resident", type=int, default=0, metavar="N",
                    help="time N saves → fresh answers of a long-lived builder, per side (bench_resident.py)")
    a = ap.parse_args()
    repo = HERE.parent
    scratch = Path(tempfile.mkdtemp(prefix="oracl-ab-"))
    worktree = scratch / "base"
    head = scratch / "head"
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", "--detach", str(worktree), a.base], check=True)
    if a.head:
        subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", "--detach", str(head), a.head], check=True)
    sides = [{"name": f"A ({a.base})", "pythonpath": worktree, "root": scratch / "a"},
             {"name": f"B ({a.head})" if a.head else "B (this checkout)", "pythonpath": head if a.head else "",
              "root": scratch / "b"}]
    try:
        where = [which(s) for s in sides]
        if where[0] != str(worktree) or where[1] != str(head if a.head else repo):
            raise SystemExit(f"A imports oracl from {where[0]}, B from {where[1]}: not the two revisions")
        for s in sides:
            shutil.copytree(a.workspace, s["root"], ignore=shutil.ignore_patterns(".oracl"))
        if a.coverage:
            for s in sides:
                oracl(s, "build", str(s["root"]), "-q")
                report = coverage_report(s["root"], a.coverage)  # type: ignore[arg-type]
                _, proc = oracl(s, "ingest", str(report), "-r", str(s["root"]))
                print(f"{s['name']}: {proc.stdout.strip().splitlines()[0]}", flush=True)
        base_floor, files, _ = floor(sides[0]["root"])  # type: ignore[arg-type]
        print(f"floor: {base_floor:.2f} s over {files:,} files", flush=True)
        full: dict[str, list[float]] = {s["name"]: [] for s in sides}  # type: ignore[misc]
        for _ in range(2):
            for s in sides:
                wall, _ = oracl(s, "build", str(s["root"]), "--full", "-q")
                full[s["name"]].append(wall)  # type: ignore[index]
        rebuilds: dict[str, list[float]] = {s["name"]: [] for s in sides}  # type: ignore[misc]
        written: dict[str, list[int]] = {s["name"]: [] for s in sides}  # type: ignore[misc]
        for n in range(a.rebuilds):
            for s in sides:
                if a.coverage and n % 2 == 0:  # a covered file: its events are made again
                    path = covered(s["root"], a.coverage)[(n * 7919) % a.coverage]  # type: ignore[arg-type]
                    with open(path, "a", encoding="utf-8") as fh:
                        fh.write(f"\n# edit {n}\n")
                    past = time.time() - 3600
                    os.utime(path, (past, past))
                else:
                    touch(s["root"], n)  # type: ignore[arg-type]
                wall, _ = oracl(s, "build", str(s["root"]), "-q")
                rebuilds[s["name"]].append(wall)  # type: ignore[index]
                written[s["name"]].append(WRITTEN[0])  # type: ignore[index]
        queries: dict[str, list[float]] = {s["name"]: [] for s in sides}  # type: ignore[misc]
        for _ in range(a.queries):
            for s in sides:
                wall, _ = oracl(s, "query", a.query, "-r", str(s["root"]))
                queries[s["name"]].append(wall)  # type: ignore[index]
        impacts: dict[str, list[float]] = {s["name"]: [] for s in sides}  # type: ignore[misc]
        for i in range(a.queries if a.coverage else 0):
            for s in sides:
                target = covered(s["root"], a.coverage)[(i * 31) % a.coverage]  # type: ignore[arg-type]
                wall, _ = oracl(s, "impact", str(target.relative_to(s["root"])), "-r", str(s["root"]))  # type: ignore[arg-type]
                impacts[s["name"]].append(wall)  # type: ignore[index]
        kinds = ("define", "init", "add", "delete", "rename",
                 *(("commit",) if (a.workspace / ".git").exists() else ()), "nothing")
        changes: dict[str, dict[str, list[tuple[float, int]]]] = {
            s["name"]: {k: [] for k in kinds} for s in sides}  # type: ignore[misc]
        walks: list[float] = []
        for i in range(a.changes):
            walks.append(stat_walk(sides[0]["root"])[0])  # type: ignore[arg-type]
            for s in sides:
                for kind in kinds:
                    change(s["root"], kind, i)  # type: ignore[arg-type]
                    wall, _ = oracl(s, "build", str(s["root"]), "-q")
                    changes[s["name"]][kind].append((wall, WRITTEN[0]))  # type: ignore[index]
        resident: dict[str, list[dict[str, object]]] = {s["name"]: [] for s in sides}  # type: ignore[misc]
        for _ in range(2 if a.resident else 0):
            for s in sides:
                resident[s["name"]].append(resident_run(s, a.resident))  # type: ignore[index]
        copies: dict[str, list[tuple[float, str]]] = {s["name"]: [] for s in sides}  # type: ignore[misc]
        walk = 0.0
        for i in range(a.after_copy):
            for s in sides:
                fresh = scratch / f"copy-{i}-{len(copies[s['name']])}-{sides.index(s)}"  # type: ignore[index]
                shutil.copytree(a.workspace, fresh, ignore=shutil.ignore_patterns(".oracl"),
                                copy_function=shutil.copyfile)
                oracl(s, "build", str(fresh), "-q")
                wall, proc = oracl(s, "build", str(fresh), "-q")
                copies[s["name"]].append((wall, proc.stdout.split("\t")[4]))  # type: ignore[index]
                if not walk:
                    walk = stat_walk(fresh)[0]
                shutil.rmtree(fresh, ignore_errors=True)
        for s in sides:
            name = s["name"]
            if copies[name]:  # type: ignore[index]
                got = copies[name]  # type: ignore[index]
                print(f"{name}: first rebuild after a copy {', '.join(f'{w:.2f} s ({r} read)' for w, r in got)}; "
                      f"÷ (2 × stat walk {walk:.2f} s + 2 s): "
                      f"{statistics.median(w for w, _ in got) / (2 * walk + 2):.2f}")
            f, r, q = full[name], rebuilds[name], queries[name]  # type: ignore[index]
            print(f"{name}: full build {', '.join(f'{x:.2f}' for x in f)} s "
                  f"({min(f) / base_floor:.2f}–{max(f) / base_floor:.2f} × floor); one-file rebuild median "
                  f"{statistics.median(r):.2f} s ({min(r):.2f}–{max(r):.2f}); cold query median "
                  f"{statistics.median(q):.3f} s; graph.kuzu {db_bytes(s['root']) / 1e6:.0f} MB"  # type: ignore[arg-type]
                  + (f"; cold impact of a covered file median {statistics.median(impacts[name]):.3f} s"  # type: ignore[index]
                     if a.coverage else ""))
            vault, tree = tree_bytes(s["root"])  # type: ignore[arg-type]
            w = written[name]  # type: ignore[index]
            print(f"{name}: bytes written by a one-file rebuild median {statistics.median(w) / 1e6:.1f} MB "
                  f"({min(w) / 1e6:.1f}–{max(w) / 1e6:.1f}); vault {vault / 2**20:,.0f} MiB ÷ tree "
                  f"{tree / 2**20:,.0f} MiB = {vault / tree:.2f} after {a.rebuilds} rebuilds")
            if walks:
                target = 2 * statistics.median(walks) + 1
                print(f"{name}: cold build after " + "; ".join(
                    f"{k} {statistics.median(w for w, _ in v):.2f} s ({statistics.median(w for w, _ in v) / target:.2f} "
                    f"× target, {statistics.median(b for _, b in v) / 1e6:.1f} MB written)"
                    for k, v in changes[name].items()) + f"; target 2 × stat walk {statistics.median(walks):.2f} s + 1 s")  # type: ignore[index]
                # (each round's, in order: a median hides a round that took another path)
                print(f"{name}: each round " + "; ".join(
                    f"{k} " + ", ".join(f"{w:.2f}" for w, _ in v) for k, v in changes[name].items()))  # type: ignore[index]
            for run in resident[name]:  # type: ignore[index]
                print(f"{name}: resident {a.resident} saves: build p50 {run['build_p50']:.2f} s, save → answer "
                      f"p50 {run['answer_p50']:.2f} s / p95 {run['answer_p95']:.2f} s (the edited file found "
                      f"{run['found']} of {run['edits']}; start {run.get('start', 0):.1f} s; peak RSS "
                      f"{run.get('peak_rss_mib', '?')} MiB)")
            if a.coverage:
                print(f"{name}: rebuilds of covered files {', '.join(f'{x:.2f}' for x in r[0::2])} s, "
                      f"of uncovered files {', '.join(f'{x:.2f}' for x in r[1::2])} s")
    finally:
        for tree in (worktree, head) if a.head else (worktree,):
            subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(tree)], check=False)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
