"""Query benchmark: in-process latency, the cold CLI, and ripgrep on the same terms.

    python scripts/bench_query.py WORKSPACE [--queries 200] [--cold 10]
    python scripts/bench_query.py WORKSPACE --reports swebench_verified_dev.jsonl

WORKSPACE is a built tree (``oracl build`` first; the synthetic 50k workspace of
scripts/synth_workspace.py is the reference). The 200 mixed queries are made
deterministically from the workspace's own file names and words: short concept queries,
identifiers, filtered and negated queries, ``file:`` fast paths, and long bug-report
style queries. Reports p50/p95 in process, the cold ``oracl query`` process (start to
exit), the same process answered warm by the answer helper a running ``watch`` or
``serve`` keeps (oracl.face.answer), ``rg -l -i`` for the same terms over the same
files, their ratio, and the peak RSS of the query process. Needs ``rg`` (Debian package
ripgrep). ``--reports FILE`` times pasted bug reports instead (issue 31): the problem
statements of FILE that reach 3,000 characters, cut there, in process on one snapshot.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

WORDS = ("auth", "cache", "session", "export", "token", "parser", "router", "queue", "schema",
         "snapshot", "billing", "ledger", "signer", "retry", "policy", "upload", "tracer", "vault")


def make_queries(root: Path, n: int, seed: int = 11) -> list[tuple[str, list[str]]]:
    """(query text, the plain terms rg searches for)."""
    rng = random.Random(seed)
    files = sorted(p for p in root.rglob("*.py") if ".oracl" not in p.parts)[:20000]
    rels = [str(p.relative_to(root)) for p in files]
    tops = collections.Counter(r.split("/", 1)[0] for r in rels if "/" in r)  # domains are top folders
    domain = "core" if "core" in tops or not tops else tops.most_common(1)[0][0]
    out: list[tuple[str, list[str]]] = []
    for i in range(n):
        kind = i % 6
        a, b = rng.choice(WORDS), rng.choice(WORDS)
        if kind == 0:
            out.append((f"{a} {b}", [a, b]))
        elif kind == 1:
            stem = rng.choice(rels).rsplit("/", 1)[-1][:-3]
            out.append((stem, [stem]))
        elif kind == 2:
            out.append((f"{a} domain:{domain}", [a]))
        elif kind == 3:
            out.append((f"{a} {b} but not archived", [a, b]))
        elif kind == 4:
            path = rng.choice(rels)
            out.append((f"file:{path}", [path.rsplit("/", 1)[-1]]))
        else:
            path = rng.choice(rels)
            text = (f"Traceback (most recent call last):\n  File \"{path}\", line {rng.randint(1, 200)}, in "
                    f"{a}_{b}\nKeyError: '{a}' when the {b} {rng.choice(WORDS)} is retried without a session")
            out.append((text, [a, b]))
    return out


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def warm_cli(workspace: Path, queries: list[str], oracl: str) -> list[float]:
    """Wall seconds of ``oracl query TEXT --json`` for each text while an answer helper of
    ``workspace`` runs (the one ``oracl watch``/``serve`` starts), its socket in a folder of
    this run's own; each answer is checked to have come from the helper."""
    import tempfile

    from oracl.face import answer

    env = {**os.environ, "XDG_RUNTIME_DIR": tempfile.mkdtemp(prefix="oracl-b", dir="/tmp")}
    env.pop("ORACL_WARM", None)
    saved = os.environ.get("XDG_RUNTIME_DIR")
    os.environ["XDG_RUNTIME_DIR"] = env["XDG_RUNTIME_DIR"]  # where start_helper and socket_path look
    helper = answer.start_helper(workspace)
    if helper is None:
        raise SystemExit("the answer helper could not start")
    try:
        path = answer.socket_path(str(workspace))
        deadline = time.monotonic() + 120
        while path is None or not answer._alive(path):
            if time.monotonic() > deadline or helper.poll() is not None:  # type: ignore[attr-defined]
                raise SystemExit("the answer helper never listened")
            time.sleep(0.05)
        subprocess.run([oracl, "query", "warm up", "-r", str(workspace)], capture_output=True, env=env, check=True)
        probe = [sys.executable, "-X", "importtime", "-c",
                 "import sys; sys.argv = ['oracl', *sys.argv[1:]]; from oracl.face.launch import main; main()",
                 "query", queries[0], "-r", str(workspace)]
        if " oracl.face.cli" in subprocess.run(probe, capture_output=True, text=True, env=env).stderr:
            raise SystemExit("the warm query was not answered by the helper")
        times = []
        for text in queries:
            t0 = time.perf_counter()
            subprocess.run([oracl, "query", text, "-r", str(workspace), "--json"], capture_output=True, env=env,
                           check=True)
            times.append(time.perf_counter() - t0)
        return times
    finally:
        helper.terminate()  # type: ignore[attr-defined]
        helper.wait(timeout=60)  # type: ignore[attr-defined]
        shutil.rmtree(env["XDG_RUNTIME_DIR"], ignore_errors=True)
        if saved is None:
            os.environ.pop("XDG_RUNTIME_DIR", None)
        else:
            os.environ["XDG_RUNTIME_DIR"] = saved


def measure(workspace: Path, n_queries: int = 200, n_cold: int = 10) -> dict[str, float]:
    """The figures, in seconds (``p50_ms``/``p95_ms`` in milliseconds): in process over
    ``n_queries`` queries on one snapshot, the cold ``oracl query`` process, the same
    process answered by a running helper (``warm``) and ``rg -l -i`` (NaN without ``rg``)
    over the first ``n_cold`` of them, and the query processes' peak RSS."""
    from oracl.read.query.run import search
    from oracl.read.snapshot import Snapshot

    queries = make_queries(workspace, n_queries)
    snap = Snapshot.open(workspace)  # a long-lived reader: one snapshot, many queries
    search(snap, "warm up", log=False)
    lat = []
    for text, _ in queries:
        t0 = time.perf_counter()
        search(snap, text, limit=10)
        lat.append((time.perf_counter() - t0) * 1000)
    snap.close()
    oracl = str(Path(sys.executable).with_name("oracl"))
    cold = []
    peak = 0.0
    # each cold query under a fresh parent that reports its children's peak RSS: this
    # process's own children (a fork of a process that searched 200 times) would count too
    probe = ("import resource, subprocess, sys\n"
             "subprocess.run(sys.argv[1:], capture_output=True, check=True)\n"
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    for text, _ in queries[:n_cold]:
        t0 = time.perf_counter()
        subprocess.run([oracl, "query", text, "-r", str(workspace), "--json"], capture_output=True, check=True,
                       env={**os.environ, "ORACL_WARM": "0"})  # alone, even where a helper of the tree runs
        cold.append(time.perf_counter() - t0)
        out = subprocess.run([sys.executable, "-c", probe, oracl, "query", text, "-r", str(workspace), "--json"],
                             capture_output=True, text=True, check=True, env={**os.environ, "ORACL_WARM": "0"})
        peak = max(peak, int(out.stdout) / 1024)
    warm = warm_cli(workspace, [text for text, _ in queries[:n_cold]], oracl)
    rg = shutil.which("rg")
    rg_times = []
    if rg:
        for _text, terms in queries[:n_cold]:
            args = [rg, "-l", "-i", "--no-messages", "-g", "!.oracl"]
            for t in terms:
                args += ["-e", t]
            t0 = time.perf_counter()
            subprocess.run(args + [str(workspace)], capture_output=True)
            rg_times.append(time.perf_counter() - t0)
    return {"queries": len(lat), "p50_ms": statistics.median(lat), "p95_ms": pct(lat, 0.95),
            "cold": statistics.median(cold), "warm": statistics.median(warm), "rg": statistics.median(rg_times) if rg_times else float("nan"),
            "peak_mib": peak}


REPORT_CHARS = 3000


def measure_reports(workspace: Path, reports: Path, n: int = 40) -> dict[str, float]:
    """In-process latency of pasted bug reports (issue 31): the ``problem_statement`` of
    the first ``n`` rows of ``reports`` (JSON lines, e.g. the SWE-bench development set)
    that are at least ``REPORT_CHARS`` long, cut to that length, asked in turn of one open
    snapshot with the default limit; the first pass, then the same reports again."""
    import orjson

    from oracl.read.query.run import search
    from oracl.read.snapshot import Snapshot

    texts = [r["problem_statement"][:REPORT_CHARS] for r in map(orjson.loads, reports.read_bytes().splitlines())
             if len(r.get("problem_statement", "")) >= REPORT_CHARS][:n]
    if not texts:
        raise SystemExit(f"no report of {REPORT_CHARS} characters in {reports}")
    passes: list[list[float]] = [[], []]
    with Snapshot.open(workspace) as snap:
        search(snap, "warm up", log=False)
        for lat in passes:
            for text in texts:
                t0 = time.perf_counter()
                search(snap, text, log=False)
                lat.append((time.perf_counter() - t0) * 1000)
    return {"reports": len(texts), "p50_ms": statistics.median(passes[0]), "p95_ms": pct(passes[0], 0.95),
            "again_p50_ms": statistics.median(passes[1])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--cold", type=int, default=10)
    ap.add_argument("--reports", type=Path, help=f"only: bug reports of {REPORT_CHARS} characters from this JSON-lines "
                                                 "file (problem_statement), in process")
    a = ap.parse_args()
    if a.reports:
        r = measure_reports(a.workspace, a.reports)
        print(f"reports={r['reports']} of {REPORT_CHARS} chars in process: first pass p50={r['p50_ms']:.1f}ms "
              f"p95={r['p95_ms']:.1f}ms | again p50={r['again_p50_ms']:.1f}ms | cpus={os.cpu_count()}")
        return
    m = measure(a.workspace, a.queries, a.cold)
    files = sum(1 for _ in a.workspace.rglob("*") if ".oracl" not in _.parts)
    print(f"files={files} queries={m['queries']} in-process p50={m['p50_ms']:.1f}ms "
          f"p95={m['p95_ms']:.1f}ms | cold CLI median={m['cold']:.2f}s "
          f"| warm CLI (a running helper) median={m['warm']:.3f}s "
          f"| rg -l -i median={m['rg']:.2f}s "
          f"| rg ÷ in-process p50 = {m['rg'] * 1000 / m['p50_ms']:.1f}× "
          f"| rg ÷ cold CLI = {m['rg'] / m['cold']:.1f}× "
          f"| peak RSS of a query process {m['peak_mib']:.0f} MiB | cpus={os.cpu_count()}")


if __name__ == "__main__":
    main()
