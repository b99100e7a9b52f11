"""Phase 2/3 merge: canonical-key deduplication with Phase 2 precedence (design §5), and
the opt-in two-layer mode whose committed view is the same edge set.

>>> a = Edge("x.py", "y.py", "imports", 1.0, "L1-1", "", "phase3_static_edges")
>>> b = Edge("x.py", "y.py", "imports", 1.0, "L1-1", "", "phase2_repo_edges")
>>> merge_edges([b], [a], [], {"x.py", "y.py"}).edges[0].producer
'phase2_repo_edges'
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from oracl.builder.extractors.providers import OVERLAY, PHASE2, PHASE3
from oracl.core.records import Edge

# later in this tuple = higher precedence on a canonical-key collision
PRECEDENCE = (OVERLAY, PHASE3, PHASE2)


@dataclass(slots=True)
class MergeResult:
    edges: list[Edge]
    dropped: Counter[str] = field(default_factory=Counter)  # self_loop | dangling | duplicate
    # (the merged list these edges are a copy of, the places whose edges may differ from
    # it): a long-lived builder's merge of a few sources again (``BySource.result``)
    patched: tuple[list[Edge], list[int]] | None = None
    # (the merge kept, this one): a merge source by source over a kept one (a long-lived
    # builder's last, or the latest's edge shards'), made with the same overlay and tail. A
    # source whose run is the very list kept is unmoved (``weigh_around``'s ``same``)
    runs: tuple[BySource, BySource] | None = None


def merge_edges(phase2: Iterable[Edge], phase3: Iterable[Edge], overlay: Iterable[Edge],
                nodes: AbstractSet[str]) -> MergeResult:
    """One edge per canonical key; Phase 2 wins a collision, then Phase 3, then the overlay.
    Self-loops and edges to missing targets are dropped and counted."""
    dropped: Counter[str] = Counter()
    chosen: dict[tuple[str, str, str, str, str], Edge] = {}
    for stream in (overlay, phase3, phase2):  # ascending precedence: later overwrites
        for e in stream:
            if not e.target or e.target not in nodes or e.source not in nodes:
                dropped["dangling"] += 1
                continue
            if e.source == e.target:
                dropped["self_loop"] += 1
                continue
            k = e.key
            if k in chosen:
                dropped["duplicate"] += 1
            chosen[k] = e
    return MergeResult([chosen[k] for k in sorted(chosen)], dropped)


@dataclass(slots=True)
class BySource:
    """``merge_edges`` one source at a time, as a long-lived builder keeps it and as the
    edge shards hold it (``builder/edge_shards.py``): a canonical key begins with the
    source, so a collision is always within one source and the merged list is the sources'
    lists in source order. ``dropped`` holds the sources with a drop; ``sources`` every
    source merged. ``made_of``: the overlay and the edges after the per-file ones
    (history) it was made with."""

    edges: dict[str, list[Edge]]
    dropped: dict[str, Mapping[str, int]]
    made_of: tuple[list[Edge], list[Edge]]
    sources: set[str] = field(default_factory=set)
    # (the merge this one kept every run of but ``changed``'s, until ``result`` is made)
    base: BySource | None = None
    changed: frozenset[str] = frozenset()
    flat: list[Edge] | None = None  # (``result``'s list, once made)
    # (the sources merged again over a kept merge because their edges of the overlay or the
    # tail moved: ``fixed_moved``)
    fixed_again: frozenset[str] = frozenset()
    at: dict[str, tuple[int, int]] | None = None  # (each source's run's place in it, once asked)

    def result(self) -> MergeResult:
        total: dict[str, int] = {}
        for c in self.dropped.values():
            for why, n in c.items():
                total[why] = total.get(why, 0) + n
        base, self.base = self.base, None
        if base is not None and base.flat is not None:
            moved = self._patch(base)
            if moved is not None:
                assert self.flat is not None
                return MergeResult(self.flat, Counter(total), (base.flat, moved))
        # (each run's place found in the same pass: ``places`` sorted every source again)
        flat: list[Edge] = []
        at: dict[str, tuple[int, int]] = {}
        for s in sorted(self.edges):
            run = self.edges[s]
            at[s] = (len(flat), len(flat) + len(run))
            flat.extend(run)
        self.flat, self.at = flat, at
        return MergeResult(self.flat, Counter(total))

    def places(self) -> dict[str, tuple[int, int]]:
        """Each source's run's place in ``flat`` (start, stop)."""
        if self.at is None:
            at: dict[str, tuple[int, int]] = {}
            i = 0
            for s in sorted(self.edges):
                n = len(self.edges[s])
                at[s] = (i, i + n)
                i += n
            self.at = at
        return self.at

    def _patch(self, base: BySource) -> list[int] | None:
        """``flat`` as ``base``'s list with the runs of the sources merged again put in
        their places, when each is as long as it was (the places then stay); the places
        whose edges may differ. None when a run's length moved (the list is made whole)."""
        assert base.flat is not None
        at = base.places()
        flat = list(base.flat)
        moved: list[int] = []
        for s in sorted(self.changed):
            run = self.edges.get(s, [])
            span = at.get(s)
            if span is None:
                if run:
                    return None
                continue
            a, b = span
            if b - a != len(run):
                return None
            flat[a:b] = run
            moved.extend(range(a, b))
        self.flat, self.at = flat, at
        return moved


def tail_and_overlay(sources: Iterable[str], tail: list[Edge], overlay: list[Edge]
                     ) -> dict[str, tuple[list[Edge], list[Edge]]]:
    """For each of ``sources``: (its edges among ``tail``, its edges among ``overlay``), in
    order: what ``merge_edges`` of one source takes besides its own lists."""
    extra: dict[str, tuple[list[Edge], list[Edge]]] = {s: ([], []) for s in sources}
    for e in tail:
        if e.source in extra:
            extra[e.source][0].append(e)
    for e in overlay:
        if e.source in extra:
            extra[e.source][1].append(e)
    return extra


def fixed_moved(made_of: tuple[list[Edge], list[Edge]], overlay: list[Edge], tail: list[Edge]) -> set[str]:
    """The sources whose edges among the overlay or the tail differ between ``made_of``
    (a kept merge's) and ``overlay``/``tail``."""
    runs: dict[str, list[list[Edge]]] = defaultdict(lambda: [[], [], [], []])
    for i, edges in enumerate((*made_of, overlay, tail)):
        for e in edges:
            runs[e.source][i].append(e)
    return {s for s, (o1, t1, o2, t2) in runs.items() if o1 != o2 or t1 != t2}


def merge_by_source(phase2: Mapping[str, list[Edge]], phase3: Mapping[str, list[Edge]], tail: list[Edge],
                    overlay: list[Edge], nodes: AbstractSet[str], kept: BySource | None = None,
                    again: set[str] | None = None) -> BySource:
    """``merge_edges(phase2 in file order, phase3 in file order + tail, overlay, nodes)``
    source by source (``phase2``/``phase3``: each file's edges, which start in it), in one
    pass over the sources merged. With ``kept`` (a merge over the same files) only the
    sources in ``again``, those ``kept`` did not merge and those whose edges among the
    overlay or the tail are not the ones ``kept`` was made with are merged again; the
    others' lists are ``kept``'s, untouched (``phase2``/``phase3`` of those are not read)."""
    reuse = kept is not None and again is not None
    fixed_again: frozenset[str] = frozenset()
    if kept is not None and again is not None and kept.made_of != (list(overlay), list(tail)):
        fixed_again = frozenset(fixed_moved(kept.made_of, overlay, tail) - again)
        again = again | fixed_again
    sources = set(phase2) | set(phase3) | {e.source for e in overlay} | {e.source for e in tail}
    edges: dict[str, list[Edge]] = {}
    dropped: dict[str, Mapping[str, int]] = {}
    fresh: dict[str, Counter[str]] = {}
    todo = sources
    base: BySource | None = None
    if reuse and kept is not None and again is not None and sources == kept.sources:
        # (the same sources: the kept runs copied, those merged again taken out; not a
        # lookup per source, 8 ms a save at 20k files)
        todo = sources & again
        edges, dropped = dict(kept.edges), dict(kept.dropped)
        for s in todo:
            edges.pop(s, None)
            dropped.pop(s, None)
        kept.base = None  # (one merge back at most)
        base = kept
    elif reuse:
        assert kept is not None and again is not None
        todo = {s for s in sources if s in again or s not in kept.sources}
        for s in sources:
            if s in todo:
                continue
            run = kept.edges.get(s)
            if run is not None:
                edges[s] = run
            c = kept.dropped.get(s)
            if c is not None:
                dropped[s] = c
    chosen: dict[tuple[str, str, str, str, str], Edge] = {}

    def drop(source: str, why: str) -> None:
        c = fresh.get(source)
        if c is None:
            c = fresh[source] = dropped[source] = Counter()
        c[why] += 1

    def take(stream: Iterable[Edge]) -> None:
        for e in stream:
            if not e.target or e.target not in nodes or e.source not in nodes:
                drop(e.source, "dangling")
                continue
            if e.source == e.target:
                drop(e.source, "self_loop")
                continue
            k = e.key
            if k in chosen:
                drop(e.source, "duplicate")
            chosen[k] = e

    # ascending precedence, as ``merge_edges``: the overlay, Phase 3 then the tail, Phase 2
    # (the order within one source is the streams' order: the only order a collision sees)
    take(e for e in overlay if e.source in todo)
    for s in todo:
        take(phase3.get(s, ()))
    take(e for e in tail if e.source in todo)
    for s in todo:
        take(phase2.get(s, ()))
    run_of: list[Edge] = []
    for k in sorted(chosen):
        e = chosen[k]
        if not run_of or run_of[-1].source != e.source:
            run_of = edges[e.source] = []
        run_of.append(e)
    if base is not None:
        return BySource(edges, dropped, (list(overlay), list(tail)), sources, base, frozenset(todo),
                        fixed_again=fixed_again)
    return BySource(edges, dropped, (list(overlay), list(tail)), sources, fixed_again=fixed_again)


def runs_moved(new: BySource, old: BySource) -> set[str]:
    """The sources whose run of the merged edges, or what the merge dropped of their
    edges, is not the same in ``new`` and ``old``."""
    return {s for s in new.sources | old.sources
            if new.edges.get(s, []) != old.edges.get(s, [])
            or dict(new.dropped.get(s, {})) != dict(old.dropped.get(s, {}))}


def edge_to_json(e: Edge) -> dict[str, object]:
    return {"source": e.source, "target": e.target, "relation": e.relation,
            "confidence": e.confidence, "source_fragment": e.source_fragment,
            "target_fragment": e.target_fragment, "producer": e.producer, "provider": e.provider}


def edge_from_json(d: dict) -> Edge:
    return Edge(**d)


def write_jsonl(path: Path, rows: Iterable[dict[str, object]]) -> None:
    """Write rows as JSON lines through a temp file and ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    dumps, opt = orjson.dumps, orjson.OPT_SORT_KEYS
    chunk: list[bytes] = []
    with open(tmp, "wb") as fh:
        for row in rows:  # one write per 4,096 rows: per-row writes cost more than the encoding
            chunk.append(dumps(row, option=opt))
            if len(chunk) == 4096:
                fh.write(b"\n".join(chunk) + b"\n")
                chunk = []
        if chunk:
            fh.write(b"\n".join(chunk) + b"\n")
    os.replace(tmp, path)


class EvidenceStore:
    """Two-layer mode: one append-only JSON-lines partition per producer.

    Producers only ever append; ``committed_view`` is a deterministic function of the
    partitions (read every event, apply producer precedence, sort by canonical key) and
    therefore equals ``merge_edges`` over the same inputs.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        for producer in PRECEDENCE:
            (directory / f"{producer}.jsonl").write_bytes(b"")  # a build starts its partitions empty

    def append(self, producer: str, edges: Iterable[Edge]) -> int:
        n = 0
        with open(self.directory / f"{producer}.jsonl", "ab") as fh:
            for e in edges:
                if e.producer != producer:
                    raise ValueError(f"edge of {e.producer} appended to the {producer} partition")
                fh.write(orjson.dumps(edge_to_json(e), option=orjson.OPT_SORT_KEYS) + b"\n")
                n += 1
        return n

    def read(self, producer: str) -> list[Edge]:
        path = self.directory / f"{producer}.jsonl"
        with open(path, "rb") as fh:
            return [edge_from_json(orjson.loads(line)) for line in fh if line.strip()]

    def committed_view(self, nodes: AbstractSet[str]) -> MergeResult:
        return merge_edges(self.read(PHASE2), self.read(PHASE3), self.read(OVERLAY), nodes)
