"""Type-check ``oracl/`` with mypy against a baseline that only shrinks.

The baseline (``scripts/mypy_baseline.txt``) holds, per file and error code, how many
errors mypy still reports: ``COUNT PATH CODE`` a line. The check fails when a file has
more errors of a code than the baseline allows (a new error: fix it) and when it has
fewer (a fixed one: lower the baseline with ``--update``, so it never hides a new error
behind an old one's place). ``--update`` refuses to raise any count.

    python scripts/typecheck.py            # the check (scripts/test.sh runs it)
    python scripts/typecheck.py --update   # write the lower counts after fixing errors
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "scripts" / "mypy_baseline.txt"
_ERROR = re.compile(r"^(?P<path>[^:\n]+\.py):\d+: error: (?P<message>.*?)  \[(?P<code>[a-z-]+)\]$")

Key = tuple[str, str]


def parse_errors(output: str) -> tuple[Counter[Key], dict[Key, list[str]]]:
    """mypy's output → (path, code) → count, and the lines of each (notes are skipped)."""
    counts: Counter[Key] = Counter()
    lines: dict[Key, list[str]] = {}
    for line in output.splitlines():
        m = _ERROR.match(line)
        if m:
            key = (m["path"], m["code"])
            counts[key] += 1
            lines.setdefault(key, []).append(line)
    return counts, lines


def read_baseline(text: str) -> Counter[Key]:
    out: Counter[Key] = Counter()
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            count, path, code = line.split()
            out[(path, code)] = int(count)
    return out


def format_baseline(counts: Counter[Key]) -> str:
    head = "# mypy errors still allowed, per file and code: COUNT PATH CODE (only ever lowered)\n"
    return head + "".join(f"{n} {p} {c}\n" for (p, c), n in sorted(counts.items()) if n)


def compare(now: Counter[Key], allowed: Counter[Key]) -> tuple[list[Key], list[Key]]:
    """(keys over their allowance, keys under it)."""
    keys = sorted(set(now) | set(allowed))
    return [k for k in keys if now[k] > allowed[k]], [k for k in keys if now[k] < allowed[k]]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--update", action="store_true", help="write the lower counts (never a higher one)")
    args = ap.parse_args(argv)
    proc = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary", "--no-pretty"],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    if proc.returncode not in (0, 1) or (proc.returncode == 1 and not _ERROR.search(proc.stdout.split("\n")[0] or "")
                                         and not parse_errors(proc.stdout)[0]):
        sys.stderr.write(proc.stdout + proc.stderr)
        print(f"typecheck: mypy did not run (exit {proc.returncode})", file=sys.stderr)
        return 2
    now, lines = parse_errors(proc.stdout)
    allowed = read_baseline(BASELINE.read_text("utf-8")) if BASELINE.is_file() else Counter()
    over, under = compare(now, allowed)
    if args.update:
        if over and BASELINE.is_file():  # (the first baseline is written as found)
            for k in over:
                print(f"typecheck: {k[0]} [{k[1]}] has {now[k]} errors, the baseline {allowed[k]}: "
                      "fix them; the baseline is never raised", file=sys.stderr)
            return 1
        BASELINE.write_text(format_baseline(now), "utf-8")
        print(f"typecheck: baseline written, {sum(now.values())} errors in {len({p for p, _ in now})} files")
        return 0
    for k in over:
        print(f"typecheck: {now[k] - allowed[k]} new error(s) in {k[0]} [{k[1]}]:", file=sys.stderr)
        for line in lines[k]:
            print(f"  {line}", file=sys.stderr)
    for k in under:
        print(f"typecheck: {k[0]} [{k[1]}] has {now[k]} errors, the baseline {allowed[k]}: "
              "run `python scripts/typecheck.py --update` to lower it", file=sys.stderr)
    if over or under:
        return 1
    print(f"typecheck: {sum(now.values())} errors, as the baseline allows "
          f"({len({p for p, _ in now})} files; it only shrinks)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
