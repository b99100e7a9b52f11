"""The symbol graph kept per file (``symbols.seg`` in every bundle), so that a selective
rebuild pays for the files that changed and not for the repository.

A *segment* is one file's share of the export's ``symbols`` section: its symbols' packed
rows and the packed rows of the edges whose source is one of its symbols, as the bytes the
export holds, with the file's ``interface`` digest and its counts. Files are ordered by
``path + "#"``, which is the order of their symbols' ids (``path#qualified``) when no path
holds a ``#``; within a file the rows keep the phase's order. So the export's section is
the segments joined, byte for byte what ``pack_symbols`` of the whole graph gives, and a
rebuild whose changed files kept their interface re-encodes only those files.

``symbols.seg``: JSON, each file's interface, counts, and where its rows lie in the
bundle's own export (which holds them: nothing is stored twice).

>>> packed = pack_symbols(graph.nodes, graph.edges)                     # doctest: +SKIP
>>> Segments.of_packed(packed, graph.sites, facts).section() == orjson.dumps(packed, option=orjson.OPT_SORT_KEYS)
True
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from oracl.builder.pipeline.symbols import interface
from oracl.core.export import SYMBOL_EDGE_FIELDS, SYMBOL_NODE_FIELDS
from oracl.core.records import FileFacts
from oracl.core.vault import EXPORT, SYMBOLS_FILE

FORMAT = 2  # 2: an index into the bundle's export (1 copied the rows)
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


@dataclass(slots=True)
class Segments:
    files: dict[str, Segment] = field(default_factory=dict)
    # rows still to be read from the previous bundle's export (``index``): path → (node
    # offset, node length, edge offset, edge length), and (the export, its manifest digest)
    spans: dict[str, tuple[int, int, int, int]] = field(default_factory=dict)
    source: tuple[Path, str] | None = None

    # -- making ---------------------------------------------------------------------------
    @classmethod
    def of_packed(cls, packed: dict[str, Any], sites: dict[str, list[int]], facts: Iterable[FileFacts]) -> Segments:
        """The segments of a symbol graph packed as the export holds it (``pack_symbols``:
        nodes sorted by id, edges by source): each file's rows are the run of ids that
        start with ``path#``, found by bisection, not by a pass over the rows. Every file
        gets a segment, an empty one when it has no rows (its interface is still kept)."""
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
            out.files[f.path] = Segment(interface(f), orjson.dumps(ns)[1:-1], orjson.dumps(es)[1:-1], len(ns),
                                        len(es), dict(sorted(Counter(r[2] for r in es).items())),
                                        missed[0], missed[1])
        return out

    def replaced(self, fresh: Segments, paths: Iterable[str]) -> Segments:
        """These segments with those of ``paths`` taken from ``fresh``."""
        files, spans = dict(self.files), dict(self.spans)
        for p in paths:
            files[p] = fresh.files[p]
            spans.pop(p, None)
        return Segments(files, spans, self.source if spans else None)

    def attach(self) -> None:
        """Read the rows ``index`` left in the previous export, once it is checked against
        its manifest digest (a ``PreviousBundleError`` when it is not: the build starts
        again, full). The export task calls this, so that the build itself never waits
        for a read and a hash of the whole previous export."""
        if self.source is None:
            return
        from oracl.core.errors import PreviousBundleError

        path, digest = self.source
        try:
            export = path.read_bytes()
        except OSError as exc:
            raise PreviousBundleError(f"the previous export could not be read ({type(exc).__name__})") from None
        if hashlib.sha256(export).hexdigest() != digest:
            raise PreviousBundleError("the previous export does not match its manifest")
        blob = memoryview(export)  # the file the manifest names: ``index`` checked the spans against its size
        for p, (n_off, n_len, e_off, e_len) in self.spans.items():
            seg = self.files[p]
            seg.nodes, seg.edges = blob[n_off:n_off + n_len], blob[e_off:e_off + e_len]
        self.spans, self.source = {}, None

    # -- reading --------------------------------------------------------------------------
    def ordered(self) -> list[str]:
        return sorted(self.files, key=lambda p: p + "#")

    def section(self) -> bytes:
        """The export's ``symbols`` value: exactly ``orjson.dumps(pack_symbols(nodes, edges),
        option=OPT_SORT_KEYS)`` of the graph the segments hold."""
        return self.placed()[0]

    def placed(self) -> tuple[bytes, dict[str, tuple[int, int]]]:
        """``section()`` and where each file's node and edge rows start in it."""
        if self.spans:
            raise ValueError("the previous export's rows are not read yet (Segments.attach)")
        order = self.ordered()
        head = b'{"edge_fields":' + _EDGE_FIELDS + b',"edges":['
        middle = b'],"node_fields":' + _NODE_FIELDS + b',"nodes":['
        at: dict[str, list[int]] = {p: [0, 0] for p in order}
        parts: list[bytes | memoryview] = [head]
        offset = len(head)
        for key, gap in ((1, middle), (0, b"]}")):
            first = True
            for p in order:
                seg = self.files[p]
                rows, n = (seg.nodes, seg.n_nodes) if key == 0 else (seg.edges, seg.n_edges)
                if not n:
                    continue
                if not first:
                    parts.append(b",")
                    offset += 1
                first = False
                at[p][key] = offset
                parts.append(rows)
                offset += len(rows)
            parts.append(gap)
            offset += len(gap)
        return b"".join(parts), {p: (a, b) for p, (a, b) in at.items()}

    def counts(self) -> dict[str, Any]:
        """What ``SymbolGraph.counts`` says of the whole graph."""
        by_relation: Counter[str] = Counter()
        for s in self.files.values():
            by_relation.update(s.by_relation)
        return {"symbols": sum(s.n_nodes for s in self.files.values()),
                "edges": sum(s.n_edges for s in self.files.values()),
                "edges_by_relation": dict(sorted(by_relation.items())),
                "calls_unresolved": sum(s.unresolved for s in self.files.values()),
                "calls_too_ambiguous": sum(s.dropped for s in self.files.values())}

    # -- the bundle's file: an index into the bundle's export, which holds the rows ----------
    def encode(self, placed: dict[str, tuple[int, int]], base: int) -> bytes:
        """``symbols.seg``: each file's interface, counts and where its rows lie in the
        export (``placed`` from ``placed()``, ``base`` the offset of the section in the
        export's bytes). The rows themselves are not copied: the export holds them."""
        index = {p: [s.interface, base + placed[p][0], len(s.nodes), base + placed[p][1], len(s.edges), s.n_nodes,
                     s.n_edges, s.by_relation, s.unresolved, s.dropped]
                 for p in self.ordered() for s in (self.files[p],)}
        return orjson.dumps({"format": FORMAT, "files": index})

    @classmethod
    def index(cls, data: bytes, export: Path, digest: str, size: int) -> Segments:
        """The segments a ``symbols.seg`` places in its bundle's export (the file
        ``export`` of ``size`` bytes, whose manifest digest is ``digest``), their rows not
        read yet: ``attach`` reads them. ValueError when it is not one of this format or a
        segment lies outside the export; the rows stay bytes, never parsed."""
        head = orjson.loads(data)
        if not isinstance(head, dict) or head.get("format") != FORMAT:
            raise ValueError("not a symbols file of this format")
        out = cls(source=(export, digest))
        for p, (iface, n_off, n_len, e_off, e_len, n_nodes, n_edges, rel, unresolved, dropped) in head["files"].items():
            if min(n_off, e_off, n_len, e_len) < 0 or n_off + n_len > size or e_off + e_len > size:
                raise ValueError("a segment lies outside the export")
            out.files[p] = Segment(iface, b"", b"", n_nodes, n_edges, rel, unresolved, dropped)
            out.spans[p] = (n_off, n_len, e_off, e_len)
        return out

    @classmethod
    def decode(cls, data: bytes, export: bytes) -> Segments:
        """The segments a ``symbols.seg`` places in its bundle's ``export`` bytes, read."""
        blob = memoryview(export)
        out = cls.index(data, Path(), "", len(blob))
        for p, (n_off, n_len, e_off, e_len) in out.spans.items():
            seg = out.files[p]
            seg.nodes, seg.edges = blob[n_off:n_off + n_len], blob[e_off:e_off + e_len]
        out.spans, out.source = {}, None
        return out


def reusable(bundle: Path, manifest_files: dict[str, str], facts: list[FileFacts], reread: list[str],
             removed: list[str], previous: dict[str, FileFacts]) -> tuple[Segments | None, str]:
    """The previous build's segments when only the files read again need their rows made
    (every one of them kept its interface, no file came or went, no path holds a ``#``),
    and why (not)."""
    if removed or any(p not in previous for p in reread):
        return None, "files were added or removed"
    if any("#" in f.path for f in facts):
        return None, "a path holds a '#'"
    try:
        data = (bundle / SYMBOLS_FILE).read_bytes()
        size = (bundle / EXPORT).stat().st_size
    except OSError:
        return None, f"the previous build has no {SYMBOLS_FILE} or export"
    if manifest_files.get(SYMBOLS_FILE) != hashlib.sha256(data).hexdigest():
        return None, f"{SYMBOLS_FILE} does not match its manifest"
    digest = manifest_files.get(EXPORT)
    if not isinstance(digest, str):
        return None, "the previous manifest lists no export"
    try:  # the export's rows are read, and it is checked against the manifest, by the export task
        segs = Segments.index(data, bundle / EXPORT, digest, size)
    except (ValueError, TypeError, KeyError, orjson.JSONDecodeError):
        return None, f"{SYMBOLS_FILE} is unreadable"
    if len(segs.files) != len(facts) or any(f.path not in segs.files for f in facts):
        return None, f"{SYMBOLS_FILE} does not list the same files"
    by_path = {f.path: f for f in facts}
    for p in reread:
        if interface(by_path[p]) != segs.files[p].interface:
            return None, f"{p} changed what other files' names resolve to"
    return segs, f"the rows of {len(reread):,} changed file{'' if len(reread) == 1 else 's'} made again, the others reused"
