"""Each file's Phase 2 and Phase 3 edges, kept in every bundle (``edges.NN.bin``, sharded
by path as the facts are, listed with their SHA-256 in ``facts.bin``'s head as
``edge_shards``), so that a cold build makes again only the edges a change can move
(design §7b step 5).

A file's edges of both phases are a function of its facts and of what the other files
show the providers (``providers.edge_interface``). So when no file came or went and every
file read again kept its edge interface, the edges made again are those of the files read
again and of the files with an edge into one of them (``providers.edges_to_make``, as a
long-lived builder decides it for the lists it keeps in memory); the others are the
latest build's, read back here, each shard checked against its digest. A file added or
removed makes again its own edges and those of the files whose making looked it up (the
lookups each file's edges made are kept here too: ``Kept.reading``). Anything else (no
shards, a damaged one, an ``__init__.py`` added or removed) makes every file's edges again.

A shard holds, for each file, its run of the merged edges with what the merge dropped of
its edges (``merge.BySource``, merged with the overlay and tail whose digest the facts
head lists as ``edges_merged_with``), and its Phase 2 and Phase 3 lists as a JSON blob of
their own; an edge is the list of its fields (orjson, never pickle). The runs are a head
of their own in ``marshal`` (tuples, strings, numbers and dicts only: nothing in it runs
when it is read, and it is read only once the shard's digest is checked), at version 2,
which writes no references, so that equal runs are equal bytes whatever else holds their
strings (a shard whose bytes are the latest's is linked, not written): at 50,000 files
the runs' JSON was 35 MB and 1.4 s to decode, their marshal 40 MB and 0.55 s. A cold build then
makes ``Edge`` objects of the runs alone, merges again only the files whose edges it made
again, finds the files with an edge into a changed one from the runs (``Kept``), and
decodes the lists of the files it compares (``edge_lists.EdgeLists``). A build writes the shards
that hold a file whose edges it made again, added or removed, and whose bytes differ from
the latest's; the others are hard links.
"""

from __future__ import annotations

import hashlib
import marshal
import os
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from oracl.builder.extractors.providers import PHASE2, PHASE3
from oracl.builder.incremental import Previous, shard_of
from oracl.builder.pipeline.edge_lists import Blobs, EdgeLists, edge_row
from oracl.builder.pipeline.merge import BySource
from oracl.core.records import Edge, FileFacts

FORMAT = 4  # 4: the runs in marshal (3: in the JSON head)
MARSHAL = 2  # marshal's version: no references, so equal runs are equal bytes
ByFile = tuple[Mapping[str, list[Edge]], Mapping[str, list[Edge]]]
MERGED_WITH = "edges_merged_with"  # facts.bin's head: the digest of the overlay and tail the runs were merged with


def shard_name(path: str) -> str:
    """The shard file that holds ``path``'s edges (the same shard index as its facts')."""
    return f"edges.{shard_of(path):02x}.bin"


def _rows(lists: Mapping[str, list[Edge]], path: str) -> list[Any]:
    return lists.rows(path) if isinstance(lists, EdgeLists) else [edge_row(e) for e in lists[path]]


def encode_shard(paths: Iterable[str], by_file: ByFile, merged: BySource,
                 reads: Callable[[str], list[str] | None]) -> bytes:
    """The head's length (8 bytes, little-endian), the head ``(format, {path: (merged rows,
    drops, start, size)})`` in marshal, a line of each file's recorded lookups (``{path:
    [key, …] | null}``: ``reads``, null when not known), then each file's ``[Phase 2 rows,
    Phase 3 rows]`` as JSON at ``start`` (``size`` bytes): its run of the merged edges and
    what the merge dropped of its edges (``BySource``), read by every cold build; what its
    edges looked up, read when a file came or went; its lists, decoded only for the files
    read. A file's lists neither phase made again are the latest's bytes, copied."""
    files: dict[str, tuple[Any, ...]] = {}
    looked: dict[str, list[str] | None] = {}
    blob: list[bytes | memoryview] = []
    at = 0
    two, three = by_file
    for p in paths:
        kept = two.blob(p, three) if isinstance(two, EdgeLists) else None
        data = kept if kept is not None else orjson.dumps([_rows(two, p), _rows(three, p)])
        files[p] = (tuple(edge_row(e) for e in merged.edges.get(p, ())), dict(merged.dropped.get(p, {})), at,
                    len(data))
        looked[p] = reads(p)
        blob.append(data)
        at += len(data)
    head = marshal.dumps((FORMAT, files), MARSHAL)
    return len(head).to_bytes(8, "little") + head + orjson.dumps(looked) + b"\n" + b"".join(blob)


def merged_with(overlay: Iterable[Edge], tail: Iterable[Edge]) -> str:
    """The digest of what besides the files' own edges their runs were merged with."""
    return hashlib.sha256(orjson.dumps([[edge_row(e) for e in overlay], [edge_row(e) for e in tail]])).hexdigest()


@dataclass(slots=True)
class Kept:
    """The latest build's edges, from its shards: each file's lists of each phase (made
    ``Edge`` objects only when read), and each file's run of the merged edges with its
    drops (rows) and the digest of the overlay and tail they were merged with."""

    lists: tuple[EdgeLists, EdgeLists]
    runs: dict[str, Any]  # (each run: a tuple of rows, each a tuple of the edge's fields)
    drops: dict[str, dict[str, int]]
    made_with: str
    reads_lines: dict[str, bytes] = field(default_factory=dict)  # each shard's line of recorded lookups
    shard_reads: dict[str, dict[str, list[str] | None]] = field(default_factory=dict)  # (decoded when read)

    def reads_of(self, path: str) -> list[str] | None:
        """What making ``path``'s edges looked up (``IndexView.read``), None when not known."""
        name = shard_name(path)
        got = self.shard_reads.get(name)
        if got is None:
            got = self.shard_reads[name] = orjson.loads(self.reads_lines[name]) if name in self.reads_lines else {}
        return got.get(path)

    def reading(self, keys: set[str]) -> set[str]:
        """The latest's files whose edges looked up one of ``keys``, or whose lookups are
        not known."""
        out: set[str] = set()
        for path in self.runs:
            looked = self.reads_of(path)
            if looked is None or any(k in keys for k in looked):
                out.add(path)
        return out

    def sources_into(self, changed: set[str]) -> set[str]:
        """The files with a Phase 2 or Phase 3 edge into one of ``changed`` (but itself):
        read from the merged runs, where each such edge left one with its key (its target
        is a file, so it was not dangling)."""
        phases = (PHASE2, PHASE3)
        return {s for s, run in self.runs.items()
                if s not in changed and any(row[1] in changed and row[6] in phases for row in run)}

    def merge(self, overlay: list[Edge], tail: list[Edge]) -> BySource | None:
        """The latest's merge source by source, when its runs were merged with this
        ``overlay`` and ``tail`` (the latest's history's edges, had again:
        ``history.Moved.edges``): what ``merge_by_source`` keeps for the files not made
        again and whose overlay and tail edges did not move (over the latest's files, which a
        caller keeping it has)."""
        if not self.made_with or merged_with(overlay, tail) != self.made_with:
            return None
        return self.latest(overlay, tail)

    def latest(self, overlay: list[Edge], tail: list[Edge]) -> BySource:
        """The latest's merge source by source, said to be made with ``overlay`` and
        ``tail`` (what another merge is compared with: ``merge.runs_moved``)."""
        edges = {s: [Edge._make(row) for row in run] for s, run in self.runs.items() if run}
        dropped: dict[str, Mapping[str, int]] = {s: d for s, d in self.drops.items() if d}
        return BySource(edges, dropped, (list(overlay), list(tail)), set(self.runs))


def read_edges(previous: Previous | None) -> Kept | None:
    """The latest build's edges (``Kept``), from its shards (each checked against the
    digest its facts head lists); None when it has none, one is missing or damaged, or
    they do not cover exactly its files — and then ``previous`` forgets its shards, so that
    none of them is hard-linked into this build (a damaged shard whose digest says what
    this build would write must not be taken for it)."""
    if previous is None or not previous.edge_shards:
        return None
    out = _read(previous)
    if out is None:
        previous.edge_shards = {}
    return out


def _read(previous: Previous) -> Kept | None:
    blobs: dict[str, bytes | memoryview] = {}
    reads_lines: dict[str, bytes] = {}
    runs: dict[str, Any] = {}
    drops: dict[str, dict[str, int]] = {}
    try:
        shards = sorted(previous.edge_shards.items())
        if any(not isinstance(name, str) or not name.startswith("edges.") or "/" in name for name, _ in shards):
            return None
        datas = [(previous.bundle / name).read_bytes() for name, _ in shards]
    except (OSError, TypeError, AttributeError):
        return None
    # (each shard's digest made in a thread, in order, and checked before its head is
    # decoded: hashlib lets go of the interpreter lock while it hashes)
    pool = ThreadPoolExecutor(1, thread_name_prefix="oracl-digests")
    try:
        digests = [pool.submit(lambda d: hashlib.sha256(d).hexdigest(), data) for data in datas]
        got = _decode(datas, blobs, reads_lines, runs, drops, [name for name, _ in shards],
                      [digest for _, digest in shards], digests)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # (no thread left running for a fork to find)
    if not got:
        return None
    if len(blobs) != len(previous.facts) or any(p not in blobs for p in previous.facts):
        return None
    shared = Blobs(blobs)
    return Kept((EdgeLists(shared, 0), EdgeLists(shared, 1)), runs, drops, previous.edges_merged_with, reads_lines)


def _decode(datas: list[bytes], blobs: dict[str, bytes | memoryview], reads_lines: dict[str, bytes],
            runs: dict[str, Any], drops: dict[str, dict[str, int]], names: list[str],
            want: list[str], digests: list[Future[str]]) -> bool:
    """Each shard's head, lookups line and lists into the tables given; False when one is
    not such a shard or its digest (``digests``: made in a thread, waited for) is not
    ``want``'s: a head is decoded only once its shard is proven the one the facts head lists."""
    try:
        for i, (name, data) in enumerate(zip(names, datas, strict=True)):
            if digests[i].result() != want[i]:
                return False
            if len(data) < 8:
                return False
            size = int.from_bytes(data[:8], "little")
            cut = 8 + size
            second = data.find(b"\n", cut) if cut <= len(data) else -1
            if second < 0:
                return False
            fmt, files = marshal.loads(memoryview(data)[8:cut])
            if fmt != FORMAT or not isinstance(files, dict):
                return False
            reads_lines[name] = data[cut:second]
            body = memoryview(data)[second + 1:]
            end = len(body)
            for path, (run, dropped, start, size) in files.items():
                if not 0 <= start <= start + size <= end or not isinstance(dropped, dict) or not isinstance(run, tuple):
                    return False
                blobs[path], runs[path], drops[path] = body[start:start + size], run, dropped
    except (ValueError, TypeError, KeyError, AttributeError, EOFError):
        return False
    return True


def _holds(previous: Previous | None, name: str, data: bytes) -> bool:
    try:
        return previous is not None and (previous.bundle / name).read_bytes() == data
    except OSError:
        return False


def write_edges(folder: Path, facts: list[FileFacts], by_file: ByFile, merged: BySource, previous: Previous | None,
                moved: set[str] | None, write: Callable[..., Any],
                reads: Callable[[str], list[str] | None],
                groups: Mapping[int, list[str]] | None = None) -> tuple[dict[str, str], dict[str, str]]:
    """The shards of ``by_file`` and ``merged`` in ``folder``: a shard none of whose files is in ``moved``
    (edges made again, files added or removed; None: all) whose file set is the latest's
    is hard-linked from its bundle; another is encoded, and linked all the same when the
    latest's file holds those very bytes. ``groups`` (a long-lived builder's, kept while no
    file came or went: ``incremental.shard_groups`` of these files, which are the latest's):
    no pass over every file. Returns (every shard's SHA-256, those of the shards linked)."""
    old = previous.edge_shards if previous is not None else {}
    was: dict[str, set[str]] | None = None  # (None: each shard's files are the latest's)
    if groups is not None:
        by_shard = {f"edges.{i:02x}.bin": paths for i, paths in groups.items()}
    else:
        by_shard = {}
        for f in facts:
            by_shard.setdefault(shard_name(f.path), []).append(f.path)
        was = {}
        if previous is not None:
            for p in previous.facts:
                was.setdefault(shard_name(p), set()).add(p)
    hit = {shard_name(p) for p in moved} if moved is not None else None
    digests: dict[str, str] = {}
    linked: dict[str, str] = {}

    there, here = (str(previous.bundle), str(folder)) if previous is not None else ("", "")

    def link(name: str) -> bool:
        assert previous is not None
        try:
            os.link(f"{there}/{name}", f"{here}/{name}")
        except OSError:
            return False
        digests[name] = linked[name] = old[name]
        return True

    for name in sorted(by_shard):
        paths = by_shard[name]
        if hit is not None and name not in hit and name in old and (was is None or was.get(name) == set(paths)) \
                and link(name):
            continue
        data = encode_shard(paths, by_file, merged, reads)
        digest = hashlib.sha256(data).hexdigest()
        if old.get(name) == digest and _holds(previous, name, data) and link(name):
            continue  # (its file's bytes compared: a damaged one is never linked for what it should hold)
        write(folder / name, data, durable=False)  # a shard lost to a power cut fails its digest: made again
        digests[name] = digest
    return digests, linked
