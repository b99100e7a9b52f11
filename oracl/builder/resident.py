"""What a long-lived builder (``oracl watch``) keeps from one build to the next, and how a
build uses it (design §7b item 7). Each piece is used only while the ``Carry`` still
belongs to the latest build and a named condition says the whole pass would give the
same value; the whole pass runs otherwise and the piece is made again from it."""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from oracl.builder.extractors.providers import edges_to_make, sources_into
from oracl.builder.extractors.resolve import IndexView
from oracl.builder.incremental import Carry, Previous
from oracl.builder.pipeline.weigh import WeightedGraph
from oracl.core.export import edge_sort_key
from oracl.core.parts import Parts, PartStore, put_chunks, stored_edge, stored_node
from oracl.core.records import Edge, FileFacts

if TYPE_CHECKING:
    from oracl.bundle.database import Reach  # (imported when used: it brings pyarrow)


def index_of(carry: Carry | None, previous: Previous | None, facts: list[FileFacts], reread: list[str],
             removed: list[str]) -> IndexView:
    """The resolver's index of ``facts``; a long-lived builder's is made from the one it
    kept when no file came or went (``IndexView.again``)."""
    by_path = {f.path: f for f in facts}
    kept = carry.index if carry is not None else None
    if (kept is None or previous is None or carry is None or carry.bundle != previous.bundle or removed
            or len(by_path) != len(kept.facts) or any(p not in kept.facts for p in reread)):
        index = IndexView.build(by_path)
    else:
        index = IndexView.again(kept, by_path, set(reread))
    if carry is not None:
        carry.index = index
    return index


def standby_reach(carry: Carry | None, standby: bool, standby_of: str, graph: WeightedGraph) -> Reach | None:
    """The graph rows the standby can differ in from this build, when a long-lived builder
    knows them: the standby is the bundle the latest build started from, and both the latest
    build (``Carry.moved``, against that bundle) and this one (``WeightedGraph.moved``,
    against the latest) reweighed. None: every row is compared."""
    if carry is None or not standby or graph.moved is None or carry.moved is None:
        return None
    base, (nodes, sources, _) = carry.moved
    if base != standby_of:
        return None
    from oracl.bundle.database import Reach

    return Reach(nodes | graph.moved[0], sources | graph.moved[1])


def kept_edges(carry: Carry | None, previous: Previous | None, facts: list[FileFacts], reread: list[str]
               ) -> tuple[tuple[Mapping[str, list[Edge]] | None, set[str] | None], ...]:
    """For each of Phase 2 and Phase 3: (the edges per file a long-lived builder kept from
    the previous build, the files whose edges are made again), or (None, None) for a whole
    pass (``edges_to_make``; a file that came or went: the files whose making looked it up,
    from the lookups the builder kept, ``Carry.edge_reads``)."""
    whole = ((None, None), (None, None))
    if carry is None or carry.edges is None or previous is None or carry.bundle != previous.bundle:
        return whole
    looked = carry.edge_reads

    def reading(keys: set[str]) -> set[str]:
        return {p for p in previous.facts if p not in looked or not looked[p].isdisjoint(keys)}

    again = edges_to_make(facts, previous.facts, sources_into(carry.edges), set(reread), reading)
    if again is None:
        carry.edges = None  # made again whole: the old lists are not held beside the new ones
        return whole
    return (carry.edges[0], again), (carry.edges[1], again)


@dataclass(slots=True)
class KeptRows:
    """The artifact graph's export rows as a long-lived builder keeps them between builds:
    each node's id and bytes (by path, or hub id), each edge row's sort key and bytes (in
    the graph's edge order), the parts by the identities of their rows' bytes
    (``parts.put_chunks``), and this build's node and edge sections."""

    nodes: dict[str, tuple[str, bytes]]
    edge_keys: list[tuple[str, str, str, str, str]]
    edge_bytes: list[bytes]
    node_parts: dict[tuple[int, ...], list[Any]]
    edge_parts: dict[tuple[int, ...], list[Any]]
    sections: tuple[Parts, Parts] = ([], [])
    edge_order: list[int] = field(default_factory=list)  # the edge indexes in the export's order


def kept_rows(store: PartStore, graph: WeightedGraph, kept: KeptRows | None, whole: bool) -> KeptRows:
    """The node and edge sections of the export, serialising only the rows ``reweigh``
    moved (``graph.moved``) when ``kept`` holds the previous build's rows; every row else.
    The bytes are a full export's: a part is its rows' bytes comma-joined, as ``put_rows``."""
    dumps, sort_keys = orjson.dumps, orjson.OPT_SORT_KEYS
    stored = graph.stored
    moved_nodes = graph.moved[0] if kept is not None and graph.moved is not None else None
    nodes: dict[str, tuple[str, bytes]] = {}
    for n in graph.nodes:
        key = str(n.get("path", n["id"]))
        hit = kept.nodes.get(key) if kept is not None and moved_nodes is not None and n["kind"] != "hub" \
            and key not in moved_nodes else None
        nodes[key] = hit if hit is not None else (n["id"], dumps(stored_node(n, stored[key]), option=sort_keys))
    by_id = sorted(nodes.values(), key=lambda x: x[0])
    node_section, node_parts = put_chunks(store, [b for _, b in by_id], [i for i, _ in by_id],
                                          kept.node_parts if kept is not None else None, rewrite=whole)
    edges, raw = graph.edges, graph.rank_raw
    if kept is not None and graph.moved is not None and len(kept.edge_bytes) == len(edges):
        keys, chunks = list(kept.edge_keys), list(kept.edge_bytes)
        moved = set(graph.moved[2])
        for i in moved:
            keys[i] = edge_sort_key(edges[i])
            chunks[i] = dumps(stored_edge(edges[i], raw[i]), option=sort_keys)
        # the kept order with the moved rows put back where their keys go: (key, index) is
        # the order of a stable sort by key
        order = [i for i in kept.edge_order if i not in moved] if moved else list(kept.edge_order)
        for i in sorted(moved):
            bisect.insort(order, i, key=lambda j: (keys[j], j))
    else:
        keys = [edge_sort_key(e) for e in edges]
        chunks = [dumps(stored_edge(e, r), option=sort_keys) for e, r in zip(edges, raw, strict=True)]
        order = sorted(range(len(edges)), key=keys.__getitem__)
    edge_section, edge_parts = put_chunks(store, [chunks[i] for i in order], [edges[i]["source"] for i in order],
                                          kept.edge_parts if kept is not None else None, rewrite=whole)
    return KeptRows(nodes, keys, chunks, node_parts, edge_parts, (node_section, edge_section), order)
