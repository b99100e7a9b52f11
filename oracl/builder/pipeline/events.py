"""Phase 6: sensor edge ingestion (design §5d). The events ``oracl ingest`` stored become
event nodes of the build, each with edges to the files it names:

* ``observed_on`` → the file a test result, finding or note is about (and the test's own
  symbol, when the report names a test the file defines);
* ``covers`` → the file a coverage event says ran, and the innermost symbols holding the
  lines it ran (at most ``MAX_SYMBOLS``); ``covered_by`` from a covering test's file to it.

Symbol ids are the symbol graph's (``path#qualified``).

Each event weighs ``w = 0.5 ** (age_days / half_life)`` (``EVENT_HALF_LIFE_DAYS`` in the
header): a coverage run a month old counts half. An event on a file whose checksum is no
longer the one it was mapped against is kept and marked ``stale`` (its lines may have
moved). Events on files the build does not hold are dropped and counted. Pure: rows in,
rows out; the cost follows the number of events, not the size of the tree.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson

from oracl.core.paths import utc

EVENT_HALF_LIFE_DAYS = 30.0
MAX_EVENTS = 500_000  # the newest kept when a vault holds more
MAX_SYMBOLS = 20      # symbols one event's lines can reach through edges
Spans = Callable[[str], list[tuple[str, int, int]]]  # path → (symbol id, start, end) of its definitions


@dataclass(slots=True)
class Events:
    nodes: list[dict[str, Any]] = field(default_factory=list)
    edges: list[dict[str, Any]] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)

    def header(self, half_life: float) -> dict[str, Any]:
        by = Counter(n["decision"] for n in self.nodes)
        kinds = Counter(n["kind"] for n in self.nodes)
        coverage = [n["timestamp_utc"] for n in self.nodes if n["kind"] == "coverage"]
        return {"count": len(self.nodes), "half_life_days": half_life, "by_decision": dict(sorted(by.items())),
                "by_kind": dict(sorted(kinds.items())), "stale": sum(1 for n in self.nodes if n["stale"]),
                "dropped": dict(sorted(self.dropped.items())), "newest_coverage": max(coverage, default=None)}

    def section(self) -> dict[str, Any]:
        """The export's ``events`` section (sorted: two builds of the same events are equal)."""
        return {"nodes": sorted(self.nodes, key=lambda n: n["id"]),
                "edges": sorted(self.edges, key=lambda e: (e["source"], e["relation"], e["target"]))}


def kind_of(row: dict[str, Any]) -> str:
    codes = row.get("reason_codes") or []
    for k in ("coverage", "test", "finding", "note"):
        if k in codes:
            return k
    return "event"


def weight(age_days: float, half_life: float = EVENT_HALF_LIFE_DAYS) -> float:
    return round(0.5 ** (max(0.0, age_days) / half_life), 6)


def _lines(text: str) -> list[tuple[int, int]]:
    out = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        if a.isdigit() and (not b or b.isdigit()):
            out.append((int(a), int(b or a)))
    return out


def innermost(defs: list[tuple[str, int, int]], lines: list[tuple[int, int]]) -> list[str]:
    """The ids of the definitions holding ``lines`` that hold no other such definition
    (a method, not its class), in order, at most ``MAX_SYMBOLS``."""
    hit = [d for d in defs if any(d[1] <= b and a <= d[2] for a, b in lines)]
    inner = [d for d in hit if not any(o is not d and d[1] <= o[1] and o[2] <= d[2] and (o[1], o[2]) != (d[1], d[2])
                                       for o in hit)]
    return [d[0] for d in inner][:MAX_SYMBOLS]


def test_symbol(path: str, test: str) -> str:
    """``tests/test_app.py::TestX::test_y[param]`` (or ``test_y``) → ``tests/test_app.py#TestX.test_y``."""
    name = test.split("::", 1)[1] if "::" in test else test
    return f"{path}#{name.split('[', 1)[0].replace('::', '.')}"


def event_phase(rows: Iterable[dict[str, Any]], checksums: dict[str, str], now: datetime,
                half_life: float = EVENT_HALF_LIFE_DAYS, spans: Spans | None = None) -> Events:
    """Event nodes and edges from the stored rows, against the build's files (path →
    checksum) and their definitions (``spans``, asked only for the files events name)."""
    out = Events()
    seen: set[str] = set()
    for row in rows:
        arts = row.get("artifacts")
        stamp = row.get("timestamp_utc")
        if not isinstance(arts, dict) or not isinstance(stamp, str):
            out.dropped["unreadable"] += 1
            continue
        path = arts.get("path")
        if path not in checksums:
            out.dropped["file not in the build"] += 1
            continue
        body = {k: row.get(k) for k in ("schema_version", "timestamp_utc", "sensor_source", "event_type", "decision",
                                        "summary", "reason_codes", "motivator_hint", "cortex_routing_hint",
                                        "source_id_hash", "artifacts")}
        eid = "event:" + hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]
        if eid in seen:
            out.dropped["duplicate"] += 1
            continue
        seen.add(eid)
        at = utc(stamp)
        if at is None:
            out.dropped["unreadable"] += 1
            continue
        kind = kind_of(row)
        node = {**body, "id": eid, "kind": kind, "path": path,
                "weight": weight((now - at).total_seconds() / 86400, half_life),
                "stale": bool(row.get("file_checksum")) and row.get("file_checksum") != checksums[path]}
        out.nodes.append(node)
        out.edges.append({"source": eid, "target": path, "relation": "covers" if kind == "coverage" else "observed_on"})
        test_path = arts.get("test_path")
        if kind == "coverage" and test_path in checksums and test_path != path:
            out.edges.append({"source": test_path, "target": path, "relation": "covered_by", "event": eid})
        defs = spans(path) if spans is not None else []
        if kind == "coverage" and arts.get("lines"):
            out.edges += [{"source": eid, "target": sid, "relation": "covers"}
                          for sid in innermost(defs, _lines(arts["lines"]))]
        elif kind == "test" and arts.get("test"):
            sid = test_symbol(path, arts["test"])
            if any(d[0] == sid for d in defs):
                out.edges.append({"source": eid, "target": sid, "relation": "observed_on"})
    if len(out.nodes) > MAX_EVENTS:
        out.nodes.sort(key=lambda n: (n["timestamp_utc"], n["id"]), reverse=True)
        keep = {n["id"] for n in out.nodes[:MAX_EVENTS]}
        out.dropped["over the limit"] += len(out.nodes) - MAX_EVENTS
        out.nodes = [n for n in out.nodes if n["id"] in keep]
        out.edges = [e for e in out.edges if e.get("event", e["source"]) in keep]
    return out
