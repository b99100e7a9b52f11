"""Frozen, slotted records passed between build phases.

A phase takes records and returns records; nothing here touches the disk or the
database. ``FileFacts`` is what one file yields in Phase 1 (read once, in a worker);
``Edge`` is one extracted reference; ``ArtifactRecord`` is the §2 record of a file.
``ArtifactNode``, ``HubNode`` and ``EdgeRow`` are the typed rows of the weighted graph:
the export is made of them and the bundle is loaded from them (plain dicts at run time,
so serialising 100k+ rows costs nothing more; their keys are checked against an export
in the tests).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, TypedDict

# (name, kind, start_line, end_line); kind is "class" | "function" | "method" | "async_function" …
Symbol = tuple[str, str, int, int]
# (title, level, start_line, end_line) of a Markdown heading's section
Heading = tuple[str, int, int, int]
# (module, imported names, relative level, start_line, end_line)
ImportRef = tuple[str, tuple[str, ...], int, int, int]
# (text, line) – a candidate reference found in a file, resolved later against the index
Mention = tuple[str, int]
# (qualified name, signature, first doc line) of a symbol, in the order of ``symbols``
SymbolDetail = tuple[str, str, str]
# (kind, target as written, line): a doc link, an include, a template, a build file's entry
Ref = tuple[str, str, int]
# (a type's qualified name, a base it names as written, "inherits" | "implements", line)
Base = tuple[str, str, str, int]
# (a variable, the type it is declared with or constructed from as written, line)
Typed = tuple[str, str, int]
# (qualified name, kind, start_line, end_line) of a definition in a file as it is now
Definition = tuple[str, str, int, int]
# (root, path) → the file's definitions as it is on disk now, or None (a reader is given one)
Reread = Callable[[str, str], "list[Definition] | None"]


@dataclass(frozen=True, slots=True)
class FileFacts:
    """Everything Phase 1 learns from reading one file (its text is not kept here)."""

    path: str
    artifact_id: str
    checksum: str
    size_bytes: int
    mtime_ns: int
    ctime_ns: int
    parse_status: str  # ok | binary | non_utf8 | oversize | unreadable | vanished | syntax_error | malformed | secret_file | parse_error | generated | vendored | lockfile | minified
    line_count: int = 0
    language: str = ""
    ast_tags: dict[str, object] = field(default_factory=dict)
    symbols: tuple[Symbol, ...] = ()
    headings: tuple[Heading, ...] = ()
    module_docstring: bool = False
    defs: int = 0
    documented_defs: int = 0
    sensitive_apis: tuple[str, ...] = ()
    secret_key_names: bool = False
    key_material: bool = False
    credential_literal: bool = False
    imports: tuple[ImportRef, ...] = ()
    md_links: tuple[Mention, ...] = ()
    config_values: tuple[Mention, ...] = ()
    mentions: tuple[Mention, ...] = ()
    comment_refs: tuple[Mention, ...] = ()
    secrets: tuple[tuple[str, int], ...] = ()  # (rule, line) of each redacted secret: never its value
    symbol_details: tuple[SymbolDetail, ...] = ()
    calls: tuple[Mention, ...] = ()             # call sites (``f`` | ``recv.f`` | ``?.f``, line)
    bases: tuple[Base, ...] = ()                # what each type extends or implements
    typed: tuple[Typed, ...] = ()               # variables whose type the code says (receivers)
    namespaces: tuple[str, ...] = ()            # packages / namespaces the file declares
    test_markers: tuple[Mention, ...] = ()      # (marker, line): a test function, a test attribute …
    refs: tuple[Ref, ...] = ()                  # docs, templates and build files: see ``Ref``
    manifest: dict[str, object] = field(default_factory=dict)  # a build file's parsed facts for the resolvers
    renames: tuple[tuple[str, str], ...] = ()   # (local name, imported name): ``from m import a as b``
    error: str = ""


class Edge(NamedTuple):
    """One directed, typed reference between two nodes (ids are node ids). A named tuple,
    not a frozen dataclass: a build makes 100k+ of them from rows (a cold build from the
    edge shards' runs), and a tuple is made three times faster."""

    source: str
    target: str
    relation: str
    confidence: float  # κ, the extractor's confidence in (0, 1]
    source_fragment: str = ""
    target_fragment: str = ""
    producer: str = "phase3_static_edges"  # phase2_repo_edges | phase3_static_edges | overlay | hubs
    provider: str = ""

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        """The canonical merge key of design §5."""
        return (self.source, self.source_fragment, self.target, self.target_fragment, self.relation)


@dataclass(frozen=True, slots=True)
class ArtifactRecord:
    """The §2 artifact record of one file, with its tags."""

    artifact_id: str
    checksum: str
    path: str
    file_type: str
    size_bytes: int
    created_at: str
    modified_at: str
    tags: dict[str, object]
    author: str = "system"
    review_status: str = "draft"
    usage: int = 0
    estimated_savings: float = 0.0

    def to_json(self) -> dict[str, object]:
        return {
            "artifact_id": self.artifact_id,
            "checksum": self.checksum,
            "path": self.path,
            "file_type": self.file_type,
            "size_bytes": self.size_bytes,
            "created_at": self.created_at,
            "modified_at": self.modified_at,
            "author": self.author,
            "tags": self.tags,
            "review_status": self.review_status,
            "usage": self.usage,
            "estimated_savings": self.estimated_savings,
        }


class PriorityDetail(TypedDict):
    components: dict[str, float]   # c_b of each of the twelve buckets
    m_cls: float
    m_sens: float
    sensitivity: str               # low | medium | high
    risk_score: int
    base: float                    # P0
    association: float
    delta: float
    role: str                      # product | example | fixture | vendored (design §4)
    m_role: float


class ArtifactNode(TypedDict):
    """One file of the weighted graph (design §2, §4, §6)."""

    id: str                        # the artifact_id
    kind: Literal["artifact"]
    artifact_id: str
    checksum: str
    path: str
    file_type: str
    size_bytes: int
    created_at: str
    modified_at: str
    author: str
    tags: dict[str, Any]
    review_status: str
    usage: int
    estimated_savings: float
    link_count: int
    backrefs: int
    priority: float                # m_role·(P0 + α·max(δ,0)) + α·min(δ,0) (Eq. 5 with the role)
    link_density: float
    priority_detail: PriorityDetail
    history: str                   # past commit subjects of the file (design §5c), "" outside git
    parse_status: str
    line_count: int
    symbols: tuple[Symbol, ...]
    headings: tuple[Heading, ...]


class HubNode(TypedDict):
    """A domain hub ``hub:domain:<d>``."""

    id: str
    kind: Literal["hub"]
    tags: dict[str, str]
    association: float
    delta: float
    link_density: float


NodeRow = ArtifactNode | HubNode


class EdgeMetadata(TypedDict):
    confidence: float              # κ
    producer: str
    provider: str


class EdgeRow(TypedDict):
    """One weighted edge (design §5, §6); source and target are node ids."""

    source: str
    target: str
    relation: str
    source_fragment: str
    target_fragment: str
    metadata: EdgeMetadata
    relation_weight: float         # w = ρ·κ
    association_rank: float


# ---- sensor events (design §5d, phase 6): the frozen GraduatedEvent schema, version "1.0" ----

EVENT_VERSION = "1.0"
SENSOR_SOURCES = ("sentry", "edge_graph", "oracode", "operator")
EVENT_TYPES = ("heartbeat", "drift", "anomaly", "operator")
DECISIONS = ("go", "no-go", "pass", "fail")
MOTIVATOR_HINTS = ("Threat", "Awareness", "Reward")
MAX_EVENT_TEXT = 500       # summary, a reason code, an artifact's key or value
MAX_EVENT_ITEMS = 32       # reason codes, artifacts


@dataclass(frozen=True, slots=True)
class GraduatedEvent:
    """One sensor event: names only (a test, a rule, a file, a line range), never raw
    identifiers (``source_id_hash`` is SHA-256[:16] of one) or a message's text."""

    schema_version: str
    timestamp_utc: str             # ISO 8601, Z
    sensor_source: str             # sentry | edge_graph | oracode | operator
    event_type: str                # heartbeat | drift | anomaly | operator
    decision: str                  # go | no-go | pass | fail
    summary: str                   # names only
    reason_codes: tuple[str, ...]
    motivator_hint: str | None     # Threat | Awareness | Reward
    cortex_routing_hint: str | None
    source_id_hash: str | None     # SHA-256[:16]
    artifacts: dict[str, str]

    def to_json(self) -> dict[str, Any]:
        return {"schema_version": self.schema_version, "timestamp_utc": self.timestamp_utc,
                "sensor_source": self.sensor_source, "event_type": self.event_type, "decision": self.decision,
                "summary": self.summary, "reason_codes": list(self.reason_codes),
                "motivator_hint": self.motivator_hint, "cortex_routing_hint": self.cortex_routing_hint,
                "source_id_hash": self.source_id_hash, "artifacts": dict(sorted(self.artifacts.items()))}


EVENT_HALF_LIFE_DAYS = 30.0   # an event's weight halves every 30 days (the build's header says which)


def event_weight(age_days: float, half_life: float = EVENT_HALF_LIFE_DAYS) -> float:
    """``0.5 ** (age_days / half_life)``, computed when an event is read (a build's output
    does not depend on the time it ran): a month-old coverage run counts half.

    >>> event_weight(30), event_weight(60), event_weight(-1)
    (0.5, 0.25, 1.0)
    """
    return round(0.5 ** (max(0.0, age_days) / half_life), 6)


def text_key(path: str, n: int) -> str:
    """The key of an artifact's ArtifactText row number ``n``. Readers look the rows up by
    these keys, one probe of the primary key's index each (``cypher/artifact_text.cypher``),
    or join by path and number (``MATCH (t:ArtifactText {path: a.path}) WHERE t.n =
    a.text_n``); a key made inside a query's join took 19 s for 200 candidates at 20k files.

    >>> text_key("src/a|b.py", 3)
    'src/a|b.py|3'
    """
    return f"{path}|{n}"
