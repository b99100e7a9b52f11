"""SARIF 2.1.0 (ruff, semgrep, CodeQL, clippy-sarif): one finding observation per result
location: the rule, its level and the lines; the message's text is never kept.

Streamed (``ijson``): each result is built, reported and dropped, so a report of any size
costs the memory of one result (issue 48: a 500 MB report took 4.4 GB when parsed whole).
A run's tool name is taken where it stands before the run's results (SARIF writers put
``tool`` first)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any, BinaryIO

import ijson

from oracl.builder.sensors.observe import Observation
from oracl.core.errors import IngestError

LEVELS = ("error", "warning", "note", "none")
RESULT = "runs.item.results.item"


def parse(data: bytes | BinaryIO) -> Iterator[Observation]:
    source = io.BytesIO(data) if isinstance(data, bytes) else data
    runs = False
    tool = ""
    builder: Any = None
    try:
        for prefix, event, value in ijson.parse(source, use_float=True):
            if builder is not None:
                builder.event(event, value)
                if prefix == RESULT and event in ("end_map", "end_array"):
                    if isinstance(builder.value, dict):
                        yield from _observations(builder.value, tool)
                    builder = None
                continue
            if prefix == RESULT and event in ("start_map", "start_array"):
                builder = ijson.ObjectBuilder()
                builder.event(event, value)
            elif prefix == "runs" and event == "start_array":
                runs = True
            elif prefix == "runs.item" and event == "start_map":
                tool = ""
            elif prefix == "runs.item.tool.driver.name" and event in ("string", "number"):
                tool = str(value)[:100]
    except ijson.JSONError as exc:
        raise IngestError(f"SARIF report is not JSON: {exc}") from None
    if not runs:
        raise IngestError("SARIF report has no runs")


def _observations(result: dict[str, Any], tool: str) -> Iterator[Observation]:
    rule = str(result.get("ruleId") or (result.get("rule") or {}).get("id") or "")[:200]
    level = result.get("level") if result.get("level") in LEVELS else "warning"
    for loc in result.get("locations") or []:
        phys = (loc or {}).get("physicalLocation") or {} if isinstance(loc, dict) else {}
        uri = str((phys.get("artifactLocation") or {}).get("uri") or "")
        if uri.startswith("file://"):
            uri = uri[len("file://"):]
        region = phys.get("region") or {}
        start = region.get("startLine")
        end = region.get("endLine") or start
        lines = ((int(start), int(end)),) if isinstance(start, int) and isinstance(end, int) and 0 < start <= end else ()
        if uri:
            yield Observation("finding", uri, rule, str(level), lines, {"tool": tool} if tool else {})
