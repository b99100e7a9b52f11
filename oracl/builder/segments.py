"""The symbol graph kept per file (``symbols.seg`` in every bundle), so that a selective
rebuild pays for the files that changed and not for the repository.

A *segment* is one file's share of the export's ``symbols`` section: its symbols' packed
rows and the packed rows of the edges whose source is one of its symbols, as the bytes the
export holds, with the file's ``interface`` digest and its counts. Files are ordered by
``path + "#"``, which is the order of their symbols' ids (``path#qualified``) when no path
holds a ``#``; within a file the rows keep the phase's order. So the export's section is
the segments joined, byte for byte what ``pack_symbols`` of the whole graph gives, and a
rebuild whose changed files kept their interface re-encodes only those files.

``symbols.seg``: one line of JSON (the format, each file's interface, offsets and counts
into the blob that follows), a newline, the blob.

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
from oracl.core.vault import SYMBOLS_FILE

FORMAT = 1
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
        files = dict(self.files)
        for p in paths:
            files[p] = fresh.files[p]
        return Segments(files)

    # -- reading --------------------------------------------------------------------------
    def ordered(self) -> list[str]:
        return sorted(self.files, key=lambda p: p + "#")

    def section(self) -> bytes:
        """The export's ``symbols`` value: exactly ``orjson.dumps(pack_symbols(nodes, edges),
        option=OPT_SORT_KEYS)`` of the graph the segments hold."""
        segs = [self.files[p] for p in self.ordered()]
        edges = b",".join(s.edges for s in segs if s.n_edges)
        nodes = b",".join(s.nodes for s in segs if s.n_nodes)
        return b"".join((b'{"edge_fields":', _EDGE_FIELDS, b',"edges":[', edges, b'],"node_fields":', _NODE_FIELDS,
                         b',"nodes":[', nodes, b"]}"))

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

    # -- the bundle's file ----------------------------------------------------------------
    def encode(self) -> bytes:
        index: dict[str, list[Any]] = {}
        blob: list[bytes] = []
        offset = 0
        for p in self.ordered():
            s = self.files[p]
            nb, eb = len(s.nodes), len(s.edges)
            index[p] = [s.interface, offset, nb, offset + nb, eb, s.n_nodes, s.n_edges, s.by_relation, s.unresolved,
                        s.dropped]
            blob.append(s.nodes)
            blob.append(s.edges)
            offset += nb + eb
        return b"".join([orjson.dumps({"format": FORMAT, "files": index}), b"\n", *blob])

    @classmethod
    def decode(cls, data: bytes) -> Segments:
        """The segments of a ``symbols.seg`` (ValueError when it is not one of this format);
        the rows stay bytes, never parsed."""
        cut = data.index(b"\n")
        head = orjson.loads(data[:cut])
        if not isinstance(head, dict) or head.get("format") != FORMAT:
            raise ValueError("not a symbols file of this format")
        blob = memoryview(data)[cut + 1:]
        out = cls()
        for p, (iface, n_off, n_len, e_off, e_len, n_nodes, n_edges, rel, unresolved, dropped) in head["files"].items():
            if n_off + n_len > len(blob) or e_off + e_len > len(blob):
                raise ValueError("a segment runs past the end of the file")
            out.files[p] = Segment(iface, blob[n_off:n_off + n_len], blob[e_off:e_off + e_len], n_nodes, n_edges,
                                   rel, unresolved, dropped)
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
    except OSError:
        return None, f"the previous build has no {SYMBOLS_FILE}"
    if manifest_files.get(SYMBOLS_FILE) != hashlib.sha256(data).hexdigest():
        return None, f"{SYMBOLS_FILE} does not match its manifest"
    try:
        segs = Segments.decode(data)
    except (ValueError, TypeError, KeyError, orjson.JSONDecodeError):
        return None, f"{SYMBOLS_FILE} is unreadable"
    if len(segs.files) != len(facts) or any(f.path not in segs.files for f in facts):
        return None, f"{SYMBOLS_FILE} does not list the same files"
    by_path = {f.path: f for f in facts}
    for p in reread:
        if interface(by_path[p]) != segs.files[p].interface:
            return None, f"{p} changed what other files' names resolve to"
    return segs, f"the rows of {len(reread):,} changed file{'' if len(reread) == 1 else 's'} made again, the others reused"
