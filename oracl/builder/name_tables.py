"""The symbol resolver's name tables kept in the vault between cold builds.

A selective rebuild whose changed files kept their interface (no file came or went: the
fast path of ``make_symbols``) resolves only those files' calls, but it needs every
file's names to do it: declaring 20,003 files took 0.9 s of a 5.3 s one-file rebuild. A
long-lived builder keeps the tables in memory (``Carry.symbol_table``); this module keeps
them on disk for the next process.

A build that made the tables from every file writes them as one part of the vault's store
(``symbols.encode_table``); its ``stat.bin`` records ``symbol_table``: the part, its length
and ``stale``, the files whose symbol lines may differ from the part's. Only lines can: a
later build on the fast path has every file's interface equal to the one before, so the
part's names, kinds, members, bases and prototypes stay right, and such a build records
the latest's part again with ``stale`` grown by the files it read. The next build reads
the part (its digest checked), moves the stale files' lines to what their facts say
(``symbols.respan``) and has the tables a declaration of every file would give. Past
``MAX_STALE`` files the tables are written again. A build that compares every file
(a file added, removed or renamed, an interface moved) writes its own tables; a full
build writes none (its content task keeps the other core busy).

>>> entry = carried({"symbol_table": {"part": "ab", "bytes": 9, "stale": ["a.py"]}}, ["b.py"])
>>> entry["stale"]
['a.py', 'b.py']
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from oracl.builder.pipeline.symbols import SymbolTable, decode_table, encode_table, respan
from oracl.core.errors import DigestError
from oracl.core.parts import PartStore
from oracl.core.records import FileFacts

KEY = "symbol_table"  # stat.bin's entry
MAX_STALE = 500       # files whose lines may differ from the part's before the tables are written again


def _entry(latest: dict[str, Any]) -> dict[str, Any] | None:
    entry = latest.get(KEY)
    if not isinstance(entry, dict) or not isinstance(entry.get("part"), str) \
            or not isinstance(entry.get("bytes"), int) or not isinstance(entry.get("stale"), list):
        return None
    return entry


def carried(latest: dict[str, Any], changed: Iterable[str]) -> dict[str, Any] | None:
    """The latest's entry again with ``changed`` among its stale files (a fast-path build,
    whose files' interfaces are the latest's), or None when the latest recorded none or
    too many files would be stale."""
    entry = _entry(latest)
    if entry is None:
        return None
    stale = sorted({*map(str, entry["stale"]), *changed})
    return {"part": entry["part"], "bytes": entry["bytes"], "stale": stale} if len(stale) <= MAX_STALE else None


def read(store: PartStore, latest: dict[str, Any], facts: dict[str, FileFacts],
         declared: Iterable[str] = ()) -> SymbolTable | None:
    """The tables the latest build recorded, with the lines of its stale files moved to
    ``facts`` (this build's, on the fast path against the latest) but for the files this
    build declares again itself (``declared``); None when it recorded none or the part is
    missing, damaged or not such a record."""
    entry = _entry(latest)
    if entry is None:
        return None
    try:
        blob = store.get(entry["part"])
    except (DigestError, OSError):
        return None
    if len(blob) != entry["bytes"]:
        return None
    table = decode_table(blob)
    if table is not None:
        skip = set(declared)
        respan(table, (facts[p] for p in entry["stale"] if p in facts and p not in skip))
    return table


def write(store: PartStore, table: SymbolTable) -> dict[str, Any]:
    """``table`` as a part of the store, and the entry ``stat.bin`` records for it."""
    blob = encode_table(table)
    return {"part": store.put(blob), "bytes": len(blob), "stale": []}
