"""The only module that imports kuzu. It opens databases (one ``Database`` object per
file per process), runs parameterised statements, bulk-loads bundles with COPY from Arrow
and translates the engine's bare ``RuntimeError``s into the OraclError tree.
"""

from __future__ import annotations

import importlib.util  # noqa: F401  (kuzu binds Arrow parameters through importlib.util)
import os
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import kuzu
import orjson

from oracl.core.errors import StoreError, StoreLockedError
from oracl.core.resources import loader_statements, query, query_params, schema_statements
from oracl.core.vault import DB_FILE

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
                    prepared = self._conn.prepare(statement)
                if len(self._prepared) < 256:
                    self._prepared[statement] = prepared
            return self._conn.execute(prepared, params)
        except RuntimeError as exc:
            raise _translate(exc, "query failed") from None

    def rows(self, statement: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        result = self.execute(statement, params)
        cols = result.get_column_names()
        out = []
        while result.has_next():
            out.append(dict(zip(cols, result.get_next(), strict=True)))
        return out

    def named(self, name: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run the named query ``cypher/<name>.cypher``. A parameter it uses and is not given
        is refused here: Kùzu 0.11.3 reports one as an error, except inside a UNION, where
        the process dies (a segfault)."""
        missing = query_params(name) - set(params or ())
        if missing:
            raise StoreError(f"query {name} needs the parameter(s) {', '.join(sorted(missing))}")
        return self.rows(query(name), params)


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


def _reset(path: Path) -> None:
    for stale in (path, Path(str(path) + ".wal")):  # a stray WAL would be replayed into the new file
        if stale.exists():
            stale.unlink()


def start_bundle(directory: Path, content: Any, *, fts: bool = True,
                 buffer_pool_bytes: int = 1 << 30, threads: int = 2) -> Path:
    """A fresh database in ``directory`` with the schema, the Content rows (COPY from an
    Arrow table) and their full-text index. The database stays open in this process for
    ``finish_bundle``. Safe to run in a thread: kuzu releases the GIL while it works."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / DB_FILE
    _reset(path)
    store = Store.open(path, read_only=False, buffer_pool_bytes=buffer_pool_bytes, threads=threads)
    for stmt in schema_statements():
        store.execute(stmt)
    if len(content):
        store.execute(loader_statements("010_copy_content")[0], {"content": content})
    if fts:
        for stmt in loader_statements("020_fts"):
            store.execute(stmt)
    return path


GRAPH_TABLES = ("References", "Inherits", "Calls", "Contains", "Defines", "BelongsTo", "Link",
                "SymbolName", "Symbol", "History", "Hub", "Artifact")  # drop order: rel tables first
# what a selective rebuild whose changed files kept their interface patches in place
# (Defines goes with Artifact, which is loaded again: its rows are made from Symbol's)
SYMBOL_TABLES = ("References", "Inherits", "Calls", "Contains", "SymbolName", "Symbol")


@contextmanager
def _transaction(store: Store) -> Iterator[None]:
    """One write transaction: committed when the block ends, rolled back when it raises."""
    store.execute("BEGIN TRANSACTION")
    try:
        yield
        store.execute("COMMIT")
    except BaseException:
        try:
            store.execute("ROLLBACK")
        except StoreError:
            pass  # the engine already rolled back
        raise


def patch_bundle(directory: Path, previous: Path, delete: list[str], content: Any, *,
                 buffer_pool_bytes: int = 1 << 30, threads: int = 2, keep_symbols: bool = False) -> Path:
    """A new database in ``directory`` made from a copy of the ``previous`` bundle's: the
    Content rows of ``delete`` removed, those of ``content`` (an Arrow table) created –
    with CREATE, which keeps the full-text index current where COPY would not – and the
    graph tables emptied for ``finish_bundle`` (but for ``SYMBOL_TABLES`` when
    ``keep_symbols``: ``finish_bundle`` patches them). The previous file is only read."""
    import shutil

    directory.mkdir(parents=True, exist_ok=True)
    path = directory / DB_FILE
    _reset(path)
    shutil.copyfile(previous, path)
    store = Store.open(path, read_only=False, buffer_pool_bytes=buffer_pool_bytes, threads=threads)
    with _transaction(store):
        if delete:
            store.execute(query("content_delete"), {"paths": delete})
        # one CREATE per row: an UNWIND of several rows indexes only some of them (0.11.3)
        for row in content.to_pylist() if len(content) else []:
            store.execute(query("content_create"), row)
    try:  # an index blocks dropping its table; a build without history has none
        store.execute("CALL DROP_FTS_INDEX('History', 'history_fts')")
    except StoreError:
        pass
    dropped = [t for t in GRAPH_TABLES if not (keep_symbols and t in SYMBOL_TABLES)]
    for table in dropped:
        store.execute(f"DROP TABLE {table}")
    for stmt in schema_statements():
        if _creates(stmt) in dropped:
            store.execute(stmt)
    return path


def _creates(statement: str) -> str:
    """The table a CREATE … TABLE statement makes ('' for any other statement)."""
    words = statement.replace("(", " ").split()
    for i, w in enumerate(words[:-1]):
        if w.upper() == "TABLE":
            return words[i + 1]
    return ""


def finish_bundle(path: Path, tables: dict[str, Any], after_each: Any = None,
                  symbol_patch: tuple[list[str], dict[str, Any]] | None = None) -> None:
    """COPY the graph tables into a bundle made by ``start_bundle``, checkpoint, close.
    ``after_each`` is called after every COPY (the crash tests kill the process there).
    ``symbol_patch`` = (paths, the symbol tables of those files' rows), for a bundle
    ``patch_bundle`` kept the symbol tables of: those files' edges are deleted and made
    again and their symbols' properties set; the whole symbol tables are then not in
    ``tables`` and Defines is made from Symbol's rows."""
    store = Store.open(path, read_only=False)
    try:
        for stmt in loader_statements("030_copy_graph"):
            param = stmt.rsplit("$", 1)[1]
            if param not in tables or len(tables[param]) == 0:  # COPY of an empty table is an error in 0.11
                continue
            store.execute(stmt, {param: tables[param]})
            if after_each is not None:
                after_each()
        if symbol_patch is not None:
            _patch_symbols(store, *symbol_patch)
            if after_each is not None:
                after_each()
        if len(tables.get("history", ())):
            for stmt in loader_statements("040_history_fts"):
                store.execute(stmt)
        store.execute("CHECKPOINT")
    finally:
        close(path)


# Each edge a prepared CREATE costs ~0.9 ms; a COPY appending to a rel table costs about
# what the table holds (1.47 s for 2,500 calls into 429k, measured on Kùzu 0.11.3): a
# table whose changed edges are more than this many, and more than 1/300 of its rows, has
# all of the changed files' edges deleted and appended again by COPY
PATCH_COPY_MIN = 1500
PATCH_RELS = {"calls": "Calls", "contains": "Contains", "inherits": "Inherits", "references": "References"}
# which statement sets which: the lines and the flag together (whole numbers and booleans are
# updated in place); each string on its own, and only when it changed: any SET of a string
# column, even to the value it holds, grows the file by a rewritten column chunk (Kùzu
# 0.11.3: +4 to +8 MB a build at 107 MB, never reused; design §7b)
PATCH_SETS = {"symbols_patch_set_lines": ("start_line", "end_line", "exported"),
              "symbols_patch_set_signature": ("signature",), "symbols_patch_set_doc": ("doc",)}


def edge_diff(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> tuple[
        list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """What turns the ``old`` edge rows (``source``, ``target``, properties) into the
    ``new`` ones, by pair of endpoints: ``(unlink, update, create)``. A pair with the same
    rows on both sides is left alone; one row on each side with other properties is
    updated in place; any other difference unlinks the pair's old rows and creates its new
    ones. Writing nothing to a rel table matters: Kùzu 0.11.3's checkpoint of a rel table
    with any change costs ~0.4 s at 430k edges, whatever the change."""
    def by_pair(rows: list[dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
        out: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for row in rows:
            out.setdefault((row["source"], row["target"]), []).append(row)
        return out

    def key(row: dict[str, Any]) -> bytes:
        return orjson.dumps(row, option=orjson.OPT_SORT_KEYS)

    before, after = by_pair(old), by_pair(new)
    unlink: list[dict[str, Any]] = []
    update: list[dict[str, Any]] = []
    create: list[dict[str, Any]] = []
    for pair in sorted(before.keys() | after.keys()):
        was, now = before.get(pair, []), after.get(pair, [])
        if sorted(map(key, was)) == sorted(map(key, now)):
            continue
        if len(was) == 1 and len(now) == 1:
            update.append(now[0])
            continue
        if was:
            unlink.append({"source": pair[0], "target": pair[1]})
        create.extend(now)
    return unlink, update, create


def _patch_symbols(store: Store, paths: list[str], tables: dict[str, Any]) -> None:
    """The changed files' rows (``tables``: the Arrow tables ``symbol_tables`` makes of
    them) patched into kept symbol tables, writing only what moved: a symbol whose
    properties changed has those properties set again; an edge that starts in those files is left alone when
    it is as it was, updated when only its properties moved, else unlinked and created
    (or, when a table has many such edges, all of those files' edges in it are deleted and
    appended again by COPY); then Defines is made again."""
    was = {r["id"]: r for r in store.named("symbols_patch_old_symbols", {"paths": paths})}
    sets = []  # (statement, params): only the properties that changed
    for n in tables["symbols"].to_pylist():
        old = was.get(n["id"], {})
        for name, props in PATCH_SETS.items():
            if any(n[k] != old.get(k) for k in props):
                sets.append((name, {"id": n["id"], **{k: n[k] for k in props}}))
    plans: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]] | None] = {}
    for param, table in PATCH_RELS.items():
        new = [{"source": r.pop("from"), "target": r.pop("to"), **r} for r in tables[param].to_pylist()]
        diff = edge_diff(store.named(f"symbols_patch_old_{param}", {"paths": paths}), new)
        touched = sum(map(len, diff))
        many = touched > PATCH_COPY_MIN and \
            touched > store.rows(f"MATCH ()-[e:{table}]->() RETURN count(e) AS n")[0]["n"] // 300
        plans[param] = None if many else diff  # None: delete them all, append them all by COPY
    with _transaction(store):
        for name, params in sets:
            store.execute(query(name), params)
        for param, plan in plans.items():
            if plan is None:
                store.execute(query(f"symbols_patch_delete_{param}"), {"paths": paths})
                continue
            unlink, update, create = plan
            for row in unlink:
                store.execute(query(f"symbols_patch_unlink_{param}"), row)
            for row in update:  # (a containment edge has no properties: never updated)
                store.execute(query(f"symbols_patch_update_{param}"), row)
            for row in create:
                store.execute(query(f"symbols_patch_{param}"), row)
    for param, plan in plans.items():  # appended after the transaction: COPY runs on its own
        if plan is None and len(tables[param]):
            store.execute(f"COPY {PATCH_RELS[param]} FROM $rows", {"rows": tables[param]})
    store.execute(query("symbols_defines_again"))


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
