"""Phase 1c: artifact records with their tags (path tags, ``ast_*`` tags, parse status,
then the learned-tag overlay), and the learned data of the vault (design §9, "Learning"):
the edges of the overlay producer, the learned query terms, and what the export's header
records of them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Container, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from oracl.builder.extractors.providers import OVERLAY
from oracl.builder.pipeline.tags import folder_domain, path_tags
from oracl.core.config import Config
from oracl.core.errors import LearnedDataError
from oracl.core.paths import iso
from oracl.core.records import ArtifactRecord, Edge, FileFacts
from oracl.core.seal import read_sealed
from oracl.core.secrets import redact_text
from oracl.core.vault import LEARN_DECISIONS as DECISIONS
from oracl.core.vault import LEARNED_KIND, json_or_none, read_control

HELD_BACK = frozenset({"vendored", "generated", "minified", "lockfile"})  # recorded, not parsed or indexed
STRIPPED_LEARNED_KEYS = frozenset({"confidence", "source", "sessions", "proposal"})
LEARNED_FILES = {"edges": "learned_edges.json", "terms": "learned_terms.json", "tags": "learned_tags.json"}


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


_RECORD_FIELDS = tuple(ArtifactRecord.__dataclass_fields__)


class LazyRecord(ArtifactRecord):
    """``make_record(f, cfg, learned)`` made when a field other than its path, id, checksum
    and size is first read. A cold build whose weighing is the latest's reads the tags of
    the few files whose rows it makes (its reach) and of the files read again; making every
    reused file's record was 0.3–0.45 s of a one-file rebuild at 20k files, mostly the tags
    of 16,000 distinct file names. Equal to the record ``make_record`` makes, both ways round;
    pickled whole."""

    __slots__ = ("_made", "_domain")

    def __getattr__(self, name: str) -> Any:  # (only for a field not set yet)
        if name not in _RECORD_FIELDS:
            raise AttributeError(name)
        full = make_record(*object.__getattribute__(self, "_made"))
        for key in _RECORD_FIELDS:
            object.__setattr__(self, key, getattr(full, key))
        return object.__getattribute__(self, name)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ArtifactRecord):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in _RECORD_FIELDS)

    __hash__ = ArtifactRecord.__hash__


def lazy_record(f: FileFacts, cfg: Config, learned: Mapping[str, object] | None = None) -> ArtifactRecord:
    """``make_record``'s record of ``f``, its fields but the path, id, checksum and size made
    when first read (``LazyRecord``)."""
    r = object.__new__(LazyRecord)
    # (its folder's domain, unless its file's own tags or a learned tag can set another)
    domain = folder_domain(f.path, cfg) if "domain" not in f.ast_tags and (not learned or "domain" not in learned) \
        else None
    for key, value in (("artifact_id", f.artifact_id), ("path", f.path), ("checksum", f.checksum),
                       ("size_bytes", f.size_bytes), ("_made", (f, cfg, learned)), ("_domain", domain)):
        object.__setattr__(r, key, value)
    return r


def record_domain(r: ArtifactRecord) -> str:
    """``str(r.tags["domain"])`` without making a lazy record's tags: its folder's domain
    (``tags.path_tags``, kept per folder), taken when the record was made, when neither its
    file's own tags nor a learned tag can set it (a record pickled whole has its tags)."""
    if type(r) is LazyRecord:
        domain = getattr(r, "_domain", None)
        if domain is not None:
            return str(domain)
    return str(r.tags["domain"])


def _load_json(path: Path) -> object:
    """A learned file's JSON when this user's ORACL wrote it (``oracl learn accept`` seals
    it); None when it is missing or came with the tree (design §11: never trusted)."""
    if not is_ours(path):
        return None
    return json_or_none(path, LearnedDataError)


def is_ours(path: Path) -> bool:
    """Whether a learned file exists and carries this user's seal."""
    raw = read_sealed(path, LEARNED_KIND + path.name) if path.is_file() else None
    return raw is not None


def load_learned_tags(vault: Path) -> dict[str, dict[str, object]]:
    """``learned_tags.json``: ``{path: {tag: value, "confidence": …, "source": …}}``."""
    return learned_tags(_load_json(vault / "learned_tags.json"))


def learned_tags(data: object) -> dict[str, dict[str, object]]:
    if data is None:
        return {}
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise LearnedDataError("learned_tags.json must map each path to an object of tags")
    return data


def load_learned_edges(vault: Path) -> list[Edge]:
    """``learned_edges.json``: a list of ``{"source", "target", "confidence"}`` (paths)."""
    return [e for e, _ in learned_edges(_load_json(vault / "learned_edges.json"))]


def learned_edges(data: object) -> list[tuple[Edge, int]]:
    """(edge, sessions) of each row of ``learned_edges.json``'s JSON (None: no file)."""
    if data is None:
        return []
    if isinstance(data, dict):
        data = data.get("edges", [])
    if not isinstance(data, list):
        raise LearnedDataError("learned_edges.json must be a list of edges")
    out = []
    for row in data:
        try:
            conf = round(float(row.get("confidence", 0.5)), 9)
            if not 0 < conf <= 1:
                raise ValueError
            out.append((Edge(str(row["source"]), str(row["target"]), "learned_association", conf,
                             "", "", OVERLAY, "learned"), int(row.get("sessions", 0) or 0)))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise LearnedDataError("each learned edge needs source, target and a confidence in (0, 1]") from None
    return out


def load_learned_terms(vault: Path) -> list[dict[str, Any]]:
    """``learned_terms.json``: a list of ``{"term", "path", "confidence", "sessions"}`` (a
    word users type → a file whose text lacks it)."""
    return learned_terms(_load_json(vault / "learned_terms.json"))


def learned_terms(data: object) -> list[dict[str, Any]]:
    if data is None:
        return []
    if not isinstance(data, list):
        raise LearnedDataError("learned_terms.json must be a list of terms")
    out = []
    for row in data:
        try:
            conf = round(float(row["confidence"]), 9)
            sessions = int(row.get("sessions", 0))
            if not 0 < conf <= 1 or sessions < 0 or not str(row["term"]).strip() or not str(row["path"]):
                raise ValueError
            out.append({"term": str(row["term"]).strip().lower(), "path": str(row["path"]), "confidence": conf,
                        "sessions": sessions})
        except (KeyError, TypeError, ValueError, AttributeError):
            raise LearnedDataError("each learned term needs a term, a path and a confidence in (0, 1]") from None
    return out


@dataclass(slots=True)
class Learned:
    """The vault's learned data as a build takes it: the overlay edges between files it
    holds (neither holding key material), the learned terms and tags on such files, and
    the header's record of each file (its SHA-256, rows taken, rows dropped)."""

    edges: list[Edge] = field(default_factory=list)
    terms: list[dict[str, Any]] = field(default_factory=list)
    sessions: dict[tuple[str, str], int] = field(default_factory=dict)  # (source, target) → sessions
    header: dict[str, dict[str, Any]] = field(default_factory=dict)
    untrusted: list[str] = field(default_factory=list)  # learned files ignored: no seal of this user's

    def bundle_doc(self) -> dict[str, Any] | None:
        """What the query plane reads (``learned.json`` in the bundle), None without data."""
        if not self.terms and not self.edges:
            return None
        return {"terms": self.terms,
                "associations": [{"source": e.source, "target": e.target, "confidence": e.confidence,
                                  "sessions": self.sessions.get((e.source, e.target), 0)} for e in self.edges]}


def load_learned(vault: Path, usable: Container[str], tags: Mapping[str, object]) -> Learned:
    """Every learned file read once and checked (LearnedDataError names the first bad one),
    rows naming a file the build does not hold or one holding key material (not in
    ``usable``) dropped and counted; ``tags``: ``learned_tags.json`` as the records took it."""
    out = Learned()
    for kind, name in LEARNED_FILES.items():
        try:
            got = read_sealed(vault / name, LEARNED_KIND + name)
        except OSError as exc:
            raise LearnedDataError(f"{name} is not readable: {exc.strerror}") from None
        if got is None:
            if (vault / name).exists():
                out.untrusted.append(name)  # came with the tree, or edited by hand: ignored
            continue
        raw = got
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise LearnedDataError(f"{name} is not readable JSON ({exc}); it was left as it is") from None
        if kind == "edges":
            edges = learned_edges(data)
            for e, sessions in edges:
                if e.source in usable and e.target in usable:
                    out.edges.append(e)
                    out.sessions[(e.source, e.target)] = sessions
            taken, total = len(out.edges), len(edges)
        elif kind == "terms":
            terms = learned_terms(data)
            out.terms = sorted((t for t in terms if t["path"] in usable), key=lambda t: (t["term"], t["path"]))
            taken, total = len(out.terms), len(terms)
        else:
            taken = sum(1 for p in tags if p in usable)
            total = len(tags)
        out.header[kind] = {"file": name, "sha256": hashlib.sha256(raw).hexdigest(), "rows": taken,
                            "dropped": total - taken}
    if out.header:  # who decided what the learned files hold: the review's log, as it stands
        try:
            log = read_control(vault / DECISIONS)
            out.header["decisions"] = {"file": DECISIONS, "sha256": hashlib.sha256(log).hexdigest(),
                                       "rows": log.count(b"\n")}
        except OSError:
            pass
    return out
