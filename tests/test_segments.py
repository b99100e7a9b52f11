"""The symbol graph kept per file: segments joined are the export's section byte for byte,
their counts are the graph's, the bundle's file round-trips, a replaced segment is the
only change (hand-made rows; the end-to-end equality with full builds is in
tests/test_incremental.py)."""

from __future__ import annotations

import orjson
import pytest

from oracl.builder.pipeline.symbols import SymbolGraph, interface
from oracl.builder.segments import Segments
from oracl.core.errors import PreviousBundleError
from oracl.core.export import export_bytes, pack_symbols
from oracl.core.parts import PartStore
from oracl.core.records import FileFacts

# one path a prefix of another ("a/b.py", "a/b.pyi"), a folder beside a file of its name
# ("a/b.py" and "a/b/c.py"), a character sorting below '.' ("a/b-c.py"): each file's rows
# must still be the run of ids that start with its own "path#"
PATHS = ("a/b.py", "a/b.pyi", "a/b-c.py", "a/b/c.py", "z.py")


def _facts(path: str) -> FileFacts:
    return FileFacts(path, "id-" + path, "c", 1, 0, 0, "ok", language="python",
                     symbols=(("f", "function", 1, 2),), symbol_details=(("f", "def f()", ""),))


def _graph() -> SymbolGraph:
    g = SymbolGraph()
    for p in PATHS:
        if p == "a/b/c.py":
            continue  # a file without rows
        g.nodes += [{"id": f"{p}#", "name": p, "qualified": p, "kind": "module", "language": "python", "path": p,
                     "start": 1, "end": 3, "signature": "", "doc": "", "exported": True},
                    {"id": f"{p}#f", "name": "f", "qualified": "f", "kind": "function", "language": "python",
                     "path": p, "start": 1, "end": 2, "signature": "def f()", "doc": "", "exported": True}]
        g.edges += [{"source": f"{p}#", "target": f"{p}#f", "relation": "contains", "confidence": 1.0,
                     "resolution": "defined", "candidates": 1, "lines": [1]},
                    {"source": f"{p}#f", "target": "z.py#f", "relation": "calls", "confidence": 0.7,
                     "resolution": "unique", "candidates": 1, "lines": [2, 3]}]
        g.sites[p] = [1, 0]
    g.unresolved = 4
    g.nodes.sort(key=lambda n: n["id"])
    g.edges.sort(key=lambda e: (e["source"], e["target"], e["relation"]))
    return g


def test_the_segments_joined_are_the_export_section_and_count_like_the_graph() -> None:
    g = _graph()
    packed = pack_symbols(g.nodes, g.edges)
    segs = Segments.of_packed(packed, g.sites, [_facts(p) for p in PATHS])
    assert segs.section() == orjson.dumps(packed, option=orjson.OPT_SORT_KEYS)
    node = {"id": "a/b.py", "kind": "artifact", "priority": 0.5}
    assert export_bytes({"version": "x"}, [node], [], packed) == \
        export_bytes({"version": "x"}, [node], [], symbols_section=segs.section())
    assert segs.counts() == g.counts() == {"symbols": 8, "edges": 8, "edges_by_relation": {"calls": 4, "contains": 4},
                                           "calls_unresolved": 4, "calls_too_ambiguous": 0}
    assert segs.files["a/b/c.py"].n_nodes == 0 and segs.files["a/b/c.py"].interface == interface(_facts("a/b/c.py"))
    assert (segs.files["a/b.py"].n_nodes, segs.files["a/b.py"].n_edges) == (2, 2)  # not a/b.pyi's rows


def test_counts_kept_through_a_replacement_are_a_whole_counts() -> None:
    """``Segments.totals`` (a long-lived builder's: the latest's header counts) follow
    ``replaced``: each replaced file's counts taken away, its new ones added, a relation
    that falls to nothing dropped and a new one put in its sorted place; counted by hand."""
    from oracl.builder.segments import Segment

    g = _graph()
    segs = Segments.of_packed(pack_symbols(g.nodes, g.edges), g.sites, [_facts(p) for p in PATHS])
    segs.totals = segs.counts()
    fresh = Segments({"a/b.py": Segment("i", b"", b"", 3, 2, {"contains": 1, "inherits": 1}, 0, 2),
                      "z.py": Segment("i", b"", b"", 0, 0, {}, 0, 0),
                      "m.py": Segment("i", b"", b"", 1, 1, {"calls": 1}, 1, 0)})
    out = segs.replaced(fresh, ["a/b.py", "z.py", "m.py"])
    want = {"symbols": 8 - 2 + 3 - 2 + 0 + 1, "edges": 8 - 2 + 2 - 2 + 0 + 1,
            "edges_by_relation": {"calls": 4 - 1 - 1 + 1, "contains": 4 - 1 + 1 - 1, "inherits": 1},
            "calls_unresolved": 4 - 1 + 0 - 1 + 1, "calls_too_ambiguous": 2}
    assert out.counts() == Segments(out.files).counts() == want
    assert list(out.counts()["edges_by_relation"]) == ["calls", "contains", "inherits"]
    assert segs.counts() == g.counts()  # (the segments replaced from are left as they were)
    gone = out.replaced(Segments({"a/b.py": Segment("i", b"", b"", 1, 1, {"contains": 1}, 0, 0)}), ["a/b.py"])
    assert gone.counts()["edges_by_relation"] == {"calls": 3, "contains": 3}  # (no inherits left: dropped)
    quiet = gone.replaced(Segments({p: Segment("i", b"", b"", 1, 1, {"contains": 1}, 0, 0) for p in gone.files}),
                          list(gone.files))
    assert quiet.counts()["edges_by_relation"] == {"contains": 6}  # (six files, one contains edge each)
    back = quiet.replaced(Segments({"m.py": Segment("i", b"", b"", 1, 2, {"calls": 1, "contains": 1}, 0, 0)}), ["m.py"])
    assert list(back.counts()["edges_by_relation"].items()) == [("calls", 1), ("contains", 6)]  # (in its sorted place)


def _joined(store: PartStore, parts: list[list]) -> bytes:  # type: ignore[type-arg]
    return b",".join(store.get(d) for d, _ in parts)


def test_the_parts_hold_the_section_and_a_rebuild_joins_only_its_own_group(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The parts joined are the section's rows; the bundle's file places every file's rows
    in them; a changed file's group is joined again from its previous part, every other
    group's part is kept unread. Groups here close after "a/b.py" (CRC-32 forced)."""
    monkeypatch.setattr("oracl.core.parts.closes", lambda key, group=16: key == "a/b.py")
    store = PartStore(tmp_path / "parts")
    g = _graph()
    facts = [_facts(p) for p in PATHS]
    packed = pack_symbols(g.nodes, g.edges)
    segs = Segments.of_packed(packed, g.sites, facts)
    edge_parts, node_parts, seg_file = segs.put(store)
    whole = orjson.loads(orjson.dumps(packed, option=orjson.OPT_SORT_KEYS))
    assert orjson.loads(b"[" + _joined(store, node_parts) + b"]") == whole["nodes"]
    assert orjson.loads(b"[" + _joined(store, edge_parts) + b"]") == whole["edges"]
    # order: a/b-c.py, a/b.py | a/b.pyi, a/b/c.py (no rows), z.py: two node parts, two edge parts
    assert (len(node_parts), len(edge_parts), store.written) == (2, 2, 6)  # and the two groups' entries
    back = Segments.index(seg_file, store)
    assert back.counts() == segs.counts()
    assert {p: s.interface for p, s in back.files.items()} == {f.path: interface(f) for f in facts}
    # z.py's function gains a line: its segment alone is made again, its group's parts alone written
    g2 = _graph()
    for n in g2.nodes:
        if n["id"] == "z.py#f":
            n["end"] = 9
    fresh = Segments.of_packed(pack_symbols([n for n in g2.nodes if n["path"] == "z.py"],
                                            [e for e in g2.edges if e["source"].startswith("z.py#")]),
                               {"z.py": [1, 0]}, [_facts("z.py")])
    read: list[str] = []

    class Counting(PartStore):
        def get(self, digest: str) -> bytes:
            read.append(digest)
            return super().get(digest)

    store2 = Counting(store.root)
    edges2, nodes2, _ = back.replaced(fresh, ["z.py"]).put(store2)
    want = orjson.loads(orjson.dumps(pack_symbols(g2.nodes, g2.edges), option=orjson.OPT_SORT_KEYS))
    assert orjson.loads(b"[" + _joined(store, nodes2) + b"]") == want["nodes"]
    assert orjson.loads(b"[" + _joined(store, edges2) + b"]") == want["edges"]
    assert nodes2[0] == node_parts[0] and edges2[0] == edge_parts[0]      # the first group: kept
    assert nodes2[1] != node_parts[1]    # z.py's group: a new node part (a/b.pyi's rows read from the old one)
    assert edges2[1] == edge_parts[1]    # joined again, the same bytes: not written again
    # only that group's parts read; its node part and its entry written
    assert store2.written == 2 and read == [node_parts[1][0], edge_parts[1][0]]
    # the groups taken as the previous build's (``index``'s, kept by ``replaced``): what
    # grouping every file again gives, to the byte; a file that came groups every file again
    regrouped = back.replaced(fresh, ["z.py"])
    assert regrouped.groups is not None and regrouped.made == {"z.py"}
    regrouped.groups = None
    assert back.replaced(fresh, ["z.py"]).put(store) == regrouped.put(store)
    assert back.replaced(Segments({"m.py": fresh.files["z.py"]}), ["m.py"]).groups is None
    with pytest.raises(ValueError):
        Segments.index(b'{"format":2,"files":{}}', store)
    head = orjson.loads(seg_file)
    assert [g[2:4] for g in head["groups"]] == [["a/b-c.py", 2], ["a/b.pyi", 3]]  # (each group's first, its files)
    assert head["counts"] == segs.counts()
    entry = orjson.loads(store.get(head["groups"][1][0]))
    entry["z.py"][3] = 10**6  # z.py's node rows said to lie past its part's end
    data = orjson.dumps(entry)
    head["groups"][1][:2] = [store.put(data), len(data)]
    with pytest.raises(ValueError, match="outside its part"):
        Segments.index(orjson.dumps(head), store)
    # read when needed: the damage is found when z.py's group is first asked for, and the
    # build starts again, whole
    damaged = Segments.index(orjson.dumps(head), store, lazy=True)
    assert damaged.files["a/b.py"].interface == interface(_facts("a/b.py"))
    with pytest.raises(PreviousBundleError, match="outside its part"):
        damaged.files["z.py"]
    head["groups"][1][:2] = ["0" * 64, 10]  # an entry the store lacks
    with pytest.raises(ValueError, match="missing"):
        Segments.index(orjson.dumps(head), store)
    head = orjson.loads(seg_file)
    head["groups"][0][3] = 3  # a head that says another number of files than its entry holds
    with pytest.raises(ValueError, match="not the one its head lists"):
        Segments.index(orjson.dumps(head), store)
    # a cold build's index reads an entry when one of its files is first asked for: a
    # one-file change reads its own group's entry alone, and writes what the whole read gives
    read.clear()
    lazy = Segments.index(seg_file, store2, lazy=True)
    assert read == [] and len(lazy.files) == len(PATHS) and lazy.counts() == segs.counts()
    assert lazy.files["z.py"].interface == back.files["z.py"].interface and "q.py" not in lazy.files
    assert read == [orjson.loads(seg_file)["groups"][1][0]]  # (z.py's group's entry)
    moved = lazy.replaced(fresh, ["z.py"])
    assert moved.counts() == back.replaced(fresh, ["z.py"]).counts() and len(read) == 1
    assert moved.put(store2) == back.replaced(fresh, ["z.py"]).put(store)
    assert len(read) == 3  # (and the two parts of z.py's group joined again: the first group's unread)
    gone = Segments.index(seg_file, store, lazy=True).replaced(fresh, ["z.py"])
    gone.drop(["a/b/c.py"])
    eager = back.replaced(fresh, ["z.py"])
    eager.drop(["a/b/c.py"])
    assert "a/b/c.py" not in gone.files and len(gone.files) == len(PATHS) - 1
    assert sorted(gone.files) == sorted(eager.files) and gone.counts() == eager.counts()
    assert gone.put(store) == eager.put(store)
    # a long-lived builder's entries by digest: each read once, then never again; the map
    # left holding only the entries the file names
    entries: dict[str, object] = {}
    read.clear()
    first = Segments.index(seg_file, store2, entries)
    assert sorted(read) == sorted(d for d, *_ in orjson.loads(seg_file)["groups"]) and set(entries) == set(read)
    read.clear()
    again = Segments.index(seg_file, store2, entries)
    assert read == [] and again.files == first.files == back.files and again.spans == back.spans
    _, _, seg_file2 = back.replaced(fresh, ["z.py"]).put(store)
    groups2 = [d for d, *_ in orjson.loads(seg_file2)["groups"]]
    Segments.index(seg_file2, store2, entries)
    assert read == [groups2[1]] and set(entries) == set(groups2)  # z.py's group's entry alone read


def test_an_interface_ignores_lines_and_bodies_but_not_names_kinds_bases_or_imports() -> None:
    base = _facts("a.py")
    moved = FileFacts("a.py", "other-id", "d", 2, 5, 5, "ok", language="python",
                      symbols=(("f", "function", 10, 20),), symbol_details=(("f", "def f(x)", "doc"),),
                      calls=(("g", 12),), line_count=30)
    assert interface(moved) == interface(base)
    renamed = FileFacts("a.py", "x", "c", 1, 0, 0, "ok", language="python",
                        symbols=(("g", "function", 1, 2),), symbol_details=(("g", "def g()", ""),))
    as_class = FileFacts("a.py", "x", "c", 1, 0, 0, "ok", language="python",
                         symbols=(("f", "class", 1, 2),), symbol_details=(("f", "class f", ""),))
    importing = FileFacts("a.py", "x", "c", 1, 0, 0, "ok", language="python",
                          symbols=(("f", "function", 1, 2),), symbol_details=(("f", "def f()", ""),),
                          imports=(("os", (), 0, 1, 1),))
    assert len({interface(x) for x in (base, renamed, as_class, importing)}) == 4
    # a line added above the import moves it: what it imports, and so the interface, is the same
    lower = FileFacts("a.py", "y", "e", 1, 0, 0, "ok", language="python",
                      symbols=(("f", "function", 2, 3),), symbol_details=(("f", "def f()", ""),),
                      imports=(("os", (), 0, 2, 2),))
    assert interface(lower) == interface(importing)
    other = FileFacts("a.py", "y", "e", 1, 0, 0, "ok", language="python",
                      symbols=(("f", "function", 2, 3),), symbol_details=(("f", "def f()", ""),),
                      imports=(("sys", (), 0, 2, 2),))
    assert interface(other) != interface(importing)


def test_the_edge_diff_leaves_equal_pairs_alone_updates_moved_ones_and_remakes_the_rest() -> None:
    """By pair of endpoints: same rows → nothing; one row each side with other properties →
    updated; a pair gone, new, or with another number of rows → unlinked and created."""
    from oracl.bundle.database import edge_diff

    def e(s: str, t: str, lines: list[int]) -> dict:
        return {"source": s, "target": t, "confidence": 1.0, "lines": lines}

    old = [e("a", "b", [3]), e("a", "c", [4]), e("a", "d", [5]), e("x", "y", [1]), e("x", "y", [2])]
    new = [e("a", "b", [3]), e("a", "c", [7]), e("a", "e", [8]), e("x", "y", [1])]
    unlink, update, create = edge_diff(old, new)
    assert unlink == [{"source": "a", "target": "d"}, {"source": "x", "target": "y"}]
    assert update == [e("a", "c", [7])]
    assert create == [e("a", "e", [8]), e("x", "y", [1])]
    assert edge_diff(old, list(reversed(old))) == ([], [], [])  # the order of rows does not matter
    assert edge_diff([], new[:1]) == ([], [], new[:1]) and edge_diff(old[:1], []) == ([{"source": "a", "target": "b"}], [], [])


def test_small_tables_are_diffed_in_python_as_arrow_diffs_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """A standby patched for a change's reach compares a few rows: in Python, without
    loading Arrow's compute kernels, to the same removed keys, added rows (the engine's
    type for a column the build made of nulls only) and moved columns; the same edge plans."""
    import pyarrow as pa

    from oracl.bundle import database

    old = pa.table({"path": ["a.py", "b.py", "c.py", "d.py"], "size": [1, 2, 3, 4],
                    "score": [0.5, float("nan"), None, 1.0], "note": ["x", "y", None, "w"]})
    new = pa.table({"path": ["b.py", "a.py", "e.py", "d.py"], "size": [2, 9, 5, 4],
                    "score": [0.25, 0.5, None, 1.0], "note": pa.array([None, None, None, None], pa.null())})
    small = database.diff_nodes(old, new, "path")
    assert small[0] == ["c.py"]
    assert small[1].to_pylist() == [{"path": "e.py", "size": 5, "score": None, "note": None}]
    assert small[1].schema.field("note").type == pa.string()  # (the engine's type: nulls only in the build's)
    # (a NaN never equals itself: moved, as Arrow's comparison has it; a null moved against a value)
    assert small[2] == [{"path": "b.py", "score": 0.25, "note": None}, {"path": "a.py", "size": 9, "note": None},
                        {"path": "d.py", "note": None}]
    monkeypatch.setattr(database, "_SMALL", -1)  # (the Arrow path)
    big = database.diff_nodes(old, new, "path")
    assert big[0] == small[0] and big[1].to_pylist() == small[1].to_pylist()
    assert sorted(big[2], key=lambda r: r["path"]) == sorted(small[2], key=lambda r: r["path"])
    links_old = pa.table({"from": ["a", "a", "x", "x", "p"], "to": ["b", "c", "y", "y", "q"],
                          "rank": [1.0, 2.0, 3.0, 4.0, 5.0], "frag": ["f", None, "", "", None]})
    links_new = pa.table({"rank": [1.0, 2.5, 3.0, 5.0], "from": ["a", "a", "x", "p"], "to": ["b", "c", "y", "q"],
                          "frag": ["f", None, "", None]})
    monkeypatch.setattr(database, "_MEDIUM", -1)  # (the Arrow path: joins)
    arrow = database.diff_edges(links_old, links_new)
    monkeypatch.setattr(database, "_MEDIUM", 100_000)  # (rows as tuples, by multiset differences)
    tuples = database.diff_edges(links_old, links_new)
    monkeypatch.setattr(database, "_SMALL", 4096)
    assert database.diff_edges(links_old, links_new) == arrow == tuples == (
        [{"source": "x", "target": "y"}], [{"source": "a", "target": "c", "rank": 2.5, "frag": None}],
        [{"source": "x", "target": "y", "rank": 3.0, "frag": ""}])
    # (the same rows in another order, and a column of nulls only in the build's: nothing moved)
    again = links_old.slice(4, 1).append_column("x", pa.array([None], pa.null()))
    assert database._diff_edges_as_tuples(again, again.take([0])) == ([], [], [])
