"""Telemetry of design §9: ``logs/search_history.jsonl`` and ``logs/agent_metrics.jsonl``.

Best effort by design: a read-only vault, a full disk or a missing folder never fails or
slows a search. Each line is one ``os.write`` on an ``O_APPEND`` descriptor, so concurrent
processes never interleave lines.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import orjson

from oracl.core.secrets import redact_tree

SESSION_ENV = "ORACL_SESSION"
USD_PER_CPU_SECOND = 0.00005  # estimated cost: CPU seconds × this rate (configurable by env)
_SESSION = os.environ.get(SESSION_ENV) or uuid.uuid4().hex[:16]


def session_id() -> str:
    return os.environ.get(SESSION_ENV) or _SESSION


def estimated_cost(cpu_seconds: float) -> float:
    try:
        rate = float(os.environ.get("ORACL_USD_PER_CPU_SECOND", USD_PER_CPU_SECOND))
    except ValueError:
        rate = USD_PER_CPU_SECOND
    return round(cpu_seconds * rate, 9)


def append(vault_dir: Path, name: str, row: dict[str, Any]) -> bool:
    """Append one JSON line to ``logs/<name>``, secrets redacted; False (never an
    exception) on failure."""
    try:
        row = redact_tree(row)
        logs = vault_dir / "logs"
        if not logs.is_dir():
            logs.mkdir(parents=True, exist_ok=True)
        fd = os.open(logs / name, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NONBLOCK, 0o644)
        try:
            os.write(fd, orjson.dumps(row, option=orjson.OPT_SORT_KEYS) + b"\n")
        finally:
            os.close(fd)
        return True
    except Exception:  # noqa: BLE001 – telemetry must never fail a search
        return False
