"""A bundle's database, written (design §7, §7b): the write and patch rules of the build,
beside the bundle writer and its seal. The engine itself is reached only through
``oracl.core.store`` (the one module that imports kuzu).

* ``start_bundle``: a fresh database with the schema, the Content rows and the full-text
  index;
* ``patch_bundle``: a copy of the previous bundle's database with the changed files'
  Content rows deleted and created again, the graph tables emptied (the symbol tables kept
  for a patch);
* ``finish_bundle``: the graph tables loaded by COPY, the symbol patch (``edge_diff``:
  only what moved is written), the history index, the checkpoint.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from oracl.core.errors import StoreError
from oracl.core.resources import loader_statements, query, schema_statements
from oracl.core.store import Store, close, reset
from oracl.core.vault import DB_FILE


def start_bundle(directory: Path, content: Any, *, fts: bool = True,
                 buffer_pool_bytes: int = 1 << 30, threads: int = 2) -> Path:
    """A fresh database in ``directory`` with the schema, the Content rows (COPY from an
    Arrow table) and their full-text index. The database stays open in this process for
    ``finish_bundle``. Safe to run in a thread: kuzu releases the GIL while it works."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / DB_FILE
    reset(path)
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
    reset(path)
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
