"""The symbol resolver's name tables kept in the vault between cold builds.

A selective rebuild whose changed files kept their interface (no file came or went: the
fast path of ``make_symbols``) resolves only those files' calls, but it needs every
file's names to do it: declaring 20,003 files took 0.9 s of a 5.3 s one-file rebuild. A
long-lived builder keeps the tables in memory (``Carry.symbol_table``); this module keeps
them on disk for the next process.

A build that made the tables from every file writes them as one part of the vault's store
(``symbols.encode_table``, without the symbols' lines); its ``stat.bin`` records
``symbol_table``: the part and its length. A later build on the fast path has every
file's interface equal to the one before, so the part's names, kinds, members, bases and
prototypes stay right: it records the latest's part again, and the next one reads it
(its digest checked) instead of declaring every file. The lines the part leaves out are
only read for the callers being resolved, whose files ``symbol_graph`` declares again. A
build that compares every file (a file added, removed or renamed, an interface moved)
records none, nor does a full build: the first fast-path build after it declares every
file and writes the part, beside its weighing (an add would otherwise write 30 MB more);
a build whose read fails does the same, writing over the damaged part.

>>> carried({"symbol_table": {"part": "ab", "bytes": 9}})
{'part': 'ab', 'bytes': 9}
"""

from __future__ import annotations

from typing import Any

from oracl.builder.pipeline.symbols import SymbolTable, decode_table, encode_table
from oracl.core.errors import DigestError
from oracl.core.parts import PartStore

KEY = "symbol_table"  # stat.bin's entry


def carried(latest: dict[str, Any]) -> dict[str, Any] | None:
    """The latest's entry, for a fast-path build to record again (its files' interfaces
    are the latest's), or None when the latest recorded none."""
    entry = latest.get(KEY)
    if not isinstance(entry, dict) or not isinstance(entry.get("part"), str) or not isinstance(entry.get("bytes"), int):
        return None
    return {"part": entry["part"], "bytes": entry["bytes"]}


def read(store: PartStore, latest: dict[str, Any]) -> SymbolTable | None:
    """The tables the latest build recorded; None when it recorded none or the part is
    missing, damaged or not such a record."""
    entry = carried(latest)
    if entry is None:
        return None
    try:
        blob = store.get(entry["part"])
    except (DigestError, OSError):
        return None
    return decode_table(blob) if len(blob) == entry["bytes"] else None


def write(store: PartStore, table: SymbolTable, heal: bool = False) -> dict[str, Any]:
    """``table`` as a part of the store, and the entry ``stat.bin`` records for it;
    ``heal``: written even over a part of the same name and size (the latest's could not
    be read: its bytes may be these, damaged)."""
    blob = encode_table(table)
    return {"part": store.put(blob, rewrite=heal), "bytes": len(blob)}
