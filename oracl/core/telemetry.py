"""Telemetry of design §9: ``logs/search_history.jsonl``, ``logs/usage.jsonl`` and
``logs/agent_metrics.jsonl``.

Best effort by design: a read-only vault, a full disk or a missing folder never fails or
slows a search. Each line is one ``os.write`` on an ``O_APPEND`` descriptor, so concurrent
processes never interleave lines. A log is bounded: past ``max_log_bytes()`` it is
renamed to ``NAME.1`` (``.1`` to ``.2`` … up to ``KEEP`` generations, the oldest dropped)
under an exclusive lock, so two processes never rotate one file twice. ``lines`` reads
every generation, oldest first, one bounded line at a time.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import orjson

from oracl.core.secrets import redact_tree

SESSION_ENV = "ORACL_SESSION"
LOG_BYTES_ENV = "ORACL_LOG_MAX_BYTES"
USD_PER_CPU_SECOND = 0.00005  # estimated cost: CPU seconds × this rate (configurable by env)
MAX_LOG_BYTES = 32 << 20  # one generation of a log; KEEP of them are kept besides the live one
KEEP = 3
MAX_LINE = 1 << 20  # a longer line is skipped whole when read back (nothing we write is near it)
_SESSION = os.environ.get(SESSION_ENV) or uuid.uuid4().hex[:16]
_BOUND: ContextVar[str | None] = ContextVar("oracl_session", default=None)


def session_id() -> str:
    """The session a log line belongs to: the one bound by ``session()`` (a Memory's, the
    CLI's terminal), else ``ORACL_SESSION``, else this process's."""
    return _BOUND.get() or os.environ.get(SESSION_ENV) or _SESSION


@contextlib.contextmanager
def session(sid: str | None) -> Iterator[None]:
    """Log under ``sid`` inside the block (nothing changes when it is None)."""
    if not sid:
        yield
        return
    token = _BOUND.set(sid)
    try:
        yield
    finally:
        _BOUND.reset(token)


def estimated_cost(cpu_seconds: float) -> float:
    try:
        rate = float(os.environ.get("ORACL_USD_PER_CPU_SECOND", USD_PER_CPU_SECOND))
    except ValueError:
        rate = USD_PER_CPU_SECOND
    return round(cpu_seconds * rate, 9)


def max_log_bytes() -> int:
    """The size past which a log is rotated (``ORACL_LOG_MAX_BYTES``, at least 1 KiB)."""
    try:
        return max(1024, int(os.environ.get(LOG_BYTES_ENV, MAX_LOG_BYTES)))
    except ValueError:
        return MAX_LOG_BYTES


def _rotate(path: Path, limit: int) -> None:
    """Shift ``path`` to ``path.1`` (and older ones up) under the folder's lock, when it is
    still over ``limit`` once the lock is held (another process may have rotated it)."""
    fd = os.open(path.parent / ".rotate.lock", os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            if os.stat(path).st_size <= limit:
                return
        except FileNotFoundError:
            return
        for n in range(KEEP - 1, 0, -1):
            older = path.with_name(f"{path.name}.{n}")
            if older.exists():
                os.replace(older, path.with_name(f"{path.name}.{n + 1}"))
        os.replace(path, path.with_name(f"{path.name}.1"))
    finally:
        os.close(fd)  # releases the lock


def append(vault_dir: Path, name: str, row: dict[str, Any]) -> bool:
    """Append one JSON line to ``logs/<name>``, secrets redacted; False (never an
    exception) on failure."""
    try:
        row = redact_tree(row)
        from oracl.core.vault import append_fd, make_dirs

        logs = vault_dir / "logs"
        make_dirs(logs)  # a link to elsewhere is refused before anything is written
        path = logs / name
        limit = max_log_bytes()
        try:
            if os.stat(path).st_size > limit:
                _rotate(path, limit)
        except FileNotFoundError:
            pass
        fd = append_fd(path)  # a link or a FIFO there is never written through
        try:
            os.write(fd, orjson.dumps(row, option=orjson.OPT_SORT_KEYS) + b"\n")
        finally:
            os.close(fd)
        return True
    except Exception:  # noqa: BLE001 – telemetry must never fail a search
        return False


class LineCount:
    """What ``lines`` read: rows, and lines skipped as unreadable (bad JSON, not an object,
    cut off, or longer than ``MAX_LINE``); ``end``: the offset just after the last whole
    line (a last line still being written is not read: ``partial``)."""

    def __init__(self) -> None:
        self.rows = 0
        self.bad = 0
        self.end = 0
        self.partial = 0
        self.unsealed = 0  # lines without this user's seal (rows_at's ``sealed``): never taken


def lines(vault_dir: Path, name: str, count: LineCount | None = None) -> Iterator[dict[str, Any]]:
    """The rows of ``logs/<name>``, every kept generation, oldest first. Streamed: one line
    of at most ``MAX_LINE`` bytes in memory at a time, whatever the log's size."""
    count = count if count is not None else LineCount()
    logs = vault_dir / "logs"
    for n in range(KEEP, -1, -1):
        yield from rows(logs / (f"{name}.{n}" if n else name), count)


def rows(path: Path, count: LineCount | None = None) -> Iterator[dict[str, Any]]:
    """The JSON-object lines of one file (none when it is missing), streamed and bounded
    as ``lines`` says; what cannot be read is counted in ``count``."""
    count = count if count is not None else LineCount()
    for _, _, row in rows_at(path, 0, count):
        yield row
    count.bad += count.partial


def _open_regular(path: Path) -> Any:
    """A vault log opened for reading only when it is a regular file (``vault.open_regular``:
    a vault that came with the tree can hold a link to /dev/zero or a FIFO); None otherwise."""
    from oracl.core.vault import open_regular

    try:
        return open_regular(path)
    except OSError:
        return None


def rows_at(path: Path, start: int = 0, count: LineCount | None = None,
            sealed: Callable[[bytes], bool] | None = None) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """(offset, length, row) of the JSON-object lines of one file from byte ``start`` on,
    streamed and bounded as ``rows``; a last line without its newline is left unread
    (``count.partial``), and ``count.end`` says where the next read starts."""
    count = count if count is not None else LineCount()
    count.end = start
    fh = _open_regular(path)
    if fh is None:
        return
    with fh:
        fh.seek(start)
        at = start
        while True:
            line = fh.readline(MAX_LINE + 1)
            if not line:
                break
            here, at = at, at + len(line)
            if not line.endswith(b"\n"):
                if len(line) <= MAX_LINE and not fh.peek(1):  # the writer is still on it: next time
                    count.partial += 1
                    break
                count.bad += 1
                while line and not line.endswith(b"\n"):  # the rest of an over-long line
                    line = fh.readline(MAX_LINE + 1)
                    at += len(line)
                count.end = at
                continue
            count.end = at
            if len(line) > MAX_LINE:
                count.bad += 1
                continue
            if sealed is not None and not sealed(line):
                count.unsealed += 1
                continue
            try:
                row = orjson.loads(line)
            except orjson.JSONDecodeError:
                count.bad += 1
                continue
            if not isinstance(row, dict):
                count.bad += 1
                continue
            count.rows += 1
            yield here, len(line), row


def rows_of(path: Path, spans: Iterable[tuple[int, int]],
            sealed: Callable[[bytes], bool] | None = None) -> Iterator[dict[str, Any] | None]:
    """The rows at the given (offset, length) spans of one file (``rows_at`` said where):
    None for a span that no longer holds a JSON object (or fails ``sealed``)."""
    fh = _open_regular(path)
    if fh is None:
        return
    with fh:
        for off, length in spans:
            fh.seek(off)
            raw = fh.read(length)
            if sealed is not None and not sealed(raw):
                yield None
                continue
            try:
                row = orjson.loads(raw)
            except orjson.JSONDecodeError:
                row = None
            yield row if isinstance(row, dict) else None
