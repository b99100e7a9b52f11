"""What was used, not only what was returned: a follow-up on a file (``show``,
``fragment``, ``trace``, ``related``, ``callers``/``callees``, ``impact``, a web page
opened from a search) appends one line per file to ``logs/usage.jsonl``:

    {"timestamp", "session_id", "action", "path", "rank", "query", "search_at", "build_id"}

``rank`` is the file's place in the session's latest search (1-based), null when that
search did not return it; ``query`` is that search's text (redacted when it was logged) and
``search_at`` its time, both null when the session made no search within ``WINDOW``
seconds. The search is found in the tail of ``logs/search_history.jsonl`` (the last
``TAIL_BYTES``): one small read, never the whole log. Like every log, it is written only
while the search log is on, and a failure never fails the answer.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from oracl.core import telemetry
from oracl.core.config import search_log_enabled
from oracl.core.paths import utc

USAGE_LOG = "usage.jsonl"
SEARCH_LOG = "search_history.jsonl"
WINDOW = 1800  # seconds: a follow-up belongs to the session's search made at most this long before
TAIL_BYTES = 1 << 18
TIME = "%Y-%m-%dT%H:%M:%S.%fZ"
ACTIONS = frozenset({"show", "fragment", "trace", "related", "callers", "callees", "impact", "web", "apply"})


def now_text(now: datetime | None = None) -> str:
    return (now or datetime.now(UTC)).strftime(TIME)


def parse_time(text: object) -> datetime | None:
    """A log line's timestamp (``2026-12-03T18:00:00.000000Z``, or without the fraction)."""
    return utc(text)


def used_paths(action: str, answer: dict[str, Any]) -> list[str]:
    """The files an answer of ``action`` is about (what the asker went on to use)."""
    if action == "show":
        art = answer.get("artifact") or {}
        paths = [art.get("path")]
    elif action in ("fragment", "related"):
        paths = [answer.get("path")]
    elif action == "trace":
        paths = [answer.get("root")]
    elif action in ("callers", "callees"):
        paths = [t.get("path") for t in answer.get("targets") or [] if isinstance(t, dict)]
    elif action == "impact":
        paths = list(answer.get("changed") or [])
    else:
        paths = []
    return sorted({p for p in paths if isinstance(p, str) and p})


def last_search(vault_dir: Path, session: str, at: datetime) -> dict[str, Any] | None:
    """The latest search of ``session`` logged at most ``WINDOW`` seconds before ``at``,
    from the tail of the search log (None when there is none)."""
    path = vault_dir / "logs" / SEARCH_LOG
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            fh.seek(max(0, size - TAIL_BYTES))
            tail = fh.read(TAIL_BYTES)
    except OSError:
        return None
    lines = tail.split(b"\n")
    if size > TAIL_BYTES:
        lines = lines[1:]  # the first may be cut
    for line in reversed(lines):
        if session.encode() not in line:
            continue
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(row, dict) or row.get("session_id") != session:
            continue
        t = parse_time(row.get("timestamp"))
        if t is None or t > at + timedelta(seconds=1):
            continue
        return row if (at - t).total_seconds() <= WINDOW else None
    return None


def record(vault_dir: Path, root: Path, action: str, paths: list[str], build_id: str,
           now: datetime | None = None) -> int:
    """Append the follow-up lines of ``paths`` (how many were written; never raises)."""
    try:
        if not paths or action not in ACTIONS or not search_log_enabled(root):
            return 0
        at = now or datetime.now(UTC)
        sid = telemetry.session_id()
        search = last_search(vault_dir, sid, at)
        returned = [p for p in (search or {}).get("returned_paths") or [] if isinstance(p, str)]
        written = 0
        for path in paths:
            row = {"timestamp": now_text(at), "session_id": sid, "action": action, "path": path,
                   "rank": returned.index(path) + 1 if path in returned else None,
                   "query": str(search.get("query", ""))[:500] if search else None,
                   "search_at": search.get("timestamp") if search else None, "build_id": build_id}
            written += telemetry.append(vault_dir, USAGE_LOG, row)
        return written
    except Exception:  # noqa: BLE001 – a log never fails an answer
        return 0
