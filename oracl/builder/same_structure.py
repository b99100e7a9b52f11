"""A cold build's proof that its structure is the latest's, file by file (issue 49).

``weigh`` works out every node's structure (weights, association values, degrees, who
refers to whom) in a pass over every edge, then hashes every record and edge into the
``structure_key`` the latest's ranks are reused under: 0.4 s of a 3.3 s one-file rebuild
at 20,003 files. When a cold build read few files again, the same can be proved from what
moved alone:

* no file came or went (the files are the latest's, in the same order);
* everything else records and edges are made under is the latest's: the settings key
  (``weigh.settings_key``: configuration, overrides, commit messages, learned tags, the
  overlay's and the history's edges) is the one it recorded;
* each file read again has the record tags, review status and savings the latest made
  from its old facts;
* each file whose edges were made again (``edges_to_make``: those read again and those
  with an edge into one) merges into the same (source, target, relation, κ) edges, in
  the same order, as its kept edges did — their fragments, producer and provider may move
  (they are in the rows, not the structure).

Every other file's record and merged edges are made from the latest's own facts and
edges under the same settings, so they are the latest's. Then the structure key, the
association values (hence n, Σassoc, Σassoc², μ, σ), the degrees, the orphans and the
raw ranks are the latest's, and ``weigh`` takes them (``KeptStructure``) instead of
working them out.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

import orjson

from oracl.builder.pipeline.annotate import make_record
from oracl.builder.pipeline.merge import merge_edges, tail_and_overlay
from oracl.builder.pipeline.weigh import STRUCTURE_BYTES, KeptStructure
from oracl.builder.pipeline.weigh_around import Latest
from oracl.core import derive
from oracl.core.config import Config
from oracl.core.records import ArtifactRecord, Edge, FileFacts

KEY = "settings_sha256"  # stat.bin's entry: the settings key the build was made under
SUM = "structure_sum"  # … and its structure's ``weigh.structure_sum`` (hex)


def _header(bundle: Path) -> dict[str, Any] | None:
    """``bundle``'s header.json when it is the one its manifest lists."""
    from oracl.core.vault import HEADER_FILE, MANIFEST

    try:
        data = (bundle / HEADER_FILE).read_bytes()
        if orjson.loads((bundle / MANIFEST).read_bytes())["files"][HEADER_FILE] != hashlib.sha256(data).hexdigest():
            return None
        doc = orjson.loads(data)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return doc if isinstance(doc, dict) else None


def _source(e: Edge) -> str:
    return e.source


def _shape(edges: list[Edge]) -> list[tuple[str, str, str, float]]:
    return [(e.source, e.target, e.relation, e.confidence) for e in edges]


def latest_figures(bundle: Path, latest: Mapping[str, Any], settings: str,
                   ranks: Callable[[int], list[float] | None]) -> tuple[Latest | None, str]:
    """What the latest build (``bundle``, whose ``stat.bin`` header is ``latest``) recorded
    of its structure, when it was made under ``settings`` (``weigh.settings_key``), or None
    and why not."""
    key, orphans = latest.get("structure_sha256"), latest.get("orphans")
    if not isinstance(key, str) or not key or not isinstance(orphans, int):
        return None, "the latest recorded no structure"
    if latest.get(KEY) != settings:
        return None, "the settings or learned data moved"
    header = _header(bundle)
    if header is None or not isinstance(header.get("aggregates"), dict):
        return None, "the latest's header cannot be read"
    try:
        terms = derive.Terms.from_header(header)
    except (KeyError, TypeError, ValueError):
        return None, "the latest's header cannot be read"
    return Latest(terms, orphans, ranks, _total(latest), _relations(header)), ""


def _relations(header: Mapping[str, Any]) -> dict[str, int] | None:
    """The latest graph's edges by relation, as its header counts them (None: not there)."""
    counts = header.get("counts")
    held = counts.get("edges_by_relation") if isinstance(counts, dict) else None
    if not isinstance(held, dict) or not all(isinstance(k, str) and type(v) is int and v >= 0
                                             for k, v in held.items()):
        return None
    return dict(held)


def _total(latest: Mapping[str, Any]) -> int | None:
    """The ``weigh.structure_sum`` the latest recorded (hex), None when it recorded none."""
    held = latest.get(SUM)
    try:
        return int(held, 16) if isinstance(held, str) and 0 < len(held) <= 2 * STRUCTURE_BYTES else None
    except ValueError:
        return None


def kept_structure(bundle: Path, latest: Mapping[str, Any], settings: str, cfg: Config,
                   learned: Mapping[str, Mapping[str, object]], facts: list[FileFacts],
                   previous: Mapping[str, FileFacts], records: list[ArtifactRecord], reread: list[str],
                   merged: list[Edge], kept: tuple[Mapping[str, list[Edge]], Mapping[str, list[Edge]]],
                   made: tuple[Mapping[str, list[Edge]], Mapping[str, list[Edge]]], again: set[str],
                   tail: list[Edge], overlay: list[Edge],
                   ranks: Callable[[int], list[float] | None],
                   paths: AbstractSet[str] | None = None) -> tuple[KeptStructure | None, str]:
    """The latest's structure (``bundle``: its bundle, ``latest``: its ``stat.bin``
    header), or None and why not. ``kept``: the latest's Phase 2 and Phase 3 edges per
    file, ``made``: this build's, ``again``: the files whose edges it made again, ``tail``/``overlay``:
    the history's and the learned overlay's edges (as merged); ``paths``: this build's
    files (the index's keys: not a set made again)."""
    figures, why = latest_figures(bundle, latest, settings, ranks)
    if figures is None:
        return None, why
    key, terms, orphans = str(latest["structure_sha256"]), figures.terms, figures.orphans
    if len(facts) != len(previous) or any(p not in previous for p in reread):
        return None, "a file came or went"
    read_again = set(reread)
    for r in records:
        if r.path in read_again:
            old = make_record(previous[r.path], cfg, learned.get(r.path))
            if (old.tags, old.review_status, old.estimated_savings) != (r.tags, r.review_status,
                                                                        r.estimated_savings):
                return None, f"{r.path}'s tags moved"
    checked = again | read_again
    nodes = paths if paths is not None else {f.path for f in facts}
    extra = tail_and_overlay(checked, tail, overlay)
    # (each checked source's run of the merged edges, which are in source order: found by
    # halving, not by a pass over every edge)
    now: dict[str, list[Edge]] = {}
    for s in checked:
        a = bisect.bisect_left(merged, s, key=_source)
        now[s] = merged[a:bisect.bisect_right(merged, s, a, key=_source)]
    for s in sorted(checked):
        p2, p3 = kept[0].get(s, []), kept[1].get(s, [])
        if any(e.source != s for lists in (p2, p3, made[0].get(s, []), made[1].get(s, [])) for e in lists):
            return None, f"an edge of {s} starts in another file"
        after, over = extra[s]
        if _shape(merge_edges(p2, [*p3, *after], over, nodes).edges) != _shape(now[s]):
            return None, f"{s}'s edges moved"
    files = "1 file's" if len(checked) == 1 else f"{len(checked):,} files'"
    # (each file read again and the mtime the latest had of it: the newest mtime is then had
    # without a pass over every file, ``weigh.newest_kept``)
    was = tuple((p, previous[p].mtime_ns) for p in reread)
    return KeptStructure(key, terms, ranks, orphans, figures.total, figures.relations, was), \
        f"the latest's, {files} edges compared"
