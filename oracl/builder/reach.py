"""The graph rows a cold selective build can have moved, and so the rows of the standby it
takes over that it must compare (issue 49: write only what moved, and read back only
what can have).

A build that starts from the latest bundle makes every artifact and edge row again (its
weighting is a whole pass), then brought the standby — the bundle the latest started
from, two builds behind — up to date by reading all of its Artifact, History, Link and
BelongsTo rows back and comparing them (~2 s at 20,003 files). When the weighting's
structure did not move (``weigh.structure_key``: the same files in the same domains with
the same tag sets, the same edges with the same κ, the same settings), the weights,
association values, degrees and raw ranks are the latest's, and a row can differ from the
latest's only where a file's own facts did (the files read again) or, for an edge row,
where an endpoint's did: its artifact id (path, mtime, size) and its fragments. Lines and
fragments reach only the edges that point into a file, and which edges a file has depends
on the other files only through their ``edge_interface``, required unchanged for the files
read again (as ``providers.edges_to_make`` requires it of a long-lived builder's kept
edges). So this build's rows differ from the latest's at most in

* the artifact (and History) rows of the files read again, and
* the edge rows whose source is one of them or has an edge into one of them.

Each bundle records that reach against the bundle it started from in its ``stat.bin``
(``reach``, beside ``structure_sha256``); the next build's standby is that very bundle,
so the standby differs from this build at most in the union of the latest's recorded
reach and this build's. Anything else (no record, another standby, a structure that
moved, a larger change) compares every row, as before.
"""

from __future__ import annotations

import bisect
import hashlib
import sys
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from oracl.builder.extractors.providers import edge_interface
from oracl.builder.incremental import Previous
from oracl.builder.pipeline.weigh import PerEdge, WeightedGraph
from oracl.core.parts import PartStore
from oracl.core.records import FileFacts

if TYPE_CHECKING:
    from oracl.bundle.database import Reach

MAX_RECORDED = 2_000  # paths a bundle records its reach by; more: the next build compares every row


def recorded(bundle: Path) -> dict[str, Any]:
    """The header of ``bundle``'s ``stat.bin`` when it is the one its manifest lists ({}
    otherwise: nothing recorded is then used)."""
    from oracl.core.vault import MANIFEST, STAT_FILE

    try:
        data = (bundle / STAT_FILE).read_bytes()
        manifest = orjson.loads((bundle / MANIFEST).read_bytes())
        if manifest["files"][STAT_FILE] != hashlib.sha256(data).hexdigest():
            return {}
        doc = orjson.loads(data)
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    if not isinstance(doc, dict):
        return {}
    doc.pop("parts", None)
    return doc


def moved_since(previous: Previous, latest: dict[str, Any], reread: list[str], facts: dict[str, FileFacts],
                graph: WeightedGraph, again: set[str] | None = None) -> tuple[frozenset[str], frozenset[str]] | None:
    """(the paths whose artifact rows, the files whose outgoing edge rows) this build can
    differ in from the latest (``previous``, whose ``stat.bin`` header is ``latest``);
    None when its structure moved or a file read again changed what other files' edges
    read of it — unless ``again`` names the files whose edges were made again
    (``providers.edges_to_make``, which found who reads what moved): their edge rows are
    then the ones that can have moved."""
    key = latest.get("structure_sha256")
    if not graph.structure_key or key != graph.structure_key:
        return None
    changed = frozenset(reread)
    for path in changed:
        old = previous.facts.get(path)
        if old is None or (again is None and edge_interface(old) != edge_interface(facts[path])):
            return None
    sources = set(changed) | (again or set())
    ends = graph.endpoints
    if graph.sources_into is not None:  # (a structure proven the latest's: an index of its edges by target)
        sources.update(graph.sources_into(changed))
    elif isinstance(ends, PerEdge):  # (a graph weighed from cold makes its ends when read: its edges' fields)
        sources.update(e.source for e in ends.edges if e.target in changed)
    else:
        sources.update(src for src, dst in ends if dst in changed)
    return changed, frozenset(sources)


def standby_rows(latest: dict[str, Any], standby_of: str, now: tuple[frozenset[str], frozenset[str]] | None
                 ) -> Reach | None:
    """The rows the standby (the bundle ``standby_of``) can differ in from this build: the
    latest's recorded reach against it and this build's against the latest (``now``), or
    None (every row compared)."""
    if now is None or not standby_of:
        return None
    was = latest.get("reach")
    if not isinstance(was, dict) or was.get("base") != standby_of:
        return None
    nodes, sources = was.get("nodes"), was.get("sources")
    if not isinstance(nodes, list) or not isinstance(sources, list):
        return None
    from oracl.bundle.database import Reach  # (pyarrow, when the rows are tabled)

    return Reach(now[0] | frozenset(map(str, nodes)), now[1] | frozenset(map(str, sources)))


def copy_rows(now: tuple[frozenset[str], frozenset[str]] | None) -> Reach | None:
    """The rows a copy of the latest's database can differ in from this build: this
    build's reach against the latest (``now``), or None (every row compared)."""
    if now is None:
        return None
    from oracl.bundle.database import Reach  # (pyarrow, when the rows are tabled)

    return Reach(now[0], now[1])


def record(base: str, now: tuple[frozenset[str], frozenset[str]] | None) -> dict[str, Any] | None:
    """What this build records of its reach against the bundle it started from (``base``),
    for the next build's standby; None when there is none to record or it is too large."""
    if now is None or not base or len(now[0]) + len(now[1]) > MAX_RECORDED:
        return None
    return {"base": base, "nodes": sorted(now[0]), "sources": sorted(now[1])}


@dataclass(frozen=True, slots=True)
class Unmoved:
    """What the export may take from the latest build's parts (``now``: this build's reach
    against it): a group of rows none of whose rows can have moved is the latest's part
    for the same rows, found by the group's keys (node ids; edge sources' ids), those of
    the files read again mapped back to the ids the latest gave them."""

    nodes: list[Any]             # the latest's node parts and edge parts, in order
    edges: list[Any]
    old_ids: dict[str, str]      # this build's id → the latest's, for the files read again
    moved_nodes: frozenset[str]  # the paths whose artifact rows can have moved
    moved_sources: frozenset[str]  # the files whose outgoing edge rows can have moved
    added: frozenset[str] = frozenset()  # the ids of the files the latest did not have
    gone: tuple[str, ...] = ()           # the ids the latest gave the files this build no longer has

    def parts_by_keys(self, keys: list[str], parts: list[Any]) -> dict[tuple[str, ...], Any] | None:
        """The latest's parts by the keys of their groups: its keys are this build's
        (``keys``, sorted) with the ids of the files read again as it gave them, without
        the files added and with the files gone. None when they do not group into as many
        parts as it has (another layout: nothing taken)."""
        from oracl.core.parts import grouped

        # (the keys are sorted and only the read, added and gone files' ids differ: those are
        # put back in place; how often a key repeats does not move where a group ends)
        before = [k for k in keys if k not in self.old_ids and k not in self.added]
        for k in keys:
            if k in self.old_ids:
                bisect.insort(before, self.old_ids[k])
        for k in self.gone:
            bisect.insort(before, k)
        groups = grouped(before)
        if len(groups) != len(parts):
            return None
        return {tuple(before[a:b]): part for (a, b), part in zip(groups, parts, strict=True)}


def _latest_parts(bundle: Path) -> tuple[list[Any], list[Any]] | None:
    """The node and edge parts of ``bundle``'s export index, when the index is the one its
    manifest lists and reads as one (None otherwise: the caller then does it all)."""
    from oracl.core.parts import INDEX, decode_index
    from oracl.core.vault import MANIFEST

    try:
        data = (bundle / INDEX).read_bytes()
        if orjson.loads((bundle / MANIFEST).read_bytes())["files"][INDEX] != hashlib.sha256(data).hexdigest():
            return None
        sections = decode_index(data)["sections"]
        return list(sections["nodes"]), list(sections["edges"])
    except Exception:  # noqa: BLE001 – anything odd: every row is serialised or compared, as before
        return None


def unmoved(bundle: Path, now: tuple[frozenset[str], frozenset[str]] | None, old_ids: dict[str, str],
            added: frozenset[str] = frozenset(), gone: tuple[str, ...] = ()) -> Unmoved | None:
    """``Unmoved`` for the export of a build whose reach against the latest (``bundle``)
    is ``now``; None when there is none or the latest's index cannot be read."""
    parts = _latest_parts(bundle) if now is not None else None
    if now is None or parts is None:
        return None
    return Unmoved(parts[0], parts[1], old_ids, now[0], now[1], added, gone)


@dataclass(frozen=True, slots=True)
class Against:
    """What a cold build whose structure moved finds its reach against: the latest's
    export parts (the digests of its node and edge parts), the latest's files this build
    no longer has (``gone``), and the latest's bundle name (``base``, what the reach is
    recorded against)."""

    nodes: frozenset[str]
    edges: frozenset[str]
    gone: frozenset[str]
    base: str


def against_latest(bundle: Path, gone: list[str]) -> Against | None:
    """``Against`` the latest (``bundle``), or None when its index cannot be read."""
    parts = _latest_parts(bundle)
    if parts is None:
        return None
    return Against(frozenset(p[0] for p in parts[0]), frozenset(p[0] for p in parts[1]), frozenset(gone),
                   bundle.name)


Grouped = tuple[Sequence[str], Sequence[Any], Sequence[str]]  # (keys, parts, each row's path or source)


def reach_of_groups(latest: Against, nodes: Grouped, edges: Grouped
                    ) -> tuple[frozenset[str], frozenset[str]] | None:
    """(the paths whose artifact rows, the files whose outgoing edge rows) can differ from
    the latest's, from the export's groups (``core.parts.grouped`` of the keys, one part
    each): a group whose part is one of the latest's holds the very rows it held (the same
    bytes), so only the rows of the other groups can have moved, and those of the files
    gone. Every file has an artifact row and an edge (its hub membership), so a file whose
    rows moved is in a group that moved. The tables hold what the stored rows hold (the
    stored terms, every tag and count; an edge's endpoints and raw rank), so a row that
    did not move in the export did not move in the database. None past ``MAX_RECORDED``
    (every row is then compared)."""
    from oracl.core.parts import grouped

    out: list[set[str]] = []
    for (keys, parts, owners), digests in ((nodes, latest.nodes), (edges, latest.edges)):
        moved = set(latest.gone)
        for (a, b), part in zip(grouped(keys), parts, strict=True):
            if part[0] not in digests:
                moved.update(p for p in owners[a:b] if p)
        out.append(moved)
    if sum(map(len, out)) > MAX_RECORDED:
        return None
    return frozenset(out[0]), frozenset(out[1])


def put_ranks(store: PartStore, raw: list[float]) -> list[Any]:
    """Each edge's raw rank R, in edge order, as a part of the store (little-endian
    doubles, exact): what ``stat.bin`` records as ``ranks`` for the next build. A build
    whose structure did not move stores the same bytes, so nothing is written."""
    data = array("d", raw)
    if sys.byteorder == "big":
        data.byteswap()
    blob = data.tobytes()
    return [store.put(blob), len(blob)]


def latest_ranks(store: PartStore, latest: dict[str, Any]) -> Callable[[int], list[float] | None]:
    """What reads back the raw ranks the latest build recorded (``latest``: its ``stat.bin``
    header), given how many edges they must be: None when it recorded none, the part is
    missing or damaged (its digest is checked), or the count differs. ``weigh`` uses them
    only when this build's ``structure_key`` is the latest's: equal inputs to the ranker."""

    def read(n: int) -> list[float] | None:
        from oracl.core.errors import DigestError

        entry = latest.get("ranks")
        if not isinstance(entry, list) or len(entry) != 2 or entry[1] != 8 * n:
            return None
        try:
            blob = store.get(str(entry[0]))
        except DigestError:
            return None
        data = array("d")
        data.frombytes(blob)
        if sys.byteorder == "big":
            data.byteswap()
        return data.tolist()

    return read
