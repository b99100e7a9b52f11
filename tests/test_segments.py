"""The symbol graph kept per file: segments joined are the export's section byte for byte,
their counts are the graph's, the bundle's file round-trips, a replaced segment is the
only change (hand-made rows; the end-to-end equality with full builds is in
tests/test_incremental.py)."""

from __future__ import annotations

import orjson
import pytest

from oracl.builder.pipeline.symbols import SymbolGraph, interface
from oracl.builder.segments import Segments
from oracl.core.export import export_bytes, pack_symbols
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


def test_the_bundle_file_round_trips_and_a_replaced_segment_is_the_only_change() -> None:
    g = _graph()
    facts = [_facts(p) for p in PATHS]
    segs = Segments.of_packed(pack_symbols(g.nodes, g.edges), g.sites, facts)
    section, placed = segs.placed()
    assert section == segs.section()
    export = export_bytes({"version": "x"}, [{"id": "z.py", "kind": "artifact"}], [], symbols_section=section)
    index = segs.encode(placed, len(export) - 1 - len(section))
    assert len(index) < len(section)  # an index into the export: the rows are not stored twice
    back = Segments.decode(index, export)
    assert back.section() == segs.section() and back.counts() == segs.counts()
    assert bytes(back.files["a/b.py"].edges) == bytes(segs.files["a/b.py"].edges)
    assert {p: s.interface for p, s in back.files.items()} == {f.path: interface(f) for f in facts}
    # z.py's function gains a line: its segment alone is made again
    g2 = _graph()
    for n in g2.nodes:
        if n["id"] == "z.py#f":
            n["end"] = 9
    fresh = Segments.of_packed(pack_symbols([n for n in g2.nodes if n["path"] == "z.py"],
                                            [e for e in g2.edges if e["source"].startswith("z.py#")]),
                               {"z.py": [1, 0]}, [_facts("z.py")])
    patched = back.replaced(fresh, ["z.py"])
    assert patched.section() == orjson.dumps(pack_symbols(g2.nodes, g2.edges), option=orjson.OPT_SORT_KEYS)
    with pytest.raises(ValueError):
        Segments.decode(index, export[: len(export) // 2])  # segments lying past the end of the export
    with pytest.raises(ValueError):
        Segments.decode(b'{"format":1,"files":{}}', export)


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
