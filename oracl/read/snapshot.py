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
missing or damaged) happens only when the caller asks for it (``repair=True``), only in
the main thread, and only under the vault's build lock; a reader that cannot repair says
so in one line with its exit code.

>>> with Snapshot.open(Path("repo")) as snap:                 # doctest: +SKIP
...     snap.build_id, snap.params.query_guard
('20261201T001500000000Z-01234', 5000)
"""

from __future__ import annotations

import fcntl
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from oracl.core.errors import BuildLockedError, NoBuildError, OraclError, VaultError
from oracl.core.export import SCHEMA_VERSION
from oracl.core.vault import (
    DB_FILE,
    EXPORT,
    HEADER_FILE,
    READERS_LOCK,
    STAT_FILE,
    Vault,
    check_root,
)
from oracl.core.workspace import Workspace


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
        self.memo: dict[str, Any] = {}  # per-build answers (the bundle never changes)
        self.memo_lock = threading.Lock()
        self._lock_fd = lock_fd
        self._store: Any = None
        self._header: dict[str, Any] | None = None
        self._guard = threading.Lock()
        self.closed = False

    # -- opening ---------------------------------------------------------------------------
    @classmethod
    def open(cls, root: Path | str, *, repair: bool = False) -> Snapshot:
        """The build LATEST names. When LATEST or its bundle is missing or damaged:
        with ``repair`` the bundle is rebuilt from the verified export (a notice says so),
        else a VaultError says what is wrong and how to mend it."""
        root = Path(root)
        check_root(root)
        vault = Vault(root)
        notices: list[str] = []
        for _attempt in range(4):
            problem = _problem(vault)
            if problem:
                if not repair:
                    raise VaultError(f"{problem}; run `oracl repair {root}` to rebuild it from the verified "
                                     f"export, or `oracl build {root}`")
                build_id, source = repair_latest(root, problem)
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
        existed, the header of the bundle's export (or the vault's)."""
        if self._header is None:
            try:
                self._header = orjson.loads((self.bundle / HEADER_FILE).read_bytes())
            except (OSError, orjson.JSONDecodeError):
                path = self.bundle / EXPORT
                self._header = self.vault.read_json(path if path.is_file() else self.vault.export)["schema"]
        return self._header

    @property
    def params(self) -> ReadParams:
        if "params" not in self.memo:
            self.memo["params"] = ReadParams.from_header(self.header)
        return self.memo["params"]

    def named(self, name: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run the named read query ``cypher/<name>.cypher`` on this build."""
        return self.store.named(name, params)

    def cached(self, name: str) -> list[dict[str, Any]]:
        """A parameterless named query, answered once per snapshot."""
        if name not in self.memo:
            self.memo[name] = self.named(name)
        return self.memo[name]

    def built_files(self, *, database: bool = True) -> tuple[dict[str, Any], dict[str, list[Any]]]:
        """(the build's time and commit, path → [size, mtime_ns, checksum, status, ctime_ns])
        from the bundle's ``stat.bin``; a bundle without one answers from its database
        (ctime unknown) – unless ``database`` is False (a thread never opens the engine)."""
        if "built_files" not in self.memo:
            try:
                doc = orjson.loads((self.bundle / STAT_FILE).read_bytes())
                files = doc.pop("files")
                info = {k: doc.get(k) for k in ("generated_at", "source_commit")}
            except (OSError, orjson.JSONDecodeError, KeyError, AttributeError, TypeError):
                if not database:
                    raise VaultError(f"bundle {self.bundle.name} has no readable {STAT_FILE}") from None
                files = {r["path"]: [r["size"], _micros(r["mtime"]) * 1000, r["checksum"], "ok"]
                         for r in self.named("artifact_stats")}
                info = {"generated_at": self.header["generated_at"], "source_commit": self.header.get("source_commit")}
            self.memo["built_files"] = (info, files)
        return self.memo["built_files"]


def _problem(vault: Vault) -> str:
    """What keeps a reader from opening the build LATEST names ('' when nothing does)."""
    try:
        latest = vault.read_latest()
        bundle = vault.bundle(str(latest.get("bundle", latest["build_id"])))
    except NoBuildError:
        if not vault.export.is_file():
            raise
        return "LATEST.json is missing"
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


def repair_latest(root: Path, problem: str) -> tuple[str, str]:
    """Rebuild the bundle from the verified export (main thread only, under the vault's
    build lock). Returns the new build id and what the export was checked with."""
    from oracl.bundle.repair import rebuild_bundle

    vault = Vault(root)
    if not vault.export.is_file():
        raise VaultError(f"{problem} and there is no export to rebuild it from; run `oracl build {root}`")
    if threading.current_thread() is not threading.main_thread():
        raise VaultError(f"{problem}; run `oracl repair {root}`")
    try:
        return rebuild_bundle(root)
    except BuildLockedError:
        raise BuildLockedError(f"{problem}, and another oracl build is running on {vault.dir}: "
                               "run the command again when it has finished") from None
    except OraclError:
        raise


def _micros(ts: Any) -> int:
    """A stored (naive UTC) timestamp as microseconds since the epoch."""
    from datetime import datetime

    if ts is None:
        return -1
    delta = ts.replace(tzinfo=None) - datetime(1970, 1, 1)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
