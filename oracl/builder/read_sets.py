"""What resolving each file's names read, kept in the vault between cold builds.

A file added, removed or renamed, or one whose ``interface`` moved, changes what some other
files' names resolve to — only those whose resolution read a name it declares, a file of
its name or directory, or the file itself (``symbols.change_tokens``). The resolver
records what each file's resolution read (``_Resolver.reads``); with the latest's record
and its name tables (``name_tables``), such a build patches the tables and resolves those
files again (``make_symbols``) instead of every file.

The record is up to three parts of the vault's store, named in ``stat.bin`` under
``read_sets``: a *base* (every code file's reads, written by a build that resolved every
file), a *delta* and a *recent* part (the files resolved again since, a removed file as
None; the recent part's over the delta's), so that a one-file rebuild writes its own
file's reads and not 20,000 files'. Each build writes the recent part again with its own
files' reads; past ``RECENT`` files it is folded into the delta (a rename that resolves
1,300 files again made a 0.8 MB delta that every later build wrote again, 0.02 s and
0.8 MB each), and a delta past ``COMPACT`` files into a new base. Each part is
``marshal`` of plain dicts, tuples and strings (nothing in it runs when read), checked
against its digest and length.

>>> encode({"a.py": ("f", "\\x00b.py")}) == encode({"a.py": ("f", "\\x00b.py")})
True
"""

from __future__ import annotations

import marshal
from collections.abc import Iterable, Mapping
from typing import Any

from oracl.core.errors import DigestError
from oracl.core.parts import PartStore

KEY = "read_sets"  # stat.bin's entry
FORMAT = 2  # (2: a lookup in the tables of every file's names has tokens of its own, ``*m:name``…: a record without them is not used)
COMPACT = 2000  # files a delta may hold before it is folded into the base
RECENT = 64     # files the recent part may hold before it is folded into the delta

Reads = dict[str, tuple[str, ...] | None]


def encode(reads: Mapping[str, Iterable[str] | None]) -> bytes:
    """``reads`` as a part's bytes: each file's reads sorted, and each string one object
    however many files read it (marshal writes a string it met before as a reference)."""
    one: dict[str, str] = {}
    return marshal.dumps((FORMAT, {p: None if v is None else tuple(one.setdefault(x, x) for x in sorted(v))
                                   for p, v in sorted(reads.items())}), 4)


def decode(blob: bytes) -> Reads | None:
    try:
        version, reads = marshal.loads(blob)
    except (ValueError, TypeError, EOFError):
        return None
    if version != FORMAT or not isinstance(reads, dict):
        return None
    return reads


def _part(entry: Any) -> tuple[str, int] | None:
    if isinstance(entry, dict) and isinstance(entry.get("part"), str) and isinstance(entry.get("bytes"), int):
        return entry["part"], entry["bytes"]
    return None


def _get(store: PartStore, part: tuple[str, int]) -> Reads | None:
    try:
        blob = store.get(part[0])
    except (DigestError, OSError):
        return None
    return decode(blob) if len(blob) == part[1] else None


def read(store: PartStore, latest: dict[str, Any], delta_only: bool = False) -> tuple[Reads, Reads] | None:
    """(the base, the delta) the latest build recorded (``delta_only``: the base left
    unread, empty); None when it recorded none or a part is missing, damaged or not such
    a record."""
    got = _read(store, latest, delta_only)
    if got is None:
        return None
    base, delta, recent = got
    return base, {**delta, **recent}


def _read(store: PartStore, latest: dict[str, Any], delta_only: bool) -> tuple[Reads, Reads, Reads] | None:
    """(the base, the delta, the recent part), each {} when the record has none."""
    entry = latest.get(KEY)
    if not isinstance(entry, dict):
        return None
    base_part = _part(entry.get("base"))
    if base_part is None:
        return None
    base = {} if delta_only else _get(store, base_part)
    delta, recent = ({} if entry.get(k) is None else _get(store, _part(entry.get(k)) or ("", -1))
                     for k in ("delta", "recent"))
    if base is None or delta is None or recent is None:
        return None
    return base, delta, recent


def merged(base: Reads, delta: Reads) -> dict[str, tuple[str, ...]]:
    """Every file's reads: the base's, with the delta's over them."""
    out = {p: v for p, v in base.items() if v is not None}
    for p, v in delta.items():
        if v is None:
            out.pop(p, None)
        else:
            out[p] = v
    return out


def write(store: PartStore, latest: dict[str, Any], reads: Mapping[str, Iterable[str]],
          gone: Iterable[str] = (), whole: bool = False) -> dict[str, Any] | None:
    """The entry ``stat.bin`` records after a build that resolved the files ``reads``
    names and saw the files ``gone`` go: ``whole`` (every code file resolved): a new
    base; else the latest's base with a delta of its delta and these (a new base when
    the delta grows past ``COMPACT``). None when the latest's record cannot be read (a
    build that is not whole then records none)."""
    if whole:
        return {"base": _put(store, reads), "delta": None, "recent": None}
    entry = latest.get(KEY)
    kept = _read(store, latest, delta_only=True)
    if kept is None or not isinstance(entry, dict):
        return None
    recent: dict[str, Any] = dict(kept[2])
    recent.update({p: tuple(v) for p, v in reads.items()})
    recent.update({p: None for p in gone})
    if len(recent) <= RECENT:
        return {"base": entry["base"], "delta": entry.get("delta"), "recent": _put(store, recent) if recent else None}
    delta = {**kept[1], **recent}
    if len(delta) > COMPACT:
        base = read(store, latest)
        if base is None:
            return None
        return write(store, latest, merged(base[0], delta), whole=True)
    return {"base": entry["base"], "delta": _put(store, delta), "recent": None}


def _put(store: PartStore, reads: Mapping[str, Iterable[str] | None]) -> dict[str, Any]:
    blob = encode(reads)
    return {"part": store.put(blob), "bytes": len(blob)}
