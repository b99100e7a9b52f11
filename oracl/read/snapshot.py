"""The read plane's one front door: a ``Snapshot`` is one build, opened for reading.

It reads ``LATEST.json`` once, takes a shared lock on the bundle it names (so no build
prunes it while it is read), and then serves everything a reader needs from that one
bundle: the build's header (α, the caps, the query guard, relation weights: readers
never use constants for them), the engine connection (opened read-only on first use), the
per-file stat rows ``oracl status`` compares the tree with, the tree itself through a
``Workspace`` (reads that cannot leave the root), and per-build memos. Query, the graph
primitives, ``Memory``, the MCP server, the console and freshness all go through it, so
two answers of one call can never come from two builds.

Repair (rebuilding a bundle from the verified export when LATEST or its bundle is
missing or damaged) happens only when the caller hands one in (``repair=repair_latest``, from the
bundle plane: this plane never writes a bundle), only in
the main thread, and only under the vault's build lock; a reader that cannot repair says
so in one line with its exit code.

>>> with Snapshot.open(Path("repo")) as snap:                 # doctest: +SKIP
...     snap.build_id, snap.params.query_guard
('20261201T001500000000Z-01234', 5000)
"""

from __future__ import annotations

import fcntl
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Generic, TypeVar

import orjson

from oracl.core.derive import Terms, bind, finish, summary, with_terms
from oracl.core.errors import NoBuildError, OraclError, VaultError
from oracl.core.fulltext import FullText
from oracl.core.parts import stat_files
from oracl.core.paths import utc
from oracl.core.records import EVENT_HALF_LIFE_DAYS, event_weight, text_key
from oracl.core.resources import query
from oracl.core.vault import (
    DB_FILE,
    EVENTS_BUNDLE_FILE,
    EVENTS_INDEX_FILE,
    EXPORT_INDEX,
    HEADER_FILE,
    LEARNED_FILE,
    READERS_LOCK,
    STAT_FILE,
    Repair,
    Vault,
    check_root,
)
from oracl.core.version import SCHEMA_VERSION
from oracl.core.workspace import Workspace

T = TypeVar("T")
_MISSING: Any = object()


@dataclass(frozen=True, slots=True)
class Learned:
    """stem → [(path, κ, sessions)] of the learned terms, and path → [(other, κ, sessions)]
    of the learned associations."""

    terms: dict[str, list[tuple[str, float, int]]]
    partners: dict[str, list[tuple[str, float, int]]]

    @classmethod
    def read(cls, path: Path) -> Learned:
        terms: dict[str, list[tuple[str, float, int]]] = {}
        partners: dict[str, list[tuple[str, float, int]]] = {}
        try:
            doc = orjson.loads(path.read_bytes())
            for t in doc.get("terms", []):
                terms.setdefault(str(t["term"]), []).append((str(t["path"]), float(t["confidence"]),
                                                             int(t.get("sessions", 0))))
            for e in doc.get("associations", []):
                partners.setdefault(str(e["source"]), []).append((str(e["target"]), float(e["confidence"]),
                                                                  int(e.get("sessions", 0))))
        except (OSError, orjson.JSONDecodeError, AttributeError, KeyError, TypeError, ValueError):
            return cls({}, {})
        return cls(terms, partners)


class MemoKey(Generic[T]):
    """A typed key of a snapshot's memo, declared once by the module that owns the value:
    keys are told apart by identity, so two modules can never write one slot by name."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"MemoKey({self.name!r})"


class Memo:
    """Per-build answers (a bundle never changes), safe to share between the threads of
    one reader (the MCP server, the web view, a freshness walk): ``once`` computes a value
    a single time even when two threads ask together; ``get``/``put`` for values that
    change (a verdict with its time); ``locked`` for a read-then-write that must be one."""

    def __init__(self) -> None:
        self._values: dict[MemoKey[Any], Any] = {}
        self._lock = threading.RLock()
        self._making: dict[MemoKey[Any], threading.Lock] = {}

    def get(self, key: MemoKey[T]) -> T | None:
        return self._values.get(key)

    def put(self, key: MemoKey[T], value: T) -> None:
        with self._lock:
            self._values[key] = value

    def forget(self, key: MemoKey[Any]) -> None:
        with self._lock:
            self._values.pop(key, None)

    def once(self, key: MemoKey[T], make: Callable[[], T]) -> T:
        value = self._values.get(key, _MISSING)
        if value is not _MISSING:
            return value
        with self._lock:
            making = self._making.setdefault(key, threading.Lock())
        with making:  # one thread makes it; the others wait for it, not for every key
            value = self._values.get(key, _MISSING)
            if value is _MISSING:
                value = make()
                self.put(key, value)
        return value

    @contextmanager
    def locked(self) -> Iterator[Memo]:
        with self._lock:
            yield self


# the columns of a scoring row (search_fts, search_fast, search_wildcard, artifact_rows), in order
SCORING_ROW = ("path", "id", "name", "symbols", "headings", "tags", "priority", "domain", "content_type",
               "lifecycle", "format", "checksum", "bm25")
_TEXT_OF_ROW = ("id", "symbols", "headings", "tags", "checksum")  # (cypher/artifact_text.cypher)
# up to this many ArtifactText keys, a probe of the primary key's index each (~0.25 ms;
# cypher/artifact_text_one.cypher), else one UNWIND over them, which reads the table's
# columns whole (~13 ms on a warm snapshot at 20k files, ~42 ms on one just opened)
TEXT_ONE_BY_ONE = 64
_SCORING_QUERIED = frozenset({*(c for c in SCORING_ROW if c not in _TEXT_OF_ROW), "text_n"})

_PARAMS: MemoKey[ReadParams] = MemoKey("params")
_TERMS: MemoKey[Terms] = MemoKey("terms")
_HUBS: MemoKey[list[dict[str, Any]]] = MemoKey("hubs")
_BUILT_FILES: MemoKey[tuple[dict[str, Any], dict[str, list[Any]]]] = MemoKey("built_files")
_LEARNED: MemoKey[Learned] = MemoKey("learned")
_EVENTS: MemoKey[dict[str, list[dict[str, Any]]]] = MemoKey("events")
_EVENT_SPANS: MemoKey[dict[str, tuple[int, int]] | None] = MemoKey("event_spans")
_SUPERSEDED: MemoKey[dict[str, int]] = MemoKey("superseded")
_FULLTEXT: MemoKey[FullText | None] = MemoKey("fulltext")
# the top of a full-text search of the engine's index (its rows superseded by an update are
# ranked by the index too, and dropped after it: schema/001_nodes.cypher) → the table it counts
_FTS_TOP = {"history_top": "History"}
# the full-text hits a statement unwinds (bound here from the bundle's postings, $q and $k)
# → whether a document must hold every term of $q
_HITS = {"fts_hits": False, "fts_every": True}
_PARAM = re.compile(r"\$(\w+)")
_NO_HITS: dict[str, Any] = {}  # (``_tops``: a search with no hit, whose statement gives no row)
_NAMED: dict[str, MemoKey[list[dict[str, Any]]]] = {}
_NAMED_LOCK = threading.Lock()


@dataclass(frozen=True, slots=True)
class ReadParams:
    """The parameters a reader shows or uses, as the build recorded them."""

    alpha: float
    priority_cap: float
    query_guard: int
    neighbour_cap: int
    relation_weights: dict[str, float] = field(default_factory=dict)

    @classmethod
    def from_header(cls, header: dict[str, Any]) -> ReadParams:
        caps = header.get("caps") or {}
        return cls(alpha=float(header["alpha"]), priority_cap=float(caps["priority"]),
                   query_guard=int(caps["query_neighbour_guard"]), neighbour_cap=int(caps["neighbourhood"]),
                   relation_weights=dict(header.get("relation_weights") or {}))


class Snapshot:
    """One build of ``root``, opened for reading; a context manager (``close`` releases
    the bundle's reader lock and the engine)."""

    def __init__(self, root: Path, vault: Vault, latest: dict[str, Any], bundle: Path, lock_fd: int,
                 notices: list[str]) -> None:
        self.root = Path(root)
        self.vault = vault
        self.latest = latest
        self.bundle = bundle
        self.build_id = str(latest["build_id"])
        self.notices = notices
        self.workspace = Workspace(root)
        self.memo = Memo()  # per-build answers (the bundle never changes)
        self._lock_fd = lock_fd
        self._store: Any = None
        self._header: dict[str, Any] | None = None
        self._guard = threading.Lock()
        self.closed = False

    # -- opening ---------------------------------------------------------------------------
    @classmethod
    def open(cls, root: Path | str, *, repair: Repair | None = None) -> Snapshot:
        """The build LATEST names. When LATEST or its bundle is missing or damaged:
        with ``repair`` (the face passes ``oracl.bundle.repair.repair_latest``; the read
        plane never writes a bundle itself) the bundle is rebuilt from the verified export
        (a notice says so), else a VaultError says what is wrong and how to mend it."""
        root = Path(root)
        check_root(root)
        vault = Vault(root)
        notices: list[str] = []
        for _attempt in range(4):
            problem = _problem(vault)
            if problem:
                if repair is None:
                    raise VaultError(f"{problem}; run `oracl repair {root}` to rebuild it from the verified "
                                     f"export, or `oracl build {root}`")
                build_id, source = repair(root, problem)
                notices.append(f"{problem}; rebuilt bundle {build_id} from {source}")
                continue
            latest = vault.read_latest()
            bundle = vault.bundle(str(latest.get("bundle", latest["build_id"])))
            fd = _lock(bundle)
            if fd == -2:  # pruned between reading LATEST and locking: LATEST has moved on
                continue
            snap = cls(root, vault, latest, bundle, fd, notices)
            try:  # read once, kept by the snapshot (a bundle without header.json is older still)
                version = snap.header.get("version") if (bundle / HEADER_FILE).is_file() else None
            except (OSError, orjson.JSONDecodeError, AttributeError, KeyError, TypeError):
                version = SCHEMA_VERSION  # a damaged header is verify's and repair's to report
            if version is not None and version != SCHEMA_VERSION:
                snap.close()
                raise NoBuildError(f"the latest build of {root} was made by an older ORACL (export schema "
                                   f"{version}, this one reads {SCHEMA_VERSION}): run `oracl build {root}`")
            return snap
        raise VaultError(f"LATEST.json in {vault.dir} kept moving while it was read; try again")

    def close(self) -> None:
        with self._guard:
            if self.closed:
                return
            self.closed = True
            if self._store is not None:
                self._store.release()
                self._store = None
            if self._lock_fd >= 0:
                os.close(self._lock_fd)
                self._lock_fd = -1

    def __enter__(self) -> Snapshot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what a reader reads ----------------------------------------------------------------
    @property
    def store(self) -> Any:
        """The bundle's database, opened read-only on first use."""
        with self._guard:
            if self.closed:
                raise VaultError("this snapshot of the build is closed")
            if self._store is None:
                from oracl.core.store import Store

                self._store = Store.open(self.bundle / DB_FILE, read_only=True)
            return self._store

    @property
    def header(self) -> dict[str, Any]:
        """The build's header: the bundle's ``header.json``; for a bundle made before it
        existed, the header of the bundle's export index (or the vault's)."""
        if self._header is None:
            try:
                self._header = orjson.loads((self.bundle / HEADER_FILE).read_bytes())
            except (OSError, orjson.JSONDecodeError):
                path = self.bundle / EXPORT_INDEX
                self._header = self.vault.read_json(path if path.is_file() else self.vault.export_index)["header"]
        return self._header

    @property
    def params(self) -> ReadParams:
        return self.memo.once(_PARAMS, lambda: ReadParams.from_header(self.header))

    def events(self) -> dict[str, list[dict[str, Any]]]:
        """path → the event nodes of the build on that file (phase 6, the bundle's
        ``events.json``), newest first, each with its ``weight`` now (``event_weight``, the
        header's half-life); empty without events."""
        return self.memo.once(_EVENTS, self._events)

    def events_on(self, paths: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
        """``events()`` for these files only: their groups are read from ``events.json`` at
        the offsets its index gives (impact and show need a few files, not every event)."""
        whole = self.memo.get(_EVENTS)
        spans = None if whole is not None else self.memo.once(_EVENT_SPANS, self._event_spans)
        if spans is None:
            whole = self.events()
            return {p: whole[p] for p in paths if p in whole}
        out: dict[str, list[dict[str, Any]]] = {}
        try:
            with open(self.bundle / EVENTS_BUNDLE_FILE, "rb") as fh:
                for p in paths:
                    if p in spans and p not in out:
                        fh.seek(spans[p][0])
                        group = orjson.loads(fh.read(spans[p][1] - spans[p][0]))
                        out[p] = self._weighed(group.get("nodes", []))
        except (OSError, orjson.JSONDecodeError, AttributeError):
            whole = self.events()
            return {p: whole[p] for p in paths if p in whole}
        return out

    def _event_spans(self) -> dict[str, tuple[int, int]] | None:
        try:
            files = orjson.loads((self.bundle / EVENTS_INDEX_FILE).read_bytes())["files"]
            return {p: (int(f["span"][0]), int(f["span"][1])) for p, f in files.items() if f.get("span")}
        except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError, IndexError):
            return None

    def _weighed(self, nodes: list[Any]) -> list[dict[str, Any]]:
        half_life = float((self.header.get("events") or {}).get("half_life_days") or EVENT_HALF_LIFE_DAYS)
        now = datetime.now(UTC)
        rows = []
        for n in nodes:
            if isinstance(n, dict) and isinstance(n.get("path"), str):
                at = utc(n.get("timestamp_utc"))
                age = (now - at).total_seconds() / 86400 if at is not None else 0.0
                rows.append({**n, "weight": event_weight(age, half_life)})
        rows.sort(key=lambda n: (n.get("timestamp_utc", ""), n.get("id", "")), reverse=True)
        return rows

    def _events(self) -> dict[str, list[dict[str, Any]]]:
        try:
            doc = orjson.loads((self.bundle / EVENTS_BUNDLE_FILE).read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return {}
        files = doc.get("files") if isinstance(doc, dict) else None
        if not isinstance(files, dict):
            return {}
        return {p: rows for p, g in files.items() if isinstance(g, dict) and (rows := self._weighed(g.get("nodes", [])))}

    def learned(self) -> Learned:
        """The learned terms and associations this build merged (the bundle's
        ``learned.json``; empty when it has none or it is unreadable)."""
        return self.memo.once(_LEARNED, lambda: Learned.read(self.bundle / LEARNED_FILE))

    def named(self, name: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run the named read query ``cypher/<name>.cypher`` on this build; the terms its
        derived values use (``$d_mu`` …: oracl/core/derive.py) come from the build's header."""
        bound = self._tops(query(name), with_terms(name, self.terms, params))
        return [] if bound is _NO_HITS else finish(self._with_text(self.store.named(name, bound)), self.terms)

    def rows(self, statement: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run a compiled read statement on this build, with the terms it derives values from."""
        bound = self._tops(statement, bind(statement, self.terms, params))
        return [] if bound is _NO_HITS else finish(self._with_text(self.store.rows(statement, bound)), self.terms)

    def _with_text(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A scoring row (``text_n`` in place of its ArtifactText strings: search_fts,
        search_fast, search_wildcard, artifact_rows) with those strings, looked up by key,
        in the columns' order; a row whose text row is not there is left out, as the join
        left it. Any other row as it is."""
        if not rows or rows[0].keys() != _SCORING_QUERIED:
            return rows
        keys = [text_key(r["path"], r["text_n"]) for r in rows]
        wanted = list(dict.fromkeys(keys))
        got = [t for k in wanted for t in self.store.named("artifact_text_one", {"key": k})] \
            if len(wanted) <= TEXT_ONE_BY_ONE else self.store.named("artifact_text", {"keys": wanted})
        found = {t.pop("key"): t for t in got}
        out = []
        for r, k in zip(rows, keys, strict=True):
            t = found.get(k)
            if t is not None:
                both = {**r, **t}
                out.append({c: both[c] for c in SCORING_ROW})
        return out

    def _tops(self, statement: str, params: dict[str, Any] | None) -> dict[str, Any] | None:
        """``params`` with what ``statement`` unwinds or tops: the full-text hits of ``$q``
        (``$fts_hits``, ``$fts_every``: ``_NO_HITS`` when there are none, and then the
        statement has no row to give), and for the engine's History index ``$k`` and the rows
        an update superseded (counted once per snapshot)."""
        if params is None:
            return params
        named = set(_PARAM.findall(statement))
        for name, every in _HITS.items():
            if name in named:
                hits = self.search_text(str(params["q"]), int(params["k"]), every=every)
                if not hits:
                    return _NO_HITS
                params = {k: v for k, v in params.items() if k in named}
                params[name] = [{"path": p, "score": score} for p, score in hits]
        tops = [p for p in _FTS_TOP if p in named]
        if not tops:
            return params
        counts = self.memo.once(_SUPERSEDED, self.superseded)
        return {**params, **{p: int(params["k"]) + counts[_FTS_TOP[p]] for p in tops}}

    def fulltext(self) -> FullText | None:
        """The bundle's full-text postings (``core/fulltext.py``), opened once; None when
        the build left them out (``--skip-phase fts``)."""
        def opened() -> FullText | None:
            try:
                return FullText.open(self.bundle)
            except (OSError, ValueError) as exc:
                raise VaultError(f"the full-text postings of bundle {self.bundle.name} are unreadable ({exc}); "
                                 f"run `oracl verify {self.root}`, then `oracl repair {self.root}`") from None

        return self.memo.once(_FULLTEXT, opened)

    def search_text(self, q: str, k: int, *, every: bool = False) -> list[tuple[str, float]]:
        """The ``k`` best live documents for ``q`` by BM25: (path, score), best first, ties
        by path (``every``: only those holding every distinct term of ``q``)."""
        ft = self.fulltext()
        return ft.search(q, k, conjunctive=every) if ft is not None else []

    def superseded(self) -> dict[str, int]:
        """The rows an update superseded in each of the engine's full-text tables (``live``
        false), which its index still ranks until it is made again."""
        return {table: int(self.store.rows(f"MATCH (c:{table}) WHERE NOT c.live RETURN count(*) AS n")[0]["n"])
                for table in sorted(set(_FTS_TOP.values()))}

    def hubs(self) -> list[dict[str, Any]]:
        """Every domain hub: members, mean priority, top member (an aggregate over every
        artifact: once per snapshot)."""
        return self.memo.once(_HUBS, lambda: summary(self.cached("hub_summary"),
                                                     self.store.arrow("hub_member_terms"), self.terms))

    @property
    def terms(self) -> Terms:
        """The repository's terms of this build (the header's aggregates, α and the cap)."""
        return self.memo.once(_TERMS, lambda: Terms.from_header(self.header))

    def cached(self, name: str) -> list[dict[str, Any]]:
        """A parameterless named query, answered once per snapshot."""
        with _NAMED_LOCK:
            key = _NAMED.setdefault(name, MemoKey(name))
        return self.memo.once(key, lambda: self.named(name))

    def built_files(self, *, database: bool = True) -> tuple[dict[str, Any], dict[str, list[Any]]]:
        """(the build's time and commit, path → [size, mtime_ns, checksum, status, ctime_ns])
        from the bundle's ``stat.bin``; a bundle without one answers from its database
        (ctime unknown) – unless ``database`` is False (a thread never opens the engine)."""
        return self.memo.once(_BUILT_FILES, lambda: self._built_files(database))

    def _built_files(self, database: bool) -> tuple[dict[str, Any], dict[str, list[Any]]]:
        try:
            doc, files = stat_files((self.bundle / STAT_FILE).read_bytes(), self.vault.dir)
            info = {k: doc.get(k) for k in ("generated_at", "source_commit")}
        except (OSError, OraclError, ValueError, KeyError, AttributeError, TypeError):
            if not database:
                raise VaultError(f"bundle {self.bundle.name} has no readable {STAT_FILE}") from None
            files = {r["path"]: [r["size"], _micros(r["mtime"]) * 1000, r["checksum"], "ok"]
                     for r in self.named("artifact_stats")}
            info = {"generated_at": self.header["generated_at"], "source_commit": self.header.get("source_commit")}
        return info, files


def _problem(vault: Vault) -> str:
    """What keeps a reader from opening the build LATEST names ('' when nothing does)."""
    try:
        latest = vault.read_latest()
        bundle = vault.bundle(str(latest.get("bundle", latest["build_id"])))
    except NoBuildError:
        if not vault.export_index.is_file():
            raise
        return "LATEST.json is not sealed by your oracl" if vault.latest.is_file() else "LATEST.json is missing"
    except VaultError as exc:
        return str(exc).split(";")[0]
    if not (bundle / DB_FILE).is_file():
        return f"the bundle {bundle.name} named by LATEST.json is missing"
    return ""


def _lock(bundle: Path) -> int:
    """A shared lock on the bundle's ``readers.lock``: the fd, -1 for an older bundle
    without one, -2 when the bundle vanished before it could be locked."""
    try:
        fd = os.open(bundle / READERS_LOCK, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return -2 if not (bundle / DB_FILE).is_file() else -1
    except OSError:
        return -1
    fcntl.flock(fd, fcntl.LOCK_SH)
    if not (bundle / DB_FILE).is_file():  # pruned while the lock was taken
        os.close(fd)
        return -2
    return fd


def _micros(ts: Any) -> int:
    """A stored (naive UTC) timestamp as microseconds since the epoch."""
    from datetime import datetime

    if ts is None:
        return -1
    delta = ts.replace(tzinfo=None) - datetime(1970, 1, 1)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
