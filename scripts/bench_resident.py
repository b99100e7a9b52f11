"""A long-lived builder's save → fresh answer, as ``oracl watch`` makes it.

    python scripts/bench_resident.py ROOT [--edits 8] [--define] [--json]

One process builds ROOT with a kept ``Carry`` (what ``oracl watch`` keeps between builds,
its helpers forked as the CLI's are), then ``--edits`` times: appends a line holding a new
word to one Python file (a different file each time), builds, and searches for that word
on a fresh snapshot of the latest build. Printed: each save's build seconds and
save → answer seconds (p50 and p95), whether every answer found the edited file, and the
builder process's peak RSS. ``--define``: every other save defines a new function (named
by the new word) instead of adding a comment, so the names other files resolve to move:
its saves are also reported on their own, with the save after each.
When the tree is up to date, the builder's memory is filled from the latest build first
(``orchestrator.warm``, as ``oracl watch`` does when it starts; "start" says how long
that took). The first edit after that is timed like the others. Watching for the file
event itself is not timed (``watchfiles`` wakes within its debounce); each build is given
the path the event names, as ``oracl watch`` gives it (``build(changed=…)``: the last
build's walk with that path taken in), unless ``--walk`` (every build walks the tree)."""

from __future__ import annotations

import argparse
import inspect
import resource
import statistics
import sys
import time
from pathlib import Path

import orjson


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def main() -> None:
    from oracl.builder.incremental import Carry
    from oracl.builder.orchestrator import build
    from oracl.read.query.run import search
    from oracl.read.snapshot import Snapshot

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path)
    ap.add_argument("--edits", type=int, default=8)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--walk", action="store_true", help="every build walks the tree (no file events handed over)")
    ap.add_argument("--define", action="store_true", help="every other save defines a new function")
    args = ap.parse_args()
    root = args.root
    files = sorted(p for p in root.rglob("*.py") if ".oracl" not in p.parts
                   and not (args.define and p.name == "__init__.py"))[: max(1, args.edits)]
    carry = Carry()
    # (a build that takes file events' paths: an earlier commit's, run by bench_ab.py, may not)
    hands_events = "changed" in inspect.signature(build).parameters
    t0 = time.perf_counter()
    build(root, carry=carry, executor_kind="processes")
    first = time.perf_counter() - t0
    start = 0.0
    if carry.bundle is None:  # (up to date: what the watch does when it starts; an earlier commit has no warm)
        try:
            from oracl.builder.orchestrator import warm
        except ImportError:
            warm = None  # type: ignore[assignment]
        if warm is not None:
            t0 = time.perf_counter()
            warm(root, carry, executor_kind="processes")
            start = time.perf_counter() - t0
    builds: list[float] = []
    answers: list[float] = []
    found = 0
    modes: list[str] = []
    for i in range(args.edits):
        f = files[i % len(files)]
        word = f"residentword{i}x{time.time_ns() % 10**6}"
        t0 = time.perf_counter()
        with open(f, "a") as fh:
            fh.write(f"\n\ndef {word}(x):\n    return x\n" if args.define and i % 2 else f"\n# {word}\n")
        rel = f.relative_to(root).as_posix()
        named = {} if args.walk or not hands_events else {"changed": {rel}}
        report = build(root, carry=carry, executor_kind="processes", **named)
        t1 = time.perf_counter()
        with Snapshot.open(root) as snap:
            hits = search(snap, word, limit=5, log=False).results
        t2 = time.perf_counter()
        builds.append(t1 - t0)
        answers.append(t2 - t0)
        modes.append(report.mode)
        found += any(h["path"] == rel for h in hits)
    out = {"first_build": round(first, 3), "start": round(start, 3), "builds": [round(x, 3) for x in builds],
           "answers": [round(x, 3) for x in answers],
           "build_p50": round(statistics.median(builds), 3), "answer_p50": round(statistics.median(answers), 3),
           "answer_p95": round(percentile(answers, 0.95), 3), "found": found, "edits": args.edits,
           "modes": sorted(set(modes)),
           # (with --define: the defining saves, and the comment saves right after one)
           "define_answers": [round(x, 3) for k, x in enumerate(answers) if args.define and k % 2],
           "after_define_answers": [round(x, 3) for k, x in enumerate(answers) if args.define and k and not k % 2],
           "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}
    if args.json:
        sys.stdout.write(orjson.dumps(out).decode() + "\n")
    else:
        print(f"resident: {args.edits} saves, build p50 {out['build_p50']:.2f} s, save → answer p50 "
              f"{out['answer_p50']:.2f} s / p95 {out['answer_p95']:.2f} s; the edited file found {found} of "
              f"{args.edits}; first build {first:.1f} s, start {start:.1f} s; the builder's peak RSS {out['peak_rss_mib']:,} MiB")
        if out["define_answers"]:
            print(f"resident: the {len(out['define_answers'])} defining saves → answer p50 "
                  f"{statistics.median(out['define_answers']):.2f} s; the saves after them p50 "
                  f"{statistics.median(out['after_define_answers'] or [0.0]):.2f} s")


if __name__ == "__main__":
    main()
