"""Selective rebuilds (design §2 "selective hashing"): what a build may reuse from the
previous one, and the two files each bundle carries for it.

* ``facts.bin`` – the head: the settings the facts were derived under and the SHA-256 of
  each shard ``facts.NN.bin`` (``SHARDS`` of them, a file's shard by its path's hash), which
  hold the Phase 1 facts of their files (orjson, never pickle: a vault can come from
  anywhere). A later build reuses the facts of a file whose ``(path, size, mtime_ns,
  ctime_ns)`` is unchanged and re-reads the others; it writes only the shards that hold a
  changed file and hard-links the others from the bundle before.
* ``stat.bin`` – path → (size, mtime_ns, checksum, parse status, ctime_ns) plus the build's time and commit:
  all ``oracl status`` needs, without opening the database or parsing the export.

Both are listed in the bundle's manifest; ``load_previous`` checks the facts file against
the manifest digest, so a damaged cache means a full build, never a wrong one.

A file modified less than ``RACY_NS`` before the previous build started its walk is
re-read even when its stat matches ("racily clean", as git calls it): two writes of the
same size inside one timestamp tick would otherwise go unseen.

>>> prev, why = load_previous(vault, cfg.read_digest(), fts=True)   # doctest: +SKIP
>>> why                                                      # doctest: +SKIP
'incremental: 50,004 files in the previous build'
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import stat as stat_mod
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any

import orjson

from oracl.core.parts import GROUP, MAP_GROUP, KeptSection, Parts, PartStore, map_entry, put_map
from oracl.core.records import FileFacts
from oracl.core.vault import FACTS_FILE, Vault
from oracl.core.version import __version__

FORMAT = 9                       # 2: secrets redacted before any fact is taken; 3: every language; 4: call receivers, bases; 5: import renames; 6: Go ranges, embedded fields, calls in Rust macros; 7: in shards; 8: the call sites and symbol details after the rows, decoded when read; 9: every field but the stat, tags and ids after the rows too
SHARDS = 256                     # facts.NN.bin: a one-file change rewrites ~1/256 of the facts
RACY_NS = 2_000_000_000          # FAT and some network filesystems keep 2 s mtimes
NEVER_REUSED = frozenset({"unreadable", "vanished"})  # a failed read is tried again every build
MAX_CHAIN = 256                  # incremental bundles in a row before the content is rebuilt (a bound, not a need: 200 steps keep the full-text answers exact)
MAX_GROWTH = 1.5                 # … or once the database outgrew its chain's first by this factor …
MIN_GROWTH_BYTES = 64 << 20      # … and by this much (a small database grows by whole column chunks)
MAX_CHANGED_FRACTION = 0.25      # above this share of changed files a full build is cheaper …
MIN_CHANGED_FOR_FULL = 64        # … unless so few files changed that reading them is cheap anyway

FIELDS = tuple(f.name for f in fields(FileFacts))
# fields holding tuples of tuples (JSON turns them into lists; the providers hash some)
_NESTED = frozenset({"symbols", "headings", "md_links", "config_values", "mentions", "comment_refs", "secrets",
                     "test_markers", "refs", "bases", "typed", "renames"})
# what a rebuild reads of every file it does not read again (measured: the stat check, the
# records, the tags, the resolver's index): a shard row holds these fields decoded; the others
# stay JSON after the rows until first read (``LazyFacts``)
ALWAYS = ("path", "artifact_id", "checksum", "size_bytes", "mtime_ns", "ctime_ns", "parse_status", "language",
          "ast_tags", "key_material")
# two thirds of the facts' bytes, read only for the files whose symbols or edges are made
# again: one JSON document per file after the rows; the other fields (``REST``: what the
# export's row, the symbols' resolver and the edges read of a file) are a second one
HEAVY = ("symbol_details", "calls")
REST = tuple(n for n in FIELDS if n not in ALWAYS and n not in HEAVY)
_ROW = tuple(n for n in FIELDS if n in ALWAYS)  # a shard row: these fields, then where its two documents lie
_NO_HEAVY = b"[[],[]]"
_DEFAULTS = {f.name: f.default if f.default is not MISSING else f.default_factory()  # type: ignore[misc]
             for f in fields(FileFacts) if f.name in REST}
_NO_REST = orjson.dumps([_DEFAULTS[n] for n in REST])


def _rest_values(values: list[Any]) -> dict[str, Any]:
    """``REST``'s fields from their JSON values: lists made the tuples ``FileFacts`` holds."""
    out = dict(zip(REST, values, strict=True))
    for name in _NESTED:
        out[name] = tuple(map(tuple, out[name])) if out[name] else ()
    out["imports"] = tuple((m, tuple(names), lvl, a, b) for m, names, lvl, a, b in out["imports"])
    out["sensitive_apis"] = tuple(out["sensitive_apis"])
    out["namespaces"] = tuple(out["namespaces"])
    return out


class LazyFacts(FileFacts):
    """A file's facts decoded from a shard but for ``REST`` and ``HEAVY``, which stay the
    shard's bytes until one of their fields is first read (a rebuild decoded every row
    whole, 0.3–0.45 s at 20k files, for the few files a change makes anything of again).
    Equal to the ``FileFacts`` with the same fields, both ways round; pickled whole."""

    __slots__ = ("_rest", "_heavy")

    def __getattr__(self, name: str) -> Any:  # (only for a field not set yet)
        get, set_ = object.__getattribute__, object.__setattr__
        if name in HEAVY:
            details, calls = orjson.loads(get(self, "_heavy"))  # (a view of its shard's bytes)
            set_(self, "symbol_details", tuple(map(tuple, details)))
            set_(self, "calls", tuple(map(tuple, calls)))
        elif name in _DEFAULTS:
            for key, value in _rest_values(orjson.loads(get(self, "_rest"))).items():
                set_(self, key, value)
        else:
            raise AttributeError(name)
        return get(self, name)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FileFacts):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in FIELDS)

    __hash__ = FileFacts.__hash__


_ROW_SETTERS = tuple(getattr(FileFacts, n).__set__ for n in _ROW)  # (each slot's own setter)
_SET_REST, _SET_HEAVY = LazyFacts._rest.__set__, LazyFacts._heavy.__set__  # type: ignore[attr-defined]


def _lazy_bytes(f: FileFacts, slot: str, names: tuple[str, ...]) -> bytes:
    """The JSON of ``f``'s fields ``names`` (a lazy one's not decoded yet: the bytes it was
    read from)."""
    if isinstance(f, LazyFacts):
        try:
            return bytes(object.__getattribute__(f, slot))
        except AttributeError:
            pass
    return orjson.dumps([getattr(f, n) for n in names])


def _heavy(f: FileFacts) -> bytes:
    if not isinstance(f, LazyFacts) and not f.symbol_details and not f.calls:
        return _NO_HEAVY
    return _lazy_bytes(f, "_heavy", HEAVY)


def schema_digest() -> str:
    """The schema and loader statements a bundle was made with: a change means a full build."""
    from oracl.core.fulltext import FORMAT as FULLTEXT_FORMAT
    from oracl.core.resources import loader_statements, schema_statements

    parts = [*schema_statements(), FULLTEXT_FORMAT]
    for name in ("030_copy_graph",):
        parts.extend(loader_statements(name))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def settings(read_digest: str, fts: bool) -> dict[str, Any]:
    """What the cached facts and the bundle's content were derived under (``read_digest``:
    ``Config.read_digest()``, the settings reading a file depends on)."""
    return {"format": FORMAT, "tool_version": __version__, "read_config_sha256": read_digest, "fts": fts,
            "schema_sha256": schema_digest(), "part_group": [GROUP, MAP_GROUP]}


_WHY = {"format": "the cache format changed", "tool_version": "the tool version changed",
        "read_config_sha256": "settings that change how files are read changed",
        "fts": "the full-text setting changed", "schema_sha256": "the database schema changed",
        "part_group": "the export's grouping into parts changed"}


@functools.lru_cache(maxsize=1 << 17)
def shard_of(path: str) -> int:
    """Which of the ``SHARDS`` shards holds ``path``'s rows (its facts', its edges'): one
    hash per path, shared by both kinds of shard."""
    return hashlib.blake2b(path.encode("utf-8", "surrogateescape"), digest_size=1).digest()[0] % SHARDS


def shard_name(path: str) -> str:
    """The shard file that holds ``path``'s facts."""
    return f"facts.{shard_of(path):02x}.bin"


def shard_groups(paths: Iterable[str]) -> dict[int, list[str]]:
    """Each shard's paths, in the order given (a build's: its discovery order): what
    ``write_facts`` and ``edge_shards.write_edges`` group the files by. A long-lived
    builder keeps it while no file comes or goes (``Carry.shard_groups``)."""
    out: dict[int, list[str]] = {}
    for p in paths:
        out.setdefault(shard_of(p), []).append(p)
    return out


def encode_shard(facts: list[FileFacts]) -> bytes:
    """A shard: a line of rows (each ``_ROW``'s fields, then the offset and length of the
    file's ``REST`` fields' JSON and of its ``HEAVY`` fields' JSON after the line), then
    those JSON documents."""
    rows: list[list[Any]] = []
    blobs: list[bytes] = []
    at = 0
    for f in facts:
        rest, heavy = _lazy_bytes(f, "_rest", REST), _heavy(f)
        rows.append([*(getattr(f, name) for name in _ROW), at, len(rest), at + len(rest), len(heavy)])
        blobs += (rest, heavy)
        at += len(rest) + len(heavy)
    return orjson.dumps(rows) + b"\n" + b"".join(blobs)


def write_facts(folder: Path, facts: list[FileFacts], header: dict[str, Any], previous: Previous | None,
                changed: set[str], write: Any, extra: dict[str, Any] | None = None,
                groups: tuple[Mapping[int, list[str]], Mapping[str, FileFacts]] | None = None) -> dict[str, str]:
    """The head and the shards of ``facts`` in ``folder``: a shard that holds no path of
    ``changed`` (read again, added or removed) and that the previous build wrote is
    hard-linked from its bundle, not written; ``write(path, bytes)`` writes the others.
    ``groups``: ``shard_groups`` of these facts' paths and the facts by path (a long-lived
    builder's, kept: no pass over every file). Returns the SHA-256 of every shard linked
    (already known: the manifest takes them without reading the files again)."""
    import os

    from oracl.core.vault import FACTS_FILE

    # each shard's name → its files' facts, made when the shard is encoded (a linked one: never)
    shards: dict[str, Callable[[], list[FileFacts]]] = {}
    if groups is not None:
        members, by_path = groups
        for i, paths in members.items():
            shards[f"facts.{i:02x}.bin"] = functools.partial(lambda ps: [by_path[p] for p in ps], paths)
    else:
        by_shard: dict[str, list[FileFacts]] = {}
        for f in facts:
            by_shard.setdefault(shard_name(f.path), []).append(f)
        shards = {name: functools.partial(list, fs) for name, fs in by_shard.items()}
    moved = {shard_name(p) for p in changed}
    old = previous.shards if previous is not None else {}
    digests: dict[str, str] = {}
    linked: dict[str, str] = {}
    there, here = (str(previous.bundle), str(folder)) if previous is not None else ("", "")
    for name in sorted(shards):
        if previous is not None and name not in moved and name in old:
            try:
                os.link(f"{there}/{name}", f"{here}/{name}")
            except OSError:
                pass
            else:
                digests[name] = linked[name] = old[name]
                continue
        data = encode_shard(shards[name]())
        write(folder / name, data, durable=False)  # a shard lost to a power cut: its digest fails, a full build
        digests[name] = hashlib.sha256(data).hexdigest()
    write(folder / FACTS_FILE, orjson.dumps({**header, "fields": FIELDS, "shards": digests, **(extra or {})}))
    return linked


def _tuple(value: Any) -> Any:
    return tuple(_tuple(v) if isinstance(v, list) else v for v in value)


class OtherFormat(ValueError):
    """A facts cache an older or newer ORACL wrote (its head names another ``FORMAT``)."""


def decode_head(data: bytes) -> dict[str, Any]:
    """The head of a facts cache; ``OtherFormat`` when another version's, ValueError when
    it is not one."""
    doc = orjson.loads(data)
    if isinstance(doc, dict) and isinstance(doc.get("format"), int) and doc["format"] != FORMAT:
        raise OtherFormat(f"a facts cache of format {doc['format']}, not {FORMAT}")
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or tuple(doc.get("fields", ())) != FIELDS \
            or not isinstance(doc.get("shards"), dict):
        raise ValueError("not a facts cache of this version")
    return doc


def read_facts(bundle: Path, head: dict[str, Any], groups: dict[int, list[str]] | None = None
               ) -> dict[str, FileFacts]:
    """Every file's facts from the shards ``head`` lists, each checked against its digest
    there; ValueError when one is missing or does not match. ``groups`` is given each
    shard's paths in their order there (``shard_groups`` of the files, as ``write_facts``
    grouped them): a build whose files are these takes them instead of hashing every path
    again (two passes over 50,000 paths were ~0.5 s of the vault files' task)."""
    shards = sorted(head["shards"].items())
    if any(not isinstance(name, str) or not name.startswith("facts.") or "/" in name for name, _ in shards):
        raise ValueError("a shard outside the bundle")
    datas = [(bundle / name).read_bytes() for name, _ in shards]
    out: dict[str, FileFacts] = {}
    failed: Exception | None = None
    with digests_beside(datas) as digests:
        try:
            for (name, _), data in zip(shards, datas, strict=True):
                decoded = decode_shard(data)
                out.update(decoded)
                if groups is not None:
                    groups[int(name[len("facts."):-len(".bin")], 16)] = list(decoded)
        except Exception as exc:  # noqa: BLE001 – a damaged shard is said by its digest first
            failed = exc
    for (name, digest), got in zip(shards, digests, strict=False):
        if got != digest:
            raise ValueError(f"{name} does not match its digest")
    if len(digests) != len(shards):
        raise ValueError("a shard's digest could not be made")
    if failed is not None:
        raise failed
    return out


@contextlib.contextmanager
def digests_beside(datas: list[bytes]) -> Iterator[list[str]]:
    """The SHA-256 of each of ``datas``, made in a thread while the caller decodes them
    (hashlib lets go of the interpreter lock while it hashes: 60 MB of facts shards took
    ~56 ms of a cold rebuild's 20k files, now beside their decoding); the list is whole
    once the block ends (the thread joined, so that no fork finds it running)."""
    digests: list[str] = []
    worker = threading.Thread(target=lambda: digests.extend(hashlib.sha256(d).hexdigest() for d in datas),
                              name="oracl-digests", daemon=True)
    worker.start()
    try:
        yield digests
    finally:
        worker.join()


def decode_shard(data: bytes) -> dict[str, FileFacts]:
    """Each file's facts in a shard ``encode_shard`` made: a ``LazyFacts`` holding ``_ROW``'s
    fields, the others decoded when first read (a plain ``FileFacts`` when they are all
    empty). ValueError when it is not such a shard. (Each row checked and set in one loop,
    its fields through the slots' own setters: two passes and a setter looked up by name
    were a quarter of decoding 50,000 rows, ~0.07 s.)"""
    cut = data.find(b"\n")
    if cut < 0:
        raise ValueError("a facts shard of another layout")
    rows = orjson.loads(data[:cut])
    if not isinstance(rows, list):
        raise ValueError("a facts row of another layout")
    blob = memoryview(data)[cut + 1:]
    width = len(_ROW)
    out: dict[str, FileFacts] = {}
    new, set_rest, set_heavy = LazyFacts.__new__, _SET_REST, _SET_HEAVY
    size, no_rest, no_heavy = len(blob), len(_NO_REST), len(_NO_HEAVY)
    try:
        for row in rows:
            if type(row) is not list or len(row) != width + 4:
                raise ValueError("a facts row of another layout")
            rest_at, rest_size, heavy_at, heavy_size = row[width:]
            # (an offset that is no int fails the comparison or the slice: TypeError, below)
            if rest_at < 0 or rest_size < 0 or heavy_at < 0 or heavy_size < 0 \
                    or rest_at + rest_size > size or heavy_at + heavy_size > size:
                raise ValueError("a facts row points outside its shard")
            rest, heavy = blob[rest_at:rest_at + rest_size], blob[heavy_at:heavy_at + heavy_size]
            if rest_size == no_rest and heavy_size == no_heavy and rest == _NO_REST and heavy == _NO_HEAVY:
                out[row[0]] = FileFacts(**dict(zip(_ROW, row, strict=False)))
                continue
            f = new(LazyFacts)
            for put, value in zip(_ROW_SETTERS, row, strict=False):
                put(f, value)
            set_rest(f, rest)
            set_heavy(f, heavy)
            out[row[0]] = f
    except TypeError:
        raise ValueError("a facts row points outside its shard") from None
    return out


def stat_rows(facts: list[FileFacts]) -> dict[str, list[object]]:
    return {f.path: [f.size_bytes, f.mtime_ns, f.checksum, f.parse_status, f.ctime_ns] for f in facts}


def encode_stat(files: dict[str, list[object]] | Parts, header: dict[str, Any], store: PartStore,
                rewrite: bool = False) -> bytes:
    """``stat.bin``: the build's id, time and commit, and the parts (``core/parts.py``)
    that hold each file's stat and checksum, grouped by path: a rebuild writes the part of
    the changed file's group (``core.parts.stat_files`` reads them). ``files``: each
    file's row, or the parts already put (``kept_stat``)."""
    parts = put_map(store, files, rewrite=rewrite) if isinstance(files, dict) else files
    return orjson.dumps({"format": FORMAT, **header, "parts": parts})


def stat_row(f: FileFacts) -> list[object]:
    return [f.size_bytes, f.mtime_ns, f.checksum, f.parse_status, f.ctime_ns]


def kept_stat(store: PartStore, kept: KeptSection | None, facts: Mapping[str, FileFacts], reread: list[str],
              removed: list[str], before: Mapping[str, FileFacts], rewrite: bool = False
              ) -> tuple[Parts, KeptSection]:
    """``stat.bin``'s parts as ``put_map(stat_rows(facts))`` puts them, for a long-lived
    builder: with ``kept`` (the latest build's rows, whose files were ``before``), only the
    entries of the files read again or gone are changed in place and only their parts put
    again; else every entry is made."""
    if kept is None or rewrite:
        keys = sorted(facts)
        kept = KeptSection.of(keys, keys, [map_entry(k, stat_row(facts[k])) for k in keys], modulus=MAP_GROUP,
                              packed=False)
    else:
        for p in removed:
            kept.remove(p)
        for p in reread:
            row = map_entry(p, stat_row(facts[p]))
            if p in before:
                kept.replace(p, row)
            else:
                kept.insert(p, p, row)
    return kept.parts(store, rewrite=rewrite, wrap=(b"{", b"}")), kept


@dataclass(slots=True)
class Previous:
    """The previous build, as far as a selective rebuild may use it."""

    bundle: Path
    facts: dict[str, FileFacts]
    scan_started_ns: int
    chain: int          # incremental builds since the content was last built from scratch
    base_db_bytes: int = 0  # the database's size when this chain started (after its full build)
    shards: dict[str, str] = field(default_factory=dict)  # its facts shards' names and SHA-256
    edge_shards: dict[str, str] = field(default_factory=dict)  # its edges' shards (``edge_shards``)
    edges_merged_with: str = ""  # the digest of the overlay and tail their runs were merged with
    # each facts shard's paths in its order (``shard_groups`` of ``facts``: read from the
    # shards); None when not read (a long-lived builder's kept facts)
    groups: dict[int, list[str]] | None = None

    def reusable(self, rel: str, st: os.stat_result | None) -> FileFacts | None:
        """The cached facts of ``rel`` when its stat (from the walk) says it is unchanged:
        same size, mtime and – as git checks – ctime, which no tool can set back (``cp -p``,
        ``rsync -t`` and ``tar x`` restore an old mtime on new bytes, never an old ctime)."""
        old = self.facts.get(rel)
        if old is None or st is None or old.parse_status in NEVER_REUSED:
            return None
        if (not stat_mod.S_ISREG(st.st_mode) or st.st_size != old.size_bytes or st.st_mtime_ns != old.mtime_ns
                or st.st_ctime_ns != old.ctime_ns or st.st_mtime_ns >= self.scan_started_ns - RACY_NS):
            return None
        return old

    def racy(self, rel: str, st: os.stat_result | None) -> FileFacts | None:
        """The cached facts of ``rel`` when its stat is the one they were read under but its
        mtime lies too close to the previous scan for the stat to prove the bytes unchanged
        (git's "racily clean" file: written just before the build, as a fresh clone's
        files are). The caller compares the content's digest before taking them."""
        old = self.facts.get(rel)
        if old is None or st is None or old.parse_status in NEVER_REUSED or not old.checksum:
            return None
        if (stat_mod.S_ISREG(st.st_mode) and st.st_size == old.size_bytes and st.st_mtime_ns == old.mtime_ns
                and st.st_ctime_ns == old.ctime_ns and st.st_mtime_ns >= self.scan_started_ns - RACY_NS):
            return old
        return None


def same_bytes(root: str, candidates: list[tuple[str, FileFacts]]) -> set[str]:
    """The racily clean files whose bytes still hash to the checksum their facts were made
    from (each opened as the reader opens it, its stat checked again on the descriptor);
    read and hashed, never parsed. One thread: 20,003 small files take 0.6 s, where a pool
    of two handing each file over took 3.3 s (measured)."""
    import hashlib

    from oracl.builder.pipeline.discover import _open_regular

    same: set[str] = set()
    for rel, f in candidates:
        try:
            fd, st = _open_regular(root, rel)
        except Exception:  # noqa: BLE001 – anything odd: the file is simply read again
            continue
        with os.fdopen(fd, "rb") as fh:
            if (st.st_size, st.st_mtime_ns, st.st_ctime_ns) == (f.size_bytes, f.mtime_ns, f.ctime_ns) and \
                    hashlib.file_digest(fh, "sha256").hexdigest() == f.checksum:
                same.add(rel)
    return same


@dataclass(slots=True)
class Carry:
    """What a long-lived builder (``oracl watch``) keeps from one build to the next: the
    facts of the bundle it published, as objects, so that the next build checks LATEST
    and that bundle's manifest instead of reading, hashing and decoding ``facts.bin``
    (0.6 s at 20k files). Used only while LATEST still names that bundle and its manifest
    still lists the digest of the facts file this build wrote; otherwise the file is read."""

    bundle: Path | None = None
    facts_sha256: str = ""
    header: dict[str, Any] = field(default_factory=dict)
    facts: dict[str, FileFacts] = field(default_factory=dict)
    # each file's record, made from those very facts under ``made_under`` (the Config and
    # the learned tags): reused for a file whose facts are the same object, while both are equal
    records: dict[str, tuple[FileFacts, Any]] = field(default_factory=dict)
    made_under: tuple[Any, Any] | None = None
    # the symbol resolver's tables that bundle's build left (``symbols.SymbolTable``)
    symbol_table: Any = None
    # each file's Phase 2 and Phase 3 edges that bundle's build made (``providers.edges_per_file``)
    edges: tuple[Mapping[str, Any], Mapping[str, Any]] | None = None
    # each target of those edges → the files with an edge into it (``resident.edge_targets``)
    edge_targets: dict[str, set[str]] | None = None
    # the weighted graph that bundle's build made, with its structure (``weigh.reweigh``)
    graph: Any = None
    # (the bundle that build started from, the rows it moved against it: ``WeightedGraph.moved``)
    moved: tuple[str, tuple[frozenset[str], frozenset[str], tuple[int, ...]]] | None = None
    # that build's export rows as bytes (``resident.KeptRows``)
    export: Any = None
    # each file's uses of outside code, for interface.json (``interface.interface``'s memo)
    interface: dict[str, Any] = field(default_factory=dict)
    # the resolver's index of the facts of the build in progress, then of that bundle's
    index: Any = None
    # that build's merge, source by source (``merge.BySource``)
    merged: Any = None
    # what making each file's edges looked up (``IndexView.read``), for the edge shards
    edge_reads: dict[str, set[str]] = field(default_factory=dict)
    # that build's walk, recorded (``walk.walk(record=True)``), and the settings it was made
    # under: the next build's, with the paths its caller's file events named (``walk.triage``)
    discovery: Any = None
    discovery_key: str = ""
    # the files that build read or whose bytes it checked (racily clean): with the paths file
    # events name since, the only ones the next build looks at (``orchestrator._select``)
    recent: set[str] | None = None
    # that build's stat.bin rows in their parts (``kept_stat``)
    stat: Any = None
    # (the bundle that build started from, each file it read or removed → its checksum
    # there, None where it had none): what the next build's standby differs in
    delta: tuple[str, dict[str, str | None]] | None = None
    # (the build id, the type-name counts) its build made (``interface.type_counts``)
    types: tuple[str, dict[str, int]] | None = None
    # the symbol segments' group entries read so far, by digest (``Segments.index``)
    segment_entries: dict[str, Any] = field(default_factory=dict)
    # (the bundle, the symbol counts its header holds: ``Segments.totals``)
    symbol_counts: tuple[str, dict[str, Any]] | None = None
    # (the bundle, each shard's paths in it: ``shard_groups``)
    shard_groups: tuple[str, dict[int, list[str]]] | None = None
    # (the bundle, its files by parse status, by language: ``orchestrator.file_counts``)
    file_counts: tuple[str, dict[str, int], dict[str, int]] | None = None
    # the edges an in-place update last wrote again to hold its node groups open
    # (``database.hold_groups``: each checked by key before it is used, in either database)
    held: dict[tuple[str, str, int], tuple[Any, Any]] = field(default_factory=dict)
    # (HEAD, the files, the history read at them: ``orchestrator.read_history_phase``)
    history: tuple[str, frozenset[str], Any] | None = None
    # (the read_sets entry its build recorded, what each file's resolution read as that
    # record holds it, merged: ``orchestrator.reads_after``)
    reads: tuple[Any, dict[str, Any]] | None = None
    # each test file's called names, with the facts object they were made of
    # (``providers._called_names``: made again for a file whose facts are not that object)
    test_calls: dict[str, tuple[FileFacts, frozenset[str]]] = field(default_factory=dict)
    # (the bundle whose files they are, the test files' paths: ``resident.kept_edges``)
    test_paths: tuple[str, list[str]] | None = None
    # the standby folders its builds took the databases of, set aside (``claim_standby``):
    # removed by a thread once the build has returned (``remove_retired``), so that a
    # save's answer does not wait for them; the next build waits for it (``settle``)
    retired: list[Path] = field(default_factory=list)
    remover: threading.Thread | None = None

    def settle(self) -> None:
        """Wait for the last build's folders set aside to be gone."""
        if self.remover is not None:
            self.remover.join()
            self.remover = None

    def remove_retired(self) -> None:
        """Remove the folders set aside, in a thread (a daemon: one the process leaves
        behind is a staging folder to the next build's cleaning, ``clean_stale``)."""
        paths, self.retired = self.retired, []

        def remove() -> None:
            for p in paths:
                shutil.rmtree(p, ignore_errors=True)

        if paths:
            self.remover = threading.Thread(target=remove, name="oracl-retired", daemon=True)
            self.remover.start()

    def keep(self, bundle: Path, header: dict[str, Any], facts: dict[str, FileFacts],
             records: dict[str, tuple[FileFacts, Any]] | None = None, made_under: tuple[Any, Any] | None = None) -> None:
        """Remember a bundle just published (its manifest says the facts file's digest)."""
        try:
            digest = orjson.loads((bundle / "manifest.json").read_bytes())["files"][FACTS_FILE]
        except (OSError, orjson.JSONDecodeError, KeyError, TypeError):
            self.forget()
            return
        self.bundle, self.facts_sha256, self.header, self.facts = bundle, str(digest), header, facts
        self.records, self.made_under = (records or {}), made_under

    def forget(self) -> None:
        self.bundle, self.facts_sha256, self.header, self.facts = None, "", {}, {}
        self.records, self.made_under = {}, None
        self.symbol_table = self.edges = self.graph = self.moved = self.export = None
        self.interface, self.index, self.merged, self.edge_reads = {}, None, None, {}
        self.segment_entries, self.types, self.discovery, self.discovery_key = {}, None, None, ""
        self.recent, self.stat, self.delta, self.edge_targets = None, None, None, None
        self.symbol_counts = self.shard_groups = self.file_counts = self.history = self.reads = None
        self.test_calls, self.test_paths = {}, None


def standby_delta(latest: Path, facts: Mapping[str, FileFacts]) -> tuple[str, dict[str, str | None]] | None:
    """For a builder that did not make the latest build (``orchestrator.warm``): the bundle
    its next build takes over as the standby (the one the latest build started from: its
    manifest's lineage) and each file whose checksum there is not the latest's (``facts``)
    → that checksum, None where the standby has no such file: what ``Carry.delta`` holds
    after a build of the builder's own. None when there is no standby or it cannot be read
    (the next build then reads the standby's checksums when it claims it)."""
    from oracl.core.parts import stat_files
    from oracl.core.vault import MANIFEST, STAT_FILE

    try:
        lineage = orjson.loads((latest / MANIFEST).read_bytes()).get("lineage") or {}
        base = lineage["base"]
        standby = latest.parent / str(base)
        raw = (standby / MANIFEST).read_bytes()
        if hashlib.sha256(raw).hexdigest() != lineage.get("base_manifest_sha256"):
            return None
        stat_raw = (standby / STAT_FILE).read_bytes()
        if hashlib.sha256(stat_raw).hexdigest() != orjson.loads(raw)["files"][STAT_FILE]:
            return None
        there = {p: str(row[2]) for p, row in stat_files(stat_raw, latest.parent.parent)[1].items()}
    except Exception:  # noqa: BLE001 – no standby, or an unreadable one: its claim says why
        return None
    delta: dict[str, str | None] = {p: there.get(p) for p, f in facts.items() if there.get(p) != f.checksum}
    delta.update({p: c for p, c in there.items() if p not in facts})
    return str(base), delta


def load_previous(vault: Vault, read_digest: str, fts: bool,
                  carry: Carry | None = None) -> tuple[Previous | None, str]:
    """The previous build when a selective rebuild can start from it, and why (not).
    ``carry``: the facts a long-lived builder kept from the build it made last, used
    instead of ``facts.bin`` when that build is still the latest."""
    from oracl.core.errors import NoBuildError
    from oracl.core.vault import DB_FILE

    try:
        latest = vault.read_latest()
        bundle = vault.bundle(str(latest.get("bundle", latest["build_id"])))
        manifest = orjson.loads((bundle / "manifest.json").read_bytes())
        raw = (bundle / FACTS_FILE).read_bytes()
    except NoBuildError:
        return None, "full: no previous build"
    except FileNotFoundError:
        return None, "full: the previous build has no facts cache"
    except Exception as exc:  # noqa: BLE001 – any damage means a full build, never a failed one
        return None, f"full: the previous build is unreadable ({type(exc).__name__})"
    if not (bundle / DB_FILE).is_file():
        return None, "full: the previous bundle has no database"
    digest = hashlib.sha256(raw).hexdigest()
    if manifest.get("files", {}).get(FACTS_FILE) != digest:
        return None, "full: the facts cache does not match its manifest"
    try:
        head = decode_head(raw)
    except OtherFormat:  # (an upgrade: said as the settings' changes are)
        return None, f"full: {_WHY['format']} since the previous build"
    except (ValueError, TypeError, orjson.JSONDecodeError):
        return None, "full: the facts cache is unreadable"
    groups: dict[int, list[str]] | None = None
    if carry is not None and carry.bundle == bundle and carry.facts_sha256 == digest:
        header, facts = head, carry.facts
    else:
        try:
            groups = {}
            header, facts = head, read_facts(bundle, head, groups)
        except FileNotFoundError:
            return None, "full: the previous build has no facts cache"
        except ValueError as exc:
            if "does not match" in str(exc):
                return None, "full: the facts cache does not match its manifest"
            return None, "full: the facts cache is unreadable"
        except (TypeError, KeyError, IndexError, OSError, orjson.JSONDecodeError):
            return None, "full: the facts cache is unreadable"
    for key, value in settings(read_digest, fts).items():
        if header.get(key) != value:
            return None, f"full: {_WHY[key]} since the previous build"
    chain = int(header.get("chain", 0))
    if chain >= MAX_CHAIN:
        return None, f"full: {chain} incremental builds in a row; the content index is rebuilt"
    # a patched database keeps the pages an update rewrote (Kùzu 0.11.3 reuses little of them)
    db_bytes = (bundle / DB_FILE).stat().st_size
    base = int(header.get("base_db_bytes", 0)) or db_bytes  # a chain's first build: the full one
    if db_bytes > growth_limit(base):
        return None, (f"full: the database grew to {db_bytes / 2**20:,.0f} MB, {db_bytes / base:.2f} × its "
                      f"{base / 2**20:,.0f} MB after the last full build; rebuilt to reclaim the space")
    edge_shards, merged_with = head.get("edge_shards"), head.get("edges_merged_with")
    return Previous(bundle, facts, int(header.get("scan_started_ns", 0)), chain, base, dict(head["shards"]),
                    dict(edge_shards) if isinstance(edge_shards, dict) else {},
                    merged_with if isinstance(merged_with, str) else "", groups), \
        f"incremental: {len(facts):,} files in the previous build"


def growth_limit(base: int) -> int:
    """The size past which a chain's database (``base`` bytes after its full build) is
    rebuilt to give the space back: Kùzu 0.11.3 reuses few of the pages an update frees."""
    return int(max(MAX_GROWTH * base, base + MIN_GROWTH_BYTES))


def previous_damage(vault: Vault) -> str:
    """Why the database of the bundle LATEST names cannot be a selective build's start
    ('' when it can, or when there is no such bundle: ``load_previous`` says so): it is
    checked against the bundle's manifest by its identity (``file_identity``), not read."""
    from oracl.core.vault import DB_FILE, MANIFEST, file_matches

    try:
        latest = vault.read_latest()
        bundle = vault.bundle(str(latest.get("bundle", latest["build_id"])))
        manifest = orjson.loads((bundle / MANIFEST).read_bytes())
        want = manifest["files"][DB_FILE]
    except Exception:  # noqa: BLE001 – a missing or unreadable build is load_previous's to report
        return ""
    return "" if isinstance(want, str) and file_matches(bundle / DB_FILE, want) else \
        "the previous bundle's database does not match its manifest"
