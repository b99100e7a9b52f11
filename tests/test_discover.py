from __future__ import annotations

import os
from pathlib import Path

import pytest

from oracl.builder.pipeline.discover import artifact_id, read_one
from oracl.core.config import Config
from oracl.core.errors import RootError
from oracl.core.walk import walk

from .conftest import git, write_tree


def test_exclusion_classes(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "a.py": "", "notes.bin": "x", "Makefile": "all:",
        ".git/config.py": "", ".hg/x.py": "", ".venv-3/x.py": "", "venv/x.py": "",
        "env2/pyvenv.cfg": "home = /usr", "env2/lib/x.py": "",
        "__pycache__/x.py": "", ".mypy_cache/x.json": "", "node_modules/x.json": "", ".tox/x.py": "",
        "build/x.py": "", "dist/x.py": "", "pkg.egg-info/PKG-INFO.txt": "", "site/x.md": "",
        ".oracl/index.jsonl": "", "vendor/lib/.git/HEAD": "", "vendor/lib/x.py": "",
        "report_tmp/x.md": "", "deployment/staging/x.yaml": "", "deployment/prod.yaml": "",
        "docs/reports/_tmp/x.md": "", "docs/reports/y.md": "", "client_data/c.json": "",
    })
    d = walk(tmp_path, Config())
    # every file that is not named as binary is listed (its content is sniffed when read);
    # `site/` is a documentation source (Hugo, MkDocs), not build output
    assert d.files == ["Makefile", "a.py", "deployment/prod.yaml", "docs/reports/y.md", "site/x.md"]
    assert d.skipped == {"binary": 1}
    assert d.skipped_suffixes == {"binary .bin": 1}
    assert d.excluded_dirs == {"vcs": 2, "virtualenv": 3, "cache": 4, "build_output": 3, "vault": 1,
                               "embedded_repository": 1, "derived_output": 4}
    explicit = walk(tmp_path, Config(suffixes=(".py", ".md")))
    assert explicit.files == ["a.py", "docs/reports/y.md", "site/x.md"]
    assert explicit.skipped == {"suffix": 3}
    assert explicit.skipped_suffixes == {"suffix .bin": 1, "suffix (none)": 1, "suffix .yaml": 1}


def test_configured_exclusions_and_suffixes(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": "", "gen/b.py": "", "x/generated/c.py": "", "d.rs": ""})
    d = walk(tmp_path, Config(exclude_dirs=("generated", "gen"), suffixes=(".py", ".rs")))
    assert d.files == ["a.py", "d.rs"]


def test_gitignore_honoured_inside_a_work_tree(tmp_path: Path) -> None:
    write_tree(tmp_path, {".gitignore": "ignored/\n*.log.txt\n", "ignored/x.py": "", "kept.py": "",
                          "run.log.txt": "", "sub/.gitignore": "local.md\n", "sub/local.md": "",
                          "sub/other.md": ""})
    git(tmp_path, "init", "-q")
    d = walk(tmp_path, Config())
    assert d.files == [".gitignore", "kept.py", "sub/.gitignore", "sub/other.md"]  # .gitignore is text too
    assert d.skipped["gitignored"] == 2
    assert d.excluded_dirs["gitignored"] == 1
    d2 = walk(tmp_path, Config(gitignore=False))
    assert "ignored/x.py" in d2.files and "sub/local.md" in d2.files


def test_gitignore_not_applied_outside_git(tmp_path: Path) -> None:
    write_tree(tmp_path, {".gitignore": "x.py\n", "x.py": ""})
    assert walk(tmp_path, Config()).files == [".gitignore", "x.py"]


def test_symlinks_loop_and_outside_root(tmp_path: Path) -> None:
    outside = write_tree(tmp_path / "outside", {"secret.py": ""})
    root = write_tree(tmp_path / "root", {"a/b.py": ""})
    os.symlink(root / "a", root / "a" / "loop")        # a/loop -> a
    os.symlink(outside, root / "out")                   # dir outside the root
    os.symlink(outside / "secret.py", root / "s.py")    # file outside the root
    os.symlink(root / "a" / "b.py", root / "inner.py")  # file inside: kept
    os.symlink(root / "missing.py", root / "dangling.py")
    d = walk(root, Config())
    assert d.files == ["a/b.py", "inner.py"]
    assert d.excluded_dirs == {"symlink_alias": 1, "symlink_outside_root": 1}
    assert d.skipped == {"symlink_outside_root": 1, "broken_symlink": 1}


def test_missing_root_and_file_root(tmp_path: Path) -> None:
    with pytest.raises(RootError, match="does not exist"):
        walk(tmp_path / "nope", Config())
    (tmp_path / "f.py").write_text("")
    with pytest.raises(RootError, match="is not a directory"):
        walk(tmp_path / "f.py", Config())


def test_read_one_record_fields(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text('"""Doc."""\ndef f():\n    pass\n')
    st = (tmp_path / "m.py").stat()
    facts, fts = read_one(str(tmp_path), "m.py", Config())
    assert facts.artifact_id == artifact_id("m.py", st.st_mtime_ns, st.st_size)
    import hashlib
    assert facts.checksum == hashlib.sha256((tmp_path / "m.py").read_bytes()).hexdigest()
    assert facts.parse_status == "ok" and facts.line_count == 3
    assert fts == "m f f doc"  # path words, symbol (+ its def: tf 2), body terms; code keywords dropped


@pytest.mark.parametrize(("name", "content", "status"), [
    ("bin.py", b"\x00\x01\x02abc", "binary"),
    ("latin.md", "caf\xe9".encode("latin-1"), "non_utf8"),
    ("broken.py", b"def f(:\n", "syntax_error"),
    ("bad.json", b'{"a": ', "malformed"),
    ("bad.yaml", b"a:\n\t- b\n", "malformed"),
    ("bad.toml", b"a = = 1\n", "malformed"),
    ("empty.py", b"", "ok"),
])
def test_bad_input_gets_a_status(tmp_path: Path, name: str, content: bytes, status: str) -> None:
    (tmp_path / name).write_bytes(content)
    facts, _ = read_one(str(tmp_path), name, Config())
    assert facts.parse_status == status
    assert len(facts.checksum) == 64


def test_oversize_is_hashed_not_parsed(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_bytes(b"a" * 2048)
    facts, fts = read_one(str(tmp_path), "big.txt", Config(max_read_bytes=1024))
    import hashlib
    assert facts.parse_status == "oversize"
    assert facts.checksum == hashlib.sha256(b"a" * 2048).hexdigest()
    assert fts == "big txt"


def test_vanished_file(tmp_path: Path) -> None:
    facts, _ = read_one(str(tmp_path), "gone.py", Config())
    assert facts.parse_status == "vanished" and facts.checksum == ""


def test_the_build_reader_refuses_a_folder_swapped_for_a_link_out_of_the_root(tmp_path: Path) -> None:
    """The walk saw `sub/` as a folder; if it is then swapped for a symlink out of the root,
    the reader refuses the file (it checks where the opened file really is), as the
    `Workspace` does for readers."""
    from oracl.builder.pipeline.discover import _open_regular
    from oracl.core.errors import UnsafePathError

    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "f.txt").write_text("inside\n")
    outside.mkdir()
    (outside / "f.txt").write_text("password = hunter2hunter2\n")
    fd, _ = _open_regular(str(root), "sub/f.txt")
    os.close(fd)
    (root / "sub" / "f.txt").unlink()
    (root / "sub").rmdir()
    (root / "sub").symlink_to(outside, target_is_directory=True)
    with pytest.raises(UnsafePathError, match="a folder on its path leads out of the root"):
        _open_regular(str(root), "sub/f.txt")
    facts, _ = read_one(str(root), "sub/f.txt", Config())
    assert (facts.parse_status, facts.checksum) == ("unreadable", "")
