"""``oracl ingest``: reports (or events) → validated GraduatedEvents in the vault.

    events/events.jsonl    one event per line, appended (the build's phase 6 reads it)
    events/reports.json    the SHA-256 of every report taken: the same report twice adds nothing

The format is detected from the content (``detect``). Every path a report names is mapped
to a file of the latest build: as written (relative to the root), inside the root when
absolute, else by the longest suffix of whole path components (a report made on another
machine, as stack traces are); a path that maps to none, or to more than three, is
counted and skipped, never followed. Events carry names only: a failure's or a finding's
message is never kept, and every name is redacted (a secret in a test's name is its
marker). An event from the future (more than ``SKEW`` seconds ahead) or of an unknown
schema version is refused and counted.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from oracl.builder.sensors import coverage, junit, sarif
from oracl.builder.sensors.observe import Observation, ranges_text
from oracl.core.errors import IngestError, NoBuildError, OraclError
from oracl.core.locate import resolve
from oracl.core.parts import stat_files
from oracl.core.paths import utc
from oracl.core.records import (
    DECISIONS,
    EVENT_TYPES,
    EVENT_VERSION,
    MAX_EVENT_ITEMS,
    MAX_EVENT_TEXT,
    MOTIVATOR_HINTS,
    SENSOR_SOURCES,
    GraduatedEvent,
)
from oracl.core.seal import EVENT_KIND, seal_line, user_key
from oracl.core.secrets import redact_text
from oracl.core.vault import (
    EVENTS_FILE,
    STAT_FILE,
    Vault,
    append_fd,
    atomic_write,
    folder_lock,
    make_dirs,
)

EVENTS = EVENTS_FILE
REPORTS = "events/reports.json"
SKEW = 300  # seconds an event may be ahead of this machine's clock
_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$")
FORMATS = ("events", "junit", "sarif", "coverage-json", "lcov", "cobertura")


def detect(data: bytes) -> str:
    """The report's format from its first bytes: JSON lines of events, JUnit XML, SARIF,
    coverage.py JSON, LCOV or Cobertura XML (IngestError when none)."""
    head = data[:4096].lstrip()
    if head.startswith(b"<"):
        if b"<testsuite" in head or b"<testcase" in head:
            return "junit"
        if b"<coverage" in head:
            return "cobertura"
        raise IngestError("an XML report that is neither JUnit nor Cobertura")
    if head.startswith(b"{"):
        first = head.split(b"\n", 1)[0]
        if b'"schema_version"' in first:
            return "events"
        if b'"runs"' in head or b"sarif" in head.lower():
            return "sarif"
        if b'"files"' in head or b'"meta"' in head:
            return "coverage-json"
        raise IngestError("a JSON report that is neither events, SARIF nor coverage.py JSON")
    if head.startswith((b"TN:", b"SF:")):
        return "lcov"
    raise IngestError("unknown report format (JSON lines of events, JUnit XML, SARIF, coverage.py JSON, LCOV, "
                      "Cobertura)")


def validate(obj: object, now: datetime) -> GraduatedEvent:
    """A GraduatedEvent from JSON, every field checked against the frozen schema
    (``schema/graduated_event.schema.json``); IngestError naming the first bad field."""
    if not isinstance(obj, dict):
        raise IngestError("an event must be a JSON object")
    if obj.get("schema_version") != EVENT_VERSION:
        raise IngestError(f"unknown schema_version {str(obj.get('schema_version'))[:20]!r} (this ORACL reads "
                          f"{EVENT_VERSION})")
    extra = set(obj) - {f.name for f in fields(GraduatedEvent)}
    if extra:
        raise IngestError(f"unknown field {sorted(extra)[0]!r}")

    def text(key: str, allowed: tuple[str | None, ...] | None = None, optional: bool = False) -> Any:
        value = obj.get(key)
        if value is None and optional:
            return None
        if not isinstance(value, str) or len(value) > MAX_EVENT_TEXT:
            raise IngestError(f"{key} must be text of at most {MAX_EVENT_TEXT} characters")
        if allowed is not None and value not in allowed:
            raise IngestError(f"{key} must be one of {', '.join(a for a in allowed if a)}")
        return value

    stamp = text("timestamp_utc")
    if not _TIME.match(stamp):
        raise IngestError("timestamp_utc must be ISO 8601 in UTC, like 2026-12-03T18:00:00Z")
    at = utc(stamp)
    if at is None:
        raise IngestError("timestamp_utc must be ISO 8601 in UTC, like 2026-12-03T18:00:00Z")
    if at > now + timedelta(seconds=SKEW):
        raise IngestError(f"timestamp_utc {stamp} is in the future")
    codes = obj.get("reason_codes")
    if not isinstance(codes, list | tuple) or len(codes) > MAX_EVENT_ITEMS or not all(
            isinstance(c, str) and 0 < len(c) <= MAX_EVENT_TEXT for c in codes):
        raise IngestError(f"reason_codes must be a list of at most {MAX_EVENT_ITEMS} names")
    arts = obj.get("artifacts")
    if not isinstance(arts, dict) or len(arts) > MAX_EVENT_ITEMS or not all(
            isinstance(k, str) and isinstance(v, str) and 0 < len(k) <= MAX_EVENT_TEXT and len(v) <= MAX_EVENT_TEXT
            for k, v in arts.items()):
        raise IngestError(f"artifacts must map at most {MAX_EVENT_ITEMS} names to text")
    source_hash = text("source_id_hash", optional=True)
    if source_hash is not None and not re.fullmatch(r"[0-9a-f]{16}", source_hash):
        raise IngestError("source_id_hash must be 16 hexadecimal digits (SHA-256[:16]), never a raw identifier")
    return GraduatedEvent(
        EVENT_VERSION, stamp, text("sensor_source", SENSOR_SOURCES), text("event_type", EVENT_TYPES),
        text("decision", DECISIONS), redact_text(text("summary")), tuple(redact_text(c) for c in codes),
        text("motivator_hint", (*MOTIVATOR_HINTS, None), optional=True), _redacted(text("cortex_routing_hint", optional=True)),
        source_hash, {redact_text(k): redact_text(v) for k, v in arts.items()})


def _redacted(value: str | None) -> str | None:
    return None if value is None else redact_text(value)


@dataclass(slots=True)
class Files:
    """The latest build's files, and the mapping of a written path onto one of them."""

    root: Path
    paths: set[str]
    by_name: dict[str, list[str]] = field(default_factory=dict)
    checksums: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, vault: Vault) -> Files:
        try:
            latest = vault.read_latest()
            _, files = stat_files((vault.bundle(str(latest["build_id"])) / STAT_FILE).read_bytes(), vault.dir)
        except NoBuildError:
            raise
        except (OSError, OraclError, ValueError, KeyError, TypeError) as exc:
            raise NoBuildError(f"the latest build's file list is not readable ({exc}); build again") from None
        paths = set(files)
        by_name: dict[str, list[str]] = defaultdict(list)
        for p in paths:
            by_name[p.rsplit("/", 1)[-1]].append(p)
        checksums = {p: str(v[2]) for p, v in files.items() if isinstance(v, list) and len(v) > 2}
        return cls(vault.root, paths, dict(by_name), checksums)

    def map(self, written: str) -> str | None:
        text = written.replace("\\", "/").strip()
        if not text:
            return None
        if text.startswith("/"):
            try:
                rel = os.path.relpath(os.path.realpath(text), os.path.realpath(self.root))
                if not rel.startswith(".."):
                    text = rel
            except ValueError:
                pass
        text = text.removeprefix("./")
        if text in self.paths:
            return text
        if not os.path.splitext(text)[1]:  # a module path (a JUnit classname): try the usual suffixes
            for suffix in (".py", ".java", ".kt", ".js", ".ts", ".go", ".rs", ".rb", ".php", ".cs"):
                found = resolve(text + suffix, self.by_name)
                if found:
                    return found
            return None
        return resolve(text, self.by_name)


def _digest(source: bytes | Path) -> tuple[str, bytes]:
    """(SHA-256, the first 4 KiB) of a report, a file read in 1 MiB chunks."""
    if isinstance(source, bytes):
        return hashlib.sha256(source).hexdigest(), source[:4096]
    h = hashlib.sha256()
    try:
        with open(source, "rb") as fh:
            head = fh.read(4096)
            h.update(head)
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    except OSError as exc:
        raise IngestError(f"cannot read {source}: {exc.strerror}") from None
    return h.hexdigest(), head


def stored(e: GraduatedEvent, at: str, files: Files) -> dict[str, Any]:
    """The line stored for an event: the event, when it was taken, and the checksum its
    file had in the build it was mapped against (the build's phase 6 says when the file
    changed since)."""
    path = e.artifacts.get("path", "")
    return {**e.to_json(), "ingested_at": at, "file_checksum": files.checksums.get(path)}


def _test_path(name: str) -> str:
    """The file part of a test id: ``tests/test_app.py::TestX::test_y`` → ``tests/test_app.py``."""
    return name.split("::", 1)[0]


def events_of(obs: Iterable[Observation], files: Files, fmt: str, digest: str, at: str,
              skipped: Counter[str]) -> Iterator[GraduatedEvent]:
    source = digest[:16]
    for o in obs:
        path = files.map(o.path)
        if path is None:
            skipped["file not in the build"] += 1
            continue
        name = redact_text(o.name)[:MAX_EVENT_TEXT]
        arts = {"path": path, "report": fmt}
        if o.lines:
            arts["lines"] = ranges_text(o.lines)[:MAX_EVENT_TEXT]
        arts.update({k: redact_text(v)[:MAX_EVENT_TEXT] for k, v in o.extra.items() if v})
        if o.kind == "test":
            arts["test"] = name
            failed = o.outcome == "fail"
            decision = "fail" if failed else "go" if o.outcome == "skip" else "pass"  # a skipped test passed nothing
            event = GraduatedEvent(EVENT_VERSION, at, "oracode", "anomaly" if failed else "heartbeat",
                                   decision, f"test {name} {o.outcome} in {path}"[:MAX_EVENT_TEXT],
                                   ("test", f"test:{o.outcome}"), None, None, source, arts)
        elif o.kind == "finding":
            arts["rule"] = name
            event = GraduatedEvent(EVENT_VERSION, at, "oracode", "anomaly", "no-go",
                                   f"finding {name or 'unnamed'} ({o.outcome}) in {path}"[:MAX_EVENT_TEXT],
                                   ("finding", f"level:{o.outcome}") + ((f"rule:{name}"[:MAX_EVENT_TEXT],) if name else ()),
                                   None, None, source, arts)
        else:  # coverage
            if name:
                arts["test"] = name
                test_file = files.map(_test_path(o.name))
                if test_file is not None:
                    arts["test_path"] = test_file
            event = GraduatedEvent(EVENT_VERSION, at, "oracode", "heartbeat", "go",
                                   f"{name or 'the suite'} covers {path}"[:MAX_EVENT_TEXT], ("coverage",),
                                   None, None, source, arts)
        yield event


def event_lines(data: bytes | BinaryIO, files: Files, now: datetime, skipped: Counter[str]) -> Iterator[GraduatedEvent]:
    """JSON lines of GraduatedEvents (read line by line), each validated; its ``path``
    artifact mapped to the build's files (an event naming no file is kept as it is)."""
    source = io.BytesIO(data) if isinstance(data, bytes) else data
    for line in source:
        if not line.strip():
            continue
        try:
            e = validate(orjson.loads(line), now)
        except orjson.JSONDecodeError:
            skipped["unreadable line"] += 1
            continue
        except IngestError as exc:
            skipped[str(exc).split(" (")[0][:80]] += 1
            continue
        path = e.artifacts.get("path")
        mapped = files.map(path) if path else None
        if path and mapped is None:
            skipped["file not in the build"] += 1
            continue
        yield replace(e, artifacts={**e.artifacts, "path": mapped}) if mapped else e


def note_event(text: str, paths: list[str], files: Files, at: str, skipped: Counter[str]) -> list[GraduatedEvent]:
    """An operator's note on files (``oracl ingest --note TEXT PATH…``), redacted."""
    summary = " ".join(redact_text(text).split())[:MAX_EVENT_TEXT]
    if not summary:
        raise IngestError("the note is empty")
    out = []
    for written in paths:
        path = files.map(written)
        if path is None:
            skipped["file not in the build"] += 1
            continue
        digest = hashlib.sha256(f"{at}\0{summary}\0{path}".encode()).hexdigest()[:16]
        out.append(GraduatedEvent(EVENT_VERSION, at, "operator", "operator", "go", summary, ("note",), "Awareness",
                                  None, digest, {"path": path, "report": "note"}))
    return out


def ingest(root: Path, reports: list[tuple[str, bytes | Path]], note: tuple[str, list[str]] | None = None,
           now: datetime | None = None) -> dict[str, Any]:
    """Store the events of ``reports`` ((name, bytes or a file) each) and of ``note`` in the
    vault; a summary per report. A file is hashed in chunks and a coverage.py JSON file is
    parsed as a stream."""
    now = now or datetime.now(UTC)
    at = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    vault = Vault(root)
    files = Files.of(vault)
    with folder_lock(vault.dir / "events"):
        try:
            seen: dict[str, Any] = orjson.loads((vault.dir / REPORTS).read_bytes())
        except FileNotFoundError:
            seen = {}
        except (OSError, orjson.JSONDecodeError) as exc:
            raise IngestError(f"{REPORTS} is not readable JSON ({exc}); it was left as it is") from None
        summary = []
        spool = vault.dir / "events" / f".ingest-{os.getpid()}"
        writer = _Spool(spool, _size(vault.dir / EVENTS), user_key(), at, files)
        try:
            for name, source in reports:
                digest, head = _digest(source)
                skipped: Counter[str] = Counter()
                if digest in seen:
                    summary.append({"source": name, "format": seen[digest]["format"], "digest": digest[:16],
                                    "events": 0, "skipped": {"already ingested": 1}})
                    continue
                fmt = detect(head)
                with _opened(source) as fh:  # every format read as a stream: a report of any size
                    if fmt == "events":
                        events = event_lines(fh, files, now, skipped)
                    else:
                        parse = {"junit": junit.parse, "sarif": sarif.parse, "coverage-json": coverage.parse_json,
                                 "lcov": coverage.parse_lcov, "cobertura": coverage.parse_cobertura}[fmt]
                        events = events_of(parse(fh), files, fmt, digest, at, skipped)
                    n = writer.write(events, skipped)
                seen[digest] = {"format": fmt, "events": n, "source": Path(name).name[:200], "at": at}
                summary.append({"source": name, "format": fmt, "digest": digest[:16], "events": n,
                                "skipped": dict(sorted(skipped.items()))})
            if note is not None:
                skipped = Counter()
                n = writer.write(note_event(note[0], note[1], files, at, skipped), skipped)
                summary.append({"source": "--note", "format": "note", "digest": "", "events": n,
                                "skipped": dict(sorted(skipped.items()))})
            writer.close()
            if writer.count:  # every report read whole: only then does anything reach the vault
                with os.fdopen(append_fd(vault.dir / EVENTS), "ab") as out, open(spool, "rb") as fh:
                    for chunk in iter(lambda: fh.read(1 << 20), b""):  # under the lock: nobody appends meanwhile
                        out.write(chunk)
        finally:
            writer.close()
            spool.unlink(missing_ok=True)
        atomic_write(vault.dir / REPORTS, orjson.dumps(seen, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2))
    return {"reports": summary, "events": writer.count, "file": str(vault.dir / EVENTS)}


MAX_EVENTS_BYTES = 256 << 20  # events/events.jsonl stops growing here; oracl ingest says so
OVER = "over the vault's limit of events (events.jsonl at {mib} MiB; remove it to start again)"


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


@contextlib.contextmanager
def _opened(source: bytes | Path) -> Iterator[BinaryIO]:
    if isinstance(source, bytes):
        yield io.BytesIO(source)
        return
    try:
        fh = open(source, "rb")  # noqa: SIM115 – closed below
    except OSError as exc:
        raise IngestError(f"cannot read {source}: {exc.strerror}") from None
    with fh:
        yield fh


class _Spool:
    """The sealed lines of one ``oracl ingest``, written as the events come (a few in
    memory at a time) to a file beside the events; what would take ``events.jsonl`` past
    ``MAX_EVENTS_BYTES`` is counted, not written."""

    def __init__(self, path: Path, stored: int, key: bytes, at: str, files: Files) -> None:
        make_dirs(path.parent)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        self.fh: BinaryIO | None = os.fdopen(fd, "wb")
        self.room = MAX_EVENTS_BYTES - stored
        self.key, self.at, self.files = key, at, files
        self.count = 0

    def write(self, events: Iterable[GraduatedEvent], skipped: Counter[str]) -> int:
        assert self.fh is not None
        n = 0
        for e in events:
            line = seal_line(self.key, EVENT_KIND, orjson.dumps(stored(e, self.at, self.files),
                                                                 option=orjson.OPT_SORT_KEYS)) + b"\n"
            if len(line) > self.room:
                skipped[OVER.format(mib=MAX_EVENTS_BYTES >> 20)] += 1
                continue
            self.fh.write(line)
            self.room -= len(line)
            n += 1
        self.count += n
        return n

    def close(self) -> None:
        if self.fh is not None:
            self.fh.close()
            self.fh = None


def sealed_lines(rows: list[dict[str, Any]]) -> bytes:
    """The stored lines of ``rows``, each sealed with this user's key (core.seal): phase 6
    takes no line that came with the tree."""
    key = user_key()
    return b"".join(seal_line(key, EVENT_KIND, orjson.dumps(r, option=orjson.OPT_SORT_KEYS)) + b"\n" for r in rows)


def record(root: Path, events: list[GraduatedEvent], now: datetime | None = None) -> int:
    """Append events the memory makes itself (an agent's mutation applied or refused, by
    ``oracl apply``) to the vault's events, under the ingest lock; how many. Each was built
    names only and is validated like an ingested one."""
    if not events:
        return 0
    now = now or datetime.now(UTC)
    at = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    vault = Vault(root)
    with folder_lock(vault.dir / "events"):
        try:
            files = Files.of(vault)
        except NoBuildError:
            files = Files(vault.root, set())
        rows = [stored(validate(e.to_json(), now), at, files) for e in events]
        with os.fdopen(append_fd(vault.dir / EVENTS), "ab") as fh:
            fh.write(sealed_lines(rows))
    return len(rows)
