"""Phase 6: sensor edge ingestion (design §5d). The events ``oracl ingest`` stored become
event nodes of the build, each with edges to the files it names:

* ``observed_on`` → the file a test result, finding or note is about (and the test's own
  symbol, when the report names a test the file defines);
* ``covers`` → the file a coverage event says ran, and the innermost symbols holding the
  lines it ran (at most ``MAX_SYMBOLS``); ``covered_by`` from a covering test's file to it.

Symbol ids are the symbol graph's (``path#qualified``).

Events are made **per file**: the events on one file depend only on their rows, that file
(its checksum and definitions) and whether the test files they name are in the build, so a
selective rebuild makes again only the groups of files that changed or gained events and
keeps the others' bytes (``oracl.builder.event_segments``). An event on a file whose
checksum is no longer the one it was mapped against is kept and marked ``stale`` (its
lines may have moved). Events on files the build does not hold are dropped and counted.
An event's weight, ``0.5 ** (age_days / half_life)``, is computed when it is read
(``core.records.event_weight``; the half-life is in the header), so a build's output does
not depend on the time it ran. Pure: rows in, rows out.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from oracl.core.export import canonical_bytes
from oracl.core.paths import utc

MAX_EVENTS = 500_000  # the newest kept when a vault holds more
MAX_SYMBOLS = 20      # symbols one event's lines can reach through edges
Spans = Callable[[str], list[tuple[str, int, int]]]  # path → (symbol id, start, end) of its definitions
BODY = ("schema_version", "timestamp_utc", "sensor_source", "event_type", "decision", "summary", "reason_codes",
        "motivator_hint", "cortex_routing_hint", "source_id_hash", "artifacts")


@dataclass(slots=True)
class Events:
    """Phase 6's output: the event nodes and edges of one file (a group) or of a build."""

    nodes: list[dict[str, Any]] = field(default_factory=list)
    edges: list[dict[str, Any]] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)

    def summary(self) -> dict[str, Any]:
        """What the header counts of these events (summable over groups: ``add_summary``)."""
        coverage = [n["timestamp_utc"] for n in self.nodes if n["kind"] == "coverage"]
        return {"count": len(self.nodes), "by_decision": dict(Counter(n["decision"] for n in self.nodes)),
                "by_kind": dict(Counter(n["kind"] for n in self.nodes)),
                "stale": sum(1 for n in self.nodes if n["stale"]), "dropped": dict(self.dropped),
                "newest_coverage": max(coverage, default=None)}

    def group_bytes(self) -> bytes:
        """The canonical bytes of this group's ``{"edges": […], "nodes": […]}`` (sorted:
        two builds of the same events are equal)."""
        return canonical_bytes({"edges": sorted(self.edges, key=lambda e: (e["source"], e["relation"], e["target"])),
                                "nodes": sorted(self.nodes, key=lambda n: n["id"])})


def add_summary(total: dict[str, Any], part: dict[str, Any]) -> dict[str, Any]:
    """``total`` with one group's summary added (counts summed, the newest coverage kept)."""
    out = {"count": total.get("count", 0) + part["count"], "stale": total.get("stale", 0) + part["stale"]}
    for key in ("by_decision", "by_kind", "dropped"):
        c = Counter(total.get(key) or {})
        c.update(part.get(key) or {})
        out[key] = dict(c)
    newest = [t for t in (total.get("newest_coverage"), part.get("newest_coverage")) if t]
    out["newest_coverage"] = max(newest, default=None)
    return out


def header(total: dict[str, Any], half_life: float) -> dict[str, Any]:
    """The export header's ``events`` entry of a build's summed summary."""
    return {"count": total.get("count", 0), "half_life_days": half_life,
            "by_decision": dict(sorted((total.get("by_decision") or {}).items())),
            "by_kind": dict(sorted((total.get("by_kind") or {}).items())), "stale": total.get("stale", 0),
            "dropped": dict(sorted((total.get("dropped") or {}).items())),
            "newest_coverage": total.get("newest_coverage")}


def kind_of(row: dict[str, Any]) -> str:
    codes = row.get("reason_codes") or []
    for k in ("coverage", "test", "finding", "note"):
        if k in codes:
            return k
    return "event"


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


def event_phase(rows: Iterable[dict[str, Any]], checksums: Mapping[str, str], spans: Spans | None = None) -> Events:
    """Event nodes and edges from the stored rows, against the build's files (path →
    checksum) and their definitions (``spans``, asked only for the files events name)."""
    out = Events()
    seen: set[str] = set()
    for row in rows:
        arts = row.get("artifacts")
        if not isinstance(arts, dict) or not isinstance(row.get("timestamp_utc"), str):
            out.dropped["unreadable"] += 1
            continue
        path = arts.get("path")
        if not isinstance(path, str) or path not in checksums:
            out.dropped["file not in the build"] += 1
            continue
        body = {k: row.get(k) for k in BODY}
        eid = "event:" + hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]
        if eid in seen:
            out.dropped["duplicate"] += 1
            continue
        seen.add(eid)
        if utc(row["timestamp_utc"]) is None:
            out.dropped["unreadable"] += 1
            continue
        kind = kind_of(row)
        node = {**body, "id": eid, "kind": kind, "path": path,
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
    return out


def newest(nodes: list[dict[str, Any]], limit: int = MAX_EVENTS) -> set[str]:
    """The ids of the ``limit`` newest nodes (by time, then id): what a vault holding more keeps."""
    nodes = sorted(nodes, key=lambda n: (n["timestamp_utc"], n["id"]), reverse=True)
    return {n["id"] for n in nodes[:limit]}
