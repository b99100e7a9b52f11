"""scripts/typecheck.py: mypy's errors counted per file and code against a baseline that
only shrinks (hand-made mypy output; the real run is in scripts/test.sh)."""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("typecheck", ROOT / "scripts" / "typecheck.py")
assert _spec and _spec.loader
typecheck = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(typecheck)

OUTPUT = """\
oracl/a.py:3: error: Incompatible types in assignment (expression has type "str", variable has type "int")  [assignment]
oracl/a.py:3: note: a note is not an error
oracl/a.py:9: error: Name "x" already defined on line 2  [no-redef]
oracl/b.py:12: error: Incompatible types in assignment (expression has type "str", variable has type "int")  [assignment]
oracl/a.py:40: error: Incompatible return value type (got "str", expected "int")  [assignment]
Found 4 errors in 2 files (checked 9 source files)
"""


def test_errors_are_counted_per_file_and_code() -> None:
    counts, lines = typecheck.parse_errors(OUTPUT)
    assert counts == Counter({("oracl/a.py", "assignment"): 2, ("oracl/a.py", "no-redef"): 1,
                              ("oracl/b.py", "assignment"): 1})
    assert lines[("oracl/a.py", "no-redef")] == ['oracl/a.py:9: error: Name "x" already defined on line 2  [no-redef]']


def test_a_new_error_and_a_fixed_one_both_fail_the_check() -> None:
    allowed = typecheck.read_baseline("# header\n2 oracl/a.py assignment\n1 oracl/c.py misc\n")
    now, _ = typecheck.parse_errors(OUTPUT)
    over, under = typecheck.compare(now, allowed)
    # a.py's no-redef and b.py's assignment are new; c.py's misc was fixed: lower the baseline
    assert over == [("oracl/a.py", "no-redef"), ("oracl/b.py", "assignment")]
    assert under == [("oracl/c.py", "misc")]
    assert typecheck.compare(now, now) == ([], [])


def test_the_baseline_round_trips_and_drops_zero_counts() -> None:
    counts = Counter({("oracl/b.py", "arg-type"): 3, ("oracl/a.py", "misc"): 0, ("oracl/a.py", "index"): 1})
    text = typecheck.format_baseline(counts)
    assert text.splitlines()[1:] == ["1 oracl/a.py index", "3 oracl/b.py arg-type"]
    assert typecheck.read_baseline(text) == Counter({("oracl/a.py", "index"): 1, ("oracl/b.py", "arg-type"): 3})


def test_the_repository_baseline_is_what_mypy_is_held_to_and_the_package_says_it_is_typed() -> None:
    allowed = typecheck.read_baseline((ROOT / "scripts" / "mypy_baseline.txt").read_text("utf-8"))
    assert sum(allowed.values()) <= 5  # 138 when the check was introduced; it only goes down
    assert all(path.startswith("oracl/") for path, _ in allowed)
    assert (ROOT / "oracl" / "py.typed").is_file()
    assert "scripts/typecheck.py" in (ROOT / "scripts" / "test.sh").read_text("utf-8")
