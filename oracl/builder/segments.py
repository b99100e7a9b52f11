"""The symbol graph kept per file (``symbols.seg`` in every bundle), so that a selective
rebuild pays for the files that changed and not for the repository.

A *segment* is one file's share of the export's ``symbols`` section: its symbols' packed
rows and the packed rows of the edges whose source is one of its symbols, as the bytes the
export holds, with the file's ``interface`` digest and its counts. Files are ordered by
``path + "#"``, which is the order of their symbols' ids (``path#qualified``) when no path
holds a ``#``; within a file the rows keep the phase's order. So the export's section is
the segments joined, byte for byte what ``pack_symbols`` of the whole graph gives, and a
rebuild whose changed files kept their interface re-encodes only those files.

The section is kept as parts of the vault's store (``core/parts.py``), files grouped by
their path; ``symbols.seg``: JSON, the parts that hold each group's entry: its files' interfaces,
counts, and where their rows lie in the section's parts (which hold them: nothing is stored twice). A rebuild joins again only the
groups of the files it made again, reading those groups' previous parts.

>>> packed = pack_symbols(graph.nodes, graph.edges)                     # doctest: +SKIP
>>> Segments.of_packed(packed, graph.sites, facts).section() == orjson.dumps(packed, option=orjson.OPT_SORT_KEYS)
True
>>> edge_parts, node_parts, seg_file = segments.put(store)               # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from oracl.builder.pipeline.symbols import interface
from oracl.core.export import SYMBOL_EDGE_FIELDS, SYMBOL_NODE_FIELDS
from oracl.core.parts import Parts, PartStore, grouped
from oracl.core.records import FileFacts
from oracl.core.vault import SYMBOLS_FILE

FORMAT = 5  # 5: each group's first file, files and row parts in the head, and the counts (a cold build reads only the entries it needs); 4: group entries in parts (3: one file listing every file; 2: offsets in the bundle's export; 1 copied them)
Part = tuple[str, int]  # a part of the store: its digest and length


class Span(NamedTuple):
    """Where a file's node or edge rows lie in the previous build's parts. (A named tuple:
    an index reads ~40k of them at 20k files, and a frozen dataclass's set-by-set
    construction was half of that read.)"""

    part: Part | None   # None: the file has no such rows
    off: int
    n: int
_NODE_FIELDS = orjson.dumps(list(SYMBOL_NODE_FIELDS))
_EDGE_FIELDS = orjson.dumps(list(SYMBOL_EDGE_FIELDS))


@dataclass(slots=True)
class Segment:
    interface: str
    nodes: bytes | memoryview     # the packed node rows, comma-separated ('' for none)
    edges: bytes | memoryview     # the packed rows of the edges that start here
    n_nodes: int
    n_edges: int
    by_relation: dict[str, int]
    unresolved: int = 0
    dropped: int = 0


def _copy_counts(counts: dict[str, Any]) -> dict[str, Any]:
    return {**counts, "edges_by_relation": dict(sorted(counts["edges_by_relation"].items()))}


def _add_counts(counts: dict[str, Any], seg: Segment, sign: int) -> None:
    """``counts`` (``Segments.counts``) with ``seg``'s added (``sign`` 1) or taken away (-1)."""
    counts["symbols"] += sign * seg.n_nodes
    counts["edges"] += sign * seg.n_edges
    counts["calls_unresolved"] += sign * seg.unresolved
    counts["calls_too_ambiguous"] += sign * seg.dropped
    by_relation = counts["edges_by_relation"]
    for relation, n in seg.by_relation.items():
        left = by_relation.get(relation, 0) + sign * n
        if left:
            by_relation[relation] = left
        else:
            by_relation.pop(relation, None)
    if sign > 0 and list(by_relation) != sorted(by_relation):
        counts["edges_by_relation"] = dict(sorted(by_relation.items()))


@dataclass(slots=True)
class Segments:
    files: MutableMapping[str, Segment] = field(default_factory=dict)
    # rows still in the previous build's parts (``index``): path → (its node rows, its edge
    # rows); read only for a group that is made again (``put``)
    spans: MutableMapping[str, tuple[Span, Span]] = field(default_factory=dict)
    # the previous build's, when every file's rows are made again and compared with them
    # (a file came or went, or changed what other files' names resolve to): ``moved``
    compare: bool = False
    # ``counts()`` of these very segments when known (a long-lived builder's, from the
    # latest's header), kept by ``replaced``; None: counted when asked, a pass over every file
    totals: dict[str, Any] | None = None
    # (``index``'s) the previous build's groups in order — (their files, their entry's
    # part, their node rows' part, their edge rows' part) — kept by ``replaced`` while no file
    # comes, with the files made again since (``made``): ``put`` takes a group none of whose
    # files was made again as it was, without grouping or joining every file
    groups: list[tuple[Sequence[str], list[Any], list[Any] | None, list[Any] | None]] | None = None
    made: set[str] = field(default_factory=set)

    # -- making ---------------------------------------------------------------------------
    @classmethod
    def of_packed(cls, packed: dict[str, Any], sites: dict[str, list[int]], facts: Iterable[FileFacts],
                  known: Mapping[str, str] | None = None) -> Segments:
        """The segments of a symbol graph packed as the export holds it (``pack_symbols``:
        nodes sorted by id, edges by source): each file's rows are the run of ids that
        start with ``path#``, found by bisection, not by a pass over the rows. Every file
        gets a segment, an empty one when it has no rows (its interface is still kept).
        ``known``: interface digests already made of these very facts (a previous build's
        segments of the files not read again), not made again."""
        known = known or {}
        nodes, edges = packed["nodes"], packed["edges"]
        node_ids = [r[0] for r in nodes]
        sources = [r[0] for r in edges]
        out = cls()
        for f in facts:
            lo, hi = f.path + "#", f.path + "$"  # '$' follows '#': the ids of this file lie between
            a, b = bisect_left(node_ids, lo), bisect_left(node_ids, hi)
            c, d = bisect_left(sources, lo), bisect_left(sources, hi)
            ns, es = nodes[a:b], edges[c:d]
            missed = sites.get(f.path, [0, 0])
            face = known.get(f.path)
            out.files[f.path] = Segment(face if face is not None else interface(f), orjson.dumps(ns)[1:-1], orjson.dumps(es)[1:-1], len(ns),
                                        len(es), dict(sorted(Counter(r[2] for r in es).items())),
                                        missed[0], missed[1])
        return out

    def replaced(self, fresh: Segments, paths: Iterable[str]) -> Segments:
        """These segments with those of ``paths`` taken from ``fresh`` (an index read when
        needed stays so: the others are not read)."""
        files: MutableMapping[str, Segment]
        spans: MutableMapping[str, tuple[Span, Span]]
        if isinstance(self.files, _Over) and isinstance(self.spans, _Over):
            files, spans = self.files.copy(), self.spans.copy()
        else:
            files, spans = dict(self.files), dict(self.spans)
        totals = _copy_counts(self.totals) if self.totals is not None else None
        paths = list(paths)
        groups = self.groups if all(p in files for p in paths) else None  # (a file came: grouped again)
        for p in paths:
            if totals is not None:
                was = files.get(p)
                if was is not None:
                    _add_counts(totals, was, -1)
                _add_counts(totals, fresh.files[p], 1)
            files[p] = fresh.files[p]
            spans.pop(p, None)
        return Segments(files, spans, totals=totals, groups=groups, made={*self.made, *paths})

    def drop(self, paths: Iterable[str]) -> None:
        """The files ``paths`` (gone) taken out, in place: their counts from the totals,
        and the grouping made again (their groups hold other files now)."""
        for p in paths:
            seg = self.files.pop(p, None)
            self.spans.pop(p, None)
            if seg is not None:
                if self.totals is not None:
                    _add_counts(self.totals, seg, -1)
                self.groups = None

    # -- reading --------------------------------------------------------------------------
    def moved(self, fresh: Segments, store: PartStore) -> list[str]:
        """The files of ``fresh`` whose rows are not these segments' (new ones included),
        the previous rows read from their parts (each part once, checked: a damaged one is
        a PreviousBundleError and the build starts again, whole)."""
        cache: dict[str, bytes] = {}
        out = []
        for p, seg in fresh.files.items():
            pair = self.spans.get(p)
            # (rows of another length moved: their part is not read to say so)
            if pair is None or len(seg.nodes) != _length(pair[0]) or len(seg.edges) != _length(pair[1]) \
                    or bytes(seg.nodes) != _sliced(store, pair[0], cache) \
                    or bytes(seg.edges) != _sliced(store, pair[1], cache):
                out.append(p)
        return sorted(out)

    def filled(self, store: PartStore) -> Segments:
        """These segments with every row read from the previous build's parts (none left in
        ``spans``): what ``section`` needs when some rows were not made by this build."""
        cache: dict[str, bytes] = {}
        files = dict(self.files)
        for p, (nodes, edges) in self.spans.items():
            seg = files[p]
            files[p] = Segment(seg.interface, bytes(_sliced(store, nodes, cache)), bytes(_sliced(store, edges, cache)),
                               seg.n_nodes, seg.n_edges, seg.by_relation, seg.unresolved, seg.dropped)
        return Segments(files)

    def ordered(self) -> list[str]:
        return sorted(self.files, key=lambda p: p + "#")

    def section(self) -> bytes:
        """The export's ``symbols`` value: exactly ``orjson.dumps(pack_symbols(nodes, edges),
        option=OPT_SORT_KEYS)`` of the graph the segments hold (every row made or read)."""
        if self.spans:
            raise ValueError("rows of the previous build's parts are not read yet")
        order = self.ordered()
        edges = b",".join(bytes(self.files[p].edges) for p in order if self.files[p].n_edges)
        nodes = b",".join(bytes(self.files[p].nodes) for p in order if self.files[p].n_nodes)
        return (b'{"edge_fields":' + _EDGE_FIELDS + b',"edges":[' + edges + b'],"node_fields":' + _NODE_FIELDS
                + b',"nodes":[' + nodes + b"]}")

    def counts(self) -> dict[str, Any]:
        """What ``SymbolGraph.counts`` says of the whole graph."""
        if self.totals is not None:
            return _copy_counts(self.totals)
        by_relation: Counter[str] = Counter()
        for s in self.files.values():
            by_relation.update(s.by_relation)
        return {"symbols": sum(s.n_nodes for s in self.files.values()),
                "edges": sum(s.n_edges for s in self.files.values()),
                "edges_by_relation": dict(sorted(by_relation.items())),
                "calls_unresolved": sum(s.unresolved for s in self.files.values()),
                "calls_too_ambiguous": sum(s.dropped for s in self.files.values())}

    # -- the parts and the bundle's file ----------------------------------------------------
    def put(self, store: PartStore, *, rewrite: bool = False) -> tuple[Parts, Parts, bytes]:
        """The symbol section in parts (``core/parts.py``: files in groups by their path),
        and ``symbols.seg``: (edge parts, node parts, the file). A group none of whose files
        was made again keeps its parts as they were, unread, when their lengths add up
        (they hold those files' rows and no other); another is joined again from the rows
        made and the rows sliced from the previous parts. Each group's entry (its files'
        interfaces, counts and where their rows lie) is a part too: ``symbols.seg`` names
        the entries, so a rebuild writes the entries of the groups it joined again."""
        cache: dict[str, bytes] = {}
        sections: tuple[Parts, Parts] = ([], [])  # nodes, edges
        entries: Parts = []
        totals = self.counts()  # (before the spans are let go: an index read when needed has the latest's)
        for group, kept in self._groups(store, rewrite):
            if kept is not None:  # (none of its files made again: its parts and entry as they were)
                entry_part, node_part, edge_part = kept
                if node_part is not None:
                    sections[0].append(list(node_part))
                if edge_part is not None:
                    sections[1].append(list(edge_part))
                entries.append([*entry_part[:2], group[0], len(group),
                                None if node_part is None else list(node_part),
                                None if edge_part is None else list(edge_part)])
                continue
            group_parts: list[list[Any] | None] = [None, None]
            where: dict[str, list[Any]] = {p: [None, 0, 0, 0, None, 0, 0, 0] for p in group}
            for key in (0, 1):
                counts = [(p, self.files[p].n_nodes if key == 0 else self.files[p].n_edges) for p in group]
                full = [p for p, n in counts if n]
                if not full:
                    continue
                kept = _kept(self.spans, full, key, store)
                if kept is not None and not rewrite:
                    digest, size = kept
                    offsets = [(p, self.spans[p][key].off, self.spans[p][key].n) for p in full]
                else:
                    chunks: list[bytes | memoryview] = []
                    offsets, at = [], 0
                    for p in full:
                        pair = self.spans.get(p)
                        if pair is None:  # made by this build
                            seg = self.files[p]
                            rows = seg.nodes if key == 0 else seg.edges
                        else:  # sliced from its previous part
                            rows = _sliced(store, pair[key], cache)
                        if chunks:
                            chunks.append(b",")
                            at += 1
                        offsets.append((p, at, len(rows)))
                        chunks.append(rows)
                        at += len(rows)
                    data = b"".join(chunks)
                    digest, size = store.put(data, rewrite=rewrite, packed=True), len(data)
                sections[key].append([digest, size])
                group_parts[key] = [digest, size]
                for p, off, n in offsets:
                    where[p][4 * key:4 * key + 4] = [digest, size, off, n]
            entry = orjson.dumps({p: [s.interface, *where[p], s.n_nodes, s.n_edges, s.by_relation, s.unresolved,
                                      s.dropped] for p in group for s in (self.files[p],)})
            entries.append([store.put(entry, rewrite=rewrite), len(entry), group[0], len(group), *group_parts])
        self.spans, self.groups = {}, None
        return sections[1], sections[0], orjson.dumps({"format": FORMAT, "groups": entries, "counts": totals})

    def _groups(self, store: PartStore, rewrite: bool) -> Iterator[tuple[Sequence[str], Any]]:
        """``put``'s groups in order, each with (its entry's part, its node part, its edge
        part) when it can be taken as the previous build's (the same files, none made again,
        its parts still in the store), else None: grouped again when the files are not the
        previous build's groups' (``grouped`` over every file)."""
        if self.groups is None or rewrite or sum(len(g[0]) for g in self.groups) != len(self.files):
            order = self.ordered()
            for a, b in grouped(order):
                yield order[a:b], None
            return
        hit: set[int] = set()
        firsts = [g[0][0] + "#" for g in self.groups]
        for p in self.made:
            hit.add(max(0, bisect_right(firsts, p + "#") - 1))
        for i, (paths, entry, nodes, edges) in enumerate(self.groups):
            whole = i not in hit and store.has(entry[0], entry[1]) and \
                all(part is None or store.has(part[0], part[1]) for part in (nodes, edges))
            yield paths, ((entry, nodes, edges) if whole else None)

    @classmethod
    def index(cls, data: bytes, store: PartStore,
              entries: dict[str, _Entry] | None = None, *, lazy: bool = False) -> Segments:
        """The segments a ``symbols.seg`` places in the store's parts, their rows not read
        (``put`` reads the parts of the groups it makes again). Its head lists each
        group's entry part, first file, number of files and row parts, and the counts of
        the whole. ``lazy`` (a cold build's): each group's entry is read from the store
        when one of its files is first asked for (a one-file rebuild at 50,000 files read
        3,117 entries, ~0.9 s, to use one of them); a damaged or missing one found then is
        a PreviousBundleError (the build starts again, whole). Else every entry is read
        now, each checked against its digest and its head: ValueError when the file is not
        one of this format, an entry is missing or damaged, or a segment lies outside its
        part. ``entries``: group entries read before, by digest (a long-lived builder's: a
        part is named by its content, so an entry read once is that entry for good); read
        here only when missing, and left holding only this file's."""
        from oracl.core.errors import DigestError

        head = orjson.loads(data)
        if not isinstance(head, dict) or head.get("format") != FORMAT:
            raise ValueError("not a symbols file of this format")
        heads = [_Head.of(g) for g in head["groups"]]
        counts = head.get("counts")
        if not isinstance(counts, dict) or not isinstance(counts.get("edges_by_relation"), dict):
            raise ValueError("a symbols file without its counts")
        if lazy:
            index = _Index(store, heads)
            groups: list[tuple[Sequence[str], list[Any], list[Any] | None, list[Any] | None]] = [
                (_Paths(index, i), [h.digest, h.size], h.nodes, h.edges) for i, h in enumerate(heads)]
            return cls(_Over(_Lazy(index, 0)), _Over(_Lazy(index, 1)), totals=_copy_counts(counts), groups=groups)
        out = cls(groups=[], totals=_copy_counts(counts))
        assert out.groups is not None
        mine: dict[str, _Entry] = {}
        for h in heads:
            got = entries.get(h.digest) if entries is not None else None
            if got is None:
                try:
                    got = _entry(orjson.loads(store.get(h.digest)))
                except DigestError as exc:
                    raise ValueError(str(exc)) from None
            h.check(got)
            mine[h.digest] = got
            out.files.update(got[0])
            out.spans.update(got[1])
            out.groups.append((list(got[0]), [h.digest, h.size], h.nodes, h.edges))
        if entries is not None:
            entries.clear()
            entries.update(mine)
        return out


@dataclass(frozen=True, slots=True)
class _Head:
    """A group as ``symbols.seg``'s head lists it: its entry's part, its first file, how
    many files it holds, and its node and edge rows' parts (None: none)."""

    digest: str
    size: int
    first: str
    n: int
    nodes: list[Any] | None
    edges: list[Any] | None

    @classmethod
    def of(cls, raw: Any) -> _Head:
        if not isinstance(raw, list) or len(raw) != 6 or not isinstance(raw[0], str) or not isinstance(raw[2], str):
            raise ValueError("a group of another layout")
        digest, size, first, n, nodes, edges = raw
        for part in (nodes, edges):
            if part is not None and (not isinstance(part, list) or len(part) != 2):
                raise ValueError("a group of another layout")
        return cls(digest, int(size), first, int(n), None if nodes is None else [str(nodes[0]), int(nodes[1])],
                   None if edges is None else [str(edges[0]), int(edges[1])])

    def check(self, got: _Entry) -> None:
        """ValueError unless ``got`` is this group's entry: its files, its first, its parts."""
        files = got[0]
        if len(files) != self.n or not files or next(iter(files)) != self.first \
                or [None if p is None else list(p) for p in got[2]] != [self.nodes, self.edges]:
            raise ValueError("a group's entry is not the one its head lists")


class _Index:
    """``symbols.seg``'s groups, each entry read from the store (checked against its
    digest and its head) when first asked for."""

    def __init__(self, store: PartStore, heads: list[_Head]) -> None:
        self.store, self.heads = store, heads
        self.firsts = [h.first + "#" for h in heads]  # (the files' order: ``ordered``'s)
        self.total = sum(h.n for h in heads)
        self.read: dict[int, _Entry] = {}

    def at(self, path: str) -> int:
        """The group that would hold ``path`` (-1: before the first)."""
        return bisect_right(self.firsts, path + "#") - 1

    def entry(self, i: int) -> _Entry:
        got = self.read.get(i)
        if got is None:
            from oracl.core.errors import DigestError, PreviousBundleError

            h = self.heads[i]
            try:
                got = _entry(orjson.loads(self.store.get(h.digest)))
                h.check(got)
            except (DigestError, ValueError, TypeError, KeyError) as exc:
                raise PreviousBundleError(f"the previous build's symbol segments could not be read ({exc})") from None
            got = self.read[i] = got
        return got


class _Lazy(Mapping[str, Any]):
    """The files' segments (``which`` 0) or their rows' spans (1) of an ``_Index``, each
    group's read when one of its files is asked for."""

    def __init__(self, index: _Index, which: int) -> None:
        self.index, self.which = index, which

    def _of(self, i: int) -> Mapping[str, Any]:
        got = self.index.entry(i)
        return got[0] if self.which == 0 else got[1]

    def __getitem__(self, path: str) -> Any:
        i = self.index.at(path)
        if i < 0:
            raise KeyError(path)
        return self._of(i)[path]

    def __contains__(self, path: object) -> bool:
        if not isinstance(path, str):
            return False
        i = self.index.at(path)
        return i >= 0 and path in self._of(i)

    def __len__(self) -> int:
        return self.index.total

    def __iter__(self) -> Iterator[str]:
        for i in range(len(self.index.heads)):
            yield from self._of(i)


class _Over(MutableMapping[str, Any]):
    """A mapping over a ``_Lazy`` one, with the files set or taken out since: what
    ``replaced`` and ``drop`` change, without reading the other groups."""

    def __init__(self, base: Mapping[str, Any], put: dict[str, Any] | None = None,
                 gone: set[str] | None = None) -> None:
        self.base, self.put, self.gone = base, put if put is not None else {}, gone if gone is not None else set()

    def copy(self) -> _Over:
        return _Over(self.base, dict(self.put), set(self.gone))

    def __getitem__(self, path: str) -> Any:
        if path in self.put:
            return self.put[path]
        if path in self.gone:
            raise KeyError(path)
        return self.base[path]

    def __contains__(self, path: object) -> bool:
        return path in self.put or (path not in self.gone and path in self.base)

    def __setitem__(self, path: str, value: Any) -> None:
        self.put[path] = value
        self.gone.discard(path)

    def __delitem__(self, path: str) -> None:
        if path not in self:
            raise KeyError(path)
        self.put.pop(path, None)
        if path in self.base:
            self.gone.add(path)

    def __len__(self) -> int:
        return len(self.base) - len(self.gone) + sum(1 for p in self.put if p not in self.base)

    def __iter__(self) -> Iterator[str]:
        for p in self.base:
            if p not in self.gone and p not in self.put:
                yield p
        yield from self.put


class _Paths(Sequence[str]):
    """A group's files as ``Segments.groups`` holds them: its first and its length from
    the head; the others read with its entry."""

    def __init__(self, index: _Index, i: int) -> None:
        self._index, self.i = index, i

    def __len__(self) -> int:
        return self._index.heads[self.i].n

    def __getitem__(self, k: Any) -> Any:
        if k == 0:
            return self._index.heads[self.i].first
        return list(self._index.entry(self.i)[0])[k]

    def __iter__(self) -> Iterator[str]:
        return iter(self._index.entry(self.i)[0])


def _kept(spans: Mapping[str, tuple[Span, Span]], full: list[str], key: int, store: PartStore) -> Part | None:
    """The previous part of a group none of whose files (``full``: those with rows) was
    made again, when its length is their rows' and the commas between: it holds them and
    nothing else. None when the group must be joined again."""
    parts: set[Part] = set()
    total = 0
    for p in full:
        pair = spans.get(p)
        if pair is None or pair[key].part is None:
            return None
        span = pair[key]
        assert span.part is not None
        parts.add(span.part)
        total += span.n
    if len(parts) != 1:
        return None
    part = parts.pop()
    if part[1] != total + len(full) - 1 or not store.has(part[0], part[1]):
        return None
    return part


def _length(span: Span) -> int:
    """The length of a file's rows where its previous part holds them (0: none)."""
    return span.n if span.part is not None else 0


def _sliced(store: PartStore, span: Span, cache: dict[str, bytes]) -> bytes | memoryview:
    """A file's rows as its previous part holds them (each part read once into ``cache``)."""
    if span.part is None:
        return b""
    if span.part[0] not in cache:
        cache[span.part[0]] = _read_part(store, span.part[0])
    return memoryview(cache[span.part[0]])[span.off:span.off + span.n]


def _read_part(store: PartStore, digest: str) -> bytes:
    from oracl.core.errors import DigestError, PreviousBundleError

    try:
        return store.get(digest)
    except DigestError as exc:
        raise PreviousBundleError(f"the previous build's symbol rows could not be read ({exc})") from None


# a group entry read: its files' segments, where their rows lie, its (node part, edge part)
_Entry = tuple[dict[str, Segment], dict[str, tuple[Span, Span]], tuple[Part | None, Part | None]]


_NO_SPAN = Span(None, 0, 0)


def _entry(entry: dict[str, Any]) -> _Entry:
    """A group entry's files: their segments (rows not read), where their rows lie, and
    the group's (node part, edge part): the first its files' rows name, or None. (Each
    part named once: a group's files share their parts. A cold rebuild reads every entry.)"""
    files: dict[str, Segment] = {}
    where: dict[str, tuple[Span, Span]] = {}
    parts: dict[tuple[Any, Any], Part] = {}
    firsts: list[Part | None] = [None, None]
    for p, (iface, n_digest, n_size, n_off, n_len, e_digest, e_size, e_off, e_len, n_nodes, n_edges, rel,
            unresolved, dropped) in entry.items():
        pair: list[Span] = []
        for k, part, size, off, n in ((0, n_digest, n_size, n_off, n_len), (1, e_digest, e_size, e_off, e_len)):
            if part is None:
                pair.append(_NO_SPAN)
                continue
            if min(off, n) < 0 or off + n > size:
                raise ValueError("a segment lies outside its part")
            held = parts.get((part, size))
            if held is None:
                held = parts[(part, size)] = (str(part), int(size))
            if firsts[k] is None:
                firsts[k] = held
            pair.append(Span(held, off, n))
        files[p] = Segment(iface, b"", b"", n_nodes, n_edges, rel, unresolved, dropped)
        where[p] = (pair[0], pair[1])
    return files, where, (firsts[0], firsts[1])


def reusable(bundle: Path, manifest_files: dict[str, str], by_path: Mapping[str, FileFacts], reread: list[str],
             removed: list[str], previous: dict[str, FileFacts], store: PartStore,
             entries: dict[str, Any] | None = None) -> tuple[Segments | None, str]:
    """The previous build's segments, and why: when only the files read again need their
    rows made (every one of them kept its interface, no file came or went), to be replaced
    for those files; when a file came or went or changed its interface, to compare every
    file's rows made again with (``compare``: the database is then patched for the files
    whose rows moved, not loaded again). None (a whole pass) when no path may hold a ``#``
    or the previous segments cannot be used. ``by_path``: this build's facts by path.
    (Each test over every path is one done in C: a '#' in any path is a '#' in them
    joined; the segments' paths are the previous build's when the two key sets are equal.)"""
    if "#" in "".join(by_path):
        return None, "a path holds a '#'"
    try:
        data = (bundle / SYMBOLS_FILE).read_bytes()
    except OSError:
        return None, f"the previous build has no {SYMBOLS_FILE}"
    if manifest_files.get(SYMBOLS_FILE) != hashlib.sha256(data).hexdigest():
        return None, f"{SYMBOLS_FILE} does not match its manifest"
    try:  # the rows stay in the parts: read only for the groups made again, by the export task
        # (a cold build's entries read when needed; a long-lived builder's, every one, most known)
        segs = Segments.index(data, store, entries, lazy=entries is None)
    except (ValueError, TypeError, KeyError, orjson.JSONDecodeError):
        return None, f"{SYMBOLS_FILE} is unreadable"
    # (read when needed: as many files, each entry checked against its head when read; a file
    # asked for that it lacks is said so below, or makes the build start again, whole)
    if len(segs.files) != len(previous) or (entries is not None and segs.files.keys() != previous.keys()):
        return None, f"{SYMBOLS_FILE} does not list the previous build's files"
    why = ""
    if removed or any(p not in previous for p in reread):
        why = "files were added or removed"
    else:
        for p in reread:
            if p not in segs.files:
                return None, f"{SYMBOLS_FILE} does not list the previous build's files"
            if interface(by_path[p]) != segs.files[p].interface:
                why = f"{p} changed what other files' names resolve to"
                break
    if why:
        segs.compare = True
        return segs, why
    return segs, f"the rows of {len(reread):,} changed file{'' if len(reread) == 1 else 's'} made again, the others reused"
