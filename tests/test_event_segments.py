"""Phase 6 kept between builds (issue 33): each file's events are made once and reused by
their bytes; a selective rebuild makes again only what changed, and gives the bytes a build
from scratch gives."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from oracl.builder import event_segments
from oracl.builder.event_segments import join, make_events
from oracl.builder.orchestrator import build
from oracl.builder.sensors.ingest import ingest, sealed_lines
from oracl.core.export import canonical_bytes
from oracl.core.vault import EVENTS_BUNDLE_FILE, EVENTS_INDEX_FILE
from tests.conftest import export_of

from .conftest import write_tree
from .test_sensors import COVERAGE, FILES, JUNIT, NOW, event


def cov(path: str, test_path: str, lines: str, at: str = "2026-12-03T10:00:00Z", checksum: str = "c1") -> dict:
    return {**event(timestamp_utc=at, sensor_source="oracode", event_type="heartbeat", decision="pass",
                    summary=f"{test_path}::t runs {path}", reason_codes=["coverage"],
                    artifacts={"path": path, "test_path": test_path, "test": f"{test_path}::t", "lines": lines}),
            "file_checksum": checksum}


DEFS = {"a.py": [("a.py#f", 1, 3), ("a.py#g", 5, 9)], "b.py": [("b.py#h", 1, 4)]}


def spans(p: str) -> list[tuple[str, int, int]]:
    return DEFS.get(p, [])


def write(path: Path, rows: list[dict], mode: str = "wb") -> None:
    with open(path, mode) as fh:
        fh.write(sealed_lines(rows))  # as oracl ingest stores them


def bundle_of(tmp: Path, name: str, out: event_segments.EventsOut) -> Path:
    b = tmp / name
    b.mkdir()
    if out.section is not None:
        (b / EVENTS_BUNDLE_FILE).write_bytes(out.section)
    assert out.index is not None
    (b / EVENTS_INDEX_FILE).write_bytes(out.index)
    return b


def test_join_gives_canonical_json_and_where_each_group_sits() -> None:
    groups = {"zé.py": b'{"edges":[],"nodes":[{"id":"e2"}]}', "a b.py": b'{"edges":[],"nodes":[{"id":"e1"}]}',
              'q"uote.py': b'{"edges":[],"nodes":[]}'}
    data, where = join(groups)
    assert data == canonical_bytes(orjson.loads(data))
    assert {p: data[a:b] for p, (a, b) in where.items()} == groups
    assert join({}) == (b'{"files":{}}', {})


def test_a_rebuild_makes_again_only_what_changed_and_equals_a_build_from_scratch(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    rows = [cov("a.py", "t1.py", "1-2"), cov("a.py", "t2.py", "6"), cov("b.py", "t1.py", "2"),
            cov("c.py", "t1.py", "1"), {"artifacts": 7}]
    write(events, rows)
    sums = {"a.py": "c1", "b.py": "c1", "c.py": "c1", "t1.py": "x"}
    first = make_events(events, None, sums, spans)
    assert (first.made, first.reused) == (3, 0)
    assert first.header == {"count": 4, "half_life_days": 30.0, "by_decision": {"pass": 4}, "by_kind": {"coverage": 4},
                            "stale": 0, "dropped": {"unreadable": 1}, "newest_coverage": "2026-12-03T10:00:00Z"}
    prev = bundle_of(tmp_path, "b1", first)
    # nothing changed: every group is the previous bytes
    same = make_events(events, prev, sums, spans)
    assert (same.made, same.reused, same.section, same.header) == (0, 3, first.section, first.header)
    # b.py changed (its events turn stale), t2.py arrives (a.py's covered_by edge), one event appended on c.py
    write(events, [cov("c.py", "t1.py", "1", at="2026-12-03T11:00:00Z")], mode="ab")
    sums2 = {**sums, "b.py": "c2", "t2.py": "y"}
    second = make_events(events, prev, sums2, spans)
    scratch = make_events(events, None, sums2, spans)
    assert (second.made, second.reused) == (3, 0)  # a.py (t2.py came), b.py (changed), c.py (an event)
    assert second.section == scratch.section and second.header == scratch.header
    assert second.header["stale"] == 1 and second.header["count"] == 5
    doc = orjson.loads(second.section)
    assert ("t2.py", "covered_by", "a.py") in {(e["source"], e["relation"], e["target"])
                                               for e in doc["files"]["a.py"]["edges"]}
    # one more build: only c.py gains an event, a.py and b.py are reused by their bytes
    prev2 = bundle_of(tmp_path, "b2", second)
    write(events, [cov("c.py", "t1.py", "3", at="2026-12-03T11:30:00Z")], mode="ab")
    third = make_events(events, prev2, sums2, spans)
    assert (third.made, third.reused) == (1, 2)
    assert third.section == make_events(events, None, sums2, spans).section


def test_a_rewritten_events_file_makes_every_group_again(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    write(events, [cov("a.py", "t1.py", "1"), cov("b.py", "t1.py", "1")])
    sums = {"a.py": "c1", "b.py": "c1"}
    prev = bundle_of(tmp_path, "b1", make_events(events, None, sums, spans))
    write(events, [cov("a.py", "t9.py", "1"), cov("b.py", "t1.py", "1")])  # same length, other bytes
    again = make_events(events, prev, sums, spans)
    assert (again.made, again.reused) == (2, 0)
    assert "t9.py::t" in again.section.decode()
    # a damaged index is no index
    (prev / EVENTS_INDEX_FILE).write_bytes(b"{not json")
    assert make_events(events, prev, sums, spans).made == 2


def test_a_line_still_being_written_waits_for_the_next_build(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    whole = sealed_lines([cov("b.py", "t1.py", "1")]).rstrip(b"\n")
    write(events, [cov("a.py", "t1.py", "1")])
    with open(events, "ab") as fh:
        fh.write(whole[:40])  # an ingest mid-append
    sums = {"a.py": "c1", "b.py": "c1"}
    first = make_events(events, None, sums, spans)
    assert first.header is not None and (first.header["count"], first.header["dropped"]) == (1, {})
    prev = bundle_of(tmp_path, "b1", first)
    with open(events, "ab") as fh:
        fh.write(whole[40:] + b"\n")
    second = make_events(events, prev, sums, spans)
    assert second.header is not None and (second.header["count"], second.header["dropped"]) == (2, {})
    assert (second.made, second.reused) == (1, 1)


def test_over_the_limit_the_newest_are_kept_and_the_next_build_starts_again(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(event_segments, "MAX_EVENTS", 2)
    events = tmp_path / "events.jsonl"
    write(events, [cov("a.py", "t1.py", "1", at="2026-12-01T00:00:00Z"), cov("b.py", "t1.py", "1",
                   at="2026-12-02T00:00:00Z"), cov("a.py", "t1.py", "2", at="2026-12-03T00:00:00Z")])
    sums = {"a.py": "c1", "b.py": "c1"}
    out = make_events(events, None, sums, spans)
    assert out.header is not None and out.header["count"] == 2 and out.header["dropped"] == {"over the limit": 1}
    doc = orjson.loads(out.section)
    assert sorted(n["timestamp_utc"][:10] for g in doc["files"].values() for n in g["nodes"]) == [
        "2026-12-02", "2026-12-03"]
    prev = bundle_of(tmp_path, "b1", out)
    assert make_events(events, prev, sums, spans).made == 2  # a capped index is never reused


def test_a_selective_build_of_a_real_tree_equals_a_full_one(tmp_path: Path) -> None:
    from oracl.read.memory import Memory

    root = write_tree(tmp_path / "repo", FILES)
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    ingest(root, [("junit.xml", JUNIT), ("coverage.json", COVERAGE)], now=NOW)
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    (root / "pkg" / "util.py").write_text(FILES["pkg/util.py"] + "\n# edited\n")
    report = build(root, buffer_pool_bytes=64 << 20, workers=1)
    assert report.mode.startswith("incremental")
    selective = (Path(report.bundle_path) / EVENTS_BUNDLE_FILE).read_bytes()
    head = orjson.loads(export_of(root))["schema"]["events"]
    full = build(root, buffer_pool_bytes=64 << 20, workers=1, full=True)
    assert (Path(full.bundle_path) / EVENTS_BUNDLE_FILE).read_bytes() == selective
    doc = orjson.loads(export_of(root))
    assert doc["schema"]["events"] == head and head["stale"] == 1  # pkg/util.py's coverage, recorded before the edit
    assert canonical_bytes(doc["events"]) == selective
    with Memory.open(root) as mem:
        snap, _ = mem.snapshot()
        some = snap.events_on(["pkg/app.py", "nowhere.py"])
        assert list(some) == ["pkg/app.py"] and some["pkg/app.py"] == snap.events()["pkg/app.py"]
        # the weight is the event's age now, against the header's half-life (ingested at NOW)
        from datetime import UTC, datetime

        from oracl.core.records import event_weight
        age = (datetime.now(UTC) - NOW).total_seconds() / 86400
        w = some["pkg/app.py"][0]["weight"]
        assert event_weight(age + 1 / 24) <= w <= event_weight(age - 1 / 24)
