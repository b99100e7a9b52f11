"""Where a one-file rebuild's writes go: bytes written per phase and per file of the new bundle.

    python scripts/bytes_by_phase.py WORKSPACE [--rebuilds 3] [--kind comment]

Builds WORKSPACE once if it has no build, then makes one change (``--kind``: ``comment``
appends a comment to one file; ``define``, ``init``, ``add``, ``delete``, ``rename`` are
``scripts/bench_ab.py``'s changes) and rebuilds, ``--rebuilds`` times in this process (``executor_kind="in-process"``, so that every write
is this process's), printing for each rebuild the bytes handed to ``write``/``pwrite``
(``/proc/self/io`` ``wchar``) and sent to the storage layer (``write_bytes``) between
phase starts, and the size of each file the new bundle holds that is not a hard link of
the bundle before (what it wrote, not what it linked). Linux only.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(1, str(Path(__file__).resolve().parent))


def io_now() -> tuple[int, int]:
    fields = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
    return int(fields["wchar"]), int(fields["write_bytes"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--rebuilds", type=int, default=3)
    ap.add_argument("--kind", default="comment",
                    choices=("comment", "define", "init", "add", "delete", "rename"))
    args = ap.parse_args()
    from oracl.builder.orchestrator import build
    from oracl.core.vault import Vault

    root = args.workspace.resolve()
    vault = Vault(root)
    if not vault.latest.is_file():
        build(root)
    target = sorted(p for p in root.rglob("*.py") if ".oracl" not in p.parts)[0]
    for i in range(args.rebuilds):
        if args.kind == "comment":
            with open(target, "a") as fh:
                fh.write(f"# bytes_by_phase {i}\n")
        else:
            from bench_ab import change
            if args.kind == "delete":
                change(root, "add", 900 + i)
                build(root, executor_kind="in-process")
            change(root, args.kind, 900 + i)
        marks: list[tuple[str, int, int]] = []

        def progress(name: str, done: int, total: int | None, marks: list[tuple[str, int, int]] = marks) -> None:
            if done == 0 and total is None:
                marks.append((name, *io_now()))

        before = io_now()
        previous = {f.name: f.stat().st_ino for f in vault.bundle(vault.read_latest()["bundle"]).iterdir()
                    if f.is_file()}
        parts_before = {p.name for p in vault.parts.rglob("*") if p.is_file()}
        report = build(root, progress=progress, executor_kind="in-process")
        after = io_now()
        marks.append(("end", *after))
        print(f"rebuild {i + 1}: {report.mode}; {report.database_mode}; wchar {(after[0] - before[0]) / 1e6:.1f} MB,"
              f" write_bytes {(after[1] - before[1]) / 1e6:.1f} MB")
        for (name, w0, b0), (_, w1, b1) in zip(marks, marks[1:], strict=False):
            if w1 - w0 > 50_000:
                print(f"  {name:10s} wchar {(w1 - w0) / 1e6:7.2f} MB   write_bytes {(b1 - b0) / 1e6:7.2f} MB")
        bundle = vault.bundle(report.build_id)
        fresh = sorted(((f.stat().st_size, f.name) for f in bundle.iterdir()
                        if f.is_file() and previous.get(f.name) != f.stat().st_ino), reverse=True)
        new_parts = [p for p in vault.parts.rglob("*") if p.is_file() and p.name not in parts_before]
        print(f"  new bundle files (not linked): {sum(s for s, _ in fresh) / 1e6:.2f} MB: "
              + ", ".join(f"{n} {s / 1e6:.2f}" for s, n in fresh[:8]))
        print(f"  new parts: {len(new_parts)}, {sum(p.stat().st_size for p in new_parts) / 1e6:.2f} MB")
    os.sync()


if __name__ == "__main__":
    main()
