"""Secret-scan benchmark: what redaction adds to reading a file, against a floor measured in
the same run.

    python scripts/bench_secrets.py WORKSPACE [--repeat 3]

Loads every text file the build would read (default suffixes) into memory, then times, in
one process: the floor (SHA-256 of each file's bytes, what the build does to every file
anyway) and ``oracl.core.secrets.scan_text`` (the triggers over the whole text, the rules on
the lines they hit). Prints MB/s of each, scan ÷ floor, the lines the triggers sent to the
rules and the files with a finding (medians over ``--repeat`` runs).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import time
from pathlib import Path

from oracl.core.config import MENTION_SUFFIXES as DEFAULT_SUFFIXES
from oracl.core.secrets import _candidate_lines, scan_text, suffix_of

SKIP_DIRS = {".git", ".oracl", "__pycache__", ".venv", "node_modules"}


def load(root: Path) -> list[tuple[str, bytes, str]]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
        for name in filenames:
            if not name.lower().endswith(DEFAULT_SUFFIXES):
                continue
            path = os.path.join(dirpath, name)
            try:
                data = Path(path).read_bytes()
                out.append((path, data, data.decode("utf-8")))
            except (OSError, UnicodeDecodeError):
                continue
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    files = load(args.workspace)
    mb = sum(len(d) for _, d, _ in files) / 1e6
    floors, scans = [], []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        for _, data, _ in files:
            hashlib.sha256(data).hexdigest()
        floors.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        found = 0
        for path, _, text in files:
            found += bool(scan_text(text, suffix_of(path))[1])
        scans.append(time.perf_counter() - t0)
    lines = sum(len(_candidate_lines(text) or []) for _, _, text in files)
    floor, scan = statistics.median(floors), statistics.median(scans)
    print(f"files={len(files)} MB={mb:.1f} floor(sha256)={floor:.2f}s ({mb / floor:.0f} MB/s) "
          f"scan={scan:.2f}s ({mb / scan:.1f} MB/s) scan÷floor={scan / floor:.1f} "
          f"lines_to_rules={lines} files_with_findings={found}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
