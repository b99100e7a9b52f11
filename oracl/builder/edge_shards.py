"""Each file's Phase 2 and Phase 3 edges, kept in every bundle (``edges.NN.bin``, sharded
by path as the facts are, listed with their SHA-256 in ``facts.bin``'s head as
``edge_shards``), so that a cold build makes again only the edges a change can move
(design §7b step 5).

A file's edges of both phases are a function of its facts and of what the other files
show the providers (``providers.edge_interface``). So when no file came or went and every
file read again kept its edge interface, the edges made again are those of the files read
again and of the files with an edge into one of them (``providers.edges_to_make``, as a
long-lived builder decides it for the lists it keeps in memory); the others are the
latest build's, read back here, each shard checked against its digest. Anything else (no
shards, a damaged one, a file added) makes every file's edges again, as before.

A shard holds ``{path: [phase 2 edges, phase 3 edges]}``, an edge as the list of its
fields (orjson, never pickle). A build writes the shards that hold a file whose edges it
made again, added or removed, and whose bytes differ from the latest's; the others are
hard links.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import orjson

from oracl.builder.incremental import Previous, shard_of
from oracl.core.records import Edge, FileFacts

FORMAT = 1
ByFile = tuple[dict[str, list[Edge]], dict[str, list[Edge]]]


def shard_name(path: str) -> str:
    """The shard file that holds ``path``'s edges (the same shard index as its facts')."""
    return f"edges.{shard_of(path):02x}.bin"


def _row(e: Edge) -> tuple[object, ...]:
    return (e.source, e.target, e.relation, e.confidence, e.source_fragment, e.target_fragment, e.producer,
            e.provider)


def encode_shard(paths: Iterable[str], by_file: ByFile) -> bytes:
    return orjson.dumps({"format": FORMAT,
                         "files": {p: [[_row(e) for e in by_file[0][p]], [_row(e) for e in by_file[1][p]]]
                                   for p in paths}})


def read_edges(previous: Previous | None) -> ByFile | None:
    """The latest build's edges per file and phase, from its shards (each checked against
    the digest its facts head lists); None when it has none, one is missing or damaged, or
    they do not cover exactly its files — and then ``previous`` forgets its shards, so that
    none of them is hard-linked into this build (a damaged shard whose digest says what
    this build would write must not be taken for it)."""
    if previous is None or not previous.edge_shards:
        return None
    out = _read(previous)
    if out is None:
        previous.edge_shards = {}
    return out


def _read(previous: Previous) -> ByFile | None:
    p2: dict[str, list[Edge]] = {}
    p3: dict[str, list[Edge]] = {}
    try:
        for name, digest in sorted(previous.edge_shards.items()):
            if not isinstance(name, str) or not name.startswith("edges.") or "/" in name:
                return None
            data = (previous.bundle / name).read_bytes()
            if hashlib.sha256(data).hexdigest() != digest:
                return None
            doc = orjson.loads(data)
            if doc.get("format") != FORMAT:
                return None
            for path, (two, three) in doc["files"].items():
                p2[path] = [Edge(*row) for row in two]
                p3[path] = [Edge(*row) for row in three]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    if len(p2) != len(previous.facts) or any(p not in p2 for p in previous.facts):
        return None
    return p2, p3


def _holds(previous: Previous | None, name: str, data: bytes) -> bool:
    try:
        return previous is not None and (previous.bundle / name).read_bytes() == data
    except OSError:
        return False


def write_edges(folder: Path, facts: list[FileFacts], by_file: ByFile, previous: Previous | None,
                moved: set[str] | None, write: Callable[..., Any]) -> tuple[dict[str, str], dict[str, str]]:
    """The shards of ``by_file`` in ``folder``: a shard none of whose files is in ``moved``
    (edges made again, files added or removed; None: all) whose file set is the latest's
    is hard-linked from its bundle; another is encoded, and linked all the same when the
    latest's file holds those very bytes. Returns (every shard's SHA-256, those of the
    shards linked)."""
    by_shard: dict[str, list[str]] = {}
    for f in facts:
        by_shard.setdefault(shard_name(f.path), []).append(f.path)
    old = previous.edge_shards if previous is not None else {}
    was: dict[str, set[str]] = {}
    if previous is not None:
        for p in previous.facts:
            was.setdefault(shard_name(p), set()).add(p)
    hit = {shard_name(p) for p in moved} if moved is not None else None
    digests: dict[str, str] = {}
    linked: dict[str, str] = {}

    def link(name: str) -> bool:
        assert previous is not None
        try:
            os.link(previous.bundle / name, folder / name)
        except OSError:
            return False
        digests[name] = linked[name] = old[name]
        return True

    for name in sorted(by_shard):
        paths = by_shard[name]
        if hit is not None and name not in hit and name in old and was.get(name) == set(paths) and link(name):
            continue
        data = encode_shard(paths, by_file)
        digest = hashlib.sha256(data).hexdigest()
        if old.get(name) == digest and _holds(previous, name, data) and link(name):
            continue  # (its file's bytes compared: a damaged one is never linked for what it should hold)
        write(folder / name, data, durable=False)  # a shard lost to a power cut fails its digest: made again
        digests[name] = digest
    return digests, linked
