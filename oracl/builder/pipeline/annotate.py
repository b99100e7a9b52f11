"""Phase 1c: artifact records with their tags (path tags, ``ast_*`` tags, parse status,
then the learned-tag overlay), and the learned edges of the overlay producer.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import orjson

from oracl.builder.extractors.providers import OVERLAY
from oracl.builder.pipeline.tags import path_tags
from oracl.core.config import Config
from oracl.core.errors import ConfigError
from oracl.core.paths import iso
from oracl.core.records import ArtifactRecord, Edge, FileFacts
from oracl.core.secrets import redact_text

HELD_BACK = frozenset({"vendored", "generated", "minified", "lockfile"})  # recorded, not parsed or indexed
STRIPPED_LEARNED_KEYS = frozenset({"confidence", "source"})


def make_record(f: FileFacts, cfg: Config, learned: Mapping[str, object] | None = None) -> ArtifactRecord:
    tags = path_tags(f.path, cfg)
    tags.update(f.ast_tags)
    if f.language:
        tags["language"] = f.language
    if f.parse_status in HELD_BACK:
        tags["held_back"] = f.parse_status
    elif f.parse_status != "ok":
        tags["parse_error"] = f.parse_status
    if f.parse_status != "ok" and f.error:  # why: "YAML: … on line 3", "invalid UTF-8 at byte 7"
        tags["parse_reason"] = redact_text(f.error)[:200]
    review, savings = "draft", 0.0
    for key, value in (learned or {}).items():
        if key in STRIPPED_LEARNED_KEYS:
            continue
        if key == "review_status" and value in ("draft", "reviewed", "approved"):
            review = str(value)
        elif key == "estimated_savings" and isinstance(value, int | float):
            savings = float(value)
        elif isinstance(value, str | int | float | bool | list):
            tags[key] = value
    if f.secrets:  # after the overlay: a learned tag never hides a secret
        tags["secrets"] = sorted({rule for rule, _ in f.secrets})
    if f.key_material or f.parse_status == "secret_file":
        tags["sensitive"] = "key_material"
    fmt = str(tags.get("format", ""))
    return ArtifactRecord(
        artifact_id=f.artifact_id, checksum=f.checksum, path=f.path, file_type=fmt or "none",
        size_bytes=f.size_bytes, created_at=iso(f.ctime_ns), modified_at=iso(f.mtime_ns),
        tags=tags, review_status=review, estimated_savings=savings)


def _load_json(path: Path) -> object:
    try:
        return orjson.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, orjson.JSONDecodeError) as exc:
        raise ConfigError(f"{path.name} is not readable JSON: {exc}") from None


def load_learned_tags(vault: Path) -> dict[str, dict[str, object]]:
    """``learned_tags.json``: ``{path: {tag: value, "confidence": …, "source": …}}``."""
    data = _load_json(vault / "learned_tags.json")
    if data is None:
        return {}
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise ConfigError("learned_tags.json must map each path to an object of tags")
    return data


def load_learned_edges(vault: Path) -> list[Edge]:
    """``learned_edges.json``: a list of ``{"source", "target", "confidence"}`` (paths)."""
    data = _load_json(vault / "learned_edges.json")
    if data is None:
        return []
    if isinstance(data, dict):
        data = data.get("edges", [])
    if not isinstance(data, list):
        raise ConfigError("learned_edges.json must be a list of edges")
    out = []
    for row in data:
        try:
            conf = round(float(row.get("confidence", 0.5)), 9)
            if not 0 < conf <= 1:
                raise ValueError
            out.append(Edge(str(row["source"]), str(row["target"]), "learned_association", conf,
                            "", "", OVERLAY, "learned"))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise ConfigError("each learned edge needs source, target and a confidence in (0, 1]") from None
    return out
