"""A long-lived builder's save without passes over every file (design §7b item 7): the
facts, records, per-file edge lists, merged edges and history it kept are patched where
no file came or went, and the weighing compares only the places that can differ. Each
patched value is held against the value the whole pass makes, and the builds against a
full build's export."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from oracl.builder import orchestrator
from oracl.builder.incremental import Carry
from oracl.builder.orchestrator import build, facts_in_order, records_in_order
from oracl.builder.pipeline import weigh
from oracl.builder.pipeline.merge import BySource, merge_by_source, merge_edges
from oracl.core.records import Edge, FileFacts

from .conftest import git, write_tree
from .test_incremental import KW, _canonical, _first_difference, _full_beside, _stamp

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def _facts(path: str, checksum: str = "0" * 64) -> FileFacts:
    return FileFacts(path=path, artifact_id=path, checksum=checksum, size_bytes=1, mtime_ns=0, ctime_ns=0,
                     parse_status="ok", line_count=1, language="python")


def _edge(source: str, target: str, fragment: str = "L1-1") -> Edge:
    return Edge(source, target, "imports", 1.0, fragment, "", "phase3_static_edges")


def test_facts_and_records_in_order_are_the_kept_ones_with_the_files_read_put_in_place() -> None:
    files = ["a.py", "b.py", "c.py"]
    kept = {p: _facts(p) for p in files}
    b2 = _facts("b.py", "1" * 64)
    out = facts_in_order(files, kept, {"b.py": b2})
    assert list(out) == files and out["b.py"] is b2 and out["a.py"] is kept["a.py"] and out is not kept
    assert kept["b.py"] is not b2  # (the kept map is left as it was)
    # a file that came: the map made from the walk's list (its order, the new file's facts)
    d = _facts("d.py")
    assert list(facts_in_order([*files, "d.py"], kept, {"d.py": d})) == [*files, "d.py"]
    # the kept map in another order than the walk's: made again in the walk's
    assert list(facts_in_order(files, {p: kept[p] for p in reversed(files)}, {})) == files

    records = {p: (kept[p], f"record {p}") for p in files}
    assert records_in_order(files, records, {"b.py": "new b"}) == ["record a.py", "new b", "record c.py"]  # type: ignore[arg-type]
    assert records_in_order(files, records, {"d.py": "d"}) is None  # type: ignore[arg-type]
    assert records_in_order(["a.py", "b.py"], records, {}) is None
    assert records_in_order(files, None, {}) is None


def test_a_merge_of_a_few_sources_again_is_the_kept_list_with_their_runs_put_in_place() -> None:
    nodes = {"a.py", "b.py", "c.py", "d.py"}
    p3 = {"a.py": [_edge("a.py", "b.py"), _edge("a.py", "c.py")], "b.py": [_edge("b.py", "c.py")],
          "c.py": [_edge("c.py", "d.py"), _edge("c.py", "a.py")], "d.py": []}
    p2: dict[str, list[Edge]] = {p: [] for p in p3}
    first = merge_by_source(p2, p3, [], [], nodes)
    whole = first.result()
    # sorted by source: a's two edges at 0-1, b's at 2, c's at 3-4
    assert [e.source for e in whole.edges] == ["a.py", "a.py", "b.py", "c.py", "c.py"] and whole.patched is None
    assert first.places() == {"a.py": (0, 2), "b.py": (2, 3), "c.py": (3, 5)}

    # b's edge moved its lines only: its run, as long as before, is put at place 2
    p3b = {**p3, "b.py": [_edge("b.py", "c.py", "L2-2")]}
    again = merge_by_source(p2, p3b, [], [], nodes, first, {"b.py"})
    got = again.result()
    assert got.edges == merge_edges([], [e for p in sorted(p3b) for e in p3b[p]], [], nodes).edges
    assert got.patched is not None and got.patched[0] is whole.edges and got.patched[1] == [2]
    assert got.edges is not whole.edges and whole.edges[2].source_fragment == "L1-1"  # (the kept list untouched)
    assert again.base is None and first.base is None  # (one merge back at most, let go once used)

    # c's run grows by one: the places after it move, so the list is made whole
    p3c = {**p3b, "c.py": [*p3["c.py"], _edge("c.py", "b.py")]}
    third = merge_by_source(p2, p3c, [], [], nodes, again, {"c.py"})
    grown = third.result()
    assert grown.patched is None and len(grown.edges) == 6
    assert grown.edges == merge_edges([], [e for p in sorted(p3c) for e in p3c[p]], [], nodes).edges
    # d had no run and gains one: a run put where there was none moves the places after
    # it, so the list is made whole
    p3d = {**p3b, "d.py": [_edge("d.py", "a.py")]}
    base_d = merge_by_source(p2, p3b, [], [], nodes)
    base_d.result()
    fourth = merge_by_source(p2, p3d, [], [], nodes, base_d, {"d.py"})
    assert fourth.base is base_d and base_d.flat is not None
    got_d = fourth.result()
    assert got_d.patched is None and got_d.edges[-1].source == "d.py"
    assert got_d.edges == merge_edges([], [e for p in sorted(p3d) for e in p3d[p]], [], nodes).edges
    # a base that never made its list: nothing to patch
    fifth = merge_by_source(p2, p3d, [], [], nodes, merge_by_source(p2, p3b, [], [], nodes), {"d.py"})
    assert fifth.base is not None and fifth.base.flat is None and fifth.result().patched is None


def _tree() -> dict[str, str]:
    return {f"pkg/m{i}.py": f'"""Module {i}."""\nimport pkg.m{(i + 1) % 6}\n\n\ndef f{i}(x):\n    return f{(i + 2) % 6}(x)\n'
            for i in range(6)} | {"README.md": "# Tree\n\nSee pkg/m0.py.\n"}


@pytest.fixture
def spied(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """What each build's reweighing was told can differ, and each history read."""
    seen: dict[str, list[Any]] = {"reweigh": [], "history": []}
    real_reweigh, real_history = weigh.reweigh, orchestrator.read_history

    def reweigh(*args: Any) -> Any:
        seen["reweigh"].append((args[8] if len(args) > 8 else None, args[9] if len(args) > 9 else None))
        return real_reweigh(*args)

    monkeypatch.setattr(orchestrator, "reweigh", reweigh)
    monkeypatch.setattr(orchestrator, "read_history",
                        lambda root, paths, **kw: seen["history"].append(len(paths)) or real_history(root, paths, **kw))
    return seen


def _built(tmp_path: Path) -> tuple[Path, Carry]:
    """The tree built once by a long-lived builder (its files dated in the past)."""
    root = write_tree(tmp_path / "repo", _tree())
    for p in _tree():
        _stamp(root / p, 0)
    carry = Carry()
    build(root, now=T0, carry=carry, **KW)
    return root, carry


def _save(root: Path, carry: Carry, rel: str, text: str, step: int, new: bool = False) -> Any:
    """``text`` appended to ``rel`` (or ``rel`` written, ``new``), dated ``step``, and the
    builder's build of that path at minute ``step``: its report."""
    if new:
        write_tree(root, {rel: text})
    else:
        with open(root / rel, "a") as fh:
            fh.write(text)
    _stamp(root / rel, step)
    return build(root, now=T0 + timedelta(minutes=step), carry=carry, changed={rel}, **KW)


def _same_as_full(root: Path, now: datetime) -> None:
    got = _canonical(root)
    full, _ = _full_beside(root, now + timedelta(seconds=30))
    assert got == full, _first_difference(got, full)


def test_a_save_compares_only_the_file_read_and_its_runs_and_equals_a_full_build(
        tmp_path: Path, spied: dict[str, list[Any]]) -> None:
    root, carry = _built(tmp_path)
    # a comment: m3 is read again; its facts and record are the only ones compared (m3 is
    # the 4th file in the walk's order: README.md, pkg/m0 … pkg/m5), its edges' run the only places
    report = _save(root, carry, "pkg/m3.py", "# a note\n", 1)
    assert report.files_read == 1
    places, patched = spied["reweigh"][-1]
    assert places == [4]
    assert patched is not None and patched[1]  # (m3's run: its import and its call)
    assert "the kept graph's" in report.weigh_mode
    _same_as_full(root, T0 + timedelta(minutes=1))
    # a file added: the lists are made whole (nothing to patch), and the build is a full one's
    _save(root, carry, "pkg/m6.py", "import pkg.m0\n", 2, new=True)
    _same_as_full(root, T0 + timedelta(minutes=2))
    # a save after it patches again
    _save(root, carry, "pkg/m0.py", "# another note\n", 3)
    assert spied["reweigh"][-1][0] == [1]
    _same_as_full(root, T0 + timedelta(minutes=3))


def test_the_history_is_read_again_only_when_head_or_the_files_move(tmp_path: Path,
                                                                    spied: dict[str, list[Any]]) -> None:
    root = write_tree(tmp_path / "repo", _tree())
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first")
    carry = Carry()
    build(root, now=T0, carry=carry, **KW)
    assert spied["history"] == [7]
    _save(root, carry, "pkg/m1.py", "# edited\n", 1)  # an edit, not committed: HEAD and the files stay
    assert spied["history"] == [7]
    _same_as_full(root, T0 + timedelta(minutes=1))  # (a full build reads the log: not counted)
    spied["history"].clear()
    git(root, "commit", "-qam", "second")  # HEAD moved: the log is read again
    report = _save(root, carry, "pkg/m2.py", "# edited\n", 2)
    assert spied["history"] == [7]
    # (m1's commit messages moved, not the structure: its row made again in the kept graph)
    assert report.weigh_mode == "weigh: the kept graph's, its moved rows made again", report.weigh_mode
    _same_as_full(root, T0 + timedelta(minutes=2))
    spied["history"].clear()
    _save(root, carry, "pkg/new.py", "x = 1\n", 3, new=True)  # a file came: the log is read again over the files
    assert spied["history"] == [8]
    _same_as_full(root, T0 + timedelta(minutes=3))
    spied["history"].clear()
    _save(root, carry, "pkg/m3.py", "# edited\n", 4)  # and kept again after it
    assert spied["history"] == []
    _same_as_full(root, T0 + timedelta(minutes=4))


def test_bysource_result_made_twice_is_the_same_list() -> None:
    nodes = {"a.py", "b.py"}
    by = merge_by_source({"a.py": [], "b.py": []}, {"a.py": [_edge("a.py", "b.py")], "b.py": []}, [], [], nodes)
    assert isinstance(by, BySource) and by.result().edges == by.result().edges


def test_a_define_in_a_long_lived_builder_takes_the_cold_builds_paths_and_equals_a_full_build(
        tmp_path: Path) -> None:
    """A save that defines a function (the names other files resolve to moved) patches the
    builder's own name tables (``resolve_again``) and weighs around the move
    (``weigh_around``), as a cold build does, instead of resolving every file and weighing
    the whole graph (14 s at 20k files); the save after it is a full build's too."""
    root, carry = _built(tmp_path)
    report = _save(root, carry, "pkg/m2.py", "\n\ndef helper(x):\n    return f0(x)\n", 1)
    assert report.symbols_mode.startswith("symbols: the name tables patched for 1 file"), report.symbols_mode
    assert report.weigh_mode.startswith("weigh: around the move"), report.weigh_mode
    assert carry.symbol_table is not None
    _same_as_full(root, T0 + timedelta(minutes=1))
    _save(root, carry, "pkg/m4.py", "# a note\n", 2)  # the save after it
    _same_as_full(root, T0 + timedelta(minutes=2))
    report = _save(root, carry, "pkg/m7.py", "from pkg.m2 import helper\n\n\ndef g(x):\n    return helper(x)\n",
                   3, new=True)  # an add
    assert report.symbols_mode.startswith("symbols: the name tables patched"), report.symbols_mode
    _same_as_full(root, T0 + timedelta(minutes=3))


def test_a_move_weighed_around_patches_the_kept_graph_and_the_saves_after_it_reweigh_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long-lived builder's save whose edges moved (a define, a rename, a delete) weighs
    around the move from its kept graph (``weigh_around``'s ``prior``): the structure is
    patched, the export's kept rows are patched where the edge rows moved (``spliced``: no
    row serialised whole), and the save after it reweighs that graph instead of weighing
    the whole; its name tables are patched, not read back, when a file came or went (the
    files both builds have are in the same order). Each build's export and graph tables
    are a full build's."""
    from oracl.builder import name_tables, read_sets, resident
    from oracl.core.parts import stat_files, store_of
    from oracl.core.vault import Vault

    from .test_incremental import _full_rows_beside, _graph_rows

    whole: list[bool] = []
    real_whole = resident._whole_rows
    monkeypatch.setattr(resident, "_whole_rows", lambda *a: whole.append(True) or real_whole(*a))
    read_back: list[bool] = []  # (the name tables read from the vault: the builder's own are patched)
    real_read = name_tables.read
    monkeypatch.setattr(name_tables, "read", lambda *a: read_back.append(True) or real_read(*a))
    root, carry = _built(tmp_path)
    _save(root, carry, "pkg/m1.py", "# a note\n", 1)  # (the first save: the rows kept from here)
    whole.clear()

    def same_as_full(step: int) -> None:
        now = T0 + timedelta(minutes=step)
        got, rows = _canonical(root), _graph_rows(root)
        _, _, full_rows = _full_rows_beside(root, now + timedelta(seconds=20), graph=True)
        full, _ = _full_beside(root, now + timedelta(seconds=40))
        assert got == full, (step, _first_difference(got, full))
        assert rows == full_rows, f"step {step}: the graph's rows differ from a full build's"
        # the reads the builder holds are those the build recorded, merged
        vault = Vault(root)
        pointer = vault.read_latest()
        bundle = vault.bundle(str(pointer.get("bundle", pointer["build_id"])))
        latest, _ = stat_files((bundle / "stat.bin").read_bytes(), vault.dir)
        recorded = read_sets.read(store_of(vault.dir), latest)
        assert recorded is not None and carry.reads is not None and carry.reads[0] == latest[read_sets.KEY]
        assert {p: sorted(v) for p, v in carry.reads[1].items()} == \
            {p: sorted(v) for p, v in read_sets.merged(*recorded).items()}, step

    def moved(step: int, changed: set[str]) -> Any:
        return build(root, now=T0 + timedelta(minutes=step), carry=carry, changed=changed, **KW)

    steps: list[tuple[str, str]] = []
    report = _save(root, carry, "pkg/m2.py", "\n\ndef helper(x):\n    return f0(x)\n", 2)  # a define
    steps.append((report.weigh_mode, "define"))
    same_as_full(2)
    report = _save(root, carry, "pkg/m4.py", "# a note\n", 3)
    steps.append((report.weigh_mode, "comment"))
    same_as_full(3)
    (root / "pkg/m3.py").rename(root / "pkg/m3b.py")  # a rename: a file went and one came
    steps.append((moved(4, {"pkg/m3.py", "pkg/m3b.py"}).weigh_mode, "rename"))
    same_as_full(4)
    report = _save(root, carry, "pkg/m0.py", "import pkg.m3b\n", 5)  # an import into the renamed file
    steps.append((report.weigh_mode, "import"))
    same_as_full(5)
    report = _save(root, carry, "pkg/m5.py", "# a note\n", 6)
    steps.append((report.weigh_mode, "comment"))
    same_as_full(6)
    (root / "pkg/m1.py").unlink()  # a delete: edges into it go
    steps.append((moved(7, {"pkg/m1.py"}).weigh_mode, "delete"))
    same_as_full(7)
    report = _save(root, carry, "pkg/m2.py", "# a note\n", 8)
    steps.append((report.weigh_mode, "comment"))
    same_as_full(8)
    for mode, kind in steps:
        if kind == "comment":
            assert mode == "weigh: the kept graph's, its moved rows made again", (kind, mode)
        else:
            assert mode.startswith("weigh: around the move") and "; the kept graph patched" in mode, (kind, mode)
    assert whole == [], "a save serialised every export row"
    assert read_back == [], "a save read the name tables back (a file came or went: the kept ones are patched)"


def test_a_long_lived_builders_standby_folder_goes_after_the_build_returns(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A save that takes over the standby's database sets the rest of its folder aside
    (``RETIRED``) and the builder removes it in a thread once the build has returned, not
    inside the build; the next build waits for that thread. A cold build removes it at once."""
    import shutil

    from oracl.bundle.database import RETIRED
    from oracl.core.vault import Vault

    root, carry = _built(tmp_path)
    _save(root, carry, "pkg/m1.py", "# a note\n", 1)
    mirror = Vault(root).mirror
    carry.settle()
    removed: list[tuple[str, bool]] = []  # (the folder, whether it was still there)
    real = shutil.rmtree

    def noting(path: Any, *a: Any, **k: Any) -> None:
        if str(path).endswith(RETIRED):
            removed.append((Path(path).name, Path(path).is_dir()))
        real(path, *a, **k)

    monkeypatch.setattr(shutil, "rmtree", noting)
    report = _save(root, carry, "pkg/m2.py", "# a note\n", 2)
    assert report.database_mode.startswith("database: the standby updated in place"), report.database_mode
    assert carry.remover is not None, "the standby's folder was removed inside the build"
    carry.settle()
    assert carry.remover is None and len(removed) == 1 and removed[0][1], removed
    assert sorted(p.name for p in mirror.iterdir() if p.name.endswith(".tmp")) == []
    # a cold build (no builder): removed inside the build, nothing set aside
    with open(root / "pkg/m4.py", "a") as fh:
        fh.write("# another note\n")
    _stamp(root / "pkg/m4.py", 3)
    report = build(root, now=T0 + timedelta(minutes=3), **KW)
    assert report.database_mode.startswith("database: the standby updated in place"), report.database_mode
    assert len(removed) == 1 and sorted(p.name for p in mirror.iterdir() if p.name.endswith(".tmp")) == []


def test_a_test_file_added_in_a_watch_is_asked_when_a_name_it_calls_is_defined(tmp_path: Path) -> None:
    """A long-lived builder keeps the test files' paths (``Carry.test_paths``, keyed by the
    bundle they are the files of) and each test file's called names: a test file that came
    in an earlier save is among them when a later save defines a name it calls, so its
    ``tests`` edge to the defining file is made as a full build makes it; a rename of a
    test file is seen too. Each build's export is a full build's."""
    root, carry = _built(tmp_path)
    _save(root, carry, "tests/test_late.py", "import pkg.m0\n\n\ndef test_late():\n    assert helper_late(1)\n",
          1, new=True)
    assert carry.test_paths is not None and "tests/test_late.py" in carry.test_paths[1]
    assert carry.bundle is not None and carry.test_paths[0] == carry.bundle.name
    _same_as_full(root, T0 + timedelta(minutes=1))
    _save(root, carry, "pkg/m2.py", "\n\ndef helper_late(x):\n    return x\n", 2)  # the name it calls, defined
    _same_as_full(root, T0 + timedelta(minutes=2))
    doc = _canonical(root)
    ids = {n["id"]: n.get("path") for n in doc["nodes"]}
    assert any(ids.get(e["source"]) == "tests/test_late.py" and ids.get(e["target"]) == "pkg/m2.py"
               and e["relation"] == "tests" for e in doc["edges"]), "the test file that came in a watch was not asked"
    (root / "tests/test_late.py").rename(root / "tests/test_later.py")
    build(root, now=T0 + timedelta(minutes=3), carry=carry, changed={"tests/test_late.py", "tests/test_later.py"}, **KW)
    assert carry.test_paths is not None and "tests/test_later.py" in carry.test_paths[1] \
        and "tests/test_late.py" not in carry.test_paths[1]
    _same_as_full(root, T0 + timedelta(minutes=3))
