"""The export kept as parts (design §7, issue 49 step 3): what a change rewrites is its parts
and a small index, not the whole canonical JSON.

A bundle's export is ``export.idx``, an *index*: the build's header and, section by
section, the SHA-256 and length of each *part* in order. A part is a run of rows, kept
once in the vault's content-addressed store ``.oracl/parts/<2 hex>/<sha256>`` (the digest
of its bytes; the file is one Zstandard frame of them, ``pack``): a build
writes the parts it has not got, and every bundle, snapshot and the vault's top-level
index name parts in the same store. The SHA-256 of the index is the export's *root*
(LATEST, the manifest and ``.sha256`` record it; ``.sig`` signs the index's bytes): the
index names every part by its digest, so the root covers every byte, as a Merkle tree of
two levels.

Rows are grouped by a key, a group closing after a key whose CRC-32 is 0 modulo
``GROUP``: the artifact graph's nodes by their id, its edges by their source, the symbol
graph's rows by their file. A group's bounds depend on its own keys only, so a file added,
changed or removed changes its own group's part and no other.

The artifact graph's rows are kept with what their file determines, not with what the
repository does (design §6 "Stored and derived"): a node's row lacks its priority, P0, δ,
freshness and link density and carries its stored terms under ``"~"``; an edge's lacks its
association rank and carries its raw rank R. ``assemble`` derives those values from the
header's aggregates (``core/derive.py``, as the build does) and gives the canonical export
byte for byte: an edit that moves the newest mtime or μ rewrites no other file's part.

>>> index = write_export(store, header, node_rows, edge_rows, symbols, events)   # doctest: +SKIP
>>> b"".join(assemble(store, index)) == export_bytes(header, nodes, edges, packed)  # doctest: +SKIP
True
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import os
import re
import stat
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from oracl.core import derive
from oracl.core.errors import DigestError
from oracl.core.export import SYMBOL_EDGE_FIELDS, SYMBOL_NODE_FIELDS, r9, rounded
from oracl.core.vault import EXPORT_INDEX, PARTS_DIR, atomic_write, make_dirs

FORMAT = 1
INDEX = EXPORT_INDEX
STORE = PARTS_DIR
GROUP = 16          # the export's rows: a group closes after a key whose CRC-32 % GROUP == 0 (~16 a part)
# (64 until issue 49: an edit rewrites its node's old and new parts and the part of every file with an
# edge into it, since the edge rows name the target's id; docs/decisions.md "Smaller export parts")
MAP_GROUP = 64      # a map readers read whole (``stat.bin``'s rows: every cold query): fewer files to open
_DIGEST = re.compile(r"[0-9a-f]{64}")
SECTIONS = ("edges", "events", "nodes", "symbol_edges", "symbol_nodes")  # the index's sections, as they lie


def closes(key: str, group: int = GROUP) -> bool:
    """Whether a group closes after ``key`` (its own bytes decide, nothing else; ``group``:
    the modulus, ``GROUP`` for the export's rows, ``MAP_GROUP`` for a map's entries).

    >>> [k for k in ("a.py", "b.py", "c.py", "x", "y") if closes(k)]  # CRC-32 % 16: 14, 0, 5, 3, 5
    ['b.py']
    >>> closes("lib/util_7.py") == (zlib.crc32(b"lib/util_7.py") % GROUP == 0)
    True
    """
    return zlib.crc32(key.encode("utf-8", "surrogatepass")) % group == 0


def grouped(keys: Sequence[str], group: int = GROUP) -> list[tuple[int, int]]:
    """The ``[start, end)`` runs of ``keys`` (sorted, equal keys together) that make the
    parts: a run ends after the last of equal keys that ``closes``.

    >>> grouped([])
    []
    >>> grouped(["a", "a", "b"])  # none of them closes: one run
    [(0, 3)]
    """
    out: list[tuple[int, int]] = []
    start, n = 0, len(keys)
    for i, k in enumerate(keys):
        if (i + 1 == n or keys[i + 1] != k) and closes(k, group):
            out.append((start, i + 1))
            start = i + 1
    if start < n:
        out.append((start, n))
    return out


@dataclass(slots=True)
class PartStore:
    """The vault's content-addressed parts: ``root/<2 hex>/<sha256>``."""

    root: Path
    written: int = 0        # parts this process wrote (a build's report)
    written_bytes: int = 0
    seen: set[str] = field(default_factory=set)  # digests known to be in the store (written or checked)

    def path(self, digest: str) -> Path:
        if not _DIGEST.fullmatch(digest):
            raise DigestError(f"the export's index names a part {digest[:70]!r}, which is not a SHA-256")
        return self.root / digest[:2] / digest

    def put(self, data: bytes, *, rewrite: bool = False, packed: bool = False) -> str:
        """Store ``data`` (when the store lacks it, or always with ``rewrite``: a full
        build heals a damaged part) and return its digest. Not synced to the disk: a part a
        power cut loses fails its digest, and the next build starts again, whole.
        ``packed``: kept as one Zstandard frame (the export's rows, which only builders,
        ``export`` and ``verify`` read); else as the bytes themselves (what a cold query
        reads, which then needs no codec)."""
        digest = hashlib.sha256(data).hexdigest()
        if digest in self.seen and not rewrite:
            return digest
        path = self.path(digest)
        if rewrite or not _same_size(path, len(data)):
            kept = pack(data) if packed else data
            if len(kept) >= len(data):  # (a few bytes: a frame would be larger, kept as they are)
                kept = data
            atomic_write(path, kept, durable=False)
            self.written += 1
            self.written_bytes += len(kept)
        self.seen.add(digest)
        return digest

    def has(self, digest: str, size: int) -> bool:
        if digest in self.seen:
            return True
        if _same_size(self.path(digest), size):
            self.seen.add(digest)
            return True
        return False

    def get(self, digest: str) -> bytes:
        """A part's bytes, checked against its name (a DigestError names what is wrong)."""
        path = self.path(digest)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            raise DigestError(f"the export's part {digest[:16]}… is missing from {self.root}") from None
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise DigestError(f"the export's part {digest[:16]}… is not a regular file")
            raw = fh.read()
        # a frame when it begins like one and what it holds is the part; else the file's own
        # bytes (a plain part may begin like a frame: raw doubles, say). One hash in the usual case.
        data, failure = None, None
        if raw[:4] == ZSTD_MAGIC:
            try:
                data = unpack(raw, digest)
            except DigestError as exc:
                failure = exc
            if data is not None and hashlib.sha256(data).hexdigest() != digest:
                data = None
        if data is None:
            if hashlib.sha256(raw).hexdigest() != digest:
                raise failure or DigestError(f"the export's part {digest[:16]}… does not match its digest")
            data = raw
        self.seen.add(digest)
        return data

    def prune(self, keep: set[str]) -> int:
        """Remove the parts no index names (``keep``); returns how many went."""
        gone = 0
        if not self.root.is_dir():
            return 0
        for sub in self.root.iterdir():
            if not sub.is_dir() or sub.is_symlink():
                continue
            for f in sub.iterdir():
                if f.name not in keep:
                    with contextlib.suppress(OSError):
                        f.unlink()
                        gone += 1
                        self.seen.discard(f.name)
        return gone


def _same_size(path: Path, size: int) -> bool:
    """Whether ``path`` is a regular file holding a part of ``size`` bytes: kept as its
    bytes, by its own size; kept as a frame (smaller), by the size its header records."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode):
        return False
    if st.st_size == size:
        return True
    if st.st_size > size:
        return False
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        head = os.pread(fd, 18, 0)
    finally:
        os.close(fd)
    return content_size(head) == size


# ---- a part's bytes on disk: one Zstandard frame -------------------------------------------

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
ZSTD_LEVEL = 1        # 153.8 MB of parts (20k files) → 23.5 MB in 0.29 s; level 3: 23.1 MB in 0.42 s
MAX_PART = 1 << 31    # a frame that says it holds more is not one of ours


def pack(data: bytes) -> bytes:
    """A part as the store keeps it: one Zstandard frame (RFC 8878) that records its
    content size. The digest names the bytes it holds, not the frame."""
    import pyarrow as pa  # (its codec: a dependency already, no other package)

    return pa.Codec("zstd", ZSTD_LEVEL).compress(data, asbytes=True)


def content_size(head: bytes) -> int | None:
    """The content size a Zstandard frame header records (RFC 8878 §3.1.1.1), or None.

    >>> content_size(bytes.fromhex("28b52ffd" "20" "05"))  # single segment, a 1-byte size
    5
    >>> content_size(bytes.fromhex("28b52ffd" "60" "2c01"))  # single segment, 2 bytes: 300 - 256
    556
    >>> content_size(bytes.fromhex("28b52ffd" "00" "58")) is None  # no size recorded
    True
    """
    if len(head) < 6 or head[:4] != ZSTD_MAGIC:
        return None
    flags = head[4]
    fcs, single, dict_id = flags >> 6, (flags >> 5) & 1, flags & 3
    width = (single, 2, 4, 8)[fcs]
    if not width:
        return None
    at = 5 + (0 if single else 1) + (0, 1, 2, 4)[dict_id]
    if len(head) < at + width:
        return None
    value = int.from_bytes(head[at:at + width], "little")
    return value + 256 if width == 2 else value


def unpack(raw: bytes, digest: str) -> bytes:
    """A stored part's bytes: its frame decompressed (bytes that are no frame, as they are:
    the caller checks them against the digest)."""
    if raw[:4] != ZSTD_MAGIC:
        return raw
    size = content_size(raw[:18])
    if size is None or size > MAX_PART:
        raise DigestError(f"the export's part {digest[:16]}… is not a frame this store writes")
    import pyarrow as pa

    try:
        return pa.Codec("zstd").decompress(raw, decompressed_size=size, asbytes=True)
    except (OSError, ValueError, pa.ArrowException):
        raise DigestError(f"the export's part {digest[:16]}… does not decompress") from None


# a long-lived builder's: the parts each store is known to hold (``keep_known``), by store folder
_KNOWN: dict[Path, set[str]] = {}


def keep_known(vault_dir: Path, keep: bool) -> None:
    """Whether this process's stores of ``vault_dir`` share, from one build to the next,
    the digests they know the store holds (written, checked by ``has`` or read): a
    long-lived builder whose memory is the latest build's (``Carry``), so that a build
    does not look up again each part of the ~1,300 groups it keeps (0.04–0.06 s of a
    resident build at 20k files). Parts go from the store only by a build's prune (which
    forgets them here) or by another process's build; a builder that did not make the
    latest build calls this with ``keep`` False, which forgets every digest."""
    folder = vault_dir / STORE
    if keep:
        _KNOWN.setdefault(folder, set())
    else:
        _KNOWN.pop(folder, None)


def store_of(vault_dir: Path) -> PartStore:
    make_dirs(vault_dir / STORE)
    folder = vault_dir / STORE
    known = _KNOWN.get(folder)
    return PartStore(folder) if known is None else PartStore(folder, seen=known)


# ---- the artifact graph's rows: stored, and derived when assembled -----------------------

def stored_node(row: Mapping[str, Any], st: derive.Stored) -> dict[str, Any]:
    """A node's row as a part keeps it: the derived values out, the stored terms in (exact:
    orjson writes the shortest text that reads back to the same double)."""
    out = dict(row)
    if row["kind"] == "artifact":
        del out["priority"], out["link_density"]
        detail = dict(row["priority_detail"])
        del detail["base"], detail["delta"]
        comp = dict(detail["components"])
        del comp["freshness"]
        detail["components"] = comp
        out["priority_detail"] = detail
        out["~"] = [st.p_sum, st.p_mult, st.fresh_e, st.m_role, st.assoc, st.degree]
    else:
        del out["delta"], out["link_density"]
        out["~"] = [st.assoc, st.degree]
    return out


def stored_edge(row: Mapping[str, Any], raw: float) -> dict[str, Any]:
    out = dict(row)
    del out["association_rank"]
    out["~"] = raw
    return out


def derived_node(row: dict[str, Any], t: derive.Terms) -> dict[str, Any]:
    """A stored node row with its derived values, exactly as the weighting phase writes
    them (``builder/pipeline/weigh.py``)."""
    terms = row.pop("~")
    if row["kind"] == "artifact":
        p_sum, p_mult, fresh_e, m_role, assoc, degree = terms
        row["priority"] = r9(derive.priority(t, p_sum, p_mult, fresh_e, m_role, assoc, row["size_bytes"] > 0))
        row["link_density"] = r9(derive.link_density(t, degree))
        detail = row["priority_detail"]
        detail["base"] = r9(derive.base(t, p_sum, p_mult, fresh_e))
        detail["delta"] = r9(derive.delta(t, assoc))
        detail["components"]["freshness"] = r9(derive.freshness(t, fresh_e))
    else:
        assoc, degree = terms
        row["delta"] = r9(derive.delta(t, assoc))
        row["link_density"] = r9(derive.link_density(t, degree))
    return row


def derived_edge(row: dict[str, Any], t: derive.Terms) -> dict[str, Any]:
    row["association_rank"] = r9(derive.rank(t, row.pop("~")))
    return row


def stored_terms(rows: Iterable[dict[str, Any]], key: Callable[[dict[str, Any]], str]) -> dict[str, derive.Stored]:
    """The stored terms of the node rows of parts (``repair``: exact, not made again from
    rounded values), by ``key`` of each row."""
    out: dict[str, derive.Stored] = {}
    for row in rows:
        terms = row["~"]
        if row["kind"] == "artifact":
            p_sum, p_mult, fresh_e, m_role, assoc, degree = terms
            out[key(row)] = derive.Stored(p_sum, p_mult, fresh_e, m_role, assoc, int(degree))
        else:
            out[key(row)] = derive.Stored(0.0, 0.0, 0.0, 0.0, terms[0], int(terms[1]))
    return out


# ---- writing ------------------------------------------------------------------------------

Parts = list[list[Any]]  # [[digest, length], …] in order


def put_rows(store: PartStore, rows: Sequence[Any], keys: Sequence[str], *, rewrite: bool = False) -> Parts:
    """Rows (JSON values) in parts by ``keys`` (one per row, sorted): each part the rows
    of its group as the export writes them, comma-joined, no brackets."""
    out: Parts = []
    for a, b in grouped(keys):
        data = orjson.dumps(rows[a:b], option=orjson.OPT_SORT_KEYS)[1:-1]
        out.append([store.put(data, rewrite=rewrite, packed=True), len(data)])
    return out


def put_groups(store: PartStore, keys: Sequence[str], rows_of: Callable[[int, int], list[Any]],
               kept: Callable[[int, int], list[Any] | None], *, rewrite: bool = False) -> Parts:
    """``put_rows`` of the rows ``rows_of(a, b)`` makes for each group ``[a, b)`` of
    ``keys``, save the groups for which ``kept(a, b)`` names a part already in the store
    holding exactly those rows: that part again, its rows never made."""
    out: Parts = []
    for a, b in grouped(keys):
        part = None if rewrite else kept(a, b)
        if part is None:
            data = orjson.dumps(rows_of(a, b), option=orjson.OPT_SORT_KEYS)[1:-1]
            part = [store.put(data, rewrite=rewrite, packed=True), len(data)]
        out.append(part)
    return out


@dataclass(slots=True)
class _Run:
    sort: list[Any]      # the rows' sort keys, ascending
    group: list[str]     # each row's group key (``grouped``'s keys)
    rows: list[bytes]    # each row serialised
    part: list[Any] | None = None  # [digest, length] once put; None: to be put


class KeptSection:
    """A section's rows kept serialised by a long-lived builder and patched in place: the
    rows in sort-key order, cut into parts exactly as ``grouped`` cuts them, each part kept
    with its rows. ``remove``, ``insert`` and ``replace`` touch one part's rows; ``parts``
    regroups and puts only the parts a change touched, and gives the same parts as
    ``put_rows`` of every row (a part is its rows' bytes comma-joined). A row's group key
    must be the first element of its sort key (or the sort key itself), so equal groups lie
    together and a change stays inside the parts around it.

    >>> s = KeptSection.of(["a", "b"], ["a", "b"], [b"1", b"2"])
    >>> s.insert("ab", "ab", b"3"); [r.rows for r in s.runs]
    [[b'1', b'3', b'2']]
    """

    __slots__ = ("runs", "firsts", "modulus", "packed")

    def __init__(self, runs: list[_Run], modulus: int = GROUP, packed: bool = True) -> None:
        self.runs = runs
        self.firsts = [r.sort[0] for r in runs]  # (each run's rows are ≥ its first and < the next run's)
        self.modulus, self.packed = modulus, packed  # (as ``put_rows`` cuts and keeps; a map: MAP_GROUP, plain)

    @classmethod
    def of(cls, sort: Sequence[Any], group: Sequence[str], rows: Sequence[bytes], *, modulus: int = GROUP,
           packed: bool = True) -> KeptSection:
        """Rows already in sort-key order."""
        return cls([_Run(list(sort[a:b]), list(group[a:b]), list(rows[a:b])) for a, b in grouped(group, modulus)],
                   modulus, packed)

    def _run(self, key: Any) -> _Run:
        i = bisect.bisect_right(self.firsts, key) - 1
        if i < 0:  # (before every row: the first run's, which now starts with it)
            i = 0
            self.firsts[0] = key
        return self.runs[i]

    def remove(self, key: Any) -> None:
        run = self._run(key) if self.runs else None
        j = bisect.bisect_left(run.sort, key) if run is not None else 0
        if run is None or j == len(run.sort) or run.sort[j] != key:
            raise KeyError(key)
        del run.sort[j], run.group[j], run.rows[j]
        run.part = None

    def insert(self, key: Any, group: str, row: bytes) -> None:
        if not self.runs:
            self.runs.append(_Run([], [], []))
            self.firsts.append(key)
        run = self._run(key)
        j = bisect.bisect_right(run.sort, key)
        run.sort.insert(j, key)
        run.group.insert(j, group)
        run.rows.insert(j, row)
        run.part = None

    def replace(self, key: Any, row: bytes) -> None:
        run = self._run(key)
        j = bisect.bisect_left(run.sort, key)
        if j == len(run.sort) or run.sort[j] != key:
            raise KeyError(key)
        if run.rows[j] != row:
            run.rows[j] = row
            run.part = None

    def parts(self, store: PartStore, *, rewrite: bool = False, wrap: tuple[bytes, bytes] = (b"", b"")) -> Parts:
        """The section's parts: a run a change touched is grouped again with the runs after
        it up to the next bound ``grouped`` would place, and put; every other run's part is
        the one it had. ``wrap``: what each part begins and ends with (``{`` and ``}`` for
        a map's entries, ``put_map``'s parts)."""
        runs: list[_Run] = []
        old, i = self.runs, 0
        while i < len(old):
            run = old[i]
            if run.part is not None and not rewrite:
                runs.append(run)
                i += 1
                continue
            sort, group, rows = run.sort, run.group, run.rows
            while i + 1 < len(old) and not (group and closes(group[-1], self.modulus)
                                            and old[i + 1].group[:1] != group[-1:]):
                i += 1
                sort, group, rows = sort + old[i].sort, group + old[i].group, rows + old[i].rows
            i += 1
            for a, b in grouped(group, self.modulus):
                data = wrap[0] + b",".join(rows[a:b]) + wrap[1]
                part = [store.put(data, rewrite=rewrite, packed=self.packed), len(data)]
                runs.append(_Run(sort[a:b], group[a:b], rows[a:b], part))
        self.runs = runs
        self.firsts = [r.sort[0] for r in runs]
        return [r.part for r in runs]  # type: ignore[misc]


def encode_index(header: dict[str, Any], sections: dict[str, Parts]) -> bytes:
    """The index: the header as the export holds it and each section's parts."""
    return orjson.dumps({"format": FORMAT, "header": rounded(header), "sections": sections},
                        option=orjson.OPT_SORT_KEYS)


def decode_index(data: bytes) -> dict[str, Any]:
    """An index, its shape checked (a DigestError when it is not one of this format)."""
    try:
        doc = orjson.loads(data)
        ok = (isinstance(doc, dict) and doc.get("format") == FORMAT and isinstance(doc.get("header"), dict)
              and isinstance(doc.get("sections"), dict))
        for name, parts in doc["sections"].items() if ok else ():
            ok = ok and name in SECTIONS and isinstance(parts, list) and all(
                isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) and _DIGEST.fullmatch(p[0])
                and isinstance(p[1], int) and p[1] > 0 for p in parts)
    except (orjson.JSONDecodeError, TypeError, KeyError):
        ok = False
    if not ok:
        raise DigestError(f"{INDEX} is not an export index of format {FORMAT}")
    return doc


def digests(index: dict[str, Any]) -> set[str]:
    return {p[0] for parts in index["sections"].values() for p in parts}


# ---- assembling -----------------------------------------------------------------------------

_NODE_FIELDS = orjson.dumps(list(SYMBOL_NODE_FIELDS))
_EDGE_FIELDS = orjson.dumps(list(SYMBOL_EDGE_FIELDS))


def _joined(store: PartStore, parts: Parts, transform: Callable[[bytes], bytes] | None = None) -> Iterator[bytes]:
    for i, (digest, _size) in enumerate(parts):
        if i:
            yield b","
        data = store.get(digest)
        yield transform(data) if transform is not None else data


def assemble(store: PartStore, index: dict[str, Any]) -> Iterator[bytes]:
    """The canonical export's bytes, in pieces (each part checked against its digest as it
    is read; a DigestError stops it): what ``export_bytes`` gives of the same graph."""
    header = index["header"]
    sections = index["sections"]
    t = derive.Terms.from_header(header) if header.get("aggregates") else None

    def rows(data: bytes, one: Callable[[dict[str, Any], derive.Terms], dict[str, Any]]) -> bytes:
        if t is None:
            raise DigestError("the export's header has no aggregates to derive its rows with")
        out = [one(r, t) for r in orjson.loads(b"[" + data + b"]")]
        return orjson.dumps(out, option=orjson.OPT_SORT_KEYS)[1:-1]

    yield b'{"edges":['
    yield from _joined(store, sections.get("edges", []), lambda d: rows(d, derived_edge))
    yield b"]"
    if "events" in sections:
        yield b',"events":'
        yield from (store.get(digest) for digest, _ in sections["events"])
    yield b',"nodes":['
    yield from _joined(store, sections.get("nodes", []), lambda d: rows(d, derived_node))
    yield b'],"schema":'
    yield orjson.dumps(header, option=orjson.OPT_SORT_KEYS)
    yield b',"symbols":{"edge_fields":' + _EDGE_FIELDS + b',"edges":['
    yield from _joined(store, sections.get("symbol_edges", []))
    yield b'],"node_fields":' + _NODE_FIELDS + b',"nodes":['
    yield from _joined(store, sections.get("symbol_nodes", []))
    yield b"]}}"


def assemble_bytes(store: PartStore, index: dict[str, Any]) -> bytes:
    return b"".join(assemble(store, index))


def stored_rows(store: PartStore, index: dict[str, Any], section: str) -> list[dict[str, Any]]:
    """The rows of a section as the parts keep them (``nodes``, ``edges``: with their
    stored terms under ``"~"``)."""
    out: list[dict[str, Any]] = []
    for digest, _size in index["sections"].get(section, []):
        out += orjson.loads(b"[" + store.get(digest) + b"]")
    return out


def latest_export(root: Path, bundle: str | None = None) -> bytes:
    """The canonical export of the latest build of ``root`` (or of the kept ``bundle``),
    assembled from its index and parts, each checked (for scripts and tests; a reader
    goes through ``read/export.py``, under the bundle's reader lock)."""
    from oracl.core.vault import Vault

    vault = Vault(root)
    folder = vault.bundle(bundle or str(vault.read_latest()["bundle"]))
    return assemble_bytes(store_of(vault.dir), decode_index((folder / INDEX).read_bytes()))


# ---- maps kept in parts: ``stat.bin``'s rows -------------------------------------------------

def put_map(store: PartStore, mapping: dict[str, Any], *, rewrite: bool = False) -> Parts:
    """A map from paths in parts, grouped by key as rows are (``MAP_GROUP``, kept plain:
    every cold query reads ``stat.bin``'s whole): each part a JSON object of its group's
    entries, so a change writes its own group's part."""
    keys = sorted(mapping)
    out: Parts = []
    for a, b in grouped(keys, MAP_GROUP):
        data = orjson.dumps({k: mapping[k] for k in keys[a:b]})
        out.append([store.put(data, rewrite=rewrite), len(data)])
    return out


def map_entry(key: str, value: Any) -> bytes:
    """One entry of a ``put_map`` part as its bytes hold it (a part is its entries joined
    by commas within braces: ``orjson.dumps`` of the group's map)."""
    return orjson.dumps(key) + b":" + orjson.dumps(value)


def get_map(store: PartStore, parts: Parts) -> dict[str, Any]:
    """The map ``put_map`` kept (each part checked against its digest)."""
    out: dict[str, Any] = {}
    for digest, _size in parts:
        out.update(orjson.loads(store.get(str(digest))))
    return out


def stat_files(data: bytes, vault_dir: Path) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """A bundle's ``stat.bin`` read: (its header: the build's id, time, commit …, path →
    [size, mtime_ns, checksum, status, ctime_ns]). The rows are in the vault's parts
    (``"parts"``); a ``stat.bin`` of an older format holds them itself (``"files"``).
    Raises ValueError (or a DigestError) when it cannot be read."""
    doc = orjson.loads(data)
    if not isinstance(doc, dict):
        raise ValueError("stat.bin is not an object")
    if "files" in doc:
        files = doc.pop("files")
    else:
        files = get_map(PartStore(vault_dir / STORE), doc.pop("parts"))
    return doc, files
