"""What a long-lived builder (``oracl watch``) keeps from one build to the next, and how a
build uses it (design §7b item 7). Each piece is used only while the ``Carry`` still
belongs to the latest build and a named condition says the whole pass would give the
same value; the whole pass runs otherwise and the piece is made again from it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from oracl.builder.extractors.providers import carry_test_call_defs, edges_to_make
from oracl.builder.extractors.resolve import IndexView
from oracl.builder.incremental import Carry, Previous
from oracl.builder.pipeline.weigh import WeightedGraph, move_source
from oracl.builder.reach import standby_rows
from oracl.core.export import edge_sort_key
from oracl.core.parts import KeptSection, Parts, PartStore, stored_edge, stored_node
from oracl.core.paths import is_test_path
from oracl.core.records import Edge, FileFacts

if TYPE_CHECKING:
    from oracl.bundle.database import Reach  # (imported when used: it brings pyarrow)


def index_of(carry: Carry | None, previous: Previous | None, by_path: dict[str, FileFacts], reread: list[str],
             removed: list[str]) -> IndexView:
    """The resolver's index of the facts ``by_path`` (in discovery order; the index holds
    this very dict); a long-lived builder's is made from the one it kept when no file came
    or went (``IndexView.again``)."""
    kept = carry.index if carry is not None else None
    if (kept is None or previous is None or carry is None or carry.bundle != previous.bundle or removed
            or len(by_path) != len(kept.facts) or any(p not in kept.facts for p in reread)):
        index = IndexView.build(by_path)
    else:
        index = IndexView.again(kept, by_path, set(reread))
        carry_test_call_defs(kept, index, reread)
    if carry is not None:
        carry.index = index
    return index


def standby_reach(carry: Carry | None, standby: bool, standby_of: str, graph: WeightedGraph,
                  latest: dict[str, Any] | None = None) -> Reach | None:
    """The graph rows the standby can differ in from this build, when a long-lived builder
    knows them: the standby is the bundle the latest build started from, and both the latest
    build (``Carry.moved``, against that bundle) and this one (``WeightedGraph.moved``,
    against the latest) reweighed; or, when the builder did not make the latest (its first
    build, after ``orchestrator.warm``), the reach the latest recorded against the standby
    (``latest``: its ``stat.bin`` header; ``reach.standby_rows``). None: every row is compared."""
    if carry is None or not standby or graph.moved is None:
        return None
    if carry.moved is None:
        return standby_rows(latest, standby_of, (graph.moved[0], graph.moved[1])) if latest else None
    base, (nodes, sources, _) = carry.moved
    if base != standby_of:
        return None
    from oracl.bundle.database import Reach

    return Reach(nodes | graph.moved[0], sources | graph.moved[1])


TESTS_PENDING = ""  # (``Carry.test_paths``' key until the build that made them names its bundle)


def kept_edges(carry: Carry | None, previous: Previous | None, facts: list[FileFacts], reread: list[str],
               known: tuple[Mapping[str, FileFacts], list[str]] | None = None
               ) -> tuple[tuple[Mapping[str, list[Edge]] | None, set[str] | None], ...]:
    """For each of Phase 2 and Phase 3: (the edges per file a long-lived builder kept from
    the previous build, the files whose edges are made again), or (None, None) for a whole
    pass (``edges_to_make``; a file that came or went: the files whose making looked it up,
    from the lookups the builder kept, ``Carry.edge_reads``). ``known``: this build's facts
    by path and the files gone (then no pass over every file finds what came or went)."""
    whole = ((None, None), (None, None))
    if carry is None or carry.edges is None or previous is None or carry.bundle != previous.bundle:
        return whole
    looked = carry.edge_reads

    def reading(keys: set[str]) -> set[str]:
        return {p for p in previous.facts if p not in looked or not looked[p].isdisjoint(keys)}

    if carry.edge_targets is None:  # (made once from the kept lists, then kept up to date: ``retarget``)
        carry.edge_targets = edge_targets(carry.edges)
    index = carry.edge_targets

    def into(changed: set[str]) -> set[str]:  # (``providers.sources_into``, by the index: no pass over every edge)
        return {s for t in changed for s in index.get(t, ()) if s not in changed}

    # (the test files' paths: the latest's while no file comes or goes, as test-ness is a
    # path's; keyed by the bundle they are the files of, which the build sets: ``TESTS_PENDING``)
    held = carry.test_paths
    if known is not None and not known[1] and all(p in previous.facts for p in reread) \
            and held is not None and held[0] == previous.bundle.name:
        tests = held[1]
    else:
        tests = [p for p in (known[0] if known is not None else (f.path for f in facts)) if is_test_path(p)]
    carry.test_paths = (TESTS_PENDING, tests)
    again = edges_to_make(facts, previous.facts, into, set(reread), reading, known, carry.test_calls, tests)
    if again is None:
        carry.edges = carry.edge_targets = None  # made again whole: the old lists are not held beside the new ones
        return whole
    return (carry.edges[0], again), (carry.edges[1], again)


def edge_targets(by_file: tuple[Mapping[str, list[Edge]], ...]) -> dict[str, set[str]]:
    """Each target of the edges ``by_file`` holds (each phase's edges per file) → the
    files with an edge into it."""
    index: dict[str, set[str]] = {}
    for lists in by_file:
        for source, edges in lists.items():
            for e in edges:
                index.setdefault(e.target, set()).add(source)
    return index


def retarget(index: dict[str, set[str]], before: tuple[Mapping[str, list[Edge]], ...],
             after: tuple[Mapping[str, list[Edge]], ...], paths: set[str]) -> None:
    """``edge_targets(before)`` made ``edge_targets(after)`` in place, when only the files
    ``paths`` have other edges in ``after`` (made again, come or gone)."""
    for p in paths:
        move_source(index, p, {e.target for lists in before for e in lists.get(p, ())},
                    {e.target for lists in after for e in lists.get(p, ())})


@dataclass(slots=True)
class KeptRows:
    """The artifact graph's export rows as a long-lived builder keeps them between builds,
    serialised, in the sections' parts (``parts.KeptSection``): the nodes by id, the edges
    by their sort key (unique: a merged edge's canonical key is, and a hub membership ends in
    a hub; rows with equal keys would be made whole at every build). With them what finds a row again: each node's id by its key (its
    path, or a hub's id) and its place in the graph's node list, and each edge's sort key
    by its index in the graph's edge list. ``sections``: this build's node and edge parts."""

    nodes: KeptSection
    edges: KeptSection
    node_ids: dict[str, str]        # a node's key (its path, or a hub's id) → its id
    node_at: dict[str, int]         # an artifact's path → its index in ``graph.nodes``
    edge_keys: list[Any]            # each edge's sort key, in the graph's edge order
    sections: tuple[Parts, Parts] = ([], [])


def _whole_rows(store: PartStore, graph: WeightedGraph, whole: bool) -> KeptRows:
    dumps, sort_keys = orjson.dumps, orjson.OPT_SORT_KEYS
    stored = graph.stored
    node_ids: dict[str, str] = {}
    node_at: dict[str, int] = {}
    by_id: list[tuple[str, bytes]] = []
    for at, n in enumerate(graph.full_rows(graph.nodes)):  # (a graph weighed around a move makes
        # its artifact rows when read)
        key = str(n.get("path", n["id"]))
        node_ids[key] = n["id"]
        if n["kind"] == "artifact":
            node_at[key] = at
        by_id.append((n["id"], dumps(stored_node(n, stored[key]), option=sort_keys)))
    by_id.sort(key=lambda x: x[0])
    ids = [i for i, _ in by_id]
    nodes = KeptSection.of(ids, ids, [b for _, b in by_id])
    edges, raw = graph.edges, graph.rank_raw
    keys = [edge_sort_key(e) for e in edges]
    chunks = [dumps(stored_edge(e, r), option=sort_keys) for e, r in zip(edges, raw, strict=True)]
    order = sorted(range(len(edges)), key=keys.__getitem__)  # (stable: equal keys in the graph's order)
    in_order = [keys[i] for i in order]
    kept_edges = KeptSection.of(in_order, [edges[i]["source"] for i in order], [chunks[i] for i in order])
    unique = all(a < b for a, b in zip(in_order, in_order[1:], strict=False))
    out = KeptRows(nodes, kept_edges, node_ids, node_at, keys if unique else [])
    out.sections = (nodes.parts(store, rewrite=whole), kept_edges.parts(store, rewrite=whole))
    return out


def kept_rows(store: PartStore, graph: WeightedGraph, kept: KeptRows | None, whole: bool) -> KeptRows:
    """The node and edge sections of the export. With ``kept`` (the previous build's rows)
    and a graph ``reweigh`` made from that build's (``graph.moved``: the same files in the
    same order, the same edges): only the moved rows are serialised again and only the parts
    holding them are put again, in place, nothing else listed or copied (at 20k files a
    re-listing of every row cost 0.28–0.30 s a save, much of it page faults on rows the
    builder's forks had shared). Otherwise every row is serialised. The bytes are a full
    export's either way."""
    moved = graph.moved
    hubs = graph.nodes[len(graph.nodes) - graph.hubs:] if graph.hubs else []
    # (``moved`` as ``reweigh`` says it: its edge rows by index; a graph weighed around a
    # move from the kept graph says where the edge rows moved, ``spliced``; one weighed
    # around it without the kept graph has no structure)
    spliced = graph.spliced
    n_edges = spliced[0] if spliced is not None else len(graph.edges)
    if (kept is None or moved is None or graph.structure is None or whole or not kept.edge_keys
            or len(kept.edge_keys) != n_edges or any(h["id"] not in kept.node_ids for h in hubs)):
        return _whole_rows(store, graph, whole)
    dumps, sort_keys = orjson.dumps, orjson.OPT_SORT_KEYS
    stored, nodes = graph.stored, graph.nodes
    if spliced is not None:  # (files may have come or gone: each node's place is its record's)
        s = graph.structure
        if s.places is None:
            s.places = {r.path: i for i, r in enumerate(s.records)}
        node_at = s.places
    else:
        node_at = kept.node_at
        if len(kept.node_ids) != len(nodes) or any(p not in node_at for p in moved[0]):
            return _whole_rows(store, graph, whole)
    for path in moved[0]:
        at = node_at.get(path)
        if at is None:  # (a file gone)
            if spliced is None or path not in kept.node_ids:
                return _whole_rows(store, graph, whole)
            kept.nodes.remove(kept.node_ids.pop(path))
            continue
        n = graph.full(nodes[at])
        if n.get("path") != path:  # (not the node list the kept rows were made from)
            return _whole_rows(store, graph, whole)
        if path in kept.node_ids:
            kept.nodes.remove(kept.node_ids[path])
        kept.nodes.insert(n["id"], n["id"], dumps(stored_node(n, stored[path]), option=sort_keys))
        kept.node_ids[path] = n["id"]
    kept.node_at = node_at
    if len(kept.node_ids) != len(nodes):
        return _whole_rows(store, graph, whole)
    for h in hubs:  # (a hub's association and degree follow its members)
        kept.nodes.replace(h["id"], dumps(stored_node(h, stored[h["id"]]), option=sort_keys))
    edges, raw = graph.edges, graph.rank_raw

    def put(i: int) -> Any:
        e = edges[i]
        key = edge_sort_key(e)
        kept.edges.insert(key, e["source"], dumps(stored_edge(e, raw[i]), option=sort_keys))
        return key

    if spliced is None:
        for i in moved[2]:
            kept.edges.remove(kept.edge_keys[i])
            kept.edge_keys[i] = put(i)
    else:  # the latest's rows outside the stretches that moved, in the same order; those made again
        old, done = kept.edge_keys, 0
        keys: list[Any] = []
        for oa, ob, na, nb in spliced[1]:
            if oa < done or len(keys) + (oa - done) != na:
                return _whole_rows(store, graph, whole)
            keys.extend(old[done:oa])
            for key in old[oa:ob]:
                kept.edges.remove(key)
            keys.extend(put(i) for i in range(na, nb))
            done = ob
        keys.extend(old[done:])
        if len(keys) != len(edges):
            return _whole_rows(store, graph, whole)
        kept.edge_keys = keys
    kept.sections = (kept.nodes.parts(store), kept.edges.parts(store))
    return kept
