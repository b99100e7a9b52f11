"""SARIF 2.1.0 (ruff, semgrep, CodeQL, clippy-sarif): one finding observation per result
location: the rule, its level and the lines; the message's text is never kept."""

from __future__ import annotations

import orjson

from oracl.builder.sensors.observe import Observation
from oracl.core.errors import IngestError

LEVELS = ("error", "warning", "note", "none")


def parse(data: bytes) -> list[Observation]:
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise IngestError(f"SARIF report is not JSON: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("runs"), list):
        raise IngestError("SARIF report has no runs")
    out = []
    for run in doc["runs"]:
        if not isinstance(run, dict):
            continue
        tool = str(((run.get("tool") or {}).get("driver") or {}).get("name") or "")[:100]
        for result in run.get("results") or []:
            if not isinstance(result, dict):
                continue
            rule = str(result.get("ruleId") or (result.get("rule") or {}).get("id") or "")[:200]
            level = result.get("level") if result.get("level") in LEVELS else "warning"
            for loc in result.get("locations") or []:
                phys = (loc or {}).get("physicalLocation") or {}
                uri = str((phys.get("artifactLocation") or {}).get("uri") or "")
                if uri.startswith("file://"):
                    uri = uri[len("file://"):]
                region = phys.get("region") or {}
                start = region.get("startLine")
                end = region.get("endLine") or start
                lines = ((int(start), int(end)),) if isinstance(start, int) and isinstance(end, int) and 0 < start <= end else ()
                if uri:
                    out.append(Observation("finding", uri, rule, str(level), lines, {"tool": tool} if tool else {}))
    return out
