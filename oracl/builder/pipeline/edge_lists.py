"""Each file's edges of each phase as the latest build's edge shards hold them
(``builder/edge_shards.py``): one JSON blob per file, decoded, and made ``Edge`` objects,
only when a file's list is read (a one-file rebuild reads a handful of the 20,000)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from oracl.core.records import Edge

__all__ = ["EdgeLists", "Blobs", "edge_row"]


def edge_row(e: Edge) -> tuple[object, ...]:
    """An edge as a row: its fields in order (``Edge._make(row)`` makes it again)."""
    return tuple(e)


class Blobs:
    """Each file's ``[Phase 2 rows, Phase 3 rows]`` as JSON bytes, decoded when first read;
    the ``Edge`` lists made of them, shared by every view (``EdgeLists``) of these blobs."""

    __slots__ = ("blobs", "_rows", "_lists")

    def __init__(self, blobs: dict[str, bytes | memoryview]) -> None:
        self.blobs = blobs
        self._rows: dict[str, list[Any]] = {}
        self._lists: dict[tuple[int, str], list[Edge]] = {}

    def rows(self, path: str, phase: int) -> list[Any]:
        both = self._rows.get(path)
        if both is None:
            both = orjson.loads(self.blobs[path])
            if not isinstance(both, list) or len(both) != 2:
                raise ValueError(f"the edges of {path} are not two lists")
            self._rows[path] = both
        return both[phase]

    def edges(self, path: str, phase: int) -> list[Edge]:
        hit = self._lists.get((phase, path))
        if hit is None:
            hit = self._lists[(phase, path)] = [Edge._make(row) for row in self.rows(path, phase)]
        return hit


class EdgeLists(Mapping[str, list[Edge]]):
    """One phase's edges per file over ``Blobs``, with the lists this build made again
    (``made``) over them, less the files that are gone (``gone``). Views of the same blobs
    share what they made of them (``with_made``), so a file whose list was not made again
    has the very same list in each."""

    __slots__ = ("_blobs", "_phase", "_made", "_gone")

    def __init__(self, blobs: Blobs, phase: int, made: dict[str, list[Edge]] | None = None,
                 gone: frozenset[str] = frozenset()) -> None:
        self._blobs, self._phase = blobs, phase
        self._made: dict[str, list[Edge]] = made or {}
        self._gone = gone

    def __getitem__(self, path: str) -> list[Edge]:
        hit = self._made.get(path)
        if hit is not None:
            return hit
        if path in self._gone:
            raise KeyError(path)
        return self._blobs.edges(path, self._phase)

    def __contains__(self, path: object) -> bool:
        return path in self._made or (path in self._blobs.blobs and path not in self._gone)

    def __iter__(self) -> Iterator[str]:
        yield from (p for p in self._blobs.blobs if p not in self._gone)
        yield from (p for p in self._made if p not in self._blobs.blobs or p in self._gone)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def with_made(self, made: dict[str, list[Edge]], present: set[str] | None = None) -> EdgeLists:
        """These blobs with ``made`` over them (the lists of the files made again), over
        what this view made; ``present``: the files there are now (the others' blobs are
        not part of the view)."""
        gone = self._gone if present is None else frozenset(p for p in self._blobs.blobs if p not in present)
        return EdgeLists(self._blobs, self._phase, {**self._made, **made}, gone)

    def made(self) -> frozenset[str]:
        """The files whose lists were made here, not read from the blobs."""
        return frozenset(self._made)

    def rows(self, path: str) -> list[Any]:
        """``path``'s edges as rows, as the shards hold them."""
        hit = self._made.get(path)
        return [edge_row(e) for e in hit] if hit is not None else self._blobs.rows(path, self._phase)

    def blob(self, path: str, other: Mapping[str, list[Edge]]) -> bytes | memoryview | None:
        """``path``'s blob, when neither this view nor ``other`` (the other phase's, over
        the same blobs) made its list again: the bytes a shard holds for it, unchanged."""
        if not self.shares(other) or path in self._made or path in other._made:  # type: ignore[attr-defined]
            return None
        return self._blobs.blobs.get(path)

    def shares(self, other: Mapping[str, list[Edge]]) -> bool:
        """Whether ``other`` views the same blobs: then the two give the same list of each
        file neither made."""
        return isinstance(other, EdgeLists) and other._blobs is self._blobs
