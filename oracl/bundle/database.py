"""A bundle's database, written (design §7, §7b): the write and patch rules of the build,
beside the bundle writer and its seal. The engine itself is reached only through
``oracl.core.store`` (the one module that imports kuzu).

* ``start_bundle``: a fresh database with the schema (the files' text is not in it: the
  bundle's full-text postings are ``core/fulltext.py``'s files beside it);
* ``claim_standby`` and ``refresh_bundle``: the older of the two kept bundles (the
  *standby*, which no reader holds) taken over by the build and its database brought up to
  date in place: nothing is copied, and only what moved is written (design §7b, "how a
  change flows");
* ``patch_bundle``: else a copy of the latest bundle's database, then brought up to date
  in place as a standby is (the graph rows written where they differ: the first rebuild
  after a full build, or when no standby can be taken, no longer loads every row again);
* ``finish_bundle``: the graph tables loaded by COPY – or, in a standby or a copy, patched
  row by row where they differ from what it holds (``diff_nodes``, ``diff_edges``) – the symbol patch
  (``edge_diff``: only what moved is written), the history index, the checkpoint.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from oracl.bundle.tables import name_keys
from oracl.core.errors import StoreError
from oracl.core.parts import stat_files
from oracl.core.resources import loader_statements, query, schema_statements
from oracl.core.store import Store, close, reset
from oracl.core.vault import DB_FILE, MANIFEST, READERS_LOCK, STAT_FILE, Vault, file_matches


def start_bundle(directory: Path, *, buffer_pool_bytes: int = 1 << 30, threads: int = 2) -> Path:
    """A fresh database in ``directory`` with the schema. The database stays open in this
    process for ``finish_bundle``. (The files' text is not in it: ``core/fulltext.py``.)"""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / DB_FILE
    reset(path)
    store = Store.open(path, read_only=False, buffer_pool_bytes=buffer_pool_bytes, threads=threads)
    for stmt in schema_statements():
        store.execute(stmt)
    return path


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


def patch_bundle(directory: Path, previous: Path, *, buffer_pool_bytes: int = 1 << 30, threads: int = 2,
                 keep_symbols: bool = False) -> Path:
    """A new database in ``directory`` made from a copy of the ``previous`` (the latest)
    bundle's, then brought up to date in place as a claimed standby is
    (``refresh_bundle``): the symbol tables emptied unless ``keep_symbols``; the graph
    tables are kept, and ``finish_bundle(in_place=True)`` writes only the rows that differ
    (at 20k files the first rebuild after a full build loaded every graph row again by
    COPY: its load took 6.1 s). The previous file is only read."""
    import shutil

    directory.mkdir(parents=True, exist_ok=True)
    path = directory / DB_FILE
    reset(path)
    shutil.copyfile(previous, path)
    return refresh_bundle(directory, buffer_pool_bytes=buffer_pool_bytes, threads=threads,
                          drop_symbols=not keep_symbols)


def _next_n(store: Store, table: str) -> int:
    """One more than the largest row number ``table`` holds."""
    return int(store.rows(f"MATCH (c:{table}) RETURN coalesce(max(c.n), 0) AS n")[0]["n"]) + 1


def superseded(store: Store, table: str) -> tuple[int, int]:
    """(live rows, superseded rows) of a full-text table."""
    rows = store.rows(f"MATCH (c:{table}) RETURN c.live AS live, count(*) AS n")
    counts = {bool(r["live"]): int(r["n"]) for r in rows}
    return counts.get(True, 0), counts.get(False, 0)


def _compact_fts(store: Store, table: str, index: str, create: Sequence[str]) -> int:
    """When ``table`` holds more superseded rows than ``fts_superseded_max`` allows: its
    index dropped, those rows deleted (no index: a plain delete), the index made again.
    Returns the rows deleted (0: none held past the bound)."""
    from oracl.core.derive import fts_superseded_max

    live, dead = superseded(store, table)
    if dead <= fts_superseded_max(live):
        return 0
    try:
        store.execute(f"CALL DROP_FTS_INDEX('{table}', '{index}')")
        indexed = True
    except StoreError:
        indexed = False  # (a build without full-text search, or a table with nothing to index)
    store.execute(f"MATCH (c:{table}) WHERE NOT c.live DELETE c")
    if indexed:
        for stmt in create:
            store.execute(stmt)
    return dead


def _empty(store: Store, tables: list[str] | tuple[str, ...]) -> None:
    """``tables`` dropped (in the order given: rel tables first) and made again empty."""
    for table in tables:
        store.execute(f"DROP TABLE {table}")
    for stmt in schema_statements():
        if _creates(stmt) in tables:
            store.execute(stmt)


# the tables a symbol pass made whole replaces in a standby (rel tables first: drop order)
WHOLE_SYMBOL_TABLES = ("References", "Inherits", "Calls", "Contains", "Defines", "SymbolNameDelta", "SymbolName",
                       "Symbol")


RETIRED = ".retired.tmp"  # a standby's folder, its database taken, set aside for a thread to remove


def claim_standby(vault: Vault, staging: Path, *, symbols_kept: bool, max_bytes: int,
                  known: str = "", retire: list[Path] | None = None
                  ) -> tuple[dict[str, str] | None, str, tuple[str, ...], str]:
    """Take over the standby's database for this build: the bundle the latest build
    started from (named, with its manifest's digest, in the latest manifest's ``lineage``,
    which LATEST's seal covers), when no reader holds it. Its ``graph.kuzu`` moves into
    ``staging`` (a rename: nothing is copied) and the rest of it is removed; a crash from
    here on loses only the standby, while the latest build goes on serving. Returns (the
    standby's checksum of each file, from its ``stat.bin``: what its symbol rows were
    made of, "", the files whose symbol rows the latest build made again though
    their bytes did not change: ``lineage["symbols_moved"]``, the standby's bundle name)
    or (None, why it cannot be used, (), ""). ``symbols_kept``: this build patches the
    symbol tables, which needs the latest build to have patched them too (then they differ
    from the standby's only in files whose bytes differ, and in those it names as moved).
    ``known``: the bundle whose checksums the caller has (a long-lived builder's: the one
    its last build started from): when that is the standby, its ``stat.bin`` is checked
    against its manifest but not read, and the checksums returned are {}. ``retire`` (a
    long-lived builder's): the rest of the standby is renamed aside (``RETIRED``: a staging
    folder to every build's cleaning) and appended there, for the caller to remove after the
    build returns, not removed here (its ~500 shard links, 5–7 ms of a save at 20k files)."""
    import fcntl
    import hashlib
    import os
    import shutil

    try:
        latest = vault.read_latest()
        previous = vault.bundle(str(latest.get("bundle", latest["build_id"])))
        raw = (previous / MANIFEST).read_bytes()
        if hashlib.sha256(raw).hexdigest() != latest.get("manifest_sha256"):
            return None, "the latest manifest does not match LATEST.json", (), ""
        lineage = orjson.loads(raw).get("lineage") or {}
        if not isinstance(lineage, dict) or not isinstance(lineage.get("base"), str):
            return None, "the latest build started from no bundle", (), ""
        if symbols_kept and lineage.get("symbols_whole") is not False:
            return None, "the latest build made every symbol row again", (), ""
        moved = tuple(str(p) for p in lineage.get("symbols_moved", ()))
        standby = vault.bundle(lineage["base"])
        raw = (standby / MANIFEST).read_bytes()
        if hashlib.sha256(raw).hexdigest() != lineage.get("base_manifest_sha256"):
            return None, "the standby's manifest is not the one the latest build started from", (), ""
        files = orjson.loads(raw)["files"]
        db = standby / DB_FILE
        if not file_matches(db, files[DB_FILE]):
            return None, "the standby's database is not the one its manifest seals", (), ""
        if any(Path(str(db) + suffix).exists() for suffix in (".wal", ".shadow")):
            return None, "the standby's database has a write-ahead log", (), ""
        if db.stat().st_size > max_bytes:
            return None, f"the standby's database outgrew its chain ({db.stat().st_size / 2**20:,.0f} MB)", (), ""
        stat_raw = (standby / STAT_FILE).read_bytes()
        if hashlib.sha256(stat_raw).hexdigest() != files[STAT_FILE]:
            return None, f"the standby's {STAT_FILE} does not match its manifest", (), ""
        checksums = {} if known and known == standby.name else \
            {p: str(row[2]) for p, row in stat_files(stat_raw, standby.parent.parent)[1].items()}
    except FileNotFoundError:
        return None, "no standby bundle", (), ""
    except Exception as exc:  # noqa: BLE001 – an unusable standby means a copy, never a failed build
        return None, f"the standby is unreadable ({type(exc).__name__})", (), ""
    try:
        fd = os.open(standby / READERS_LOCK, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None, "the standby has no readers' lock", (), ""
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return None, "a reader holds the standby", (), ""
        os.replace(db, staging / DB_FILE)
        if retire is not None:
            aside = standby.with_name(standby.name + RETIRED)
            os.replace(standby, aside)
            retire.append(aside)
        else:
            shutil.rmtree(standby, ignore_errors=True)
    finally:
        os.close(fd)
    return checksums, "", moved, str(lineage["base"])


def refresh_bundle(directory: Path, *, buffer_pool_bytes: int = 1 << 30, threads: int = 2,
                   drop_symbols: bool = False) -> Path:
    """The claimed standby's database (``claim_standby``) brought up to date in place:
    when ``drop_symbols``, the symbol tables emptied for a whole symbol pass. The graph
    tables are kept: ``finish_bundle`` writes only the rows that differ."""
    path = directory / DB_FILE
    if drop_symbols:
        store = Store.open(path, read_only=False, buffer_pool_bytes=buffer_pool_bytes, threads=threads)
        _empty(store, WHOLE_SYMBOL_TABLES)
    return path


def _creates(statement: str) -> str:
    """The table a CREATE … TABLE statement makes ('' for any other statement)."""
    words = statement.replace("(", " ").split()
    for i, w in enumerate(words[:-1]):
        if w.upper() == "TABLE":
            return words[i + 1]
    return ""


def finish_bundle(path: Path, tables: dict[str, Any], after_each: Any = None,
                  symbol_patch: tuple[list[str], dict[str, Any]] | None = None, in_place: bool = False,
                  only: Reach | None = None, expected: dict[str, int] | None = None,
                  held: dict[tuple[str, str, int], tuple[Any, Any]] | None = None,
                  made: dict[str, int] | None = None) -> int:
    """COPY the graph tables into a bundle made by ``start_bundle``, checkpoint, close.
    ``after_each`` is called after every COPY (the crash tests kill the process there).
    ``symbol_patch`` = (paths, the symbol tables of those files' rows), for a bundle
    ``patch_bundle`` kept the symbol tables of: those files' edges are deleted and made
    again and their symbols' properties set; the whole symbol tables are then not in
    ``tables`` and Defines is made from Symbol's rows. ``in_place``: a standby
    (``refresh_bundle``): the artifact, hub, history, link and belongs-to rows are written
    where they differ from what it holds, never loaded again. ``only``:
    the rows a standby can differ in (``Reach``); ``tables`` then hold only those rows.
    ``expected``: the edges each named relationship table holds when the update is right;
    an in-place update whose tables disagree (``directions_disagree``) raises StoreError;
    ``made``: the graph's edges of the other tables (what that check counts against first).
    ``held``: ``hold_groups``' pairs, kept by a long-lived builder between updates.
    Returns the superseded History rows a compaction deleted."""
    from oracl.bundle.tables import split_artifacts

    tables = split_artifacts(tables)
    store = Store.open(path, read_only=False)
    deletes = _Deletes(store, held)  # (the relationship tables an in-place update deletes from)
    dropped = 0
    try:
        copied = dict(tables)
        # (the changed files' old symbol rows, read along the artifacts there now: a file gone
        # loses its artifact in the refresh; a file added gets its own there, read after)
        before = _old_symbols(store, symbol_patch[0], scan=False) if in_place and symbol_patch is not None \
            else None
        if in_place:
            for name in GRAPH_ROWS:
                copied.pop(name, None)
            _refresh_graph(deletes, tables, only)  # type: ignore[arg-type]
            if after_each is not None:
                after_each()
        for stmt in loader_statements("030_copy_graph"):
            param = stmt.rsplit("$", 1)[1]
            if param not in copied or len(copied[param]) == 0:  # COPY of an empty table is an error in 0.11
                continue
            store.execute(stmt, {param: copied[param]})
            if after_each is not None:
                after_each()
        if symbol_patch is not None:
            _patch_symbols(deletes, *symbol_patch, defines_again=not in_place, before=before)  # type: ignore[arg-type]
            if after_each is not None:
                after_each()
        if in_place:  # (the rows tabled are the update's reach: whether any file has history is the store's)
            _history_index(store, bool(store.rows("MATCH (c:History) WHERE c.live RETURN c.n AS n LIMIT 1")))
            dropped = _compact_fts(store, "History", "history_fts", loader_statements("040_history_fts"))
        elif len(tables.get("history", ())):
            for stmt in loader_statements("040_history_fts"):
                store.execute(stmt)
        store.execute("CHECKPOINT")
        if in_place and deletes.tables:
            lost = directions_disagree(store, [t for t in rel_tables() if t[0] in deletes.tables], expected, made)
            if lost:
                raise StoreError(f"the engine lost edges at the checkpoint of an in-place update: {lost}")
    finally:
        close(path)
    return dropped


class _Deletes:
    """A store whose ``execute`` notes the relationship tables a statement deletes from
    (named in its pattern, or every one that touches a node table it ``DETACH DELETE``s),
    and before each commit holds each of their node groups open (``hold_groups``): a
    checkpoint then never finds every region it touches of a group emptied, which would
    drop the group's whole copy. A delete outside a transaction is given one. Those tables
    are counted both ways after the last checkpoint (``directions_disagree``, ~0.45 s for
    every table at 20k files, most of it Contains; a comment edit deletes from none)."""

    def __init__(self, store: Store, held: dict[tuple[str, str, int], tuple[Any, Any]] | None = None) -> None:
        self.store = store
        self.tables: set[str] = set()
        self._open: set[str] | None = None  # the tables deleted from in the open transaction
        self._held = {} if held is None else held  # (``hold_groups``' pairs)

    def execute(self, statement: str, params: dict[str, Any] | None = None) -> Any:
        upper = statement.upper().strip()
        if upper == "BEGIN TRANSACTION":
            self._open = set()
        elif upper == "COMMIT" and self._open is not None:
            opened, self._open = self._open, None
            hold_groups(self.store, sorted(opened), self._held)
        elif upper == "ROLLBACK":
            self._open = None
        deleted = set()
        if "DELETE" in upper:
            import re

            deleted.update(re.findall(r"\[\w*:(\w+)", statement))
            if "DETACH DELETE" in upper:
                nodes = set(re.findall(r"\(\w*:(\w+)", statement))
                deleted.update(t for t, a, b in rel_tables() if a in nodes or b in nodes)
            self.tables.update(deleted)
        if deleted and self._open is None:  # (its own transaction, so the groups are held before it commits)
            self.store.execute("BEGIN TRANSACTION")
            out = self.store.execute(statement, params)
            hold_groups(self.store, sorted(deleted), self._held)
            self.store.execute("COMMIT")
            return out
        if self._open is not None:
            self._open.update(deleted)
        return self.store.execute(statement, params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


NODE_GROUP = 1 << 17  # the engine's node group (Kùzu 0.11.3: NODE_GROUP_SIZE_LOG2 = 17)


def hold_groups(store: Store, tables: list[str], held: dict[tuple[str, str, int], tuple[Any, Any]] | None = None) -> int:
    """In the open transaction, one live edge of each node group of each of ``tables``, on
    each side, written again: a numeric property set to itself, or (a table without one)
    the pair's edges deleted and made again. Kùzu 0.11.3's checkpoint frees a node group's
    whole copy of a relationship table when the regions it rewrites hold no edge afterwards
    (``CSRNodeGroup::checkpointInMemAndOnDisk`` counts only those regions); a region with
    an update or an insertion is rewritten too, and one that holds the written edge keeps
    the count above zero (tests/test_change_faults.py). ``held``: the pairs an earlier call
    chose, by (table, side, group), tried first (a lookup by key instead of a scan; ~20–85 ms
    a group at 20k files). Returns the edges written."""
    keys = primary_keys()
    shape = {t: (a, b) for t, a, b in rel_tables()}
    numbers = rel_numbers()
    held = {} if held is None else held
    groups: dict[str, int] = {}
    written = 0
    for table in tables:
        if table not in shape:
            continue
        if not store.rows(f"MATCH ()-[e:{table}]->() RETURN count(*) AS n")[0]["n"]:
            continue  # (no edge left to hold, none to lose: ~1 ms, where a group's scan is 13 ms and more)
        a, b = shape[table]
        ka, kb = keys.get(a, "id"), keys.get(b, "id")
        number = numbers.get(table)
        done: set[tuple[Any, Any]] = set()
        for side, node in (("x", a), ("y", b)):
            if node not in groups:
                top = int(store.rows(f"MATCH (n:{node}) RETURN coalesce(max(offset(id(n))), -1) AS m")[0]["m"])
                groups[node] = top // NODE_GROUP + 1 if top >= 0 else 0
            for group in range(groups[node]):
                pair = held.get((table, side, group))
                if pair is not None and pair in done:
                    continue
                if pair is not None and _write_again(store, table, a, ka, b, kb, number, pair, (side, group)):
                    written += 1
                    done.add(pair)
                    continue
                row = store.rows(f"MATCH (x:{a})-[e:{table}]->(y:{b}) WHERE offset(id({side})) >= $lo AND "
                                 f"offset(id({side})) < $hi AND x.{ka} IS NOT NULL AND y.{kb} IS NOT NULL "
                                 f"RETURN x.{ka} AS a, y.{kb} AS b LIMIT 1",
                                 {"lo": group * NODE_GROUP, "hi": (group + 1) * NODE_GROUP})
                if not row:
                    continue
                pair = (row[0]["a"], row[0]["b"])
                held[(table, side, group)] = pair
                if pair not in done and _write_again(store, table, a, ka, b, kb, number, pair):
                    written += 1
                done.add(pair)
    return written


def _write_again(store: Store, table: str, a: str, ka: str, b: str, kb: str, number: str | None,
                 pair: tuple[Any, Any], group: tuple[str, int] | None = None) -> bool:
    """``hold_groups``' write of the edges from ``pair[0]`` to ``pair[1]``: ``number`` set to
    itself, or (None) the edges deleted and made again. False when the pair has none, or
    (``group``: the side, x or y, and the node group the pair was chosen for) when that
    side's node is no longer in that group (a pair kept from an earlier update: its node
    may have been made again elsewhere)."""
    pattern = f"(x:{a} {{{ka}: $a}})-[e:{table}]->(y:{b} {{{kb}: $b}})"
    args = {"a": pair[0], "b": pair[1]}
    if group is not None:  # (the pair's edges share their ends: all in the group, or none)
        side, at = group
        where = {"x": "x", "y": "y"}[side]  # (a name of this module's, never input)
        n = int(store.rows(f"MATCH {pattern} WHERE offset(id({where})) >= $lo AND offset(id({where})) < $hi "
                           "RETURN count(e) AS n", {**args, "lo": at * NODE_GROUP, "hi": (at + 1) * NODE_GROUP})[0]["n"])
    else:
        n = int(store.rows(f"MATCH {pattern} RETURN count(e) AS n", args)[0]["n"])
    if n and number is not None:
        store.execute(f"MATCH {pattern} SET e.{number} = e.{number}", args)
    elif n:
        store.execute(f"MATCH {pattern} DELETE e", args)
        for _ in range(n):
            store.execute(f"MATCH (x:{a} {{{ka}: $a}}), (y:{b} {{{kb}: $b}}) CREATE (x)-[:{table}]->(y)", args)
    return n > 0


HELD_FILE = "held_pairs.json"  # (the vault's: ``hold_groups``' pairs, kept from one cold build to the next)


def read_held(vault_dir: Path) -> dict[tuple[str, str, int], tuple[Any, Any]]:
    """``hold_groups``' pairs the last in-place update chose (``write_held``), or none: a
    cold build tries them first, as a long-lived builder tries its own (a scan of a node
    group found each: ~0.4 s of a rename's update at 20k files). Only ever a hint: a pair
    is written again (a number set to itself) only when it still has an edge from that
    side's node group, else the group is scanned; a bad file is an empty one."""
    from oracl.core.vault import read_control

    try:
        data = orjson.loads(read_control(vault_dir / HELD_FILE, 1 << 20))
    except (OSError, orjson.JSONDecodeError):
        return {}
    out: dict[tuple[str, str, int], tuple[Any, Any]] = {}
    for item in data if isinstance(data, list) else []:
        if isinstance(item, list) and len(item) == 5 and isinstance(item[0], str) and item[1] in ("x", "y") \
                and type(item[2]) is int and all(isinstance(k, str) for k in item[3:]):
            out[(item[0], item[1], item[2])] = (item[3], item[4])
    return out


def write_held(vault_dir: Path, held: dict[tuple[str, str, int], tuple[Any, Any]]) -> None:
    """``held`` for the next cold build (``read_held``), when it names a pair."""
    from oracl.core.vault import atomic_write

    rows = sorted([t, side, g, *pair] for (t, side, g), pair in held.items()
                  if all(isinstance(k, str) for k in pair))
    if rows:
        atomic_write(vault_dir / HELD_FILE, orjson.dumps(rows), durable=False)


@functools.cache
def _schema_tables() -> tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]:
    """Each table the schema makes: ("NODE" or "REL", its statement's words, the same
    upper-cased), tokenised once."""
    out = []
    for stmt in schema_statements():
        words = tuple(stmt.replace("(", " ( ").replace(")", " ) ").replace(",", " , ").replace(";", " ").split())
        upper = tuple(w.upper() for w in words)
        if upper[:1] == ("CREATE",) and upper[2:3] == ("TABLE",) and upper[1] in ("NODE", "REL"):
            out.append((upper[1], words, upper))
    return tuple(out)


def rel_tables() -> list[tuple[str, str, str]]:
    """(table, from, to) of every relationship table the schema makes."""
    return [(words[3], words[upper.index("FROM") + 1], words[upper.index("FROM") + 3])
            for kind, words, upper in _schema_tables() if kind == "REL"]


def rel_numbers() -> dict[str, str]:
    """Each relationship table the schema makes with a numeric property → its first one."""
    out = {}
    for kind, words, upper in _schema_tables():
        if kind == "REL":
            for name, type_ in zip(words, upper[1:], strict=False):
                if type_ in ("DOUBLE", "INT64", "BOOLEAN") and name.upper() not in ("TO", "FROM"):
                    out[words[3]] = name
                    break
    return out


def primary_keys() -> dict[str, str]:
    """Each node table the schema makes → its primary key column."""
    return {words[3]: words[upper.index("PRIMARY") - 2] for kind, words, upper in _schema_tables()
            if kind == "NODE" and "PRIMARY" in upper}


def directions_disagree(store: Store, tables: list[tuple[str, str, str]] | None = None,
                        expected: dict[str, int] | None = None, made: dict[str, int] | None = None) -> str:
    """Where a relationship table's forward and backward copies hold different numbers of
    edges, or other than ``expected`` names ("" when all agree): Kùzu 0.11.3 drops a node
    group's whole copy, in one direction or both, when a checkpoint's touched regions of it
    are all emptied by deletes (a file renamed at 20k files lost 5,500 of 14,136 call edges
    from the callers' side; a 5,000-node table loses every edge: tests/test_change_faults.py).
    All seven tables took 0.42–0.59 s at 20k files (Contains 0.21 s, Calls 0.07 s).
    ``tables``: (table, from, to), by default every relationship table. ``made``: the edges
    the build made of other tables (the graph's): when every edge, counted each way, is as
    many as made (or ``expected``), the table is not counted again by its ends' keys."""
    bad = []
    keys = primary_keys()
    for table, a, b in tables if tables is not None else rel_tables():
        want = (expected or {}).get(table)
        total = want if want is not None else (made or {}).get(table)
        if total is not None:
            # (every edge counted each way, reading no property: 8–16 ms against 80–160 ms
            # for Contains at 20k files. Both equal to the edges the build made: nothing was
            # lost, unless edges lingering in a copy (below) made up for as many lost in it)
            every = "RETURN count(*) AS n"
            if store.rows(f"MATCH (x:{a})-[e:{table}]->(y:{b}) {every}")[0]["n"] == total \
                    == store.rows(f"MATCH (y:{b})<-[e:{table}]-(x:{a}) {every}")[0]["n"]:
                continue
        # (an edge whose other end was deleted can linger in one copy, unread: a reader that
        # reads the end's key never sees it, so only edges with both ends are counted)
        ka, kb = keys.get(a, "id"), keys.get(b, "id")
        alive = f"WHERE x.{ka} IS NOT NULL AND y.{kb} IS NOT NULL RETURN count(*) AS n"
        fwd = store.rows(f"MATCH (x:{a})-[e:{table}]->(y:{b}) {alive}")[0]["n"]
        bwd = store.rows(f"MATCH (y:{b})<-[e:{table}]-(x:{a}) {alive}")[0]["n"]
        if fwd != bwd or (want is not None and fwd != want):
            bad.append(f"{table} {fwd:,} forward, {bwd:,} backward" + (f", {want:,} made" if want is not None else ""))
    return "; ".join(bad)


# ---- a standby brought up to date: the rows that differ, and nothing else ---------------------

GRAPH_ROWS = ("artifacts", "artifact_text", "hubs", "history", "links", "belongs")


@dataclass(frozen=True, slots=True)
class Reach:
    """The graph rows a standby can differ in from this build, when a long-lived builder
    knows them: the artifacts (and their History rows) by path, and the files whose
    outgoing Link and BelongsTo rows may have moved. Every other such row is the same on
    both sides; the Hub rows are always compared (a handful)."""

    nodes: frozenset[str]
    sources: frozenset[str]


# (table, key column, the query's MATCH for one row): what ``_refresh_graph`` patches
_NODES = {"artifacts": ("Artifact", "path"), "hubs": ("Hub", "id")}
_EDGES = {"links": ("Link", "Artifact", "path", "Artifact", "path"),
          "belongs": ("BelongsTo", "Artifact", "path", "Hub", "id")}


def _is_text(kind: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind))


def diff_nodes(old: Any, new: Any, key: str) -> tuple[list[Any], Any, list[dict[str, Any]]]:
    """What turns the node rows ``old`` into ``new`` (Arrow tables, keyed by ``key``):
    (the keys removed, the rows added as a table, and for each row whose values moved its
    key and the columns that moved). Compared a column at a time in Arrow; only the rows
    that differ become Python objects."""
    import pyarrow as pa

    if _small(old, new):
        return _diff_small(old, new, key)
    import pyarrow.compute as pc

    old, new = _alike(old, new)
    old_keys, new_keys = old.column(key), new.column(key)
    removed = old.filter(pc.invert(pc.is_in(old_keys, value_set=new_keys))).column(key).to_pylist()
    added = new.filter(pc.invert(pc.is_in(new_keys, value_set=old_keys)))
    renamed = old.rename_columns([c if c == key else f"{c}\x00old" for c in old.column_names])
    both = new.join(renamed, keys=key, join_type="inner")
    if not both.num_rows:
        return removed, added, []
    moved: dict[str, Any] = {}
    for col in new.column_names:
        if col == key:
            continue
        a, b = both.column(col), both.column(f"{col}\x00old")
        same = pc.or_(pc.fill_null(pc.equal(a, b), False), pc.and_(pc.is_null(a), pc.is_null(b)))
        moved[col] = pc.invert(same)
    anywhere = None
    for mask in moved.values():
        anywhere = mask if anywhere is None else pc.or_(anywhere, mask)
    rows = pc.indices_nonzero(anywhere).to_pylist() if anywhere is not None else []
    if not rows:
        return removed, added, []
    at = pa.array(rows, pa.int64())  # (typed: pyarrow's inference tries a missing optional import each time, ~0.1 ms)
    picked = both.take(at)
    flags = {c: m.take(at).to_pylist() for c, m in moved.items()}
    values = {c: picked.column(c).to_pylist() for c in [key, *moved]}
    changed = [{key: values[key][i], **{c: values[c][i] for c in moved if flags[c][i]}} for i in range(len(rows))]
    return removed, added, changed


def diff_edges(old: Any, new: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """What turns the edge rows ``old`` into ``new`` (Arrow tables with ``from``, ``to``
    and the properties): ``edge_diff`` of the rows of the endpoint pairs whose rows are
    not the same on both sides (found by anti-joins and counts in Arrow, so the pairs left
    alone never become Python objects)."""
    if _small(old, new):  # (every row compared by its pair: the same plans)
        cols = new.column_names
        return edge_diff(*([{"source": r.pop("from"), "target": r.pop("to"), **r} for r in _dicts(t, cols)]
                           for t in (old, new)))
    if old.num_rows + new.num_rows <= _MEDIUM:
        return _diff_edges_as_tuples(old, new)
    import pyarrow as pa
    import pyarrow.compute as pc

    old, new = _alike(old, new)
    cols = new.column_names

    def keyed(t: Any) -> Any:  # a null never joins: every key column filled
        out = []
        for c in cols:
            col = t.column(c)
            out.append(pc.fill_null(col, "\x00") if _is_text(col.type) else col)
        return pa.table(out, names=cols)

    a, b = keyed(old), keyed(new)
    pairs: set[tuple[str, str]] = set()
    for x, y in ((a, b), (b, a)):
        gone = x.join(y, keys=cols, join_type="left anti")
        pairs.update(zip(gone.column("from").to_pylist(), gone.column("to").to_pylist(), strict=True))
    ga, gb = (t.group_by(["from", "to"]).aggregate([([], "count_all")]) for t in (a, b))
    for x, y in ((ga, gb), (gb, ga)):  # a pair holding as many rows on each side, or not
        gone = x.join(y, keys=["from", "to", "count_all"], join_type="left anti")
        pairs.update(zip(gone.column("from").to_pylist(), gone.column("to").to_pylist(), strict=True))
    if not pairs:
        return [], [], []
    froms = pa.array(sorted({p[0] for p in pairs}))

    def rows_of(t: Any) -> list[dict[str, Any]]:
        near = t.filter(pc.is_in(t.column("from"), value_set=froms)).to_pylist()
        return [{"source": r.pop("from"), "target": r.pop("to"), **r} for r in near if (r["from"], r["to"]) in pairs]

    return edge_diff(rows_of(old), rows_of(new))


_SMALL = 4096  # rows of both tables at most, compared in Python (no Arrow kernels to load)
# edge rows of both tables at most, told apart as tuples of their values (``_diff_edges_as_tuples``):
# the links of every file with an edge into an edited module (sympy's abc.py: thousands) loaded
# ``pyarrow.compute`` and ``acero`` for two anti-joins, ~60 ms of a cold build's imports
_MEDIUM = 100_000


def _diff_edges_as_tuples(old: Any, new: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]],
                                                       list[dict[str, Any]]]:
    """``diff_edges`` without Arrow's kernels: each row a tuple of its values (columns read
    by ``new``'s names; a value compared as Python compares it, a NaN never equal to
    another), the pairs holding a row one side holds more often than the other found by
    two multiset differences, and ``edge_diff`` of those pairs' rows."""
    from collections import Counter

    cols = new.column_names
    fi, ti = cols.index("from"), cols.index("to")
    a, b = (list(zip(*(t.column(c).to_pylist() for c in cols), strict=True)) for t in (old, new))
    ca, cb = Counter(a), Counter(b)
    pairs = {(r[fi], r[ti]) for r in ca - cb} | {(r[fi], r[ti]) for r in cb - ca}
    if not pairs:
        return [], [], []
    rest = [(i, c) for i, c in enumerate(cols) if i not in (fi, ti)]

    def rows_of(rows: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
        return [{"source": r[fi], "target": r[ti], **{c: r[i] for i, c in rest}}
                for r in rows if (r[fi], r[ti]) in pairs]

    return edge_diff(rows_of(a), rows_of(b))


def _small(*tables: Any) -> bool:
    """Whether ``tables`` are few enough rows to compare as Python values: a standby
    patched for the rows a change reaches compares tens of rows, where loading Arrow's
    compute kernels and joins (``pyarrow.compute``, ``acero``) costs 60–75 ms a process."""
    return sum(t.num_rows for t in tables) <= _SMALL


def _dicts(table: Any, cols: list[str]) -> list[dict[str, Any]]:
    """``table``'s rows as dicts of ``cols`` (each column read once; no kernel loaded)."""
    values = [table.column(c).to_pylist() for c in cols]
    return [dict(zip(cols, row, strict=True)) for row in zip(*values, strict=True)]


def _pick(table: Any, at: list[int]) -> Any:
    """The rows of ``table`` at ``at``, as a table of its schema (slices put together:
    no kernel loaded, for a few rows)."""
    import pyarrow as pa

    return pa.concat_tables([table.slice(i, 1) for i in at]) if at else table.slice(0, 0)


def _diff_small(old: Any, new: Any, key: str) -> tuple[list[Any], Any, list[dict[str, Any]]]:
    """``diff_nodes`` of small tables, compared as Python values (a value moved when it is
    not equal: a NaN always, a null only against a non-null, as Arrow's comparison has it);
    ``added`` keeps the build's schema, with the engine's type for a column of nulls only
    (``_alike``'s), and ``changed`` is in ``new``'s order."""
    import pyarrow as pa

    cols = new.column_names
    was = {r[key]: r for r in _dicts(old, cols)}
    now = _dicts(new, cols)
    keys = {r[key] for r in now}
    removed = [k for k in was if k not in keys]
    changed: list[dict[str, Any]] = []
    fresh: list[int] = []
    for i, r in enumerate(now):
        before = was.get(r[key])
        if before is None:
            fresh.append(i)
            continue
        moved = {c: r[c] for c in cols if c != key and not r[c] == before[c]}
        if moved:
            changed.append({key: r[key], **moved})
    added = _pick(new, fresh)
    if any(pa.types.is_null(f.type) for f in new.schema):
        names = set(old.column_names)
        schema = pa.schema([old.schema.field(f.name) if pa.types.is_null(f.type) and f.name in names else f
                            for f in new.schema])
        added = pa.Table.from_pylist(added.to_pylist(), schema=schema)
    return removed, added, changed


def _alike(old: Any, new: Any) -> tuple[Any, Any]:
    """``old`` (read back from the engine) and ``new`` (built by the build) with the same
    columns of the same types: a column the build made of nulls only takes the engine's."""
    import pyarrow as pa

    old = old.select(new.column_names)
    schema = pa.schema([old.schema.field(f.name) if pa.types.is_null(f.type) else f for f in new.schema])
    return old.cast(schema), new.cast(schema)


@functools.lru_cache(maxsize=512)
def _set_numbers(table: str, key: str, columns: tuple[str, ...], param: str = "k") -> str:
    """The statement that sets the numbers, flags and times ``columns`` of one row of
    ``table`` (names from the bundle's own Arrow tables, never from input): only those
    that moved, since each column a checkpoint finds touched is written again (at 20k
    files, all 15 of an artifact's: 2.2 MB; the 5 a comment edit moves: 1.22 MB)."""
    return f"MATCH (n:{table} {{{key}: ${param}}}) SET " + ", ".join(f"n.{c} = ${c}" for c in columns)


def _statements(table: str, key: str, columns: list[str], text: set[str]) -> dict[str, str]:
    """The statements that patch one row of ``table`` (column names from the bundle's own
    Arrow tables, never from input): each string on its own (a SET of a string rewrites a
    column chunk), create, delete (the numbers: ``_set_numbers``)."""
    m = f"MATCH (n:{table} {{{key}: $k}})"
    out = {f"set {c}": f"{m} SET n.{c} = $v" for c in columns if c in text and c != key}
    out["create"] = f"CREATE (n:{table} {{" + ", ".join(f"{c}: ${c}" for c in columns) + "})"
    out["delete"] = f"{m} DETACH DELETE n"
    return out


def _history_plans(store: Store, new: Any, only: Reach | None) -> list[tuple[str, dict[str, Any]]]:
    """What makes a standby's live History rows those of ``new``: a row whose text moved
    or whose file has none now is superseded (``live`` false: never deleted),
    and a new or moved one created under the next row number (one CREATE a row)."""
    where, args = (" AND n.path IN $keys", {"keys": sorted(only.nodes) or [""]}) if only is not None else ("", None)
    old = store.execute(f"MATCH (n:History) WHERE n.live{where} RETURN n.path AS path, n.text AS text",
                        args).get_as_arrow(chunk_size=1 << 20)
    removed, added, changed = diff_nodes(old, new.select(["path", "text"]), "path")
    gone = [*removed, *(r["path"] for r in changed)]
    plans: list[tuple[str, dict[str, Any]]] = []
    if gone:
        plans.append(("MATCH (n:History) WHERE n.path IN $paths AND n.live SET n.live = false", {"paths": gone}))
    made = [*added.to_pylist(), *_rows_by_key(new, "path", [r["path"] for r in changed]).values()]
    if made:
        n = _next_n(store, "History")
        plans.extend(("CREATE (n:History {key: $key, path: $path, n: $n, live: true, text: $text})",
                      {"key": f"{r['path']}|{n}", "path": r["path"], "n": n, "text": r["text"]}) for r in made)
    return plans


def _refresh_graph(store: Store, tables: dict[str, Any], only: Reach | None = None) -> None:
    """The artifact, hub, history, link and belongs-to rows of a standby made those of
    ``tables``, writing only the rows that differ (read back as Arrow, compared there).
    ``only``: just the rows it names are read back and compared (``tables`` holds those)."""
    plans: list[tuple[str, dict[str, Any]]] = []
    adds: list[tuple[str, Any]] = []
    tables = dict(tables)
    tables["artifacts"], appended = _text_rows(store, tables["artifacts"], tables["artifact_text"], only)
    if len(appended) >= 64:
        adds.append(("ArtifactText", appended))
    else:
        plans.extend((_TEXT_CREATE.format(", ".join(f"{c}: ${c}" for c in appended.column_names)), r)
                     for r in appended.to_pylist())
    for name, (table, key) in _NODES.items():
        new = tables[name]
        cols = new.column_names
        ret = "RETURN " + ", ".join(f"n.{c} AS `{c}`" for c in cols)
        if only is None or table == "Hub":
            old = store.execute(f"MATCH (n:{table}) {ret}").get_as_arrow(chunk_size=1 << 20)
        else:
            old = by_keys(store, f"MATCH (n:{table}) WHERE n.{key} IN $keys {ret}", "keys", sorted(only.nodes))
        removed, added, changed = diff_nodes(old, new, key)
        text = {c for c in cols if _is_text(new.schema.field(c).type)}
        st = _statements(table, key, cols, text)
        numbers = [c for c in cols if c != key and c not in text]
        full = _rows_by_key(new, key, [row[key] for row in changed])
        for k in removed:
            plans.append((st["delete"], {"k": k}))
        for row in changed:
            moved = [c for c in numbers if c in row]
            if moved:  # (only the numbers that moved: each column a SET touches costs its checkpoint ~0.15 MB)
                plans.append((_set_numbers(table, key, tuple(moved)), {"k": row[key], **{c: full[row[key]][c] for c in moved}}))
            for c in row:
                if c in text and c != key:
                    plans.append((st[f"set {c}"], {"k": row[key], "v": row[c]}))
        if len(added):
            if len(added) < 64:
                plans.extend((st["create"], r) for r in added.to_pylist())
            else:
                adds.append((table, added))
    plans.extend(_history_plans(store, tables["history"], only))
    with _transaction(store):  # removals and changes of nodes first: edges may need the new ones
        for stmt, params in plans:
            store.execute(stmt, params)
    for table, added in adds:  # COPY runs on its own, outside a transaction
        store.execute(f"COPY {table} FROM $rows", {"rows": added})
    edge_plans: list[tuple[str, dict[str, Any]]] = []
    for name, (table, a_table, a_key, b_table, b_key) in _EDGES.items():
        new = tables[name]
        props = [c for c in new.column_names if c not in ("from", "to")]
        pattern = f"(a:{a_table} {{{a_key}: $source}})-[e:{table}]->(b:{b_table} {{{b_key}: $target}})"
        # (one statement over the sources: a probe a source costs as much as the scan here,
        # 3 ms each at 20k files, where a node table's probe is ~1.5 ms against a 6–9 ms scan)
        where, args = (f" WHERE a.{a_key} IN $keys", {"keys": sorted(only.sources) or [""]}) if only is not None \
            else ("", None)
        old = store.execute(f"MATCH (a:{a_table})-[e:{table}]->(b:{b_table}){where} RETURN a.{a_key} AS `from`, "
                            f"b.{b_key} AS `to`, " + ", ".join(f"e.{c} AS `{c}`" for c in props), args
                            ).get_as_arrow(chunk_size=1 << 20)
        unlink, update, create = diff_edges(old, new)
        edge_plans.extend((f"MATCH {pattern} DELETE e", r) for r in unlink)
        edge_plans.extend((f"MATCH {pattern} SET " + ", ".join(f"e.{c} = ${c}" for c in props), r) for r in update)
        edge_plans.extend((f"MATCH (a:{a_table} {{{a_key}: $source}}), (b:{b_table} {{{b_key}: $target}}) "
                           f"CREATE (a)-[:{table} {{" + ", ".join(f"{c}: ${c}" for c in props) + "}]->(b)", r)
                          for r in create)
    if edge_plans:
        with _transaction(store):
            for stmt, params in edge_plans:
                store.execute(stmt, params)


_TEXT_CREATE = "CREATE (n:ArtifactText {{{}}})"
_BY_KEY = 16  # rows looked up by primary key one by one up to this many keys, else by one scan


def by_keys(store: Store, statement: str, name: str, keys: list[str], arrow: bool = True,
            **params: Any) -> Any:
    """``statement``, which selects by ``<column> IN $<name>`` over a primary key: run once
    a key with ``= $<name>`` when there are ``_BY_KEY`` keys or fewer (a probe of the
    primary key's index each, 1–3 ms at 20k files; Kùzu 0.11.3 scans the whole column for
    ``IN``, 4–9 ms however few the keys), else as it is. The rows as one Arrow table
    (``arrow``) or as dicts, in no particular order."""
    import pyarrow as pa

    if not keys or len(keys) > _BY_KEY:  # (none: one statement that finds no row)
        args = {name: keys or [""], **params}
        return store.execute(statement, args).get_as_arrow(chunk_size=1 << 20) if arrow else store.rows(statement, args)
    one = statement.replace(f" IN ${name}", f" = ${name}")
    if one == statement:
        raise ValueError(f"the statement selects by no IN ${name}")
    if not arrow:
        return [r for k in keys for r in store.rows(one, {name: k, **params})]
    return pa.concat_tables([store.execute(one, {name: k, **params}).get_as_arrow(chunk_size=1 << 20) for k in keys])


def _text_rows(store: Store, artifacts: Any, text: Any, only: Reach | None) -> tuple[Any, Any]:
    """The ArtifactText rows to append and the artifacts table with each row's ``text_n``:
    an artifact whose strings (``text``, ``split_artifacts``' table) differ from those of
    its row in the database, or that it does not hold, gets a row under one more than the
    largest number the table holds; any other keeps its number. Rows are only appended
    (schema/001_nodes.cypher says why)."""
    import pyarrow as pa

    from oracl.bundle.tables import TEXT_COLUMNS, text_key

    cols = [c for c in TEXT_COLUMNS if c in text.column_names]
    if only is None:
        old = store.execute("MATCH (a:Artifact) MATCH (t:ArtifactText {path: a.path}) WHERE t.n = a.text_n "
                            "RETURN a.path AS path, a.text_n AS text_n, "
                            + ", ".join(f"t.{c} AS `{c}`" for c in cols)).get_as_arrow(chunk_size=1 << 20)
    else:  # (their keys first, then the rows by key: a join by path read every path, 57 ms at 20k files)
        numbers = by_keys(store, "MATCH (a:Artifact) WHERE a.path IN $keys RETURN a.path AS path, a.text_n AS n",
                          "keys", sorted(only.nodes), arrow=False)
        keys = [text_key(r["path"], r["n"]) for r in numbers]
        ret = "RETURN t.path AS path, t.n AS text_n, " + ", ".join(f"t.{c} AS `{c}`" for c in cols)
        old = by_keys(store, f"MATCH (t:ArtifactText) WHERE t.key IN $keys {ret}", "keys", keys)
    number = dict(zip(old.column("path").to_pylist(), old.column("text_n").to_pylist(), strict=True))
    _, added, changed = diff_nodes(old.select(["path", *cols]), text.select(["path", *cols]), "path")
    moved = set(added.column("path").to_pylist()) | {r["path"] for r in changed}
    appended = text.slice(0, 0)
    if moved:
        n = int(store.rows("MATCH (t:ArtifactText) RETURN coalesce(max(t.n), 0) AS n")[0]["n"]) + 1
        if _small(text):
            appended = _pick(text, [i for i, p in enumerate(text.column("path").to_pylist()) if p in moved])
        else:
            import pyarrow.compute as pc

            appended = text.filter(pc.is_in(text.column("path"), value_set=pa.array(sorted(moved), pa.string())))
        paths = appended.column("path").to_pylist()
        appended = appended.set_column(appended.schema.get_field_index("key"), "key",
                                       pa.array([text_key(p, n) for p in paths], pa.string()))
        appended = appended.set_column(appended.schema.get_field_index("n"), "n", pa.array([n] * len(paths), pa.int64()))
        number.update(dict.fromkeys(paths, n))
    at = artifacts.schema.get_field_index("text_n")
    numbers = pa.array([number[p] for p in artifacts.column("path").to_pylist()], pa.int64())
    return artifacts.set_column(at, "text_n", numbers), appended


def _rows_by_key(table: Any, key: str, keys: list[Any]) -> dict[Any, dict[str, Any]]:
    """The rows of ``table`` whose ``key`` is one of ``keys``, as dicts by key."""
    if not keys:
        return {}
    if _small(table):
        wanted = set(keys)
        return {r[key]: r for r in table.to_pylist() if r[key] in wanted}
    import pyarrow as pa
    import pyarrow.compute as pc

    at = pc.index_in(pa.array(keys, table.schema.field(key).type), value_set=table.column(key))
    return {r[key]: r for r in table.take(at).to_pylist()}


def _history_index(store: Store, wanted: bool) -> None:
    """The History table's full-text index as a full build leaves it: there when a file
    has history, absent when none has. (An update once asked its own rows, which hold only
    the files of its reach: an update of a file without history dropped the index, and the
    answers lost every commit subject until an update whose reach held one made it again,
    0.27–0.37 s at sympy.)"""
    try:
        if wanted:
            for stmt in loader_statements("040_history_fts"):
                store.execute(stmt)
        else:
            store.execute("CALL DROP_FTS_INDEX('History', 'history_fts')")
    except StoreError:
        pass  # already so


# Each edge a prepared CREATE costs ~0.9 ms; a COPY appending to a rel table costs about
# what the table holds (1.47 s for 2,500 calls into 429k, measured on Kùzu 0.11.3): a
# table whose changed edges are more than this many, and more than 1/300 of its rows, has
# all of the changed files' edges deleted and appended again by COPY
PATCH_COPY_MIN = 1500
# the name-lookup rows a patch appends: created one by one below this many (~0.9 ms each),
# by one COPY from it on (a COPY into a table that holds rows costs ~0.4 s, measured at 20k
# files: 0.42–0.57 s of a 4 s build that appended three rows)
NAME_DELTA_COPY_MIN = 400
PATCH_RELS = {"calls": "Calls", "contains": "Contains", "inherits": "Inherits", "references": "References"}
# which statement sets which: the lines and the flag together (whole numbers and booleans are
# updated in place); each string on its own, and only when it changed: any SET of a string
# column, even to the value it holds, grows the file by a rewritten column chunk (Kùzu
# 0.11.3: +4 to +8 MB a build at 107 MB, never reused; design §7b)
# (the lines and the export flag: only those of them that moved are set, ``_set_numbers``)
LINES = "lines"
PATCH_SETS = {LINES: ("start_line", "end_line", "exported"),
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


OldSymbols = tuple[dict[str, dict[str, Any]], dict[str, list[dict[str, Any]]]]


def _old_symbols(store: Store, paths: list[str], scan: bool = True) -> tuple[OldSymbols, list[str]]:
    """What the database holds of ``paths``' symbols (by id) and of the symbol edges that
    start in them (by ``PATCH_RELS`` parameter), and the paths not read: those of the
    files whose artifact it holds along their Defines edges; the others by a scan of the
    paths (``scan``), else left. A file gone loses its artifact, and with it those edges,
    when the artifact rows are refreshed, and a file added has none before: ``finish_bundle``
    reads the first before and the second after (a scan of Symbol's paths was 0.1–0.2 s of
    a rename's update at 20k files)."""
    present = {r["path"] for r in by_keys(store, query("symbols_patch_present"), "paths", paths, arrow=False)}
    here = [p for p in paths if p in present]
    left = [p for p in paths if p not in present]
    was: dict[str, dict[str, Any]] = {}
    edges: dict[str, list[dict[str, Any]]] = {param: [] for param in PATCH_RELS}
    for via, part in (("_via", here), ("", left if scan else [])):
        if part:
            was.update((r["id"], r) for r in store.named(f"symbols_patch_old_symbols{via}", {"paths": part}))
            for param in PATCH_RELS:
                edges[param].extend(store.named(f"symbols_patch_old_{param}{via}", {"paths": part}))
    return (was, edges), [] if scan else left


def _patch_symbols(store: Store, paths: list[str], tables: dict[str, Any], defines_again: bool = True,
                   before: tuple[OldSymbols, list[str]] | None = None) -> None:
    """The changed files' rows (``tables``: the Arrow tables ``symbol_tables`` makes of
    them) patched into kept symbol tables, writing only what moved: a symbol of those
    files that is no longer there is removed with its edges, one that is new is made (and
    its Defines edge, in a standby), one whose properties changed has those properties set
    again; an edge that starts in those files is left alone when it is as it was, updated
    when only its properties moved, else unlinked and created (or, when a table has many
    such edges, all of those files' edges in it are deleted and appended again by COPY);
    then Defines is made again (``defines_again``: a copy, whose Artifact rows were loaded
    again). When symbols came or went, what that changes of the name lookup is appended to
    SymbolNameDelta (a row per key and symbol, stamped with this patch's number, never set
    or deleted: per-key writes to SymbolName did not stay exact across checkpoints in Kùzu
    0.11.3 — the 200-step incremental test caught a row whose ids were another key's — and
    making SymbolName again from every symbol's names was 1.2 s of an add at 20k files);
    readers take it over SymbolName's lists (``read/callgraph.symbol_ids``)."""
    (was, old_edges), left = before if before is not None else _old_symbols(store, paths)
    if left:  # (read before the artifacts were refreshed but for these: read now)
        (more, more_edges), _ = _old_symbols(store, left)
        was.update(more)
        for param, found in more_edges.items():
            old_edges[param].extend(found)
    new_rows = tables["symbols"].to_pylist()
    now = {n["id"] for n in new_rows}
    drop = sorted(i for i in was if i not in now)
    make = [n for n in new_rows if n["id"] not in was]
    names_move = bool(drop or make)
    sets = []  # (statement, params): only the properties that changed
    for n in new_rows:
        old = was.get(n["id"])
        if old is None:
            continue
        for name, props in PATCH_SETS.items():
            moved = tuple(k for k in props if n[k] != old.get(k))
            if moved:  # (only those that moved: each column a checkpoint finds touched is written again)
                stmt = _set_numbers("Symbol", "id", moved, "id") if name == LINES else query(name)
                sets.append((stmt, {"id": n["id"], **{k: n[k] for k in moved}}))
    plans: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]] | None] = {}
    for param, table in PATCH_RELS.items():
        new = [{"source": r.pop("from"), "target": r.pop("to"), **r} for r in tables[param].to_pylist()]
        diff = edge_diff(old_edges[param], new)
        touched = sum(map(len, diff))
        many = touched > PATCH_COPY_MIN and \
            touched > store.rows(f"MATCH ()-[e:{table}]->() RETURN count(e) AS n")[0]["n"] // 300
        plans[param] = None if many else diff  # None: delete them all, append them all by COPY
    if drop:  # removed first, and checkpointed: a node made in the same transaction as a
        # DETACH DELETE took over a deleted symbol's incoming call edge (Kùzu 0.11.3, caught
        # by the 200-step incremental test: the new symbol's edge held the old one's lines)
        with _transaction(store):
            for param, plan in plans.items():
                for row in plan[0] if plan is not None else ():
                    store.execute(query(f"symbols_patch_unlink_{param}"), row)
            for i in drop:
                store.execute(query("symbols_patch_drop_symbol"), {"id": i})
        store.execute("CHECKPOINT")
        plans = {k: (None if v is None else ([], v[1], v[2])) for k, v in plans.items()}
    delta: list[tuple[str, str, bool]] = []  # (key, id, found): what the symbols that came and went move of the names
    if names_move:
        delta = [(key, i, False) for i in drop for key in name_keys(was[i]["name"], was[i]["qualified"], was[i]["kind"])]
        delta += [(key, n["id"], True) for n in make for key in name_keys(n["name"], n["qualified"], n["kind"])]
    seq = int(store.named("symbols_patch_name_seq")[0]["seq"]) + 1 if delta else 0
    with _transaction(store):
        if len(delta) < NAME_DELTA_COPY_MIN:  # (a COPY into a table that holds rows costs ~0.4 s whatever it appends)
            for key, i, alive in delta:
                store.execute(query("symbols_patch_name_delta_row"),
                              {"pk": f"{key}\0{i}\0{seq}", "key": key, "id": i, "seq": seq, "alive": alive})
        for n in make:
            store.execute(query("symbols_patch_create_symbol"), n)
            if not defines_again:
                store.execute(query("symbols_patch_define"), {"path": n["path"], "id": n["id"]})
        for stmt, params in sets:
            store.execute(stmt, params)
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
    if delta and len(delta) >= NAME_DELTA_COPY_MIN:  # what the symbols that came and went change of the names: appended
        import pyarrow as pa

        rows = delta
        store.execute("COPY SymbolNameDelta FROM $rows", {"rows": pa.table({
            "pk": [f"{key}\0{i}\0{seq}" for key, i, _ in rows], "key": [key for key, _, _ in rows],
            "id": [i for _, i, _ in rows], "seq": pa.array([seq] * len(rows), pa.int64()),
            "alive": pa.array([alive for _, _, alive in rows], pa.bool_())})})
    for param, plan in plans.items():  # appended after the transaction: COPY runs on its own
        if plan is None and len(tables[param]):
            store.execute(f"COPY {PATCH_RELS[param]} FROM $rows", {"rows": tables[param]})
    if defines_again:  # (a standby keeps its Artifact rows, and a patch keeps every symbol's id)
        store.execute(query("symbols_defines_again"))
