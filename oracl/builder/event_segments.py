"""Phase 6, kept between builds: the events of each file made once and reused by their bytes.

``events/events.jsonl`` only grows (``oracl ingest`` appends under a lock). A build keeps,
beside the bundle's ``events.json``, an index (``events.index.json``) saying how far it read
the events file (with a fingerprint of what it read) and, for each file events name: the
offsets of its event lines, the file's checksum and which test files its events name were
in the build then, its summary, and where its group's bytes sit in ``events.json``.

The next build reads only the lines appended since, and makes again only the groups whose
file changed, appeared or went, gained events, or whose named test files came or went;
every other group is the previous ``events.json``'s bytes, sliced. The section is then
joined from the groups in path order: the same bytes a build from scratch makes (a test
holds them equal). Anything that does not fit (no index, another events file, a prefix
that changed, an index from another version) makes every group again: never a wrong reuse.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from oracl.builder.pipeline.events import (
    MAX_EVENTS,
    Events,
    Spans,
    add_summary,
    event_phase,
    header,
    newest,
)
from oracl.core import telemetry
from oracl.core.records import EVENT_HALF_LIFE_DAYS
from oracl.core.seal import EVENT_KIND, line_sealed, user_key
from oracl.core.vault import EVENTS_BUNDLE_FILE, EVENTS_INDEX_FILE

INDEX_VERSION = 1
EDGE = 1 << 16  # bytes of the read prefix's head and tail in its fingerprint


@dataclass(frozen=True, slots=True)
class EventsOut:
    """What phase 6 gives the build: the export's ``events`` section (also the bundle's
    ``events.json``), its header entry, the index for the next build, and how many groups
    were made and reused."""

    section: bytes | None = None
    header: dict[str, Any] | None = None
    index: bytes | None = None
    made: int = 0
    reused: int = 0


def fingerprint(path: Path, end: int) -> str:
    """SHA-256 of the read prefix's length, first and last ``EDGE`` bytes: an appended
    file keeps it, a file rewritten or cut (anything but ``oracl ingest``) does not."""
    h = hashlib.sha256(str(end).encode())
    with open(path, "rb") as fh:
        h.update(fh.read(min(EDGE, end)))
        fh.seek(max(0, end - EDGE))
        h.update(fh.read(min(EDGE, end)))
    return h.hexdigest()


def _previous(bundle: Path | None, path: Path, st: os.stat_result) -> dict[str, Any] | None:
    if bundle is None:
        return None
    try:
        idx = orjson.loads((bundle / EVENTS_INDEX_FILE).read_bytes())
        src = idx["source"]
        if (idx["version"] != INDEX_VERSION or src["dev"] != st.st_dev or src["ino"] != st.st_ino
                or not 0 <= src["end"] <= st.st_size or src["fingerprint"] != fingerprint(path, src["end"])):
            return None
        if not isinstance(idx["files"], dict):
            return None
        return idx
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError):
        return None


def _pairs(flat: list[int]) -> list[tuple[int, int]]:
    return list(zip(flat[::2], flat[1::2], strict=True))


def join(groups: dict[str, bytes]) -> tuple[bytes, dict[str, tuple[int, int]]]:
    """``{"files":{path:group,…}}`` in path order (canonical JSON, the bytes
    ``canonical_bytes`` gives the parsed value), and where each group sits in it."""
    parts, spans, at = [b'{"files":{'], {}, 10
    for i, p in enumerate(sorted(groups)):
        key = (b"," if i else b"") + orjson.dumps(p) + b":"
        parts += [key, groups[p]]
        at += len(key)
        spans[p] = (at, at + len(groups[p]))
        at += len(groups[p])
    parts.append(b"}}")
    return b"".join(parts), spans


def make_events(path: Path, previous: Path | None, checksums: Mapping[str, str], spans: Spans) -> EventsOut:
    """Phase 6 against this build's files (path → checksum, and their definitions), starting
    from the previous bundle's groups when ``previous`` holds a usable index."""
    try:
        st = path.stat()
    except OSError:
        return EventsOut()
    idx = _previous(previous, path, st)
    old: dict[str, Any] = idx["files"] if idx is not None else {}
    start = idx["source"]["end"] if idx is not None else 0
    unreadable = idx.get("unreadable", 0) if idx is not None else 0
    count = telemetry.LineCount()
    added: dict[str, list[int]] = {}
    key = user_key()

    def ours(line: bytes) -> bool:  # a line that came with the tree is never an event (design §11)
        return line_sealed(key, EVENT_KIND, line)

    for off, length, row in telemetry.rows_at(path, start, count, ours):
        arts = row.get("artifacts")
        p = arts.get("path") if isinstance(arts, dict) else None
        if not isinstance(p, str) or not isinstance(row.get("timestamp_utc"), str):
            unreadable += 1
            continue
        added.setdefault(p, []).extend((off, length))
    unreadable += count.bad
    unsealed = (idx.get("unsealed", 0) if idx is not None else 0) + count.unsealed
    end = count.end
    prev_section: bytes | None = None
    files: dict[str, dict[str, Any]] = {}
    groups: dict[str, bytes] = {}
    made = reused = 0
    for p in sorted(set(old) | set(added)):
        was = old.get(p)
        if (was is not None and p not in added and was.get("checksum") == checksums.get(p)
                and all((t in checksums) == inside for t, inside in was["tests"].items())):
            if was.get("span") is not None:
                if prev_section is None:
                    assert previous is not None
                    try:
                        prev_section = (previous / EVENTS_BUNDLE_FILE).read_bytes()
                    except OSError:
                        return make_events(path, None, checksums, spans)
                a, b = was["span"]
                groups[p] = prev_section[a:b]
            files[p] = {k: was[k] for k in ("checksum", "tests", "lines", "summary")}
            reused += 1
            continue
        flat = (was["lines"] if was is not None else []) + added.get(p, [])
        tests: dict[str, bool] = {}
        bad = 0

        def rows(flat: list[int] = flat, tests: dict[str, bool] = tests) -> Iterator[dict[str, Any]]:
            nonlocal bad
            for row in telemetry.rows_of(path, _pairs(flat), ours):
                if row is None:
                    bad += 1
                    continue
                t = (row.get("artifacts") or {}).get("test_path")
                if isinstance(t, str):
                    tests[t] = t in checksums
                yield row

        ev = event_phase(rows(), checksums, spans)
        if bad:
            ev.dropped["unreadable"] += bad
        files[p] = {"checksum": checksums.get(p), "tests": tests, "lines": flat, "summary": ev.summary()}
        if ev.nodes:
            groups[p] = ev.group_bytes()
        made += 1
    total: dict[str, Any] = {}
    for f in files.values():
        total = add_summary(total, f["summary"])
    if unreadable:
        total = add_summary(total, {"count": 0, "stale": 0, "dropped": {"unreadable": unreadable}})
    if unsealed:
        total = add_summary(total, {"count": 0, "stale": 0, "dropped": {"not sealed by your oracl": unsealed}})
    capped = total.get("count", 0) > MAX_EVENTS
    if capped:
        groups, kept = _cap(groups)
        over = total["count"] - kept["count"]
        total = add_summary(kept, {"count": 0, "stale": 0, "dropped": {**total["dropped"], "over the limit": over}})
    if not total.get("count") and not total.get("dropped"):
        return EventsOut()
    section, where = join(groups)
    for p, f in files.items():
        f["span"] = where.get(p)
    index = orjson.dumps({"version": INDEX_VERSION, "unreadable": unreadable, "unsealed": unsealed, "files": files, "source": {
        "dev": st.st_dev, "ino": st.st_ino, "end": end,
        # a capped build's groups are not every group's: the next build makes all again
        "fingerprint": "capped" if capped else fingerprint(path, end)}})
    return EventsOut(section=section if groups else None, header=header(total, EVENT_HALF_LIFE_DAYS), index=index,
                     made=made, reused=reused)


def _cap(groups: dict[str, bytes]) -> tuple[dict[str, bytes], dict[str, Any]]:
    """The groups holding only the ``MAX_EVENTS`` newest events, and their summary."""
    docs = {p: orjson.loads(g) for p, g in groups.items()}
    keep = newest([n for d in docs.values() for n in d["nodes"]], MAX_EVENTS)
    out, kept = {}, Events()
    for p, d in docs.items():
        ev = Events([n for n in d["nodes"] if n["id"] in keep],
                    [e for e in d["edges"] if e.get("event", e["source"]) in keep])
        kept.nodes += ev.nodes
        if ev.nodes:
            out[p] = ev.group_bytes()
    return out, kept.summary()
