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


def _walked(d) -> tuple:  # type: ignore[no-untyped-def]
    """What a walk says: the listing, the counters and each listed file's stat."""
    return (d.files, d.seen, dict(d.skipped), dict(d.excluded_dirs), dict(d.skipped_suffixes),
            {rel: (st.st_size, st.st_mtime_ns, st.st_ctime_ns) for rel, st in d.stats.items()})


def test_changed_paths_taken_into_a_recorded_walk_give_a_walks_answer(tmp_path: Path) -> None:
    """``triage`` and ``take_in`` (a long-lived builder's walk without walking): after
    edits, deletions of listed and skipped files, changes under a folder left out and a
    file that came and went, the recorded walk with the changed paths taken in is what a
    new walk finds (listing, every counter, every stat); a new file, a new folder, a file
    turned folder, an ignore file or a path outside the root ask for a walk (None), and a
    listed link is looked at again though no path of it is named."""
    from oracl.core.walk import moved, take_in, triage

    root = write_tree(tmp_path / "r", {
        "a.py": "a = 1\n", "pkg/b.py": "b = 2\n", "pkg/c.md": "# c\n", "img.png": "x", "pkg/d.png": "y",
        "node_modules/m.js": "m\n", "target.py": "t = 1\n"})
    os.symlink("target.py", root / "link.py")
    cfg = Config()
    d = walk(root, cfg, stat=True, record=True)
    assert d.links == ["link.py"] and d.kinds is not None and d.kinds["img.png"] == ("binary", "binary .png", False)
    assert _walked(d) == _walked(walk(root, cfg, stat=True))  # (recording changes nothing it says)
    (root / "pkg/b.py").write_text("b = 22\n")                 # a listed file edited
    (root / "pkg/c.md").unlink()                               # a listed file gone
    (root / "img.png").unlink()                                # a skipped file gone: its counters move
    (root / "node_modules/m.js").write_text("m2\n")             # under a folder left out
    (root / "target.py").write_text("t = 22222\n")              # a link's target: no path of the link named
    changed = ["pkg/b.py", "pkg/c.md", "img.png", "node_modules/m.js", "target.py", "swap.tmp"]  # swap.tmp: came and went
    found = triage(root, d, changed)
    assert found is not None
    assert sorted(moved(d, found)) == ["img.png", "link.py", "pkg/b.py", "pkg/c.md", "target.py"]
    take_in(d, found)
    assert _walked(d) == _walked(walk(root, cfg, stat=True))
    assert d.files == ["a.py", "link.py", "pkg/b.py", "target.py"] and d.skipped == {"binary": 1}
    assert triage(root, d, ["a.py"]) is not None and moved(d, triage(root, d, ["a.py"]) or []) == []  # nothing moved
    (root / "new.py").write_text("n = 1\n")
    assert triage(root, d, ["new.py"]) is None                 # a new entry: the walk says what it is
    (root / "new.py").unlink()
    (root / "newdir").mkdir()
    assert triage(root, d, ["newdir"]) is None                 # a folder came
    assert triage(root, d, ["newdir/x.py"]) is None            # in a folder not walked
    assert triage(root, d, ["pkg"]) is None                    # a walked folder named itself
    assert triage(root, d, [".gitignore"]) is None and triage(root, d, ["pkg/pyvenv.cfg"]) is None
    assert triage(root, d, ["../outside.py"]) is None and triage(root, d, [""]) is None
    (root / "a.py").unlink()
    (root / "a.py").mkdir()
    assert triage(root, d, ["a.py"]) is None                   # a file turned folder
    (root / "target.py").unlink()
    assert triage(root, d, []) is None                         # the listed link is broken now


def test_priming_makes_each_kinds_parser_ready_without_reading_a_file(tmp_path: Path) -> None:
    """``prime`` (a warmed builder's): one blank text of each (language, format) scanned, so
    that the first save of a kind does not build its parser and queries; the paths are
    never opened (none of them exists here)."""
    from oracl.builder.extractors import code
    from oracl.builder.pipeline.discover import prime

    code._python_calls_query.cache_clear()
    paths = ["a/x.py", "b/y.py", "c/z.go", "README.md", "docs/more.md", "Makefile", "src/lib.rs"]
    assert prime(paths, Config()) == 5  # py, go, md, Makefile, rs
    assert code._python_calls_query.cache_info().currsize == 1
    assert prime([], Config()) == 0
