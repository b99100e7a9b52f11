"""The symbol resolver's name tables kept in the vault between cold builds.

A selective rebuild whose changed files kept their interface (no file came or went: the
fast path of ``make_symbols``) resolves only those files' calls, but it needs every
file's names to do it: declaring 20,003 files took 0.9 s of a 5.3 s one-file rebuild. A
long-lived builder keeps the tables in memory (``Carry.symbol_table``); this module keeps
them on disk for the next process.

A build that made the tables from every file (a full build, a whole pass, a fast-path
build that found none) writes them as one part of the vault's store
(``symbols.encode_table``, without the symbols' lines: 29 MB at 20k files); its
``stat.bin`` records ``symbol_table``: the part and its length. A later build on the fast
path has every file's interface equal to the one before, so the part's names, kinds,
members, bases and prototypes stay right: it records the latest's entry again, and the
next one reads it (its digest checked) instead of declaring every file. The lines the
part leaves out are only read for the callers being resolved, whose files
``symbol_graph`` declares again.

A build whose files came, went or changed their interface patches the tables
(``resolve_again``) and records the patch, not the tables: a second part (``patch``),
holding per changed file its declaration in the base part and its declaration now
(``symbols.encode_declared``), and the bases of the types of the files it resolved again;
each such build writes the latest's patch with its own changes over it. Reading applies
the patch to the base (``symbols.patch_table``). A patch past ``COMPACT`` files gives way
to the whole tables written again. A build whose read fails declares every file and
writes the tables over the damaged part.

>>> carried({"symbol_table": {"part": "ab", "bytes": 9}})
{'part': 'ab', 'bytes': 9}
"""

from __future__ import annotations

from typing import Any

from oracl.builder.pipeline.symbols import (
    Declaration,
    SymbolTable,
    decode_declared,
    decode_table,
    encode_declared,
    encode_table,
    patch_table,
)
from oracl.core.errors import DigestError
from oracl.core.parts import PartStore

KEY = "symbol_table"  # stat.bin's entry
COMPACT = 1000  # files a patch may hold before the whole tables are written again

Declared = dict[str, tuple[Declaration | None, Declaration | None]]


def _part(entry: Any) -> dict[str, Any] | None:
    if not isinstance(entry, dict) or not isinstance(entry.get("part"), str) or not isinstance(entry.get("bytes"), int):
        return None
    return {"part": entry["part"], "bytes": entry["bytes"]}


def carried(latest: dict[str, Any]) -> dict[str, Any] | None:
    """The latest's entry, for a fast-path build to record again (its files' interfaces
    are the latest's), or None when the latest recorded none."""
    entry = latest.get(KEY)
    base = _part(entry)
    if base is None:
        return None
    patch = _part(entry.get("patch"))  # type: ignore[union-attr]
    return {**base, "patch": patch} if patch is not None else base


def _get(store: PartStore, entry: dict[str, Any]) -> bytes | None:
    try:
        blob = store.get(entry["part"])
    except (DigestError, OSError):
        return None
    return blob if len(blob) == entry["bytes"] else None


def patch_of(store: PartStore, latest: dict[str, Any]) -> tuple[Declared, dict[str, list[str]]] | None:
    """The latest's patch ({}, {} when it recorded none), None when it cannot be read."""
    entry = carried(latest)
    if entry is None or "patch" not in entry:
        return {}, {}
    blob = _get(store, entry["patch"])
    return decode_declared(blob) if blob is not None else None


def read(store: PartStore, latest: dict[str, Any], order: dict[str, int]) -> SymbolTable | None:
    """The tables the latest build recorded, its patch applied (``order``: this build's
    files' places, path → position); None when it recorded none or a part is missing,
    damaged or not such a record."""
    entry = carried(latest)
    if entry is None:
        return None
    blob = _get(store, entry)
    table = decode_table(blob) if blob is not None else None
    patch = patch_of(store, latest)
    if table is None or patch is None:
        return None
    decls, bases = patch
    if decls:
        gone = [(p, was) for p, (was, _) in sorted(decls.items()) if was is not None]
        # (a file of the patch that is gone from this build's files is not entered: the
        # build takes it out of the tables again)
        came = [(p, now) for p, (_, now) in sorted(decls.items()) if now is not None and p in order]
        if patch_table(table, gone, came, order):
            return None
        for tid, held in bases.items():
            if held:
                table.t.bases[tid] = list(held)
            else:
                table.t.bases.pop(tid, None)
    return table


def write(store: PartStore, table: SymbolTable, heal: bool = False) -> dict[str, Any]:
    """``table`` as a part of the store, and the entry ``stat.bin`` records for it;
    ``heal``: written even over a part of the same name and size (the latest's could not
    be read: its bytes may be these, damaged)."""
    blob = encode_table(table)
    return {"part": store.put(blob, rewrite=heal), "bytes": len(blob)}


def write_patch(store: PartStore, base: dict[str, Any], decls: Declared, bases: dict[str, list[str]]) -> dict[str, Any]:
    """The entry of the base part ``base`` with the patch ``decls``/``bases`` as a part."""
    blob = encode_declared(decls, bases)
    return {"part": base["part"], "bytes": base["bytes"], "patch": {"part": store.put(blob), "bytes": len(blob)}}
