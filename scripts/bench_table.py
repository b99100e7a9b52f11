"""Issue 29's cost table in one run: every figure as a ratio against a floor measured in
the same run, for each workspace given.

    python scripts/bench_table.py WORKSPACE [WORKSPACE ...] [--files 20000] [--polyglot]
                                  [--queries 200] [--cold 10] [--runs 20]

A missing WORKSPACE is generated first (scripts/synth_workspace.py, ``--files`` files,
``--polyglot`` for the 14-language mix; its files dated an hour back), so ``bench_table.py /tmp/py20k`` and ``bench_table.py
/tmp/poly50k --files 50000 --polyglot`` make the issue's two trees. For each workspace, in
this order (each figure's floor is taken right beside it):

* **full build ÷ floor**: ``oracl build --full`` (process start included) against one
  process walking, reading, hashing and parsing the same files (scripts/bench_build.py);
  the peak RSS of the build's largest process;
* **vault ÷ tree**: the bytes under ``.oracl/`` against the tree's own (``.git`` not counted);
* **one-file rebuild ÷ (2 × stat walk + 1 s)**, twice: a comment appended to a Python file,
  and one put before its middle line (scripts/bench_incremental.py); the vault again after
  them;
* **rg ÷ query p50 in process**, **cold query ÷ rg** and **warm query ÷ rg** (the CLI
  answered by the helper a running ``watch``/``serve`` keeps): the same terms
  (scripts/bench_query.py; installs Debian's ripgrep when ``rg`` is missing and it can);
* **``oracl --version`` ÷ ``python -c pass``**: medians of ``--runs`` starts each, interleaved;
* with ``--aider VERSION``, on a git work tree (the issue's sympy row): **full build ÷ aider's
  repo map**, medians of ``--aider-runs`` interleaved runs of ``oracl build --full`` and of
  ``aider --show-repo-map`` (its tags cache removed before each run, a dummy key and no
  network use). Aider is installed by this script into its own venv under
  ``~/.cache/oracl-eval/`` (``pip install aider-chat==VERSION``), never by the product.

Prints one Markdown table per workspace: the figure, the floor, the ratio, the target and
whether it is met.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_build  # noqa: E402
import bench_incremental  # noqa: E402
import bench_query  # noqa: E402

ORACL = str(Path(sys.executable).with_name("oracl"))


def peak_of(cmd: list[str]) -> tuple[float, float, str]:
    """(wall seconds, peak RSS MiB of the largest process, stdout) of ``cmd``, measured by a
    fresh parent so that no earlier child's peak counts."""
    probe = ("import resource, subprocess, sys, time\n"
             "t0 = time.perf_counter(); p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
             "wall = time.perf_counter() - t0\n"
             "sys.stderr.write(p.stderr); sys.stdout.write(p.stdout)\n"
             "print(f'\\n{wall} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}'); sys.exit(p.returncode)\n")
    proc = subprocess.run([sys.executable, "-c", probe, *cmd], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:2])} failed: {proc.stderr.strip()}")
    out, last = proc.stdout.rstrip("\n").rsplit("\n", 1)
    wall, kib = last.split()
    return float(wall), int(kib) / 1024, out


def tree_bytes(root: Path, skip: tuple[str, ...] = ()) -> int:
    """The bytes of the files under ``root`` but in folders named in ``skip``, a
    hard-linked file once (the vault's export is a link to the bundle's)."""
    total, seen = 0, set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in skip]
        for name in filenames:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_size
    return total


def starts(cmd: list[str], base: list[str], runs: int) -> tuple[float, float]:
    """Median wall seconds of ``cmd`` and of ``base``, started in turn ``runs`` times each."""
    a, b = [], []
    for _ in range(runs):
        for cmd_, out in ((cmd, a), (base, b)):
            t0 = time.perf_counter()
            subprocess.run(cmd_, capture_output=True, check=True)
            out.append(time.perf_counter() - t0)
    return statistics.median(a), statistics.median(b)


def ensure_rg() -> None:
    if shutil.which("rg") is not None:
        return
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    subprocess.run([*sudo, "apt-get", "install", "-y", "-qq", "--no-install-recommends", "ripgrep"],
                   capture_output=True)


def aider_bin(version: str) -> Path:
    """The ``aider`` of ``aider-chat==version`` in its own venv, made on first use."""
    venv = Path.home() / ".cache" / "oracl-eval" / f"aider-{version}"
    exe = venv / "bin" / "aider"
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", f"aider-chat=={version}"], check=True)
    return exe


def aider_map(exe: Path, root: Path) -> float:
    """Wall seconds of aider's repo map of ``root``, from an empty tags cache."""
    shutil.rmtree(root / ".aider.tags.cache.v4", ignore_errors=True)
    cmd = [str(exe), "--show-repo-map", "--model", "gpt-4o", "--openai-api-key", "sk-none", "--map-tokens", "1024",
           "--yes-always", "--no-check-update", "--no-show-model-warnings", "--no-analytics", "--no-gitignore",
           "--no-auto-commits", "--chat-history-file", os.devnull, "--input-history-file", os.devnull]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    wall = time.perf_counter() - t0
    shutil.rmtree(root / ".aider.tags.cache.v4", ignore_errors=True)
    if proc.returncode != 0 or "⋮" not in proc.stdout:
        raise SystemExit(f"aider made no repo map of {root}: {(proc.stderr or proc.stdout).strip()[-300:]}")
    return wall


def row(what: str, value: str, floor: str, ratio: float, target: str, ok: bool) -> str:
    return f"| {what} | {value} | {floor} | {ratio:.2f} | {target} | {'yes' if ok else '**no**'} |"


def one_workspace(root: Path, a: argparse.Namespace) -> list[str]:
    import orjson

    if not root.exists():
        subprocess.run([sys.executable, str(HERE / "synth_workspace.py"), str(root), "--files", str(a.files),
                        *(["--polyglot"] if a.polyglot else [])], check=True, capture_output=True)
        back = time.time_ns() - 3600 * 10**9  # written "now", every file would be racily clean at the first rebuild
        for dirpath, _, filenames in os.walk(root):
            for name in filenames:
                os.utime(os.path.join(dirpath, name), ns=(back, back))
    root = root.resolve()
    rows = []
    bench_build.floor(root)  # the page cache warmed once, for both sides
    floor_s, n, _ = bench_build.floor(root)
    shutil.rmtree(root / ".oracl", ignore_errors=True)
    full_s, peak, out = peak_of([ORACL, "build", str(root), "--full", "--json"])
    report = orjson.loads(out)
    rows.append(row("full build", f"{full_s:.2f} s", f"floor {floor_s:.2f} s", full_s / floor_s, "≤ 2", full_s <= 2 * floor_s))
    rows.append(row("peak RSS of the build", f"{peak:.0f} MiB", "—", peak / 2048, "≤ 2 GiB", peak <= 2048))
    vault, tree = tree_bytes(root / ".oracl"), tree_bytes(root, skip=(".oracl", ".git"))
    rows.append(row("vault", f"{vault / 2**20:.0f} MB", f"tree {tree / 2**20:.0f} MB", vault / tree, "≤ 2", vault <= 2 * tree))


    rng = random.Random(a.seed)
    for edit in ("append", "middle"):
        walk_s = min(bench_incremental.stat_walk(root)[0] for _ in range(3))
        _, files = bench_incremental.stat_walk(root)
        one = rng.sample([f for f in files if f.endswith(".py")], 1)
        bench_incremental.touch(one, "table", edit == "middle")
        one_s, r = bench_incremental.run("build", str(root), "-q")
        allowed = 2 * walk_s + 1
        rows.append(row(f"one-file rebuild ({edit}; {r['mode'].split(':')[0]}, symbols {r['symbols_mode'].removeprefix('symbols: ')})",
                        f"{one_s:.2f} s", f"2 × walk {walk_s:.3f} s + 1 s", one_s / allowed, "≤ 1", one_s <= allowed))

    vault = tree_bytes(root / ".oracl")  # the newest bundle's database is patched, not made anew
    rows.append(row("vault after the one-file rebuilds", f"{vault / 2**20:.0f} MB", f"tree {tree / 2**20:.0f} MB",
                    vault / tree, "≤ 2", vault <= 2 * tree))

    ensure_rg()
    q = bench_query.measure(root, a.queries, a.cold)
    rg = q["rg"]
    if rg == rg:  # not NaN: rg was there
        rows.append(row("query p50 in process", f"{q['p50_ms']:.1f} ms", f"rg -l -i {rg * 1000:.0f} ms",
                        rg * 1000 / q["p50_ms"], "rg ÷ p50 ≥ 10", rg * 1000 >= 10 * q["p50_ms"]))
        rows.append(row("cold `oracl query`", f"{q['cold']:.3f} s", f"rg -l -i {rg * 1000:.0f} ms",
                        q["cold"] / rg, "≤ 2", q["cold"] <= 2 * rg))
        rows.append(row("`oracl query` beside a running watch/serve (warm)", f"{q['warm']:.3f} s",
                        f"rg -l -i {rg * 1000:.0f} ms", q["warm"] / rg, "≤ 2", q["warm"] <= 2 * rg))
    else:
        rows.append(f"| query figures | p50 {q['p50_ms']:.1f} ms, cold {q['cold']:.3f} s | rg not found | — | — | not measured |")
    version_s, bare_s = starts([ORACL, "--version"], [sys.executable, "-c", "pass"], a.runs)
    rows.append(row("`oracl --version`", f"{version_s * 1000:.0f} ms", f"python -c pass {bare_s * 1000:.0f} ms",
                    version_s / bare_s, "≤ 2", version_s <= 2 * bare_s))
    if a.aider and (root / ".git").exists():
        exe, ours, theirs = aider_bin(a.aider), [], []
        for _ in range(a.aider_runs):
            t0 = time.perf_counter()
            subprocess.run([ORACL, "build", str(root), "--full", "-q"], check=True, capture_output=True)
            ours.append(time.perf_counter() - t0)
            theirs.append(aider_map(exe, root))
        mine, map_s = statistics.median(ours), statistics.median(theirs)
        rows.append(row("full build ÷ aider's repo map", f"{mine:.2f} s", f"aider {a.aider} {map_s:.2f} s",
                        mine / map_s, "≤ 0.3", mine <= 0.3 * map_s))
    head = [f"### {root.name}: {n:,} files, {report['counts']['nodes']:,} nodes, {report['counts']['edges']:,} edges",
            "", "| figure | measured | floor (same run) | ratio | target | met |", "|---|---|---|---|---|---|"]
    return [*head, *rows, ""]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workspaces", type=Path, nargs="+")
    ap.add_argument("--files", type=int, default=20_000, help="files of a generated workspace")
    ap.add_argument("--polyglot", action="store_true", help="generate the polyglot mix")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--cold", type=int, default=10)
    ap.add_argument("--runs", type=int, default=20, help="starts of `oracl --version` and of python")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--aider", metavar="VERSION", help="also time aider-chat==VERSION's repo map (git work trees)")
    ap.add_argument("--aider-runs", type=int, default=3)
    a = ap.parse_args()
    print(f"cpus={os.cpu_count()} python={sys.version.split()[0]}\n")
    for root in a.workspaces:
        print("\n".join(one_workspace(root, a)), flush=True)


if __name__ == "__main__":
    main()
