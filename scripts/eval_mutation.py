"""Mutation check of ``impact --diff`` (issue 33): do the tests it names catch the change?

    python scripts/eval_mutation.py CLONE [--rev HEAD] [--package src/flask] [--tests tests]
        [--mutations 50] [--seed 7] [--work DIR] [--subprocess]

CLONE is a git clone of a Python repository whose tests run offline (pallets/flask,
psf/requests). The script (not the product) makes a virtual environment under --work and
installs the repository with its test dependencies from the package index (``pip install
-e TREE[tests] pytest pytest-cov``, pytest as ``uv.lock`` pins it, and ``requirements-dev.txt`` when present), then:

1. the tree at --rev is exported twice (A and B), each a git repository with one commit;
2. the suite runs once under pytest-cov with per-test contexts (``--cov-context=test``, then
   ``coverage json --show-contexts``), and its JUnit report names every test;
3. both trees are built; A ingests the coverage JSON and is built again (phase 6), B is not;
4. ``--mutations`` single-line mutations of the package's lines that the suite runs, drawn
   with ``--seed`` (operators: ``==``↔``!=``, ``<``↔``>=``, ``True``↔``False``, ``and``↔``or``,
   ``return X`` → ``return None``, ``+``→``-``, ``not `` dropped; one per line), each applied to
   both trees; for each: the tests that fail (pytest, JUnit report) and the tests
   ``oracl impact --diff --json -k 500`` names on A (with coverage) and on B (without):
   a named test file's ``covering`` ids when it has them, else every test in the file;
5. per mutation and pooled: recall of the failing tests and the share of the suite named,
   three ways: ``covering`` (with coverage, only the tests whose recorded coverage runs a
   changed line when there are any: what to run first), ``coverage`` (with coverage, every
   test impact names) and ``no coverage`` (B: the graph's guesses alone).

A mutation no test catches (no failure) is counted apart and not in the recall. Lines of
test files (under a ``test``/``tests`` folder or named ``test_*.py``) are never mutated.

``--subprocess``: the ripgrep-style case, tests that run the program as a process. Coverage
follows the suite's child Python processes (``coverage.process_startup`` from a ``.pth`` file
in the virtual environment, ``COVERAGE_PROCESS_START`` naming a config whose static context
is ``${ORACL_TEST_ID}``), and a pytest plugin of the script's own exports the running test's
id into that variable: the lines a child process runs are recorded under the test that
started it. Without it, those lines are covered by no test (pytest-cov measures only its
own process).
"""

from __future__ import annotations

import argparse
import ast
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import venv
from collections import defaultdict
from io import BytesIO
from pathlib import Path

import orjson
from defusedxml import ElementTree

ORACL = str(Path(sys.executable).with_name("oracl"))
OPERATORS = [(r" == ", " != "), (r" != ", " == "), (r" < ", " >= "), (r" > ", " <= "), (r"\bTrue\b", "False"),
             (r"\bFalse\b", "True"), (r" and ", " or "), (r" or ", " and "), (r"\breturn (?!None\b)\S.*$", "return None"),
             (r" \+ ", " - "), (r"\bnot ", "")]


def sh(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None, check: bool = True,
       timeout: float = 1800) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(list(args), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise SystemExit(f"{' '.join(args[:4])} failed: {proc.stderr.strip()[-800:]}")
    return proc


def export(clone: Path, rev: str, dest: Path) -> None:
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    data = subprocess.run(["git", "-C", str(clone), "archive", "--format=tar", rev], check=True,
                          capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(dest, filter="data")
    env = {**os.environ, "GIT_AUTHOR_NAME": "m", "GIT_AUTHOR_EMAIL": "m@m", "GIT_COMMITTER_NAME": "m",
           "GIT_COMMITTER_EMAIL": "m@m"}
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        sh("git", "-C", str(dest), *cmd, env=env)


def locked(tree: Path, name: str) -> str:
    """``name==VERSION`` as the repository's ``uv.lock`` pins it (its tests may need that
    release: flask's import a private name of pytest 9.0), else ``name``."""
    lock = tree / "uv.lock"
    if lock.is_file():
        m = re.search(rf'^name = "{re.escape(name)}"\nversion = "([^"]+)"', lock.read_text(), re.M)
        if m:
            return f"{name}=={m.group(1)}"
    return name


def suite_tests(junit: Path) -> tuple[set[str], set[str]]:
    """(every test id, the failing ones) of a pytest JUnit report (``file::name`` ids)."""
    root = ElementTree.parse(junit).getroot()
    every, failing = set(), set()
    for case in root.iter("testcase"):
        cls = case.get("classname") or ""
        parts = cls.split(".")
        # pytest writes classname "tests.test_basic" or "tests.test_basic.TestX"
        path = "/".join(p for p in parts if not p[:1].isupper()) + ".py"
        klass = [p for p in parts if p[:1].isupper()]
        test = "::".join([path, *klass, case.get("name") or ""])
        every.add(test)
        if case.find("failure") is not None or case.find("error") is not None:
            failing.add(test)
    return every, failing


PLUGIN = '''import os

import pytest


@pytest.fixture(autouse=True)
def _oracl_test_id(request):
    """The running test's id, for the coverage of the processes it starts."""
    os.environ["ORACL_TEST_ID"] = request.node.nodeid
    yield
    os.environ.pop("ORACL_TEST_ID", None)
'''


def follow_subprocesses(py: str, work: Path, tree: Path, package: str) -> dict[str, str]:
    """The environment under which child Python processes are measured, each line under the
    test that started the process (see ``--subprocess``)."""
    site = sh(py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip()
    Path(site, "oracl_subprocess_coverage.pth").write_text("import coverage; coverage.process_startup()\n")
    (work / "plugin").mkdir(exist_ok=True)
    (work / "plugin" / "oracl_test_id.py").write_text(PLUGIN)
    rc = work / "subprocess.coveragerc"
    rc.write_text(f"[run]\nparallel = True\nsource = {package}\ncontext = ${{ORACL_TEST_ID}}\n"
                  f"data_file = {tree / '.coverage'}\n")
    return {**os.environ, "COVERAGE_PROCESS_START": str(rc), "PYTHONPATH": str(work / "plugin")}


def run_suite(tree: Path, py: str, junit: Path, package: str = "", tests: str = "tests",
              env: dict[str, str] | None = None) -> None:
    """The suite, its JUnit report to ``junit``; with ``package``, under pytest-cov with
    per-test contexts (``--cov-context=test``: each line's tests by their pytest ids)."""
    cov = [f"--cov={package}", "--cov-context=test", "--cov-report="] if package else []
    plugin = ["-p", "oracl_test_id"] if env is not None else []
    sh(py, "-m", "pytest", "-q", "-p", "no:cacheprovider", *plugin, *cov, f"--junitxml={junit}", tests,
       cwd=tree, check=False, timeout=900, env=env)


def is_test(path: str) -> bool:
    parts = path.split("/")
    return any(p in ("test", "tests") for p in parts[:-1]) or parts[-1].startswith("test_")


def covered_lines(cov: dict, package: str) -> list[tuple[str, int]]:
    out = []
    for path, info in sorted(cov["files"].items()):
        if path.startswith(package.rstrip("/") + "/") and not is_test(path):
            out += [(path, int(n)) for n in info.get("executed_lines", [])]
    return out


def mutate(line: str, rng: random.Random) -> str | None:
    ops = [(p, r) for p, r in OPERATORS if re.search(p, line)]
    if not ops or line.strip().startswith(("#", "def ", "class ", "@", "import ", "from ")):
        return None
    pat, rep = rng.choice(ops)
    new = re.sub(pat, rep, line, count=1)
    return new if new != line else None


def named(impact: dict, tests_by_file: dict[str, set[str]], covering_only: bool = False) -> set[str]:
    """The tests an impact answer names: a test file's ``covering`` ids when it has them,
    else every test in the file; ``covering_only``: when any test file has covering ids
    (the changed lines have recorded coverage), only those."""
    rows = impact.get("tests", [])
    if covering_only and any(t.get("covering") for t in rows):
        rows = [t for t in rows if t.get("covering")]
    out: set[str] = set()
    for t in rows:
        ids = t.get("covering")
        out |= set(ids) if ids else tests_by_file.get(t["path"], set())
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("clone", type=Path)
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--package", default="src/flask")
    ap.add_argument("--mutations", type=int, default=50)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--work", type=Path, default=Path("/tmp/oracl-mutation"))
    ap.add_argument("--tests", default="tests", help="the suite's folder, as pytest is given it")
    ap.add_argument("--subprocess", action="store_true",
                    help="measure the suite's child Python processes too, under the test that started each")
    a = ap.parse_args()
    work = a.work
    work.mkdir(parents=True, exist_ok=True)
    tree_a, tree_b = work / "a", work / "b"
    export(a.clone, a.rev, tree_a)
    export(a.clone, a.rev, tree_b)
    env_dir = work / "venv"
    if not (env_dir / "bin" / "python").exists():
        venv.create(env_dir, with_pip=True)
    py = str(env_dir / "bin" / "python")
    project = tree_a / "pyproject.toml"
    extras = "[tests]" if project.is_file() and "tests" in project.read_text() else ""
    sh(py, "-m", "pip", "install", "-q", "-e", f"{tree_a}{extras}", locked(tree_a, "pytest"), "pytest-cov",
       timeout=1800)
    if (tree_a / "requirements-dev.txt").exists():
        sh(py, "-m", "pip", "install", "-q", "-r", str(tree_a / "requirements-dev.txt"), check=False)
    # the suite once, under coverage with test contexts
    base_junit = work / "base.xml"
    name = a.package.rsplit("/", 1)[-1]
    env = follow_subprocesses(py, work, tree_a, name) if a.subprocess else None
    run_suite(tree_a, py, base_junit, package=name, tests=a.tests, env=env)
    if a.subprocess:  # the children's data files beside the suite's
        sh(py, "-m", "coverage", "combine", "--append", cwd=tree_a, check=False)
    sh(py, "-m", "coverage", "json", "--show-contexts", "-o", str(work / "coverage.json"), cwd=tree_a, check=False)
    every, base_failing = suite_tests(base_junit)
    tests_by_file: dict[str, set[str]] = defaultdict(set)
    for t in every:
        tests_by_file[t.split("::", 1)[0]].add(t)
    for tree in (tree_a, tree_b):
        shutil.rmtree(tree / ".coverage", ignore_errors=True)
        sh(ORACL, "build", str(tree), "-q")
    sh(ORACL, "ingest", str(work / "coverage.json"), "-r", str(tree_a))
    sh(ORACL, "build", str(tree_a), "-q")
    cov = orjson.loads((work / "coverage.json").read_bytes())
    lines = covered_lines(cov, a.package)
    rng = random.Random(a.seed)
    rng.shuffle(lines)
    rows = []
    done_lines: set[tuple[str, int]] = set()
    for path, n in lines:
        if len(rows) >= a.mutations:
            break
        text = (tree_a / path).read_text().splitlines(keepends=True)
        if n - 1 >= len(text) or (path, n) in done_lines:
            continue
        new = mutate(text[n - 1].rstrip("\n"), rng)
        if new is None:
            continue
        try:
            ast.parse("".join([*text[: n - 1], new + "\n", *text[n:]]))
        except SyntaxError:
            continue
        done_lines.add((path, n))
        for tree in (tree_a, tree_b):
            (tree / path).write_text("".join([*text[: n - 1], new + "\n", *text[n:]]))
        junit = work / "m.xml"
        junit.unlink(missing_ok=True)
        run_suite(tree_a, py, junit, tests=a.tests)
        _, failing = suite_tests(junit) if junit.exists() else (set(), set())
        failing -= base_failing
        with_cov = orjson.loads(sh(ORACL, "impact", "--diff", "-r", str(tree_a), "--json", "-k", "500").stdout)
        without = orjson.loads(sh(ORACL, "impact", "--diff", "-r", str(tree_b), "--json", "-k", "500").stdout)
        got = {"covering": named(with_cov, tests_by_file, covering_only=True),
               "coverage": named(with_cov, tests_by_file), "no coverage": named(without, tests_by_file)}
        for tree in (tree_a, tree_b):
            (tree / path).write_text("".join(text))
        row = {"path": path, "line": n, "mutant": new.strip()[:120], "failing": sorted(failing),
               **{f"named {k}": len(v) for k, v in got.items()},
               **{f"caught {k}": len(failing & v) for k, v in got.items()}}
        rows.append(row)
        print(orjson.dumps(row).decode(), flush=True)
    killed = [r for r in rows if r["failing"]]
    print(f"suite: {len(every)} tests; mutations: {len(rows)}, caught by the suite: {len(killed)}")
    for label in ("covering", "coverage", "no coverage"):
        fail = sum(len(r["failing"]) for r in killed)
        caught = sum(r[f"caught {label}"] for r in killed)
        share = sum(r[f"named {label}"] for r in rows) / (len(rows) * len(every)) if rows and every else 0.0
        per = [r[f"caught {label}"] / len(r["failing"]) for r in killed]
        print(f"{label}: recall of failing tests {caught / fail if fail else 0:.3f} pooled, "
              f"{sum(per) / len(per) if per else 0:.3f} mean per mutation; share of the suite named {share:.3f}")


if __name__ == "__main__":
    main()
