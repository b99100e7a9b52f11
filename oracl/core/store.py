"""The only module that imports kuzu: the engine adapter. It opens databases (one
``Database`` object per file per process), runs parameterised statements (Arrow tables
bind as parameters, for COPY) and translates the engine's bare ``RuntimeError``s into the
OraclError tree. What a bundle's database holds and how a build writes or patches it is
the bundle plane's (``oracl.bundle.database``).
"""

from __future__ import annotations

import functools
import importlib.util  # noqa: F401  (kuzu binds Arrow parameters through importlib.util)
import os
import re
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import kuzu

from oracl.core.errors import StoreError, StoreLockedError
from oracl.core.resources import query, query_params

MAX_DB_BYTES = 1 << 38  # 256 GiB per bundle
CONSOLE_TIMEOUT_MS = 60_000
NOWHERE = "/nonexistent/oracl-console"
STRAY = (".wal", ".shadow")  # a published bundle is checkpointed: these next to it are strays
_LOCK = threading.Lock()
# the engine's rule, not a cache: one Database object per file per process (a second one
# on the same file corrupts it). ``open_engines`` lets a process that forks check it holds none.
_OPEN: dict[str, tuple[kuzu.Database, bool]] = {}
_STORES: dict[str, Store] = {}


READ_POOL_ENV = "ORACL_READ_POOL_MB"  # a reader's buffer pool, when the sizing below is not enough


def read_pool(db_bytes: int, env: str | None = None) -> int:
    """A reader's buffer pool: ``ORACL_READ_POOL_MB`` when set, else 2 × the database + 128
    MiB (a reader's scans and joins page through the tables; 10⁶ files failed at a fixed 256
    MiB), at least 256 MiB and at most 32 GiB. The engine reserves the pool, it does not
    commit it: pages are taken as they are read.

    >>> read_pool(0) >> 20, read_pool(300 << 20) >> 20, read_pool(1 << 40) >> 30, read_pool(0, "1024") >> 20
    (256, 728, 32, 1024)
    """
    if env and env.strip().isdigit() and int(env) > 0:
        return int(env) << 20
    return max(256 << 20, min(32 << 30, 2 * db_bytes + (128 << 20)))


def _translate(exc: Exception, what: str) -> StoreError:
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if "buffer pool is full" in msg:
        return StoreError(f"{what}: Kùzu's buffer pool is too small for this graph; set buffer_pool_bytes in "
                          f"[tool.oracl] higher for builds, {READ_POOL_ENV} (MiB) for readers")
    if "Could not set lock" in msg or "lock on file" in msg:
        return StoreLockedError(f"{what}: the graph database is locked by another process writing to it")
    return StoreError(f"{what}: {msg}")


class Store:
    """A connection to one Kùzu database file.

    >>> s = Store.open(tmp / "graph.kuzu", read_only=False)   # doctest: +SKIP
    >>> s.rows("RETURN $x AS x", {"x": 1})                     # doctest: +SKIP
    [{'x': 1}]
    """

    def __init__(self, path: Path, db: Any, read_only: bool) -> None:
        self.path = path
        self.read_only = read_only
        self._db = db
        self._conn = kuzu.Connection(db)
        self._prepared: dict[str, Any] = {}
        self.users = 0  # snapshots holding this store; the last release closes the database

    @classmethod
    def open(cls, path: Path, *, read_only: bool, buffer_pool_bytes: int = 0,
             threads: int = 2) -> Store:
        """One database file (``buffer_pool_bytes`` 0: ``read_pool`` of its size)."""
        if not buffer_pool_bytes:
            try:
                size = Path(path).stat().st_size
            except OSError:
                size = 0
            buffer_pool_bytes = read_pool(size, os.environ.get(READ_POOL_ENV))
        key = str(Path(path).resolve())
        with _LOCK:
            cached = _STORES.get(key)
            if cached is not None and (cached.read_only == read_only or not cached.read_only):
                cached.users += 1
                return cached
            held = _OPEN.get(key)
            if held is not None and (held[1] == read_only or not held[1]):
                store = cls(Path(path), held[0], held[1])
                store.users = 1
                _STORES[key] = store
                return store
            if held is not None:
                raise StoreError("the database is already open read-only in this process")
            if read_only:
                _set_aside_strays(Path(key))
            try:
                # max_db_size bounds the address space kuzu reserves per database (default
                # 8 TiB): a long-lived reader that opens one bundle per build ran out of it
                db = kuzu.Database(key, read_only=read_only, buffer_pool_size=buffer_pool_bytes,
                                   max_num_threads=threads, max_db_size=MAX_DB_BYTES)
            except RuntimeError as exc:
                raise _translate(exc, f"cannot open {path}") from None
            _OPEN[key] = (db, read_only)
            store = cls(Path(path), db, read_only)
            store.users = 1
            _STORES[key] = store
        return store

    def release(self) -> None:
        """One user fewer; the last one closes the database (and its file lock)."""
        with _LOCK:
            self.users -= 1
            last = self.users <= 0
        if last:
            close(self.path)

    def execute(self, statement: str, params: dict[str, Any] | None = None) -> Any:
        """Run a statement; parameterised ones are prepared once per connection."""
        try:
            if not params or statement.lstrip()[:4].upper() == "COPY":  # COPY binds Arrow at run time
                return self._conn.execute(statement, params or {})
            prepared = self._prepared.get(statement)
            if prepared is None:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DeprecationWarning)  # prepare() is deprecated, still the fast path
                    # the derived terms ($d_…, floats) typed at prepare: see core/derive.py's _p
                    prepared = self._conn.prepare(statement, {k: v for k, v in params.items() if k.startswith("d_")})
                if len(self._prepared) < 256:
                    self._prepared[statement] = prepared
            return self._conn.execute(prepared, params)
        except RuntimeError as exc:
            raise _translate(exc, "query failed") from None

    def rows(self, statement: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """The rows of a statement. Every ``$parameter`` it names must be given: Kùzu 0.11.3
        reads a missing one as NULL (a derived priority of NULL, silently), or dies inside a
        UNION."""
        missing = statement_params(statement) - set(params or ())
        if missing:
            raise StoreError(f"the statement needs the parameter(s) {', '.join(sorted(missing))}")
        result = self.execute(statement, params)
        cols = result.get_column_names()
        out = []
        while result.has_next():
            out.append(dict(zip(cols, result.get_next(), strict=True)))
        return out

    def arrow(self, name: str, params: dict[str, Any] | None = None) -> Any:
        """The named query's rows as one Arrow table (many rows: no Python object per row)."""
        _given(name, params)
        try:
            return self.execute(query(name), params).get_as_arrow(chunk_size=1 << 20)
        except RuntimeError as exc:
            raise _translate(exc, "query failed") from None

    def named(self, name: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run the named query ``cypher/<name>.cypher``. A parameter it uses and is not given
        is refused here: Kùzu 0.11.3 reports one as an error, except inside a UNION, where
        the process dies (a segfault)."""
        _given(name, params)
        return self.rows(query(name), params)


def _given(name: str, params: dict[str, Any] | None) -> None:
    """Refuse a named query a parameter it uses is not given for (by the query's name)."""
    missing = query_params(name) - set(params or ())
    if missing:
        raise StoreError(f"query {name} needs the parameter(s) {', '.join(sorted(missing))}")


@functools.lru_cache(maxsize=512)
def statement_params(statement: str) -> frozenset[str]:
    """The ``$parameters`` a statement names (outside its string literals)."""
    return frozenset(re.findall(r"\$([A-Za-z_]\w*)", re.sub(r"'(?:[^'\\]|\\.)*'", "''", statement)))


def close(path: Path) -> None:
    """Close this process's Database object for ``path`` (its file lock goes with it),
    whoever still uses it."""
    key = str(Path(path).resolve())
    with _LOCK:
        _STORES.pop(key, None)
        held = _OPEN.pop(key, None)
    if held is not None:
        held[0].close()


def open_console(path: Path, buffer_pool_bytes: int, threads: int, max_db_bytes: int,
                 timeout_ms: int) -> Any:
    """For the console's sandboxed child (``oracl.face.sandbox``): the database opened
    read-only with ``max_db_bytes`` of address space, and a connection with the engine's
    timeout, the home directory and file search path pointing nowhere. Returns
    ``run(statement, params) -> result``; nothing here may open a file once it returns."""
    try:
        db = kuzu.Database(str(path), read_only=True, buffer_pool_size=buffer_pool_bytes,
                           max_num_threads=threads, max_db_size=max_db_bytes)
        conn = kuzu.Connection(db)
        conn.set_query_timeout(timeout_ms)
        for option in ("home_directory", "file_search_path"):
            conn.execute(f"CALL {option}='{NOWHERE}'")
    except RuntimeError as exc:
        raise _translate(exc, f"cannot open {path}") from None

    def run(statement: str, params: dict[str, Any]) -> Any:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                prepared = conn.prepare(statement)
            if not prepared.is_success():
                raise RuntimeError(prepared.get_error_message())
            return conn.execute(prepared, params)
        except RuntimeError as exc:
            raise _translate(exc, "query failed") from None

    run.keep = (db, conn)  # type: ignore[attr-defined]  # alive as long as run is
    return run


def open_engines() -> list[str]:
    """The database files this process holds open (a process that forks must hold none)."""
    with _LOCK:
        return sorted(_OPEN)


def _set_aside_strays(path: Path) -> list[str]:
    """A read-only open of a published bundle: a ``.wal`` or ``.shadow`` beside its
    database was left by something that wrote to a bundle nobody may write to (the engine
    refuses to open read-only with one). It is renamed aside, never deleted, so the reader
    opens the database as published and ``oracl verify`` still checks it."""
    moved = []
    for suffix in STRAY:
        stray = Path(str(path) + suffix)
        if stray.is_file():
            aside = stray.with_name(f"{stray.name}.stray-{os.getpid()}-{time.time_ns()}")
            try:
                os.replace(stray, aside)
                moved.append(aside.name)
            except OSError:
                pass  # a read-only vault: the engine's own error will say what is wrong
    return moved


def reset(path: Path) -> None:
    """Remove a database file and its WAL (a stray WAL would be replayed into a new file)."""
    for stale in (path, Path(str(path) + ".wal")):
        if stale.exists():
            stale.unlink()
