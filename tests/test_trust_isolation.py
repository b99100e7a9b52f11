"""Nothing in an indexed repository ever runs (design §11): a tree full of modules that
shadow the standard library and ORACL itself, and a git configuration that names a
command at every hook git has, are built, queried and diffed from inside; none of it runs."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from oracl.core.children import _drivers, git_command, git_env, import_path, python_command

from .conftest import git, run_cli, write_tree

# every module a Python child imports early, plus the interpreter's own start-up hooks
SHADOWS = ("concurrent/__init__.py", "pickle.py", "selectors.py", "dataclasses.py", "struct.py", "typing.py",
           "threading.py", "site.py", "sitecustomize.py", "usercustomize.py", "oracl/__init__.py",
           "oracl/builder/executor.py", "oracl/core/children.py", "encodings/__init__.py", "importlib/__init__.py",
           "orjson.py", "kuzu/__init__.py", "pyarrow/__init__.py")


def _marker_code(marks: Path, name: str) -> str:
    return f"open({str(marks / name.replace('/', '_'))!r}, 'a').write('ran\\n')\n"


def _hostile_tree(tmp_path: Path) -> tuple[Path, Path]:
    marks = tmp_path / "marks"
    marks.mkdir()
    root = tmp_path / "evil"
    files: dict[str, str | bytes] = {"src/a.py": "def f():\n    return 1\n", "src/b.py": "from src.a import f\n"}
    for name in SHADOWS:
        files[name] = _marker_code(marks, name)
    write_tree(root, files)
    git(root, "init", "-q", ".")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one")
    # a command for every hook git offers a repository (each leaves a mark when it runs)
    hook = root / ".hook.sh"
    hook.write_text(f"#!/bin/sh\necho ran >> {marks}/git_$1\ncat\n")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    for key, value in (("core.fsmonitor", f"{hook} fsmonitor"), ("core.pager", f"{hook} pager"),
                       ("filter.evil.clean", f"{hook} clean"), ("filter.evil.smudge", f"{hook} smudge"),
                       ("filter.evil.process", f"{hook} process"), ("diff.evil.textconv", f"{hook} textconv"),
                       ("diff.evil.command", f"{hook} diffcommand"), ("diff.external", f"{hook} external"),
                       ("core.hooksPath", str(root / "hooks")), ("log.showSignature", "true"),
                       ("gpg.program", f"{hook} gpg")):
        git(root, "config", key, value)
    (root / "hooks").mkdir()
    for name in ("post-index-change", "pre-commit", "post-checkout", "reference-transaction"):
        h = root / "hooks" / name
        h.write_text(f"#!/bin/sh\necho ran >> {marks}/hook_{name}\n")
        h.chmod(0o755)
    (root / ".gitattributes").write_text("* filter=evil diff=evil\n")
    (root / "src/a.py").write_text("def f():\n    return 2\n")  # a change the worktree reads go through
    return root, marks


def test_a_hostile_tree_is_built_queried_and_diffed_and_nothing_of_it_runs(tmp_path: Path) -> None:
    root, marks = _hostile_tree(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    build = run_cli("build", "--json", cwd=root, env=env)  # the CLI: the processes executor
    assert build.returncode == 0, build.stderr
    for args in (("query", "f"), ("impact", "--diff"), ("status",), ("verify",)):
        r = run_cli(*args, cwd=root, env=env)
        assert r.returncode in (0, 20), (args, r.stderr)
    rebuilt = run_cli("build", cwd=root, env=env)  # an incremental build beside the change
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert sorted(p.name for p in marks.iterdir()) == []


def test_the_unguarded_ways_do_run_the_tree_so_the_test_above_can_fail(tmp_path: Path) -> None:
    """The same tree through the plain calls ORACL used to make: both kinds of mark appear."""
    root, marks = _hostile_tree(tmp_path)
    subprocess.run([sys.executable, "-c", "import concurrent"], cwd=root, capture_output=True, check=False)
    subprocess.run(["git", "-C", str(root), "status", "--porcelain"], capture_output=True, check=False)
    names = {p.name for p in marks.iterdir()}
    assert "concurrent___init__.py" in names
    assert {"git_fsmonitor", "git_clean"} & names


def test_a_python_child_sees_neither_the_working_directory_nor_pythonpath(tmp_path: Path) -> None:
    write_tree(tmp_path, {"json.py": "raise SystemExit('shadowed')\n"})
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "PYTHONSTARTUP": str(tmp_path / "json.py")}
    out = subprocess.run(python_command("import json, sys, oracl\nprint(json.__file__)\nprint(sys.path)"),
                         cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
    first, path = out.stdout.splitlines()
    assert not first.startswith(str(tmp_path))
    assert str(tmp_path) not in path


def test_import_path_drops_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", ["", str(tmp_path), "/usr/lib/python3.11", "relative/dir"])
    home = str(Path(__file__).resolve().parents[1])
    assert import_path() == ["/usr/lib/python3.11", home]


def test_git_command_overrides_the_fixed_hooks_and_git_env_each_driver_whole() -> None:
    cmd = git_command("/r", "status")
    pairs = [cmd[i + 1] for i, a in enumerate(cmd) if a == "-c"]
    assert {"core.fsmonitor=false", "core.hooksPath=/dev/null", "core.pager=cat", "diff.external=",
            "diff.ignoreSubmodules=all", "submodule.recurse=false"} <= set(pairs)
    assert cmd[:2] == ["git", "--no-pager"] and cmd[-3:] == ["-C", "/r", "status"]
    env = git_env(("filter.a=b.clean", "diff.x.textconv"))
    assert [(env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"]) for i in range(int(env["GIT_CONFIG_COUNT"]))] \
        == [("filter.a=b.clean", ""), ("filter.a=b.required", "false"), ("diff.x.textconv", "")]


# each kind of driver a repository can name, under names -c could not override whole
DRIVER_NAMES = ("x=y", "a.b", "q\"uote", "s pace", "=lead", "x=y.z=w")


def _driver_tree(tmp_path: Path, name: str) -> tuple[Path, Path]:
    marks = tmp_path / "marks"
    marks.mkdir()
    root = write_tree(tmp_path / "repo", {"a.md": "one\n", "b.py": "x = 1\n", "c.txt": "c\n"})
    git(root, "init", "-q", ".")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one")
    hook = root / ".hook.sh"
    hook.write_text(f"#!/bin/sh\necho ran >> {marks}/$1\ncat\n")
    hook.chmod(0o755)
    quoted = name.replace("\\", "\\\\").replace('"', '\\"')
    for key, what in ((f"filter.{name}.clean", "clean"), (f"filter.{name}.smudge", "smudge"),
                      (f"filter.{name}.process", "process"), (f"diff.{name}.textconv", "textconv"),
                      (f"diff.{name}.command", "diffcommand"), (f"merge.{name}.driver", "merge")):
        git(root, "config", key, f"{hook} {what}")
    git(root, "config", f"filter.{name}.required", "true")
    attr = f'"{quoted}"' if any(c in name for c in ' "') else name
    (root / ".gitattributes").write_text(f"*.md filter={attr} diff={attr} merge={attr}\n"
                                         f"*.py filter={attr} diff={attr}\n")
    # same-size edits with an old mtime: git must read (and would filter) the contents
    for rel, text in (("a.md", "two\n"), ("b.py", "x = 2\n")):
        (root / rel).write_text(text)
        os.utime(root / rel, (1_000_000_000, 1_000_000_000))
    return root, marks


@pytest.mark.parametrize("name", DRIVER_NAMES)
def test_no_driver_runs_whatever_its_name_holds(tmp_path: Path, name: str) -> None:
    root, marks = _driver_tree(tmp_path, name)
    # the plain call does run the tree's filter, so the assertion below can fail
    subprocess.run(["git", "-C", str(root), "status", "--porcelain"], capture_output=True, check=False)
    subprocess.run(["git", "-C", str(root), "diff"], capture_output=True, check=False)
    if not any(c in name for c in ' "'):  # .gitattributes cannot name a driver with a space or a quote
        assert {p.name for p in marks.iterdir()} & {"clean", "process", "textconv", "diffcommand"}
    assert {f"filter.{name}.clean", f"diff.{name}.command", f"merge.{name}.driver"} <= set(_drivers(root))
    for p in marks.iterdir():
        p.unlink()
    from oracl.core.children import git as safe_git

    assert safe_git(root, "status", "--porcelain").returncode == 0
    # the flags impact --diff and the history use
    assert safe_git(root, "diff", "--no-ext-diff", "--no-textconv", "--unified=0").returncode == 0
    assert safe_git(root, "log", "-p", "-1", "--no-ext-diff", "--no-textconv").returncode == 0
    for args in (("build", str(root), "-q"), ("impact", "--diff", "-r", str(root)), ("status", "-r", str(root))):
        r = run_cli(*args)
        assert r.returncode in (0, 20), (args, r.stderr)
    assert sorted(p.name for p in marks.iterdir()) == []


def test_a_submodules_own_drivers_never_run(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    sub = write_tree(tmp_path / "sub", {"a.md": "a\n"})
    git(sub, "init", "-q", ".")
    git(sub, "add", "-A")
    git(sub, "commit", "-qm", "one")
    root = write_tree(tmp_path / "repo", {"main.py": "x = 1\n"})
    git(root, "init", "-q", ".")
    git(root, "-c", "protocol.file.allow=always", "submodule", "-q", "add", str(sub), "s")
    git(root, "commit", "-qm", "with a submodule")
    inner = root / "s"
    (inner / ".gitattributes").write_text("*.md filter=evil diff=evil\n")
    git(inner, "config", "filter.evil.clean", f"sh -c 'echo ran >> {marks}/submodule_clean; cat'")
    git(inner, "config", "diff.evil.textconv", f"sh -c 'echo ran >> {marks}/submodule_textconv; cat $0'")
    (inner / "a.md").write_text("b\n")
    os.utime(inner / "a.md", (1_000_000_000, 1_000_000_000))
    subprocess.run(["git", "-C", str(root), "status", "--porcelain"], capture_output=True, check=False)
    assert (marks / "submodule_clean").exists()  # the plain call enters it
    (marks / "submodule_clean").unlink()
    for args in (("build", str(root), "-q"), ("impact", "--diff", "-r", str(root)), ("status", "-r", str(root))):
        r = run_cli(*args)
        assert r.returncode in (0, 20), (args, r.stderr)
    assert sorted(p.name for p in marks.iterdir()) == []
