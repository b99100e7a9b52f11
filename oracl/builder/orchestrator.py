"""The build orchestrator: the only code that sequences the phases, times them, honours
skip flags, and hands side work to the ``Executor`` and the bundle to the ``BundleWriter``.

Each phase is a function from frozen inputs (the ``Plan`` and earlier phases' outputs)
to a frozen output; nothing is shared and mutated between them. Children are the
executor's alone: in process for the library (``oracl.build``), forked by the CLI.

>>> report = build(Path("my-repo"))            # doctest: +SKIP
>>> report.counts["artifacts"], report.export_root[:8]
"""

from __future__ import annotations

import bisect
import functools
import gc
import os
import resource
import shutil
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import orjson

from oracl.builder import name_tables, read_sets, same_structure
from oracl.builder.edge_shards import MERGED_WITH, Kept, merged_with, read_edges, write_edges
from oracl.builder.event_segments import EventsOut, make_events
from oracl.builder.executor import InProcess, Later, Processes, Task, executor
from oracl.builder.extractors.providers import (
    OVERLAY,
    PHASE2,
    PHASE3,
    edges_per_file,
    edges_to_make,
    phase2_edges,
    phase2_of,
    phase3_edges,
    phase3_of,
)
from oracl.builder.extractors.resolve import IndexView
from oracl.builder.incremental import (
    MAX_CHANGED_FRACTION,
    MIN_CHANGED_FOR_FULL,
    Carry,
    Previous,
    encode_stat,
    kept_stat,
    load_previous,
    previous_damage,
    same_bytes,
    settings,
    shard_groups,
    standby_delta,
    stat_rows,
    write_facts,
)
from oracl.builder.pipeline import interface as interface_of
from oracl.builder.pipeline.annotate import (
    HELD_BACK,
    Learned,
    lazy_record,
    load_learned,
    load_learned_tags,
    make_record,
)
from oracl.builder.pipeline.discover import prime, read_one
from oracl.builder.pipeline.history import History, Log, moved_between, parse_log, read_history
from oracl.builder.pipeline.history import Moved as HistoryMoved
from oracl.builder.pipeline.history import from_part as history_from_part
from oracl.builder.pipeline.history import to_part as history_to_part
from oracl.builder.pipeline.merge import (
    BySource,
    EvidenceStore,
    MergeResult,
    edge_to_json,
    merge_by_source,
    merge_edges,
    runs_moved,
    write_jsonl,
)
from oracl.builder.pipeline.symbols import SymbolGraph, SymbolTable, symbol_graph
from oracl.builder.pipeline.weigh import (
    EdgeRows,
    PerEdge,
    WeightedGraph,
    edge_order,
    reweigh,
    settings_key,
    weigh,
)
from oracl.builder.pipeline.weigh_around import weigh_around
from oracl.builder.reach import (
    Against,
    Unmoved,
    against_latest,
    copy_rows,
    latest_ranks,
    moved_since,
    put_ranks,
    reach_of_groups,
    record,
    recorded,
    standby_rows,
    unmoved,
)
from oracl.builder.resident import (
    TESTS_PENDING,
    KeptRows,
    edge_targets,
    index_of,
    kept_edges,
    kept_rows,
    retarget,
    standby_reach,
)
from oracl.builder.resolve_again import Again, resolve_again
from oracl.builder.same_structure import kept_structure, latest_figures
from oracl.builder.segments import Segment, Segments, reusable
from oracl.builder.uptodate import Latest, fingerprint, latest_if_current
from oracl.bundle import provenance
from oracl.bundle.writer import BundleWriter
from oracl.core.children import git
from oracl.core.config import Config, load_config, validate
from oracl.core.errors import (
    ChildError,
    ConfigError,
    DigestError,
    DiskFullError,
    OraclError,
    PreviousBundleError,
    StoreError,
    StoreLockedError,
    disk_full,
)
from oracl.core.export import (
    canonical_bytes,
    pack_symbols,
    sha256_hex,
)
from oracl.core.parts import (
    INDEX,
    Parts,
    PartStore,
    encode_index,
    keep_known,
    put_groups,
    put_rows,
    store_of,
    stored_edge,
    stored_node,
)
from oracl.core.records import ArtifactRecord, Edge, FileFacts
from oracl.core.vault import (
    DB_FILE,
    EVENTS_BUNDLE_FILE,
    EVENTS_FILE,
    EVENTS_INDEX_FILE,
    HEADER_FILE,
    INTERFACE_FILE,
    LEARNED_FILE,
    MANIFEST,
    STAT_FILE,
    SYMBOLS_FILE,
    Vault,
    atomic_write,
    check_root,
    new_build_id,
)
from oracl.core.version import SCHEMA_VERSION, __version__
from oracl.core.walk import Discovery, moved, take_in, triage, walk

Progress = Callable[[str, int, int | None], None]
Executor = InProcess | Processes
SKIPPABLE = ("phase2", "phase3", "fts")
PARALLEL_MIN_FILES = 256  # below this a worker pool costs more than it saves
PRUNE_EVERY = 8  # a long-lived builder's builds drop the parts no kept bundle names at every 8th of a chain
SIDE_HERE_MAX_FILES = 64  # a long-lived builder's side tasks for a change this small run in its process
RANK_FORK_MIN_EDGES = 20_000  # below this, ranking in a second process costs more than it saves
if TYPE_CHECKING:
    from oracl.bundle.database import Reach

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Plan:
    """What a build is asked to do: its inputs, fixed before the first phase."""

    root: Path
    cfg: Config
    vault: Vault
    build_id: str
    now: datetime
    skip: frozenset[str]
    full: bool                 # --full: never start from the previous build
    full_why: str = ""         # why a full build was forced (the previous bundle failed)
    carry: Carry | None = None  # a long-lived builder's facts from its last build (oracl watch)
    spare: list[Any] | None = None  # what the build made goes here, not freed (a process about to end)
    changed: frozenset[str] | None = None  # the paths a caller's file events named since its last build
    warm: bool = False  # ``warm``: the carry filled from the latest, nothing written or published

    @property
    def fts(self) -> bool:
        return "fts" not in self.skip


@dataclass(frozen=True, slots=True)
class Discovered:
    discovery: Discovery
    previous: Previous | None  # the build a selective rebuild starts from
    mode: str                  # "full: why" | "incremental: …"
    scan_started_ns: int
    git_state: tuple[str | None, bool | None] = (None, None)  # HEAD and whether the work tree is dirty
    inputs: dict[str, Any] = field(default_factory=dict)  # what the output depends on besides the files (uptodate)
    current: Latest | None = None  # the latest bundle, when it is what this build would write
    walk: str = "walked"  # how the files were listed: a walk, or the last build's with the named paths taken in


@dataclass(frozen=True, slots=True)
class Read:
    """Phase 1's output: every file's facts and record, in discovery order, and what was
    reused, read again and removed against the previous build."""

    facts: list[FileFacts]
    records: list[ArtifactRecord]
    spool: Path                # the full-text rows of the files read (Arrow IPC)
    text_bytes: int
    previous: Previous | None
    mode: str
    reread: list[str]
    removed: list[str]
    facts_header: dict[str, Any]
    index: IndexView
    overlay: list[Edge]
    learned: Learned
    events: EventsOut
    made_under: tuple[Config, dict[str, dict[str, object]]] | None = None  # (Config, learned tags) of the records
    checked: list[str] = field(default_factory=list)  # racily clean files whose bytes were checked (kept)
    # the places of the files read, when every other file's facts and record are the very
    # ones a long-lived builder kept (``records_in_order``): ``weigh.reweigh`` compares only those
    places: list[int] | None = None


@dataclass(frozen=True, slots=True)
class Edges:
    phase2: list[Edge]
    phase3: list[Edge]


@dataclass(frozen=True, slots=True)
class Loaded:
    export_root: str
    signature: str
    export_seconds: float
    content_seconds: float
    bundle_bytes: int
    compacted: str = ""  # a full-text delta folded, an index made again without its superseded rows ("": none)


@dataclass(frozen=True, slots=True)
class GraphFacts:
    """What the report and the health history need of the weighted graph once its rows are gone."""

    hubs: int
    edges: int
    edge_counts: dict[str, int]
    mu: float
    sigma: float
    orphans: int


@dataclass(slots=True)
class BuildReport:
    """What ``oracl build`` prints and ``--json`` emits."""

    build_id: str
    root: str
    files_seen: int
    files_indexed: int
    skipped: dict[str, int]
    excluded_dirs: dict[str, int]
    parse_status: dict[str, int]
    languages: dict[str, int]          # indexed files per language ('other' when the name says none)
    skipped_by_suffix: dict[str, int]  # "reason .suffix" → files the walk skipped
    counts: dict[str, Any]
    dropped_edges: dict[str, int]
    mu: float
    sigma: float
    seconds: dict[str, float]
    peak_rss_mib: dict[str, int]
    export_path: str
    export_root: str
    bundle_path: str
    fts: bool
    two_layer: bool
    mode: str           # "incremental: …" or "full: <why>"
    files_read: int     # files read and parsed by this build (the rest were reused)
    files_removed: int  # files of the previous build that are gone
    signature: str      # ed25519 | hmac-sha256 | unsigned
    orphans: int        # artifacts with no edge to or from another artifact
    symbols_mode: str = ""  # "symbols: whole (why)" or "symbols: the rows of N changed files made again, …"
    database_mode: str = ""  # "database: made from scratch" | "database: the standby updated in place (…)" | "…: a copy"
    untrusted: tuple[str, ...] = ()  # vault files this user's oracl did not write, ignored (design §11)
    weigh_mode: str = ""  # "weigh: the structure is the latest's, …" | "weigh: every node's structure worked out …"
    walk: str = "walked"  # "walked" | "the last build's walk, N paths taken in" (a watch's file events)

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}


# ---- Phase 1: discovery and reading (the only workspace access) -------------------------

def _walk_again(plan: Plan) -> tuple[Discovery, bool] | None:
    """A long-lived builder's walk of the build it made last (``Carry.discovery``), the
    paths its caller's file events named taken in (``walk.triage``), and whether they moved
    a file: when that build is still the latest, under the same settings, and the paths
    say what moved. None: walk."""
    carry, changed = plan.carry, plan.changed
    if carry is None or changed is None or carry.discovery is None or carry.bundle is None or plan.full \
            or carry.discovery_key != plan.cfg.digest():
        return None
    try:
        if str(plan.vault.read_latest().get("build_id")) != carry.bundle.name:
            return None
    except OraclError:
        return None
    found = triage(plan.root, carry.discovery, changed)
    if found is None:
        return None
    any_moved = bool(moved(carry.discovery, found))
    take_in(carry.discovery, found)
    return carry.discovery, any_moved


def _carry_is_latest(plan: Plan) -> bool:
    """Whether a long-lived builder's memory is the latest build's (it made it)."""
    carry = plan.carry
    if carry is None or carry.bundle is None:
        return False
    try:
        return str(plan.vault.read_latest().get("build_id")) == carry.bundle.name
    except OraclError:
        return False


def _identity_sealed(vault: Vault) -> bool:
    """Whether the latest bundle's manifest records its database by identity (a stat checks
    it) rather than by SHA-256; False when that cannot be read (the check says why)."""
    from oracl.core.vault import DB_FILE, IDENTITY, MANIFEST

    try:
        latest = vault.read_latest()
        manifest = orjson.loads((vault.bundle(str(latest.get("bundle", latest["build_id"]))) / MANIFEST).read_bytes())
        return str(manifest["files"][DB_FILE]).startswith(IDENTITY)
    except Exception:  # noqa: BLE001 – previous_damage says what is wrong
        return False


def discover(plan: Plan, ex: Executor) -> Discovered:
    """The walk, and the previous build a selective rebuild may start from (its database
    checked against its manifest beside the walk: a damaged one means a full build)."""
    started = time.time_ns()
    # (the previous database checked by its identity against its manifest: a stat, here; a
    # bundle sealed before identities were recorded is hashed, beside the walk)
    check = None if plan.full or _identity_sealed(plan.vault) else \
        ex.submit("checking the previous bundle", lambda: previous_damage(plan.vault))
    damage = "" if plan.full or check is not None else previous_damage(plan.vault)
    again = _walk_again(plan)
    how = "walked" if again is None else \
        f"the last build's walk, {len(plan.changed or ()):,} path{'' if len(plan.changed or ()) == 1 else 's'} taken in"
    discovery = again[0] if again is not None else \
        walk(plan.root, plan.cfg, stat=not plan.full, record=plan.carry is not None)
    git_state = _git_state(plan.root)
    inputs = fingerprint(plan.vault.dir, discovery, plan.cfg.digest(), plan.cfg.read_digest(), plan.fts, plan.skip,
                         git_state)
    if plan.full:
        return Discovered(discovery, None, plan.full_why or "full: requested", started, git_state, inputs, walk=how)
    damage = ex.join(check) if check is not None else damage
    # (file events that moved a file since the latest build, its own: it is not current)
    current = None if plan.warm or (again is not None and again[1]) else \
        latest_if_current(plan.vault, plan.root, discovery, inputs, damage, plan.cfg.jsonl)
    if current is not None:
        return Discovered(discovery, None, "up to date", started, git_state, inputs, current, walk=how)
    previous, mode = load_previous(plan.vault, plan.cfg.read_digest(), plan.fts, plan.carry)
    if previous is not None and damage:
        previous, mode = None, f"full: {damage}"
    return Discovered(discovery, previous, mode, started, git_state, inputs, walk=how)


def _select(d: Discovered, root: str, hinted: frozenset[str] | None = None, recent: set[str] | None = None
            ) -> tuple[int, list[str], list[str], Previous | None, str, list[str]]:
    """(how many files keep the previous build's facts, files to read, files removed, the
    previous build, the mode, the racily clean files whose bytes were checked): everything
    is read when there is no previous build, or when too much changed for a selective
    rebuild to pay. A file kept has its facts in ``previous.facts``. A racily clean file
    (its stat is the one its facts were read under, but written just before that build) is
    kept when its bytes still hash to its checksum: a fresh clone's first rebuild reads and
    hashes, never parses, every file the clone wrote in the build's last two seconds.
    ``hinted`` (the paths a long-lived builder's file events named, taken into the last
    walk: ``d.walk`` says so) and ``recent`` (the files that build read or checked): only
    those are looked at. Every other file's stat is the last build's, and none of them can
    be racily clean: a file written in the two seconds before that build's scan was read
    or checked by it (written before the build before, it was racily clean then too), and
    one written since is named by an event."""
    prev = d.previous
    if prev is None:
        return 0, list(d.discovery.files), [], None, d.mode, []
    files = d.discovery.files
    if hinted is not None and recent is not None:
        def listed(rel: str) -> bool:
            at = bisect.bisect_left(files, rel)
            return at < len(files) and files[at] == rel

        candidates = sorted({*hinted, *recent})
        look = [rel for rel in candidates if listed(rel)]
        removed = [rel for rel in candidates if rel in prev.facts and not listed(rel)]
        new = sum(1 for rel in look if rel not in prev.facts)
        n_kept = len(files) - len(look)  # (every other file is the last build's, and was in it)
        if len(files) - new != len(prev.facts) - len(removed):  # (the events and the walk disagree)
            hinted = None
    if hinted is None or recent is None:
        current = set(files)
        look, removed = files, sorted(p for p in prev.facts if p not in current)
        n_kept = 0
    kept: set[str] = set()
    racy: list[tuple[str, FileFacts]] = []
    for rel in look:
        st = d.discovery.stats.get(rel)
        f = prev.reusable(rel, st)
        if f is not None:
            kept.add(rel)
        else:
            r = prev.racy(rel, st)
            if r is not None:
                racy.append((rel, r))
    same = same_bytes(root, racy) if racy else set()
    kept |= same
    reread = [rel for rel in look if rel not in kept]
    n_kept += len(kept)
    changed = len(reread) + len(removed)
    if changed > MAX_CHANGED_FRACTION * len(prev.facts) and changed > MIN_CHANGED_FOR_FULL:
        mode = (f"full: {len(reread):,} files to read and {len(removed):,} removed, "
                f"against {len(prev.facts):,} in the previous build")
        return 0, list(files), [], None, mode, []
    checked = f" ({len(same):,} written just before the last build, their bytes checked)" if same else ""
    mode = f"incremental: {n_kept:,} reused{checked}, {len(reread):,} read, {len(removed):,} removed"
    return n_kept, reread, removed, prev, mode, sorted(same)


def facts_in_order(files: list[str], kept: dict[str, FileFacts], fresh: dict[str, FileFacts]
                   ) -> dict[str, FileFacts]:
    """Each file's facts by path, in discovery order (``files``): ``fresh``'s for a file
    read, else ``kept``'s (the previous build's). When ``kept`` holds exactly ``files`` in
    that order (no file came or went: one list comparison, in C), a copy of it with the
    fresh facts put in place, not a dict made again a file at a time (6 ms a save at 20k
    files)."""
    if len(kept) == len(files) and all(p in kept for p in fresh) and list(kept) == files:
        out = dict(kept)
        out.update(fresh)
        return out
    return {rel: fresh[rel] if rel in fresh else kept[rel] for rel in files}


def records_in_order(files: list[str], kept: dict[str, tuple[FileFacts, Any]] | None,
                     fresh: dict[str, ArtifactRecord]) -> list[ArtifactRecord] | None:
    """Every file's record in ``files``' order from a long-lived builder's kept records
    (``Carry.records``: each file's very facts object and the record made of it, kept with
    ``Carry.facts`` by ``kept_records``) with the records of the files read (``fresh``) put
    in place, when the kept map holds exactly ``files`` in that order and each file read is
    one of them; None otherwise (each file's record is then looked up: ``read``)."""
    if kept is None or len(kept) != len(files) or any(p not in kept for p in fresh) or list(kept) != files:
        return None
    out = [rec for _, rec in kept.values()]
    for p, rec in fresh.items():
        out[bisect.bisect_left(files, p)] = rec
    return out


class Usable:
    """The files a learned row may name (``load_learned``): this build's, but those holding
    key material or a secret file, asked of each row's path instead of a set made of every
    file each build."""

    __slots__ = ("_facts",)

    def __init__(self, facts: Mapping[str, FileFacts]) -> None:
        self._facts = facts

    def __contains__(self, path: object) -> bool:
        f = self._facts.get(path) if isinstance(path, str) else None
        return f is not None and not (f.key_material or f.parse_status == "secret_file")


def read(plan: Plan, ex: Executor, d: Discovered, progress: Progress, staging: Path) -> Read:
    from oracl.bundle.tables import ContentSpool

    files = d.discovery.files
    spool = ContentSpool(staging / "content.arrow")
    root = os.path.realpath(plan.root)
    cfg = plan.cfg
    workers = cfg.workers or os.cpu_count() or 1
    learned = load_learned_tags(plan.vault.dir)
    carry = plan.carry
    hinted = plan.changed if d.walk != "walked" and carry is not None and carry.recent is not None else None
    n_reused, to_read, removed, previous, mode, checked = _select(d, root, hinted,
                                                                  carry.recent if carry is not None else None)
    fresh: dict[str, FileFacts] = {}
    records: dict[str, ArtifactRecord] = {}
    half = max(1, len(to_read) // 2)
    if getattr(ex, "distributed", False) and to_read:  # Ray: every file's work is the cluster's
        items = ex.map("reading files", lambda rel: read_one(root, rel, cfg), to_read, workers)
    elif workers > 1 and len(to_read) >= PARALLEL_MIN_FILES:
        items = ex.map("reading files", lambda rel: read_one(root, rel, cfg), to_read, workers, init=gc.freeze)
    else:
        items = (read_one(root, rel, cfg) for rel in to_read)
    # the main process is mostly idle while the workers parse: it builds each record as
    # its file arrives instead of in a pass afterwards
    for f, text in items:
        fresh[f.path] = f
        records[f.path] = make_record(f, cfg, learned.get(f.path))
        spool.add(f.path, text)
        if len(fresh) == half:
            provenance.fault("read")
        if len(fresh) % 500 == 0:
            progress("read", len(fresh) + n_reused, len(files))
    spool.close()
    # discovery order, whichever way each file's facts were obtained: the same list a full build
    # makes (a file not read keeps the previous build's facts)
    by_path = facts_in_order(files, previous.facts if previous is not None else {}, fresh)
    facts = list(by_path.values())
    progress("read", len(files), len(files))
    made = (cfg, learned)
    learned_data = load_learned(plan.vault.dir, Usable(by_path), learned)

    # a watch's records, kept for the very facts objects they were made of, while the Config
    # and the learned tags are equal (compared once here, not once a file: 20k Config
    # comparisons were 0.05 s of a save at 20k files)
    kept_records = carry.records if carry is not None and carry.made_under == made else None

    def record_of(f: FileFacts) -> ArtifactRecord:
        hit = kept_records.get(f.path) if kept_records is not None else None
        if hit is not None and hit[0] is f:
            return hit[1]
        # (a file not read again: its record made when its tags are first read)
        return lazy_record(f, cfg, learned.get(f.path))

    # (the kept records are of the carry's facts: only while the previous build's are those)
    in_order = records_in_order(files, kept_records, records) \
        if carry is not None and previous is not None and previous.facts is carry.facts else None
    return Read(
        facts=facts,
        records=in_order if in_order is not None else [records.get(f.path) or record_of(f) for f in facts],
        made_under=made,
        places=sorted(bisect.bisect_left(files, p) for p in records) if in_order is not None else None,
        spool=spool.path, text_bytes=spool.text_bytes, previous=previous, mode=mode, reread=to_read,
        removed=removed, checked=checked,
        facts_header={**settings(cfg.read_digest(), plan.fts), "scan_started_ns": d.scan_started_ns,
                      "chain": previous.chain + 1 if previous is not None else 0,
                      "base_db_bytes": previous.base_db_bytes if previous is not None else 0},
        index=index_of(carry, previous, by_path, to_read, removed), overlay=learned_data.edges, learned=learned_data,
        events=sensor_events(plan, by_path, previous))


@dataclass(frozen=True, slots=True)
class Content:
    """The content task, and how the build's database starts: ``catchup`` are files this
    build did not read whose rows differ in the standby it took over (their symbol rows are
    made again too); ``why`` says which database was started from."""

    task: Task[tuple[float, str, dict[str, str]]]  # (seconds, what the postings write did, files linked)
    standby: bool
    catchup: list[str]
    why: str
    # the files whose symbol rows the standby holds otherwise: those caught up, those it has
    # and this build has not, those the latest build's rows moved in (its lineage)
    symbols_catchup: list[str] = field(default_factory=list)
    standby_of: str = ""  # the bundle whose database this build took over as its standby
    copied: bool = False  # a copy of the latest's database, brought up to date in place as a standby is


def start_content(plan: Plan, ex: Executor, r: Read, writer: BundleWriter, keep_symbols: bool = False) -> Content:
    """The bundle's schema – from scratch, in the standby's database brought up to date in
    place (``database.claim_standby``), or in a copy of the previous bundle's – and its
    full-text postings (``core/fulltext.py``: the latest's, with the files read again and
    removed written again), as a task beside the graph's weighting."""
    from oracl.builder.incremental import growth_limit
    from oracl.bundle.database import claim_standby

    cfg = plan.cfg
    pool = cfg.build_buffer_pool(0)
    previous: Path | None = None
    gone: tuple[str, ...] = ()
    postings_from: Path | None = None
    standby, why = False, "database: made from scratch"
    catchup: list[str] = []
    symbols_catchup: list[str] = []
    if r.previous is not None:
        # the database holds the previous graph: give the patch room for its pages
        db = r.previous.bundle / DB_FILE
        pool = max(pool, cfg.build_buffer_pool(0) + db.stat().st_size // 2)
        old = r.previous.facts
        gone = tuple(sorted(set(r.removed) | {p for p in r.reread if p in old}))
        postings_from = r.previous.bundle
        limit = growth_limit(r.previous.base_db_bytes or db.stat().st_size)
        # (a long-lived builder knows the standby's checksums where they differ from the
        # latest's: what its last build read or removed, against the bundle it started from)
        delta = plan.carry.delta if plan.carry is not None and plan.carry.bundle == r.previous.bundle else \
            provenance.recorded_delta(plan.vault, r.previous.bundle) if plan.carry is None else None
        checksums, why, moved, standby_of = claim_standby(plan.vault, writer.staging, symbols_kept=keep_symbols,
                                                          max_bytes=limit, known=delta[0] if delta else "",
                                                          retire=plan.carry.retired if plan.carry is not None else None)
        if checksums is not None and delta is not None and standby_of == delta[0]:
            standby = True
            catchup, gone_there = _catch_up_known(r, delta[1])
            symbols_catchup = sorted({*catchup, *gone_there, *moved})
            why = (f"database: the standby updated in place ({len(catchup):,} more file"
                   f"{'' if len(catchup) == 1 else 's'} caught up, known to the "
                   f"{'builder' if plan.carry is not None else 'latest build'})")
        elif checksums is not None:
            standby, catchup = True, _catch_up(r, checksums)
            here = {f.path for f in r.facts}
            symbols_catchup = sorted({*catchup, *(p for p in checksums if p not in here), *moved})
            why = (f"database: the standby updated in place ({len(catchup):,} more file"
                   f"{'' if len(catchup) == 1 else 's'} caught up)")
        if not standby:
            previous, why = db, f"database: a copy of the latest ({why})"
    args = (writer, r.spool, plan.fts, pool, cfg.db_threads, previous, keep_symbols and r.previous is not None, standby,
            postings_from, gone)
    if postings_from is not None and _may_fork(ex):
        # (a rebuild's content task is small: a fork, not a fresh interpreter that imports
        # pyarrow and the build again, ~0.45 s of the other core's time beside the export;
        # a one-file rebuild at 20k files: 2.68 → 2.47 s, median of 7 each)
        task = ex.submit("writing the full-text postings", functools.partial(write_content, *args))
    else:
        task = ex.submit_fresh("writing the full-text postings", write_content, *args)
    return Content(task, standby, catchup, why, symbols_catchup, standby_of if standby else "",
                   copied=previous is not None)


def _side(plan: Plan, ex: Executor, r: Read) -> Executor:
    """What a build's side tasks (the content, the vault files, the name tables, the
    symbol sections) run in: ``ex``; for a long-lived builder's small change, its own
    process. Measured at 20k files (a 1.6 GiB builder, ten saves each): with those four
    forked a save took 0.67 s (median), with them run here 0.52 s, though it then does
    their 0.3 s of work itself — each fork copies the builder's page tables (35–70 ms)
    and makes every page it writes afterwards fault. The ranking of a whole weighing
    (a structure that moved) stays on ``ex``."""
    if plan.carry is not None and len(r.reread) + len(r.removed) <= SIDE_HERE_MAX_FILES:
        return InProcess()
    return ex


FILE_COUNTS = "file_counts"  # stat.bin's head: [its files by parse status, by language]


def file_counts(carry: Carry | None, r: Read, latest: Mapping[str, Any] | None = None
                ) -> tuple[Counter[str], Counter[str]]:
    """This build's files by parse status and by language (what the report and the health
    line count): the last build's with the files read again or gone moved — a long-lived
    builder's (``Carry.file_counts``), or those the latest recorded (``latest``: its
    ``stat.bin`` head) —, counted over every file otherwise."""
    held = carry.file_counts if carry is not None else None
    if held is None and carry is None and r.previous is not None and latest:
        counted = latest.get(FILE_COUNTS)
        if isinstance(counted, list) and len(counted) == 2 and all(
                isinstance(c, dict) and all(isinstance(k, str) and type(v) is int and v > 0 for k, v in c.items())
                for c in counted) and sum(counted[0].values()) == sum(counted[1].values()) == len(r.previous.facts):
            held = (r.previous.bundle.name, counted[0], counted[1])
    if r.previous is None or held is None or held[0] != r.previous.bundle.name:
        parse = Counter(f.parse_status for f in r.facts)
        languages = Counter(f.language or "other" for f in r.facts)
    else:
        parse, languages = Counter(held[1]), Counter(held[2])
        old, here = r.previous.facts, r.index.facts
        for p in (*r.reread, *r.removed):
            if p in old:
                parse[old[p].parse_status] -= 1
                languages[old[p].language or "other"] -= 1
            if p in here:
                parse[here[p].parse_status] += 1
                languages[here[p].language or "other"] += 1
        parse, languages = +parse, +languages  # (a count at nothing is no key)
    return parse, languages


def kept_records(carry: Carry, r: Read) -> dict[str, tuple[FileFacts, Any]]:
    """Each file's (facts, record) for the next build: the last build's map with the files
    read again or gone changed, while the records were made under the same settings (each
    other file's record is then the very one kept: ``read``); made whole otherwise."""
    kept = carry.records
    if r.previous is not None and carry.bundle == r.previous.bundle and carry.made_under == r.made_under \
            and kept and len(kept) == len(r.previous.facts):
        for p in r.removed:
            kept.pop(p, None)
        for p in r.reread:  # (the facts are in path order: the walk's)
            i = bisect.bisect_left(r.facts, p, key=lambda f: f.path)
            kept[p] = (r.facts[i], r.records[i])
        return kept
    return {f.path: (f, rec) for f, rec in zip(r.facts, r.records, strict=True)}


def _shard_groups(carry: Carry | None, r: Read) -> tuple[dict[int, list[str]] | None,
                                                         dict[int, list[str]] | None]:
    """(each shard's files this build has, kept for the next build; the same when the
    vault files may take them as the latest's): a long-lived builder's, kept while no file
    comes or goes, made again when one does; a one-shot build's, the latest's as its facts
    shards were read, when no file came or went (None otherwise)."""
    if r.previous is None:
        return None, None
    same = not r.removed and len(r.index.facts) == len(r.previous.facts)
    if carry is None:
        return None, r.previous.groups if same else None
    held = carry.shard_groups
    if same and held is not None and held[0] == r.previous.bundle.name:
        return held[1], held[1]
    return shard_groups(r.index.facts), None


def _may_fork(ex: Executor) -> bool:
    """Whether ``ex`` forks here without refusing (no engine open, no other thread)."""
    check = getattr(ex, "_check_fork", None)
    if check is None:
        return True  # (in process: nothing forks)
    try:
        check("")
    except ChildError:
        return False
    return True


def _catch_up(r: Read, checksums: dict[str, str]) -> list[str]:
    """The files the standby (whose files had ``checksums``) holds other bytes of, or
    lacks, which this build did not read: their symbol rows are made again."""
    read_now = set(r.reread)
    return sorted(f.path for f in r.facts if f.path not in read_now and checksums.get(f.path) != f.checksum)


def _catch_up_known(r: Read, delta: Mapping[str, str | None]) -> tuple[list[str], list[str]]:
    """``_catch_up`` and the standby's files that are not here, when the standby differs
    from the latest build only in ``delta`` (a long-lived builder's: each file its last
    build read or removed → its checksum in the standby, None where the standby lacks it)
    and this build's previous facts are the latest's: no pass over every file."""
    here, read_now = r.index.facts, set(r.reread)
    catchup = sorted(p for p, was in delta.items() if p in here and p not in read_now and was != here[p].checksum)
    gone = {p for p, was in delta.items() if was is not None and p not in here}
    gone.update(p for p in r.removed if p not in delta)  # (the latest's, unchanged since the standby)
    return catchup, sorted(gone)


def write_content(writer: BundleWriter, spool: Path, fts: bool, pool: int, threads: int, previous: Path | None,
                  keep_symbols: bool = False, standby: bool = False, postings_from: Path | None = None,
                  gone: tuple[str, ...] = ()) -> tuple[float, str, dict[str, str]]:
    """The content task (``BundleWriter.write_content``): the database started, and the
    full-text postings of the files this build read (``spool``) written, whole or over
    ``postings_from``'s. Returns its seconds, what the postings write did and the SHA-256
    of the files it linked rather than wrote."""
    import pyarrow as pa

    t0 = time.perf_counter()
    table = pa.ipc.open_file(pa.memory_map(str(spool))).read_all()
    try:
        done, known = writer.write_content(table, fts=fts, pool=pool, threads=threads, previous=previous,
                                           keep_symbols=keep_symbols, standby=standby,
                                           postings_from=postings_from, gone=gone)
    except (StoreError, OSError, ValueError) as exc:
        if (previous is None and not standby and postings_from is None) or disk_full(exc):
            raise
        what = "database failed" if isinstance(exc, StoreError) else "full-text postings could not be read"
        raise PreviousBundleError(f"the previous bundle's {what} ({exc})") from None
    return time.perf_counter() - t0, done, known


# ---- Phases 2 and 3: edges, and their merge -----------------------------------------------

def merge(plan: Plan, ex: Executor, r: Read, e: Edges | None, staging: Path,
          by_file: tuple[Mapping[str, list[Edge]], Mapping[str, list[Edge]]] | None = None,
          tail: list[Edge] | None = None, again: set[str] | None = None,
          shards: Kept | None = None, reads: dict[str, set[str]] | None = None,
          groups: Mapping[int, list[str]] | None = None,
          old_tail: list[Edge] | None = None) -> tuple[MergeResult, Task[bytes]]:
    """The merged edges, and a task writing the vault's JSON-lines files and the bundle's
    ``facts.bin`` beside the next phases. ``by_file`` (each file's Phase 2 and Phase 3
    edges; ``tail``: the Phase 3 edges after them): merged source by source, only the
    sources in ``again`` again when the previous merge is kept (a long-lived builder's, or
    the latest's edge shards': ``shards``); ``e`` (the edges as lists) when there is no
    ``by_file``. ``reads``: what making each file's edges here looked up (the shards keep
    it, with the latest's or the long-lived builder's for the others). ``groups``: each
    shard's files, when they are the latest's (a long-lived builder's, kept). ``old_tail``:
    the tail the latest's edge shards were merged with (its history's edges, had again;
    None: not known, and the shards' merge is not kept)."""
    nodes = r.index.facts.keys()  # (every file's path: the index's, not a set made again)
    pending = provenance.pending_dir(plan.vault, plan.build_id)  # moved into the vault once published
    carry = plan.carry
    by_source: BySource | None = None
    if again is not None and r.previous is not None and (r.removed or len(nodes) != len(r.previous.facts)):
        # (files came or went: the history's and the overlay's edges are merged only while
        # both ends are there, so their sources' runs are merged again)
        moved = {*r.removed, *(p for p in nodes if p not in r.previous.facts)}
        again = again | {e.source for e in (*r.overlay, *(tail or [])) if e.target in moved or e.source in moved}
    shard_moved = again  # (the files whose shard entries can differ from the latest's)
    if by_file is not None:
        if carry is not None:
            kept = carry.merged if r.previous is not None and carry.bundle == r.previous.bundle else None
        else:  # (over the latest's files: ``again`` is None when a file came or went)
            kept = shards.merge(r.overlay, old_tail) if shards is not None and again is not None \
                and old_tail is not None else None
        by_source = merge_by_source(by_file[0], by_file[1], tail or [], r.overlay, nodes, kept, again)
        if again is not None and kept is None:
            # (merged again whole: any file's run can have moved, and the shards hold the runs)
            before = shards.latest(r.overlay, tail or []) if shards is not None else None
            shard_moved = again | runs_moved(by_source, before) if before is not None else None
        elif again is not None:  # (and those whose history's or overlay's edges moved)
            shard_moved = again | by_source.fixed_again
        if carry is not None:
            carry.merged = by_source if not plan.cfg.two_layer else None
            if again is None:
                carry.edge_reads = {}
            for p in r.removed:
                carry.edge_reads.pop(p, None)
            carry.edge_reads.update(reads or {})
    made_reads = reads or {}

    def reads_of(path: str) -> list[str] | None:
        got = made_reads.get(path)
        if got is not None:
            return sorted(got)
        if shards is not None:
            return shards.reads_of(path)
        kept_reads = carry.edge_reads.get(path) if carry is not None else None
        return sorted(kept_reads) if kept_reads is not None else None
    if e is None and (plan.cfg.two_layer or plan.cfg.jsonl):  # (the lists those write, in file order)
        assert by_file is not None
        e = Edges([x for f in r.facts for x in by_file[0][f.path]],
                  [x for f in r.facts for x in by_file[1][f.path]] + (tail or []))
    if by_source is not None and not plan.cfg.two_layer:
        merged = by_source.result()
        if kept is not None and again is not None:  # (merged over it: ``merge_by_source``)
            merged.runs = (kept, by_source)
    elif plan.cfg.two_layer:
        assert e is not None
        store = EvidenceStore(pending / "evidence")
        store.append(PHASE2, e.phase2)
        store.append(PHASE3, e.phase3)
        store.append(OVERLAY, r.overlay)
        merged = store.committed_view(nodes)
    else:
        assert e is not None
        merged = merge_edges(e.phase2, e.phase3, r.overlay, nodes)

    def write_vault_files() -> bytes:
        extra: dict[str, Any] = {}
        edges_linked: dict[str, str] = {}
        if by_file is not None and by_source is not None:  # each file's edges, for the next build (``edge_shards``)
            extra["edge_shards"], edges_linked = write_edges(staging, r.facts, by_file, by_source, r.previous,
                                                             shard_moved, atomic_write, reads_of, groups)
            extra[MERGED_WITH] = merged_with(r.overlay, tail or [])
        linked = write_facts(staging, r.facts, r.facts_header, r.previous, {*r.reread, *r.removed}, atomic_write,
                             extra, (groups, r.index.facts) if groups is not None else None)
        linked.update(edges_linked)
        if not plan.cfg.jsonl:
            return orjson.dumps(linked)
        assert e is not None
        edges_dir = pending / "edges"
        write_jsonl(edges_dir / "phase2_edges.jsonl", (edge_to_json(x) for x in e.phase2))
        write_jsonl(edges_dir / "phase3_edges.jsonl", (edge_to_json(x) for x in e.phase3))
        write_jsonl(edges_dir / "all_edges.jsonl", (edge_to_json(x) for x in merged.edges))
        write_jsonl(pending / "index.jsonl", (rec.to_json() for rec in r.records))
        return orjson.dumps(linked)  # the digests of the facts shards linked, not written: known

    return merged, ex.submit("writing the vault's JSON-lines files", write_vault_files)


def kept_edge_shards(r: Read) -> tuple[tuple[tuple[Mapping[str, list[Edge]] | None, set[str] | None], ...],
                                         Kept | None]:
    """For each of Phase 2 and Phase 3 of a cold build: (the latest build's edges per file,
    read back from its shards, the files whose edges are made again: ``edges_to_make``;
    None when every file's are — a changed file whose language, manifest or namespaces
    moved), or (None, None) when there are no shards or
    one is damaged;
    and what the shards hold (``Kept``: the latest's merge, kept for the files not made again)."""
    if r.previous is None:
        return ((None, None), (None, None)), None
    kept = read_edges(r.previous)
    if kept is None:
        return ((None, None), (None, None)), None
    again = edges_to_make(r.facts, r.previous.facts, kept.sources_into, set(r.reread), kept.reading)
    return ((kept.lists[0], again), (kept.lists[1], again)), kept


# ---- The symbol graph, whole or for the changed files -------------------------------------

@dataclass(slots=True)
class Symbols:
    """The symbol graph of this build: ``packed`` holds every row (a whole pass), or, when
    ``segments`` came from the previous build, only the rows of ``patched`` (the files
    whose rows the database is patched with). The rows are kept as the export packs them
    (``pack_symbols``: lists, not the phase's dicts, which go once packed: at 50k polyglot
    files the build's peak fell 2,069 → 2,014 MiB). ``moved``: files whose rows were made
    again though their bytes did not change (the next build's standby catches them up)."""

    packed: dict[str, Any]
    sites: dict[str, list[int]]   # SymbolGraph.sites of the rows made
    totals: dict[str, Any]        # SymbolGraph.counts() of the rows made
    segments: Segments | None
    patched: list[str] | None
    why: str
    moved: list[str] = field(default_factory=list)
    table: SymbolTable | None = None  # the resolver's tables, kept for a long-lived builder's next build
    # what stat.bin records of the name tables (``name_tables``): the latest's part carried,
    # or (``write``) this build's tables, to be written as a part
    table_entry: dict[str, Any] | None = None
    write: SymbolTable | None = None
    heal: bool = False  # (the latest's tables could not be read: written whole, even over a part of that name)
    # what resolving each file resolved here read (``read_sets``): recorded whole (every
    # code file resolved), or as the latest's with these files' and ``reads_gone`` removed
    # (a long-lived builder's too, so that a cold build after a watch starts from them);
    # None: recorded none
    reads: dict[str, frozenset[str]] | None = None
    reads_gone: list[str] = field(default_factory=list)
    reads_whole: bool = False
    # every file's reads as the latest recorded them, when this build read or was given them
    # (``resolve_again``): what a long-lived builder keeps, with ``reads`` over them
    reads_all: dict[str, Any] | None = None
    # the latest's patch of the name tables with this build's over it, to be written as a
    # part beside the latest's tables (``name_tables.write_patch``)
    table_patch: tuple[Any, dict[str, list[str]]] | None = None

    @classmethod
    def of(cls, g: SymbolGraph, segments: Segments | None, patched: list[str] | None, why: str,
           keep_table: bool = False) -> Symbols:
        return cls(pack_symbols(g.nodes, g.edges), g.sites, g.counts(), segments, patched, why,
                   table=g.table if keep_table else None, reads=g.reads)

    def counts(self) -> dict[str, Any]:
        return self.segments.counts() if self.segments is not None else self.totals


def plan_symbols(r: Read, store: PartStore, carry: Carry | None = None) -> tuple[Segments | None, str]:
    """The previous build's per-file symbol rows, when this build may remake only the
    changed files' rows or compare every file's with them, and why (not). ``carry``: a
    long-lived builder's, whose group entries read before are not read again."""
    if r.previous is None:
        return None, "symbols: whole (no previous build)"
    try:  # nothing read again (a rebuild after a clone, a touch) too: every row is reused
        manifest = orjson.loads((r.previous.bundle / MANIFEST).read_bytes()).get("files", {})
    except (OSError, orjson.JSONDecodeError, AttributeError):
        return None, "symbols: whole (the previous manifest is unreadable)"
    segs, why = reusable(r.previous.bundle, manifest, r.index.facts, r.reread, r.removed, r.previous.facts, store,
                         carry.segment_entries if carry is not None else None)
    held = carry.symbol_counts if carry is not None else None
    if segs is not None and held is not None and held[0] == r.previous.bundle.name:
        segs.totals = {**held[1], "edges_by_relation": dict(held[1]["edges_by_relation"])}  # (the latest's counts)
    return segs, f"symbols: {why}" if segs is not None else f"symbols: whole ({why})"


def _changed(r: Read, catchup: tuple[str, ...] | list[str]) -> list[str]:
    """The files whose symbol rows a build that keeps every other file's makes again: those
    read again and those a standby it took over holds other rows of."""
    here = r.index.facts  # (this build's facts by path: no set made of every file)
    return sorted({*r.reread, *(p for p in catchup if p in here)})


# what a task resolving the changed files' symbols returns (``start_symbols``): the rows
# packed, their sites, their counts and what each file's resolution read
Resolved = tuple[dict[str, Any], dict[str, list[int]], dict[str, Any], dict[str, frozenset[str]] | None]


@dataclass(slots=True)
class Prefetched:
    """The latest's name tables being read back in a task forked as soon as the changed
    files are known (``prefetch_symbols``), which waits to be told the rest of its work
    (``start_symbols``)."""

    task: Task[Any]
    later: Later


def prefetch_symbols(ex: Executor, r: Read, store: PartStore, latest: dict[str, Any],
                     carry: Carry | None) -> Prefetched | None:
    """``start_symbols``' task started before the symbol rows are planned and the standby
    is claimed: it reads the latest's name tables back at once (0.4–0.5 s at 20k files,
    which then ran after those 0.25–0.3 s of this process's) and is told then what to
    resolve: ("again", the changed files' interfaces in the latest's segments, the
    standby's files to catch up) for ``resolve_again``; ("changed", the files) for their
    calls alone; None for nothing (``start_symbols`` then cancels it). None when no task
    would be started (a long-lived builder's, no recorded tables, nothing changed, no
    forked children)."""
    if carry is not None or r.previous is None or not latest or name_tables.carried(latest) is None \
            or not isinstance(ex, Processes) or not (r.reread or r.removed):
        return None
    order = {f.path: i for i, f in enumerate(r.facts)}
    previous_facts = r.previous.facts
    later = Later()

    def fork(fn: Callable[[], Any]) -> Callable[[], Any]:  # (half of the calls in a task of the task's own)
        task = ex.submit("resolving the symbols' calls", fn)
        return lambda: ex.join(task)

    def work() -> Any:
        table = name_tables.read(store, latest, order)
        told = later.receive()
        if told is None:
            return None
        if told[0] == "changed":
            if table is None:
                return None
            g = symbol_graph(r.facts, r.index, only=frozenset(told[1]), table=table)
            return pack_symbols(g.nodes, g.edges), g.sites, g.counts(), g.reads
        _, interfaces, also = told  # (what ``resolve_again`` reads of the latest's segments)
        segments = Segments({p: Segment(i, b"", b"", 0, 0, {}) for p, i in interfaces.items()})
        return _again_sent(resolve_again(r.facts, r.index, previous_facts, r.reread, segments, store, latest, fork,
                                         also, table))

    task = ex.submit("reading the name tables back", work)
    later.forked()
    return Prefetched(task, later)


def _again_sent(again: Again | str) -> Again | str | None:
    """``resolve_again``'s answer as its task sends it back: without the tables, or None
    when the patched tables are to be written whole (past ``name_tables.COMPACT``)."""
    if isinstance(again, str):
        return again
    if len(again.patch[0]) > name_tables.COMPACT:
        return None
    again.graph.table = again.reads = None  # (nothing keeps them: not sent back)
    return again


def start_symbols(ex: Executor, r: Read, previous: Segments | None, catchup: tuple[str, ...] | list[str],
                  store: PartStore, latest: dict[str, Any], carry: Carry | None,
                  prefetched: Prefetched | None = None) -> Task[Any] | None:
    """When ``make_symbols`` will resolve only the changed files against the latest's name
    tables (a cold build whose files kept their interface), that work as a task started
    now: reading the tables back (a 29 MB part at 20k files) and resolving those files'
    calls runs on the other core while this process makes and merges the edges and
    weighs them; only the changed files' rows come back. The same for a cold build whose
    files came, went or changed their interface (``previous.compare``): ``resolve_again``
    (the tables read back and patched, the files the change reaches resolved again) runs
    in the task, which sends back its ``Again`` without the tables, or why every file must
    be resolved (at 20k files it was 0.7–1.3 s of this process's time in a define, an add
    or a delete). None: the build does it itself (every file resolved, a long-lived
    builder's kept tables, nothing changed, no tables recorded). The task gives None when
    the tables cannot be read, or must be written whole (``make_symbols`` then does the
    work itself, as before). ``prefetched``: the task already reading the tables back,
    told here what to do (or cancelled)."""
    if previous is None or carry is not None or r.previous is None or not latest \
            or name_tables.carried(latest) is None:
        if prefetched is not None:
            _cancel(ex, prefetched)
        return None
    if prefetched is not None:
        here = r.index.facts
        changed = _changed(r, catchup)
        if previous.compare:
            prefetched.later.tell(("again", {p: previous.files[p].interface for p in r.reread if p in previous.files},
                                   [p for p in catchup if p in here]))
        elif changed:
            prefetched.later.tell(("changed", changed))
        else:
            _cancel(ex, prefetched)
            return None
        return prefetched.task
    if previous.compare:
        return _start_again(ex, r, previous, catchup, store, latest)
    changed = _changed(r, catchup)
    if not changed:
        return None
    order = {f.path: i for i, f in enumerate(r.facts)}

    def work() -> Resolved | None:
        table = name_tables.read(store, latest, order)
        if table is None:
            return None
        g = symbol_graph(r.facts, r.index, only=frozenset(changed), table=table)
        return pack_symbols(g.nodes, g.edges), g.sites, g.counts(), g.reads

    return ex.submit("resolving the changed files' symbols", work)


def _cancel(ex: Executor, prefetched: Prefetched) -> None:
    prefetched.later.tell(None)
    if isinstance(ex, Processes):
        ex.cancel(prefetched.task)


def _start_again(ex: Executor, r: Read, previous: Segments, catchup: tuple[str, ...] | list[str],
                 store: PartStore, latest: dict[str, Any]) -> Task[Again | str | None]:
    """``resolve_again`` as a task (``start_symbols``): its ``Again`` with the graph's
    tables left behind (they stay in the task), why a whole pass is needed, or None when the
    patched tables are to be written whole (past ``name_tables.COMPACT``: the build then
    resolves again itself, keeping them)."""
    previous_facts = r.previous.facts if r.previous is not None else {}
    here = r.index.facts  # (this build's facts by path: no set made of every file)
    also = [p for p in catchup if p in here]

    def fork(fn: Callable[[], Any]) -> Callable[[], Any]:  # (half of the calls in a task of the task's own)
        task = ex.submit("resolving the symbols' calls", fn)
        return lambda: ex.join(task)

    def work() -> Again | str | None:
        return _again_sent(resolve_again(r.facts, r.index, previous_facts, r.reread, previous, store, latest, fork,
                                         also))

    return ex.submit("resolving again what the changed files reach", work)


def make_symbols(r: Read, previous: Segments | None, why: str, catchup: tuple[str, ...] | list[str] = (),
                 store: PartStore | None = None, carry: Carry | None = None, ex: Executor | None = None,
                 latest: dict[str, Any] | None = None,
                 early: Task[Any] | None = None) -> Symbols:
    """The symbol rows: every file's (no previous segments); or those of the files read
    again and of ``catchup`` (files a standby holds other rows of; those no longer here
    only lose theirs); or (``previous.compare``) every file's, compared with the previous
    build's so that the database is patched only for the files whose rows moved.
    ``carry``: a long-lived builder's; the resolver's tables it kept from the previous
    build are reused when only some files' rows are made (their names did not change), and
    this build's are kept in ``Symbols.table``. ``ex``: a pass that compares every file's
    rows resolves half of the call sites in a task of it (``symbol_graph``'s ``fork``).
    ``latest``: the latest build's ``stat.bin`` header, whose name tables (``name_tables``)
    a build with no kept tables reads back instead of declaring every file again.
    ``early``: that read and the changed files' resolution, started before
    (``start_symbols``)."""
    keep_table = carry is not None
    fork = None
    if ex is not None:
        def fork(fn: Callable[[], Any]) -> Callable[[], Any]:
            task = ex.submit("resolving the symbols' calls", fn)
            return lambda: ex.join(task)

    # (a long-lived builder's tables, the latest's, for ``resolve_again`` to patch instead of
    # reading them back: a table's lists hold ids in the files' order, so the files both
    # builds have must be in the same order, whatever came or went)
    own_table = carry.symbol_table if carry is not None and previous is not None and previous.compare \
        and r.previous is not None and carry.bundle == r.previous.bundle \
        and _same_order(r.index.facts, r.previous.facts, bool(r.removed)) else None
    if carry is not None and (previous is None or previous.compare):
        carry.symbol_table = None  # made again: the old tables are not held beside the new ones
    if previous is None:  # (a full build's: its content task keeps the other core busy, no fork)
        g = symbol_graph(r.facts, r.index)
        made = Symbols.of(g, None, None, why, keep_table)
        made.reads_whole = True
        made.write = g.table  # (the tables and the reads: what a later add resolves again from, a watch's too)
        return made
    here = r.index.facts  # (this build's facts by path: no set made of every file)
    gone_too = [p for p in catchup if p not in here]  # (a standby's files that are gone: rows removed only)
    if previous.compare and store is not None and latest and r.previous is not None:
        again: Again | str | None = ex.join(early) if early is not None and ex is not None else None  # (``start_symbols``)
        if again is None:
            again = resolve_again(r.facts, r.index, r.previous.facts, r.reread, previous, store, latest, fork,
                                  [p for p in catchup if p in here], own_table, held_reads(carry, latest))
        del own_table
        if isinstance(again, Again):
            made_again = _made_again(r, previous, again, why, gone_too, catchup, store, latest, keep_table)
            made_again.reads_all = again.reads if carry is not None else None
            return made_again
        why = f"{why}; every file resolved: {again}"
    if previous.compare:
        assert store is not None
        g = symbol_graph(r.facts, r.index, fork=fork)
        made = Symbols.of(g, None, None, why, keep_table)
        made.reads_whole = True
        made.write = g.table  # (a long-lived builder's too: its next define resolves again from them)
        del g
        read_again = set(r.reread)  # (a file not read again has the facts its previous segment was made of)
        fresh = Segments.of_packed(made.packed, made.sites, r.facts,
                                   {p: seg.interface for p, seg in previous.files.items() if p not in read_again})
        moved = previous.moved(fresh, store)
        gone = [p for p in previous.files if p not in here]
        # (the files read again too: a standby holds older rows of them even when this
        # build's equal the latest's)
        patched = sorted({*moved, *gone, *gone_too, *r.reread, *(p for p in catchup if p in here)})
        keep = set(patched)
        nodes = [n for n in made.packed["nodes"] if n[5] in keep]  # (SYMBOL_NODE_FIELDS: path is the 6th)
        edges = [e for e in made.packed["edges"] if e[0].split("#", 1)[0] in keep]
        made.packed = {**made.packed, "nodes": nodes, "edges": edges}
        made.segments, made.patched = fresh, patched
        made.moved = sorted(set(moved) - set(r.reread))
        made.why = (f"symbols: every file's rows made again, {len(moved):,} moved and {len(gone):,} gone "
                    f"written ({why.removeprefix('symbols: ')})")
        return made
    changed = _changed(r, catchup)
    kept = carry.symbol_table if carry is not None and r.previous is not None and \
        carry.bundle == r.previous.bundle else None
    if carry is not None:
        carry.symbol_table = None  # (a kept table is this build's from here on)
    entry = name_tables.carried(latest or {})  # (every file's interface is the latest's)
    read_back, heal = "", False
    resolved: Resolved | None = ex.join(early) if early is not None and ex is not None else None
    if kept is None and changed and store is not None and latest and resolved is None:
        kept = name_tables.read(store, latest, {f.path: i for i, f in enumerate(r.facts)})
        read_back = "; the name tables read back" if kept is not None else ""
        heal = kept is None and entry is not None  # (recorded, but missing or damaged: this build's written)
        entry = entry if kept is not None else None
    if resolved is not None:  # (the task read the tables back and resolved the changed files)
        made = Symbols(*resolved[:3], None, sorted({*changed, *gone_too}), why + "; the name tables read back",
                       reads=resolved[3])
    else:
        if not changed and carry is None:  # nothing to resolve: no file's names are needed
            g = SymbolGraph()
        else:
            g = symbol_graph(r.facts, r.index, only=frozenset(changed), table=kept)
        made = Symbols.of(g, None, sorted({*changed, *gone_too}), why + read_back, keep_table)
        if entry is None and g.table is not None:
            made.write = g.table  # (every file declared: nothing recorded, or the part could not be read)
    made.table_entry, made.heal = entry, heal
    made.segments = previous.replaced(
        Segments.of_packed(made.packed, made.sites, [r.index.facts[p] for p in changed]), changed)
    return made


def _same_order(here: Mapping[str, FileFacts], before: Mapping[str, FileFacts], removed: bool) -> bool:
    """Whether the files both builds have are in the same order in ``here`` and ``before``
    (each build's facts by path, in its walk's order)."""
    if not removed and len(here) == len(before):
        return True  # (the same files: the read keeps the latest's order, ``facts_in_order``)
    return [p for p in here if p in before] == [p for p in before if p in here]


def held_reads(carry: Carry | None, latest: dict[str, Any]) -> dict[str, Any] | None:
    """A long-lived builder's reads of every file (``Carry.reads``) when they are those the
    latest recorded (its ``read_sets`` entry, which names the parts they are in)."""
    if carry is None or carry.reads is None or not latest or carry.reads[0] != latest.get(read_sets.KEY):
        return None
    return carry.reads[1]


def reads_after(carry: Carry, latest: dict[str, Any], entry: Any,
                update: tuple[dict[str, Any], list[str], bool] | None,
                started: dict[str, Any] | None) -> tuple[Any, dict[str, Any]] | None:
    """What a long-lived builder keeps of every file's reads after a build that recorded
    ``entry`` (``read_sets.write``'s; None: no record): the reads it started from
    (``started``, else the ones it held for the latest) with this build's over them
    (``update``: (the files' reads, the files gone, whether every file's)), in place. The
    same record as the parts written, merged (``read_sets.merged``); None when unknown."""
    if entry is None or update is None:
        return None
    reads, gone, whole = update
    if whole:
        return entry, dict(reads)
    base = started if started is not None else held_reads(carry, latest)
    if base is None:
        return None
    base.update(reads)
    for p in gone:
        base.pop(p, None)
    return entry, base


def keep_tables(store: PartStore, symbols: Symbols, latest: dict[str, Any]) -> dict[str, Any]:
    """What ``stat.bin`` records of the resolver's name tables and of what each file's
    resolution read (None: nothing), the parts written: the tables when this build made or
    patched them (else the latest's entry carried), the reads whole or as a delta."""
    table = symbols.table_entry
    if symbols.write is not None:
        table = name_tables.write(store, symbols.write, symbols.heal)
    elif symbols.table_patch is not None and table is not None:
        table = name_tables.write_patch(store, table, *symbols.table_patch)
    reads = None
    if symbols.reads is not None:
        reads = read_sets.write(store, latest, symbols.reads, symbols.reads_gone, symbols.reads_whole)
    return {name_tables.KEY: table, read_sets.KEY: reads}


def _made_again(r: Read, previous: Segments, again: Again, why: str, gone_too: list[str],
                catchup: tuple[str, ...] | list[str], store: PartStore, latest: dict[str, Any],
                keep_table: bool = False) -> Symbols:
    """The symbols of a build whose files came, went or changed their interface, from the
    rows ``resolve_again`` made: those compared with the latest's, the database patched
    for the files whose rows moved, every other file's segment the latest's."""
    g = again.graph
    made = Symbols.of(g, None, None, why, keep_table)  # (a long-lived builder keeps the patched tables)
    read_again = set(r.reread)
    mine = set(again.made)
    fresh = Segments.of_packed(made.packed, made.sites, [f for f in r.facts if f.path in mine],
                               {p: previous.files[p].interface for p in mine
                                if p not in read_again and p in previous.files})
    moved = previous.moved(fresh, store)
    segments = previous.replaced(fresh, again.made)
    segments.drop(again.gone)
    here = r.index.facts  # (this build's facts by path: no set made of every file)
    patched = sorted({*moved, *again.gone, *gone_too, *r.reread, *(p for p in catchup if p in here)})
    keep = set(patched)
    made.packed = {**made.packed, "nodes": [n for n in made.packed["nodes"] if n[5] in keep],
                   "edges": [e for e in made.packed["edges"] if e[0].split("#", 1)[0] in keep]}
    made.segments, made.patched = segments, patched
    made.moved = sorted(set(moved) - read_again)
    made.reads_gone = again.gone
    made.table_entry = name_tables.carried(latest)
    if len(again.patch[0]) > name_tables.COMPACT or made.table_entry is None:
        made.write = g.table  # (the whole tables written again, the patch folded in)
    else:
        made.table_patch = again.patch
    files = "file's" if len(again.made) == 1 else "files'"
    made.why = (f"symbols: the name tables patched for {len(again.changed):,} file"
                f"{'' if len(again.changed) == 1 else 's'} that came, went or changed their interface; "
                f"{len(again.made):,} {files} rows made again, {len(moved):,} moved and {len(again.gone):,} gone "
                f"written ({why.removeprefix('symbols: ')})")
    return made


# ---- Phase 2b: weighted assembly ------------------------------------------------------------

def _sensitivity_overrides(cfg: Config, facts: list[FileFacts]) -> dict[str, str]:
    from oracl.core.paths import glob_match

    out: dict[str, str] = {}
    for pattern, level in sorted(cfg.sensitivity_globs.items()):
        for f in facts:
            if glob_match(f.path, pattern):
                out[f.path] = level
    return out


class RunRows(Mapping[str, list[Any]]):
    """Each source's run of a merge (``BySource``) as rows, made when asked: what
    ``weigh_around`` reads of the latest's runs, from a long-lived builder's last merge
    instead of the edge shards. Every source merged has a run, empty when it kept no edge."""

    __slots__ = ("_by",)

    def __init__(self, by: BySource) -> None:
        self._by = by

    def __getitem__(self, source: str) -> list[Any]:
        if source not in self._by.sources:
            raise KeyError(source)
        return [tuple(e) for e in self._by.edges.get(source, ())]

    def __contains__(self, source: object) -> bool:
        return source in self._by.sources

    def __iter__(self) -> Iterator[str]:
        return iter(self._by.sources)

    def __len__(self) -> int:
        return len(self._by.sources)


class Checksums(Mapping[str, str]):
    """Each file's checksum, read from its facts when asked (``make_events`` asks of the
    files events name), not a dict made of every file each build."""

    __slots__ = ("_facts",)

    def __init__(self, facts: Mapping[str, FileFacts]) -> None:
        self._facts = facts

    def __getitem__(self, path: str) -> str:
        return self._facts[path].checksum

    def __contains__(self, path: object) -> bool:
        return path in self._facts

    def __iter__(self) -> Iterator[str]:
        return iter(self._facts)

    def __len__(self) -> int:
        return len(self._facts)


def sensor_events(plan: Plan, by_path: Mapping[str, FileFacts], previous: Previous | None) -> EventsOut:
    """Phase 6 (design §5d): the vault's ingested events against this build's files (their
    facts by path), each file's events made again only when it or its events changed
    (``event_segments``)."""

    @functools.cache
    def spans(rel: str) -> list[tuple[str, int, int]]:  # only the files events name are looked at
        f = by_path[rel]
        if len(f.symbols) != len(f.symbol_details):
            return []
        return [(f"{rel}#{d[0]}", s[2], s[3]) for s, d in zip(f.symbols, f.symbol_details, strict=True)]

    return make_events(plan.vault.dir / EVENTS_FILE, previous.bundle if previous is not None else None,
                       Checksums(by_path), spans)


def read_history_phase(plan: Plan, r: Read, head: str | None, latest: dict[str, Any] | None = None) -> History:
    """The history of the build's files up to HEAD (``head``, the commit discover read;
    design §5c); none outside git. A long-lived builder's last history while HEAD and the
    files are the same: the log is a function of them (a save read the newest 5,000
    commits again otherwise). Else the log the latest build kept (``latest``: its
    ``stat.bin`` header, ``GIT_LOG``) is parsed again with this build's files, git read
    only for the commits it lacks (0.2–0.3 s of every cold build of sympy before)."""
    carry = plan.carry
    held = carry.history if carry is not None else None
    paths = r.index.facts.keys()
    if held is not None and head is not None and held[0] == head and held[1] == paths:
        history = held[2]
    else:
        store = store_of(plan.vault.dir)
        kept = kept_log(store, latest or {})
        # (the latest's files: what it parsed the kept log into is this build's history while
        # the log is the same, a part read back instead of 5,000 commits parsed again)
        same_files = r.previous is not None and not r.removed and len(paths) == len(r.previous.facts)
        parsed = kept_history(store, latest or {}) if kept is not None and same_files else None
        history = read_history(plan.root, paths, head=head, kept=kept, parsed=parsed)
        if carry is not None:
            carry.history = (head, frozenset(paths), history) if head is not None else None
    history.moved = None
    if r.previous is not None:
        history.moved = history_moved(plan, r, history, latest or {},
                                      held[2] if held is not None else None)
    return history


HISTORY_KEY = "history_sha256"  # stat.bin's entry: ``History.digest`` of the history the build weighed with
HISTORY_PART = "history"  # stat.bin's entry: [the part holding that history (``history.to_part``), its length]


def kept_history(store: PartStore, latest: dict[str, Any]) -> History | None:
    """The history the latest build weighed with, when it kept one and its part is whole."""
    entry, want = latest.get(HISTORY_PART), latest.get(HISTORY_KEY)
    if not isinstance(entry, list) or len(entry) != 2 or not isinstance(want, str) or not want:
        return None
    try:
        blob = store.get(str(entry[0]))
    except (DigestError, OSError):
        return None
    return history_from_part(blob, want) if len(blob) == entry[1] else None


def history_entry(store: PartStore, history: History, latest: dict[str, Any]) -> list[Any] | None:
    """What ``stat.bin`` records of the history this build weighed with (the latest's entry
    when it is the same history: nothing written); None when there is none."""
    if not history.edges and not history.messages:
        return None
    entry = latest.get(HISTORY_PART)
    if isinstance(entry, list) and len(entry) == 2 and latest.get(HISTORY_KEY) == history.digest():
        return entry
    blob = history_to_part(history)
    return [store.put(blob, packed=True), len(blob)]


def history_moved(plan: Plan, r: Read, history: History, latest: dict[str, Any],
                  held: History | None) -> HistoryMoved | None:
    """What moved between the latest build's history and ``history`` (``history.Moved``),
    or None when the latest's cannot be had again: a long-lived builder's last history,
    or the kept log parsed again with the latest's files, taken only when its digest is
    the one the latest recorded (``HISTORY_KEY``)."""
    want = latest.get(HISTORY_KEY)
    if not isinstance(want, str) or not want:
        return None
    if history.digest() == want:
        return HistoryMoved(frozenset(), frozenset(), history.edges)
    assert r.previous is not None
    old = held if held is not None and held is not history and held.digest() == want else None
    if old is None:
        old = kept_history(store_of(plan.vault.dir), latest)
    if old is None:
        kept = kept_log(store_of(plan.vault.dir), latest)
        if kept is None:
            return None
        old = parse_log(kept.text, r.previous.facts.keys())
        if old.digest() != want:
            return None
    return moved_between(old, history)


GIT_LOG = "git_log"  # stat.bin's entry: [the part holding the history's git log, its length, its key]


def kept_log(store: PartStore, latest: dict[str, Any]) -> Log | None:
    """The git log the latest build parsed, when it recorded one and its part is whole."""
    entry = latest.get(GIT_LOG)
    if not isinstance(entry, list) or len(entry) != 3:
        return None
    try:
        blob = store.get(str(entry[0]))
    except (DigestError, OSError):
        return None
    return Log(str(entry[2]), blob) if len(blob) == entry[1] else None


def log_entry(store: PartStore, history: History, latest: dict[str, Any]) -> list[Any] | None:
    """What ``stat.bin`` records of the log ``history`` parsed (the latest's entry when it
    is the same log: nothing written)."""
    log = history.log
    if log is None:
        return None
    entry = latest.get(GIT_LOG)
    if isinstance(entry, list) and len(entry) == 3 and entry[2] == log.key and entry[1] == len(log.text):
        return entry
    return [store.put(log.text, packed=True), len(log.text), log.key]


@dataclass(frozen=True, slots=True)
class Weighed:
    graph: WeightedGraph
    settings: str  # ``weigh.settings_key``: stat.bin records it
    mode: str      # how the structure was had: "weigh: …"


def weigh_graph(plan: Plan, ex: Executor, r: Read, merged: MergeResult, history: History,
                latest: dict[str, Any] | None = None,
                again: tuple[tuple[Mapping[str, list[Edge]] | None, set[str] | None], ...] | None = None,
                by_file: tuple[Mapping[str, list[Edge]], Mapping[str, list[Edge]]] | None = None,
                shards: Kept | None = None) -> Weighed:
    """Hubs, weights, μ/σ, δ, priorities and ranks; the DuoRanker runs as a task (its ranks
    come back as raw doubles, exact) while this process makes the node rows. ``latest``:
    the latest build's ``stat.bin`` header: when this build's structure is the one it
    recorded, its raw ranks are read back instead and the artifact rows are made when read
    (``weigh``'s ``lazy``: a cold build reads those of its reach and of the export's groups
    made again). ``again``/``by_file`` (a cold build's, ``kept_edge_shards``): the latest's
    edges per file and the files whose edges were made again, and this build's edges per
    file: when they prove the structure the latest's (``same_structure``), no pass over
    every node's structure is made. ``shards``: what the latest's edge shards hold (their
    merged runs: what the weighing around a move compares)."""
    from array import array

    from oracl.builder.pipeline.duoranker import raw_ranks

    def rank_job(edges: list[tuple[str, str, float]], tagsets: dict[str, frozenset[str]],
                 cfg: Config) -> Callable[[], list[float]]:
        def ranks() -> bytes:
            return array("d", raw_ranks(edges, tagsets, cfg.beta, cfg.gamma, cfg.lam, cfg.neighbour_cap)).tobytes()

        task = (InProcess() if len(edges) < RANK_FORK_MIN_EDGES else ex).submit("ranking the edges", ranks)

        def wait() -> list[float]:
            out = array("d")
            out.frombytes(ex.join(task))
            return out.tolist()

        return wait

    # usage (design §4) has no feed: being returned is not evidence, and what was used reaches
    # the graph only as reviewed, query-local learned data (§9), never as a global prior
    facts = r.index.facts  # (every file's facts by path)
    overrides = _sensitivity_overrides(plan.cfg, r.facts)
    learned = r.made_under[1] if r.made_under is not None else {}
    settings = settings_key(plan.cfg, Counter(), overrides, learned, r.overlay)
    carry = plan.carry
    # (what moved of the history against the latest's: its files' rows made again, its
    # sources' runs merged again; not known: weighed whole)
    moved = history.moved
    if carry is not None and carry.graph is not None and r.previous is not None and carry.bundle == r.previous.bundle \
            and moved is not None:
        graph = reweigh(carry.graph, r.records, facts, merged.edges, plan.cfg, Counter(), overrides, history.messages,
                        r.places, merged.patched, moved.rows)
        if graph is not None:
            carry.graph = None  # its rows are this build's now (changed in place)
            return Weighed(graph, settings, "weigh: the kept graph's, its moved rows made again")
    # (a long-lived builder's last graph, when it is the latest's: weighed around a move, it
    # is patched, not made again)
    prior = carry.graph if carry is not None and r.previous is not None and carry.bundle == r.previous.bundle \
        else None
    if carry is not None:
        carry.graph = None  # not held beside the graph made now
    latest = latest or {}
    ranks = latest_ranks(store_of(plan.vault.dir), latest)
    kept, why = None, "no previous build" if r.previous is None else "every file's edges made"
    if r.previous is not None and moved is None:
        why = "the history moved and the latest's could not be had again"
    elif r.previous is not None and not plan.cfg.two_layer and again is not None and by_file is not None \
            and again[0][0] is not None and again[1][0] is not None:
        old_lists = (again[0][0], again[1][0])
        assert moved is not None
        if moved.sources:
            n = len(moved.sources)
            why = f"the history's edges of {n:,} {'file' if n == 1 else 'files'} moved"
        elif again[0][1] is not None:
            kept, why = kept_structure(r.previous.bundle, latest, settings, plan.cfg, learned, r.facts,
                                       r.previous.facts, r.records, r.reread, merged.edges, old_lists, by_file,
                                       again[0][1], history.edges, r.overlay, ranks, r.index.facts.keys())
        else:
            why = "a file's edge interface moved"
        if kept is None:  # (the structure moved, or could not be proven the latest's: weighed around the move)
            assert moved is not None
            figures, not_figures = latest_figures(r.previous.bundle, latest, settings, ranks)
            around, not_around = None, not_figures
            runs: Mapping[str, list[Any]] | None = shards.runs if shards is not None and shards.made_with and \
                shards.made_with == merged_with(r.overlay, moved.edges) else None
            same: Callable[[str], bool] | None = None
            at: Mapping[str, tuple[int, int]] | None = None
            if merged.runs is not None:
                # (merged over the latest's runs, a long-lived builder's last merge or the edge
                # shards': a run merged again is a new list, so a source whose run is the very
                # list kept is unmoved)
                kept_merge, now_merge = merged.runs
                if carry is not None:  # (else the shards' rows: the same runs)
                    runs = RunRows(kept_merge)
                same = lambda p: now_merge.edges.get(p) is kept_merge.edges.get(p)  # noqa: E731
                at = now_merge.places() if now_merge.flat is merged.edges else None  # (each run's place in it)
            if figures is not None and runs is None:
                not_around = "the latest's edges were merged with another overlay or history"
            if figures is not None and runs is not None:
                old_records = {p: make_record(r.previous.facts[p], plan.cfg, learned.get(p))
                               for p in (*r.reread, *r.removed) if p in r.previous.facts}
                around, not_around = weigh_around(r.records, facts, r.previous.facts, old_records, merged.edges,
                                                  runs, plan.cfg, figures, Counter(), overrides, history.messages,
                                                  same, prior if same is not None else None, at, moved.rows)
            if around is not None:
                return Weighed(around, settings, f"weigh: {not_around} ({why})")
            why = why if not_around == why else f"{why}; not weighed around it: {not_around}"
    # (each source's run's place in the merged edges, when they are a merge's runs laid end
    # to end: what the export groups a proven structure's edge rows by, ``_edge_sections``)
    now_runs = merged.runs[1] if merged.runs is not None else None
    places = now_runs.places() if kept is not None and now_runs is not None and now_runs.flat is merged.edges \
        else None
    graph = weigh(r.records, facts, merged.edges, plan.cfg, Counter(), overrides, rank_job=rank_job,
                  history=history.messages, keep=carry is not None, latest_key=str(latest.get("structure_sha256", "")),
                  latest_ranks=ranks, lazy=carry is None, proven=kept, places=places)
    if r.previous is None:  # (a first or full build: nothing to say how it was had against)
        mode = ""
    elif kept is not None and graph.make is not None and not graph.ranked_here and graph.structure_key == kept.key:
        mode = f"weigh: the structure is {why}"
    elif not graph.ranked_here:
        mode = f"weigh: every node's structure worked out ({why}), the same as the latest's: its ranks read back"
    else:
        mode = f"weigh: every node's structure worked out and the edges ranked ({why})"
    return Weighed(graph, settings, mode)


# ---- Export and bundle ---------------------------------------------------------------------

def _current_report(plan: Plan, d: Discovered, seconds: dict[str, float], peak_mib: dict[str, int]) -> BuildReport:
    """The report of a build that found nothing to do: the latest bundle's own figures (its
    header, and what its ``stat.bin`` recorded), nothing read, written or published."""
    from oracl.builder.pipeline.annotate import LEARNED_FILES, is_ours

    cur = d.current
    assert cur is not None
    header = orjson.loads((cur.bundle / HEADER_FILE).read_bytes())
    cov = header.get("coverage", {})
    parse = ({"ok": cov["parsed"]} if cov.get("parsed") else {}) | dict(cov.get("unparsed_by_reason", {}))
    languages = cov.get("languages", {})
    checked = f" ({cur.racy_checked:,} written just before it, their bytes checked)" if cur.racy_checked else ""
    untrusted = tuple(name for name in LEARNED_FILES.values()
                      if (plan.vault.dir / name).exists() and not is_ours(plan.vault.dir / name))
    return BuildReport(
        build_id=cur.build_id, root=str(plan.root.resolve()), files_seen=d.discovery.seen,
        files_indexed=int(cov.get("indexed", cur.files)), skipped=dict(sorted(d.discovery.skipped.items())),
        excluded_dirs=dict(sorted(d.discovery.excluded_dirs.items())), parse_status=dict(sorted(parse.items())),
        languages=dict(sorted(languages.items(), key=lambda kv: (-kv[1], kv[0]))),
        skipped_by_suffix=dict(sorted(d.discovery.skipped_suffixes.items(), key=lambda kv: (-kv[1], kv[0]))),
        counts=header["counts"], dropped_edges=dict(header["counts"].get("dropped_edges", {})),
        mu=float(cur.stat_header.get("mu", header["mu"])), sigma=float(cur.stat_header.get("sigma", header["sigma"])),
        seconds=seconds, peak_rss_mib=peak_mib,
        export_path=str(plan.vault.export_index), export_root=cur.export_root, bundle_path=str(cur.bundle),
        fts=plan.fts, two_layer=bool(header.get("two_layer", False)),
        signature=str(cur.stat_header.get("signature", "unsigned")), orphans=int(cur.stat_header.get("orphans", 0)),
        mode=f"up to date: nothing changed since build {cur.build_id}{checked}", files_read=0, files_removed=0,
        symbols_mode="symbols: unchanged", database_mode="database: unchanged (the latest bundle serves)",
        untrusted=untrusted, walk=d.walk)


def _git_state(root: Path) -> tuple[str | None, bool | None]:
    try:
        head = git(root, "rev-parse", "HEAD", text=True, timeout=30)
        if head.returncode != 0:
            return None, None
        status = git(root, "status", "--porcelain", "--", ".", ":(exclude).oracl", text=True)
        return head.stdout.strip(), bool(status.stdout.strip())
    except (OSError, subprocess.SubprocessError):
        return None, None


def make_header(plan: Plan, d: Discovered, parse: Counter[str], n_records: int, dropped: dict[str, int],
                graph: WeightedGraph, languages: Counter[str], symbols: Symbols,
                history: History | None = None, learned: Learned | None = None,
                events: EventsOut | None = None) -> dict[str, Any]:
    commit, dirty = d.git_state
    cfg = plan.cfg
    header: dict[str, Any] = {
        "version": SCHEMA_VERSION,
        "generated_at": plan.now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "build_id": plan.build_id,
        "tool_version": __version__,
        "root": str(plan.root.resolve()),
        "source_commit": commit,
        "dirty": dirty,
        "counts": {
            "nodes": len(graph.nodes),
            "nodes_by_kind": {"artifact": n_records, "hub": graph.hubs},
            "edges": len(graph.edges),
            "edges_by_relation": dict(sorted(graph.edge_counts.items())),
            "source_artifacts": {"seen": d.discovery.seen, "indexed": n_records},
            "dropped_edges": dict(sorted(dropped.items())),
            "symbols": symbols.counts(),
        },
        "mu": graph.mu, "sigma": graph.sigma,
        # what priority, δ, link density and association_rank are derived from (core/derive.py)
        "aggregates": graph.terms.to_json() if graph.terms is not None else None,
        "alpha": cfg.alpha, "beta": cfg.beta, "gamma": cfg.gamma, "lambda": cfg.lam,
        "caps": {"neighbourhood": cfg.neighbour_cap, "query_neighbour_guard": cfg.query_neighbour_guard,
                 "priority": cfg.priority_cap},
        "relation_weights": dict(sorted(cfg.relation_weights.items())),
        "config_sha256": cfg.digest(),
        "coverage": {
            "indexed": n_records, "parsed": parse.get("ok", 0),
            "unparsed_by_reason": dict(sorted((k, v) for k, v in parse.items() if k != "ok")),
            "skipped_by_reason": dict(sorted(d.discovery.skipped.items())),
            "skipped_by_suffix": dict(sorted(d.discovery.skipped_suffixes.items())),
            "languages": dict(sorted(languages.items())),
            "excluded_dirs_by_reason": dict(sorted(d.discovery.excluded_dirs.items())),
        },
        "two_layer": cfg.two_layer,
        "history": {"commits": history.commits, "head": history.head, "note": history.note,
                    "files_with_messages": len(history.messages)} if history is not None else None,
    }
    if learned is not None and learned.header:  # the learned files this build merged: the signature covers them
        header["learned"] = learned.header
    if events is not None and events.header is not None:
        header["events"] = events.header
    return header


@dataclass(slots=True)
class SymbolSections:
    """What the export takes of the symbols and the facts alone, written beside the
    weighing (``start_symbol_sections``): the two symbol sections' parts, and the basis
    ``interface.json`` was made under (``stat.bin`` records it)."""

    sections: dict[str, Parts]
    basis: str
    types: list[Any]  # the part of the repository's type names counted (``interface.type_counts``)


def _latest_type_counts(store: PartStore, latest: dict[str, Any]) -> dict[str, int] | None:
    """The type names the latest build counted (its ``stat.bin`` header ``latest`` names
    the part), or None when it recorded none or the part is missing or damaged."""
    entry = latest.get("interface_types")
    if not isinstance(entry, list) or len(entry) != 2:
        return None
    try:
        return interface_of.decode_type_counts(store.get(str(entry[0])))
    except DigestError:
        return None


def start_symbol_sections(plan: Plan, ex: Executor, symbols: Symbols, writer: BundleWriter, facts: list[FileFacts],
                          whole: bool, latest: tuple[Path, dict[str, Any], dict[str, FileFacts]] | None,
                          changed: tuple[list[str], list[str], Mapping[str, FileFacts]] | None = None
                          ) -> Callable[[], SymbolSections]:
    """The export's symbol sections (their parts written, ``symbols.seg`` added to the
    bundle) and ``interface.json``, as a task: they depend on the symbols and the facts
    only, so in a cold build they are written on the other core while this process weighs
    (the export task then has only the artifact graph's sections left). ``whole``, ``latest``:
    as ``start_export``'s. A long-lived builder makes ``interface.json`` here (its interface
    memo is kept) and the sections in the task when it may fork (0.25–0.3 s a save at 20k
    files, measured, which it spent in this process); it also keeps the type-name counts
    it made (``Carry.types``) and, with ``changed`` (the paths read again, those gone, this
    build's facts by path), counts only those files again and patches the last document
    (``interface.interface_again``). Returns what waits for them."""
    carry = plan.carry

    def sections_work() -> dict[str, Parts]:
        store = store_of(plan.vault.dir)
        segs = symbols.segments  # a selective rebuild's: the changed files' rows, the others in their parts
        sections: dict[str, Parts] = {}
        if segs is None and not any("#" in f.path for f in facts):  # (a '#' in a path breaks the segments' order)
            segs = Segments.of_packed(symbols.packed, symbols.sites, facts)
        if segs is not None:
            sections["symbol_edges"], sections["symbol_nodes"], seg_file = segs.put(store, rewrite=whole)
            writer.add(SYMBOLS_FILE, seg_file)
        else:
            packed = symbols.packed
            sections["symbol_nodes"] = put_rows(store, packed["nodes"], [r[0] for r in packed["nodes"]],
                                                rewrite=whole)
            sections["symbol_edges"] = put_rows(store, packed["edges"], [r[0] for r in packed["edges"]],
                                                rewrite=whole)
        return sections

    def interface_work() -> tuple[str, list[Any]]:
        store = store_of(plan.vault.dir)
        memo = carry.interface if carry is not None else None
        if memo is None:
            memo = (interface_of.latest_memo(latest[0], str(latest[1].get("interface_basis", "")), latest[2])
                    if latest is not None else None) or {}
        # the type names counted: from the latest's counts (a long-lived builder's own, else
        # the latest's part), reading only the files whose facts are not the latest's very
        # objects (the others' symbols are not decoded); a long-lived builder's, only the
        # files it read again or saw go
        held = carry.types if carry is not None and latest is not None and carry.types is not None \
            and carry.types[0] == latest[0].name else None
        counted = held[1] if held is not None else \
            _latest_type_counts(store, latest[1]) if latest is not None else None
        types = interface_of.type_counts(facts, (counted, latest[2]) if counted is not None and latest is not None
                                         else None, ([*changed[0], *changed[1]], changed[2])
                                         if held is not None and changed is not None else None)
        if carry is not None:
            carry.types = (latest[0].name if plan.warm and latest is not None else plan.build_id, types)
        doc = interface_of.interface_again(plan.root, memo, changed[0], changed[1], changed[2], latest[2], types) \
            if held is not None and changed is not None and latest is not None else None
        if doc is None:
            doc = interface_of.interface(plan.root, facts, memo, types)
        # (an edit that moved no file's uses leaves the same document: the latest's is linked)
        writer.add_or_link(INTERFACE_FILE, interface_of.encode(doc), latest[0] if latest is not None else None)
        entry = latest[1].get("interface_types") if latest is not None else None
        if held is not None and types == held[1] and isinstance(entry, list) and len(entry) == 2 and not whole:
            return str(memo.get("basis", "")), entry  # (the same counts: the latest's part)
        blob = interface_of.encode_type_counts(types)
        return str(memo.get("basis", "")), [store.put(blob, rewrite=whole), len(blob)]

    if carry is None:
        both = ex.submit("writing the symbol sections", lambda: SymbolSections(sections_work(), *interface_work()))
        return lambda: ex.join(both)
    runner: Executor = ex if _may_fork(ex) else InProcess()
    task = runner.submit("writing the symbol sections", sections_work)
    basis, types = interface_work()
    return lambda: SymbolSections(runner.join(task), basis, types)


def start_export(plan: Plan, ex: Executor, header: dict[str, Any], graph: WeightedGraph,
                 stat_files: dict[str, list[object]] | Parts, writer: BundleWriter,
                 learned_doc: dict[str, Any] | None = None, events: EventsOut | None = None,
                 whole: bool = False, stat_extra: dict[str, Any] | None = None,
                 same: Unmoved | None = None,
                 early: SymbolSections | None = None, against: Against | None = None) -> Task[bytes]:
    """The export as parts (``core/parts.py``: the parts the store lacks written, the
    index, its digest and its signature), ``header.json`` and ``stat.bin``, written into
    the staging bundle as a task: it serialises and hashes the rows while this process
    builds the bundle's Arrow tables and loads them (the rows are only read on both
    sides). ``whole``: every part written again, even one the store holds (a full build
    heals a damaged part). A long-lived builder's export runs here instead, in this
    process, since the rows' bytes it keeps for the next build must stay in it
    (``resident.kept_rows``: only the rows ``reweigh`` moved are serialised again).
    ``same``: a cold build's rows that cannot have moved since the latest's
    (``reach.Unmoved``): their groups are the latest's parts, never serialised again.
    ``early``: the symbol sections and ``interface.json``, written before
    (``start_symbol_sections``). ``against`` (a cold build whose structure moved): the
    latest's parts; the rows of every group that is not one of them, and the files gone,
    are this build's reach against the latest (``reach_of_groups``), which ``stat.bin``
    records and the answer carries (``moved``) for the load."""
    carry = plan.carry
    keeping = carry is not None
    kept = carry.export if carry is not None and graph.moved is not None else None  # (reweighed: that build's rows)
    if carry is not None:
        carry.export = None  # its rows are this build's (or gone) from here on
    made: list[KeptRows] = []

    def work() -> bytes:
        from oracl.core.sign import sign

        t0 = time.perf_counter()
        store = store_of(plan.vault.dir)
        sections: dict[str, Parts] = {}
        reach: list[list[str]] | None = None
        if keeping:  # a long-lived builder's: each row's bytes kept, only the moved rows' made again
            made.append(kept_rows(store, graph, kept, whole))
            sections["nodes"], sections["edges"] = made[0].sections
        else:
            sections["nodes"], sections["edges"], moved = _graph_sections(store, graph, same, whole, against)
            if moved is not None and stat_extra is not None and against is not None:
                mine = record(against.base, moved)
                if mine is not None:
                    stat_extra["reach"] = mine
                reach = [sorted(moved[0]), sorted(moved[1])]
        if events is not None and events.section is not None:
            sections["events"] = [[store.put(events.section, rewrite=whole, packed=True), len(events.section)]]
        assert early is not None
        sections.update(early.sections)
        index = encode_index(header, {k: v for k, v in sections.items() if v or k in ("events",)})
        digest = sha256_hex(index)
        writer.add(INDEX, index)
        writer.add(INDEX + ".sha256", f"{digest}  {INDEX}\n".encode())
        sig = sign(index)
        if sig:
            writer.add(INDEX + ".sig", sig.encode() + b"\n")
        writer.add(HEADER_FILE, canonical_bytes(header))
        if learned_doc is not None:
            writer.add(LEARNED_FILE, canonical_bytes(learned_doc))
        if events is not None and events.section is not None:
            writer.add(EVENTS_BUNDLE_FILE, events.section)
        if events is not None and events.index is not None:
            writer.add(EVENTS_INDEX_FILE, events.index)
        writer.add(STAT_FILE, encode_stat(stat_files, {
            "build_id": plan.build_id, "generated_at": header["generated_at"],
            "source_commit": header["source_commit"], "dirty": header["dirty"],
            "config_sha256": header["config_sha256"], **(stat_extra or {}),
            "interface_basis": early.basis,  # (what the next build's interface.json reuse compares)
            "interface_types": early.types,  # (what the next build's type names are counted from)
            "signature": sig.split(":", 1)[0] if sig else "unsigned"}, store, whole))
        return orjson.dumps({"sha256": digest, "signature": sig.split(":", 1)[0] if sig else "unsigned",
                             "seconds": time.perf_counter() - t0, "parts_written": store.written,
                             "parts_bytes": store.written_bytes, "moved": reach})

    if not keeping:
        return ex.submit("writing the export", work)
    task = InProcess().submit("writing the export", work)  # (here: the rows' bytes are kept for the next build)
    if made:
        plan.carry.export = made[0]  # type: ignore[union-attr]
    return task


def _edge_parts_by_source(store: PartStore, graph: WeightedGraph,
                          runs: tuple[list[str], Callable[[str], list[int]], Mapping[str, str]], same: Unmoved | None,
                          whole: bool) -> Parts:
    """The export's edge section of a graph whose rows are grouped by source
    (``EdgeRows.by_source``: every source's id, sorted, and its rows' indexes): the groups
    ``grouped`` cuts over the sources' ids (where a group ends depends on the ids alone,
    not on how many rows each has), each one's rows made only when the group is written —
    no pass over every edge to order them. The parts ``put_groups`` makes of every row."""
    ids, rows_of, path_of = runs
    raw = graph.rank_raw
    held = same.parts_by_keys(ids, same.edges) if same is not None else None
    moved = same.moved_sources if same is not None else frozenset()

    def group_rows(a: int, b: int) -> list[Any]:
        return [stored_edge(graph.edges[k], raw[k]) for i in ids[a:b] for k in rows_of(i)]

    def group_kept(a: int, b: int) -> list[Any] | None:
        if held is None or any(path_of[i] in moved for i in ids[a:b]):
            return None
        return held.get(tuple(ids[a:b]))

    return put_groups(store, ids, group_rows, group_kept, rewrite=whole)


def _graph_sections(store: PartStore, graph: WeightedGraph, same: Unmoved | None, whole: bool,
                    against: Against | None = None) -> tuple[Parts, Parts, tuple[frozenset[str], frozenset[str]] | None]:
    """The export's node and edge sections of ``graph`` in parts: every row serialised, or,
    with ``same``, only the groups holding a row that can have moved (a hub's, or one of
    ``same``'s paths); the others are the latest's parts for the same keys. With
    ``against``: also (the paths whose artifact rows, the files whose outgoing edge rows)
    can differ from the latest's (``reach_of_groups``; None past ``MAX_RECORDED``)."""
    nodes = sorted(graph.nodes, key=lambda n: n["id"])
    stored = graph.stored
    keys = [n["id"] for n in nodes]

    def node_rows(a: int, b: int) -> list[Any]:
        rows = graph.full_rows(nodes[a:b])  # (a lazy graph's rows made now: stored follows)
        return [stored_node(n, stored[str(n.get("path", n["id"]))]) for n in rows]

    taken = same.parts_by_keys(keys, same.nodes) if same is not None else None

    def node_kept(a: int, b: int) -> list[Any] | None:
        if taken is None or same is None or any(n["kind"] != "artifact" or n["path"] in same.moved_nodes
                                                  for n in nodes[a:b]):
            return None
        return taken.get(tuple(keys[a:b]))

    node_parts = put_groups(store, keys, node_rows, node_kept, rewrite=whole)
    # (a lazy graph's rows: made, and sorted inside each source, only for the groups written)
    lazy = graph.edges if isinstance(graph.edges, EdgeRows) else None
    runs = lazy.by_source() if lazy is not None and against is None else None
    if runs is not None:
        return node_parts, _edge_parts_by_source(store, graph, runs, same, whole), None
    order, edge_keys = edge_order(graph.edges, within=lazy is None)
    raw, ends = graph.rank_raw, graph.endpoints

    def edge_rows(a: int, b: int) -> list[Any]:
        at = lazy.sort_within(order[a:b], edge_keys[a:b]) if lazy is not None else order[a:b]
        return [stored_edge(graph.edges[i], raw[i]) for i in at]

    held = same.parts_by_keys(edge_keys, same.edges) if same is not None else None

    # each row's source path, in the export's order (a graph weighed from cold makes its
    # ends when read: its edges' sources are read instead)
    sources: list[str] = [] if held is None and against is None else \
        [e.source for e in (ends.edges[i] for i in order)] if isinstance(ends, PerEdge) else [ends[i][0] for i in order]

    def edge_kept(a: int, b: int) -> list[Any] | None:
        if held is None or same is None or any(src in same.moved_sources for src in sources[a:b]):
            return None
        return held.get(tuple(edge_keys[a:b]))

    edge_parts = put_groups(store, edge_keys, edge_rows, edge_kept, rewrite=whole)
    moved = None
    if against is not None:
        moved = reach_of_groups(against, (keys, node_parts, [str(n.get("path", "")) if n["kind"] == "artifact"
                                                              else "" for n in nodes]),
                                (edge_keys, edge_parts, sources))
    return node_parts, edge_parts, moved


def load(plan: Plan, ex: Executor, writer: BundleWriter, graph: WeightedGraph, symbols: Symbols,
         header: dict[str, Any], spool: Path, content: Content, vault_files: Task[bytes],
         export: Task[bytes], based: bool = False, reach: Reach | None = None,
         answered: bytes | None = None, delta: dict[str, str | None] | None = None) -> Loaded:
    """The graph tables into the bundle (once its content is ready), then the bundle sealed
    and published once the export and the vault files are written. ``reach``: the rows
    the standby can differ in (``standby_reach``); only those are made into tables.
    ``answered``: the export's answer, when the build already waited for it. ``delta``:
    each file this build read or removed → its checksum in the bundle it started from (None
    where that had no such file), recorded in the lineage for the next build's standby."""
    from oracl.bundle import tables as tables_of

    nodes, edges, ends, raw = graph.nodes, graph.edges, graph.endpoints, graph.rank_raw
    if reach is not None:
        found = graph.rows_in(reach.nodes, reach.sources)  # (a reweighed graph's, by its indexes)
        if found is not None:
            nodes = [nodes[i] for i in found[0]]
            keep = found[1]
        else:
            nodes = [n for n in nodes if n["kind"] == "hub" or n["path"] in reach.nodes]
            # (by the edges' sources: a graph weighed from cold makes its ends when read)
            keep = [i for i, e in enumerate(ends.edges) if e.source in reach.sources] \
                if isinstance(ends, PerEdge) else [i for i, (src, _) in enumerate(ends) if src in reach.sources]
        edges, ends, raw = [edges[i] for i in keep], [ends[i] for i in keep], [raw[i] for i in keep]
    nodes = graph.full_rows(nodes)  # (a lazy graph's rows: only those tabled are made)
    links, belongs = tables_of.link_tables(edges, ends, raw)
    tables = {"artifacts": tables_of.artifact_table(nodes, graph.stored),
              "hubs": tables_of.hub_table(nodes, graph.stored),
              "history": tables_of.history_table(nodes), "links": links, "belongs": belongs}
    patch = None
    rows = tables_of.packed_symbol_tables(symbols.packed["nodes"], symbols.packed["edges"])
    if symbols.patched is not None:  # the content task kept the previous symbol tables: patch them
        patch = (symbols.patched, rows)
    else:
        tables.update(rows)
    content_seconds, postings, linked = ex.join(content.task)
    in_place = content.standby or content.copied
    counted = header["counts"]["symbols"]  # (``symbols.counts()``, made once for the header: a pass over every file)
    by_relation = counted.get("edges_by_relation", {})  # (the edges each symbol table holds when right)
    expected = {"Defines": counted.get("symbols", 0), "Calls": by_relation.get("calls", 0),
                "Contains": by_relation.get("contains", 0), "References": by_relation.get("references", 0),
                "Inherits": by_relation.get("inherits", 0) + by_relation.get("implements", 0)}
    graph_by_relation = header["counts"].get("edges_by_relation", {})  # (the graph's edges: Link and BelongsTo)
    made = {"Link": sum(n for rel, n in graph_by_relation.items() if rel != "belongs_to"),
            "BelongsTo": graph_by_relation.get("belongs_to", 0)}
    from oracl.bundle.database import read_held, write_held

    # (``hold_groups``' pairs: a long-lived builder's, or the last cold update's, from the vault)
    held = plan.carry.held if plan.carry is not None else read_held(plan.vault.dir) if in_place else None
    try:
        history_dropped = writer.load_graph(tables, after_each=lambda: provenance.fault("copy"), symbol_patch=patch,
                                            in_place=in_place, only=reach, expected=expected, held=held,
                                            made=made)
    except StoreError as exc:
        # the engine failed while it updated an earlier build's database in place, or lost
        # edges at its checkpoint (Kùzu 0.11.3, docs/decisions.md): the build starts again,
        # full, and says why; the latest serves
        if not in_place or isinstance(exc, StoreLockedError) or disk_full(exc):
            raise
        raise PreviousBundleError(f"the engine failed while it brought an earlier build's database up to date "
                                  f"({exc})") from None
    del tables
    if plan.carry is None and held:
        write_held(plan.vault.dir, held)
    # a build from scratch: its database copied beside the export as the spare its first
    # rebuild brings up to date in place (that rebuild copied 190 MB at 20k files)
    spare = None if based else ex.submit("copying a spare database", functools.partial(
        provenance.copy_spare, plan.vault, plan.build_id, writer.db))
    os.unlink(spool)
    known = {**orjson.loads(ex.join(vault_files)), **linked}
    answer = orjson.loads(answered if answered is not None else ex.join(export))
    lineage = provenance.lineage(plan.vault, symbols.patched is None, symbols.moved, delta) if based else None
    if spare is not None:
        try:
            ex.join(spare)
            lineage = provenance.seal_spare(plan.vault, plan.build_id, writer.staging)
        except (OSError, OraclError) as exc:  # (no spare: the first rebuild copies the database, as before)
            shutil.rmtree(plan.vault.mirror / f"{provenance.spare_name(plan.build_id)}.tmp", ignore_errors=True)
            if disk_full(exc):
                raise
    final = writer.publish(answer["sha256"], header, snapshots=plan.cfg.snapshots, known=known,
                           before_flip=lambda: provenance.fault("flip"), lineage=lineage)
    provenance.move_pending(plan.vault, plan.build_id)  # the vault's JSON-lines files: only a published build's
    if not plan.cfg.jsonl:  # none written: an earlier build's would describe another tree
        provenance.drop_jsonl(plan.vault)
    said = [postings] if postings else []
    if history_dropped:
        said.append(f"the History full-text index made again without its {history_dropped:,} superseded rows")
    compacted = "; ".join(said)
    return Loaded(answer["sha256"], answer["signature"], float(answer["seconds"]), content_seconds,
                  sum(f.stat().st_size for f in final.iterdir() if f.is_file()), compacted)


# ---- The orchestrator -----------------------------------------------------------------------

def _build_config(root: Path, cfg: Config | None, overrides: dict[str, Any]) -> Config:
    """The settings a build (or a warming) of ``root`` runs under: ``cfg`` checked, else the
    root's configuration with ``overrides``; ``ORACL_TWO_LAYER=1`` turns on the two layers."""
    cfg = validate(cfg) if cfg is not None else load_config(root, **overrides)
    if os.environ.get("ORACL_TWO_LAYER") == "1" and not cfg.two_layer:
        cfg = replace(cfg, two_layer=True)
    return cfg


def build(root: Path, *, cfg: Config | None = None, skip: tuple[str, ...] = (),
          progress: Progress | None = None, now: datetime | None = None, full: bool = False,
          executor_kind: str = "in-process", carry: Carry | None = None, spare: list[Any] | None = None,
          changed: Iterable[str] | None = None, **overrides: Any) -> BuildReport:
    """Build the graph of ``root`` into ``root/.oracl`` and return the report.

    By default the build is selective: files whose ``(path, mtime_ns, size)`` did not
    change since the previous build keep their facts and are not read again; the result
    is the same as a full build's (``full=True`` forces one). A previous bundle whose
    database is damaged makes the build full by itself, and its mode says why.
    ``skip`` names phases to leave out: ``phase2``, ``phase3`` (edge producers), ``fts``.
    ``executor_kind``: ``in-process`` (the default: nothing is forked, safe beside an open
    ``Memory``) or ``processes`` (the CLI: side work in forked children).
    ``carry``: kept by a caller that builds the same root again and again (``oracl
    watch``): it holds this build's facts afterwards, and the next build starts from them
    instead of decoding ``facts.bin`` while the bundle is still the latest.
    ``changed``, with ``carry``: every root-relative path the caller's file events named
    since its last build (``oracl watch``): the walk is then that build's, with those paths
    looked at again (``walk.triage``), when they say what moved; a walk otherwise.
    ``spare``: kept by a caller whose process ends right after the build without freeing
    its objects (the console script, which leaves by ``os._exit``): what the build made is
    put in it at the end instead of being freed object by object (0.3 s at 20k files).
    ``overrides`` are Config fields (alpha, beta, gamma, lam, neighbour_cap, two_layer, …).
    """
    root = Path(root)
    bad = sorted(set(skip) - set(SKIPPABLE))
    if bad:
        raise ConfigError(f"cannot skip {', '.join(bad)}: skippable phases are {', '.join(SKIPPABLE)}")
    check_root(root)
    cfg = _build_config(root, cfg, overrides)
    now = now or datetime.now(UTC)
    vault = Vault(root)
    plan = Plan(root, cfg, vault, new_build_id(now), now, frozenset(skip), full, carry=carry, spare=spare,
                changed=frozenset(changed) if changed is not None and carry is not None else None)
    if carry is not None:
        carry.settle()  # (the folders its last build set aside: gone before this one cleans)
    try:
        with provenance.build_lock(vault):
            provenance.clean_stale(vault)  # what a killed build left: staging folders, pending files
            try:
                report = _run(plan, executor(executor_kind), progress or (lambda *_: None))
            except PreviousBundleError as exc:
                plan = replace(plan, build_id=new_build_id(datetime.now(UTC)), full=True, full_why=f"full: {exc}")
                report = _run(plan, executor(executor_kind), progress or (lambda *_: None))
            assert report is not None  # (only a warming's is None)
            return report
    except (OSError, OraclError) as exc:
        if isinstance(exc, DiskFullError) or not disk_full(exc):
            raise
        raise DiskFullError(f"no space left on the device that holds {vault.dir}: the build stopped and the "
                            "previous build is untouched; free some space and build again") from None
    finally:
        if carry is not None:
            carry.remove_retired()


class NotWarmed(Exception):
    """Why ``warm`` left the carry empty (the latest cannot be a selective build's start, or
    the tree moved since it): the next build is a build like any other."""


def warm(root: Path, carry: Carry, *, executor_kind: str = "in-process", cfg: Config | None = None,
         **overrides: Any) -> str:
    """Fill ``carry`` from the latest build, as if a long-lived builder had just made it: a
    build's phases run over the latest's facts with nothing read again (the walk, the
    resolver's tables, each file's edges, the weighed graph and its indexes, the export's
    rows), and nothing is written, published or recorded (no database, no bundle, no
    history line; the store's parts are the latest's). ``oracl watch`` runs it when it
    starts on a tree that is up to date, so that its first save costs what every later one
    does (at 20k files the first build with an empty carry took 8–13 s, a save after it
    1 s). Returns how many seconds it took and what it kept, or why it kept nothing (the
    carry is then empty): the tree moved since the latest build, or the next build would
    start from scratch anyway."""
    root = Path(root)
    check_root(root)
    cfg = _build_config(root, cfg, overrides)
    now = datetime.now(UTC)
    plan = Plan(root, cfg, Vault(root), new_build_id(now), now, frozenset(), False, carry=carry, warm=True)
    carry.forget()
    t0 = time.perf_counter()
    try:
        with provenance.build_lock(plan.vault):
            _run(plan, executor(executor_kind), lambda *_: None)
        # (what a save's first read and load would build or import: ready now)
        prime(carry.facts.keys(), cfg)
        import pyarrow.compute  # noqa: F401

        import oracl.bundle.database  # noqa: F401
        import oracl.bundle.tables  # noqa: F401

        _prime_engine(carry.bundle)
    except NotWarmed as exc:
        return f"not warmed: {exc}"
    except (OSError, OraclError) as exc:
        carry.forget()
        return f"not warmed: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
    return f"warmed in {time.perf_counter() - t0:.1f} s: {len(carry.facts):,} files' facts, edges and rows kept"


def _prime_engine(bundle: Path | None) -> None:
    """The engine's first database and first query in a process cost more than any later
    one (at 20k files: an open 64 ms against 18–20, a first probe 23 ms against 1; a
    watch's first save took 0.39–0.47 s against 0.20–0.25): paid when the builder warms,
    on the latest's database opened read-only and closed, not by the first save."""
    from oracl.core.store import Store, close

    if bundle is None:
        return
    db = bundle / DB_FILE
    try:
        store = Store.open(db, read_only=True)
        try:
            store.rows("MATCH (a:Artifact) WHERE a.path = $p RETURN a.path AS path", {"p": ""})
        finally:
            close(db)
    except (OSError, OraclError):
        pass  # (a first save pays it, as before)


def _run(plan: Plan, ex: Executor, progress: Progress) -> BuildReport | None:
    seconds: dict[str, float] = {}
    peak_mib: dict[str, int] = {}

    def timed(name: str, fn: Callable[..., T], *args: Any) -> T:
        t0 = time.perf_counter()
        progress(name, 0, None)
        out = fn(*args)
        seconds[name] = round(time.perf_counter() - t0, 3)
        peak_mib[name] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        provenance.fault(f"after {name}")  # crash tests: a kill at every phase boundary
        return out

    def skippable(name: str, fn: Callable[..., list[Edge]], *args: Any) -> list[Edge]:
        if name in plan.skip:
            seconds[name] = 0.0
            return []
        return timed(name, fn, *args)

    # The build allocates millions of small acyclic objects (facts, edges, rows); the cyclic
    # collector re-scanning them cost ~25 % of the main process's time. Reference counting
    # still frees everything. The collector is process-wide state, so it is turned off only
    # when the build owns its process (the CLI's ``processes`` executor), never under a
    # library caller's threads.
    # (from the start: decoding the previous facts in discover made 1.4 million objects the
    # collector scanned, 0.4–0.6 s of a one-file rebuild at 20k files)
    own_process = isinstance(ex, Processes)
    gc_was_enabled = gc.isenabled()
    if own_process:
        gc.disable()
    keep_known(plan.vault.dir, _carry_is_latest(plan))
    try:
        d = timed("discover", discover, plan, ex)
    except BaseException:
        if plan.carry is not None:
            plan.carry.forget()
        ex.close()
        if own_process and gc_was_enabled:
            gc.enable()
        raise
    progress("discover", len(d.discovery.files), len(d.discovery.files))
    if d.current is not None:  # nothing to do: the latest bundle is what this build would write
        ex.close()
        if own_process and gc_was_enabled:
            gc.enable()
        return _current_report(plan, d, seconds, peak_mib)
    writer = BundleWriter(plan.vault, plan.build_id)
    graph: WeightedGraph | None = None
    ok = False
    try:
        r = timed("read", read, plan, ex, d, progress, writer.staging)
        if plan.warm and (r.previous is None or r.reread or r.removed):
            raise NotWarmed(r.mode if r.previous is None else "the tree changed since the latest build")
        untrusted = tuple(r.learned.untrusted)
        # the rows this build can differ in from the latest's (builder/reach.py): recorded for
        # the next build, and with what the latest recorded, the reach of the standby's rows
        latest = recorded(r.previous.bundle) if r.previous is not None else {}
        prefetched = prefetch_symbols(ex, r, store_of(plan.vault.dir), latest, plan.carry)
        reuse, symbols_why = plan_symbols(r, store_of(plan.vault.dir), plan.carry)
        side = _side(plan, ex, r)  # (what the side tasks run in)
        # (a warming writes no database: ``warm``)
        content = None if plan.warm else timed("content", start_content, plan, side, r, writer, reuse is not None)
        catchup = content.symbols_catchup if content is not None else []
        resolving = start_symbols(ex, r, reuse, catchup, store_of(plan.vault.dir), latest, plan.carry, prefetched)
        history = timed("history", read_history_phase, plan, r, d.git_state[0], latest)
        by_file: tuple[Mapping[str, list[Edge]], Mapping[str, list[Edge]]] | None = None
        again: tuple[tuple[Mapping[str, list[Edge]] | None, set[str] | None], ...] | None = None
        linked_again, shards = None, None
        reads: dict[str, set[str]] = {}  # what making each file's edges looked up (``IndexView.read``)
        e: Edges | None = None
        if not plan.skip & {"phase2", "phase3"}:  # per file: kept for the next build (in memory, and in shards)
            if plan.carry is not None:
                again = kept_edges(plan.carry, r.previous, r.facts, r.reread, (r.index.facts, r.removed))
            else:  # a cold build: the latest's edges per file, read back from its shards
                again, shards = timed("edges_kept", kept_edge_shards, r)
            linked_again = again[0][1]
            by_file = (timed("phase2", edges_per_file, r.facts, r.index, phase2_of, *again[0], reads),
                       timed("phase3", edges_per_file, r.facts, r.index, phase3_of, *again[1], reads))
        else:
            e = Edges(skippable("phase2", phase2_edges, r.facts, r.index),
                      skippable("phase3", phase3_edges, r.facts, r.index) + history.edges)
        groups = _shard_groups(plan.carry, r)
        merged, vault_files = timed("merge", merge, plan, side, r, e, writer.staging, by_file, history.edges,
                                    linked_again, shards, reads, groups[1],
                                    history.moved.edges if history.moved is not None else None)
        symbols = timed("symbols", make_symbols, r, reuse, symbols_why, catchup,
                        store_of(plan.vault.dir), plan.carry, ex, latest, resolving)
        del resolving
        symbols_mode, database_mode = symbols.why, content.why if content is not None else ""
        del reuse
        tables_task = None
        reads_update = (symbols.reads, list(symbols.reads_gone), symbols.reads_whole) \
            if symbols.reads is not None and plan.carry is not None else None
        reads_started, symbols.reads_all = symbols.reads_all, None
        if plan.warm:  # (the latest's tables: nothing to keep)
            symbols.write = symbols.reads = symbols.table_patch = None
        elif symbols.write is not None or symbols.reads is not None or symbols.table_patch is not None:
            # (beside the weighing, on the other core; in a long-lived builder's own process
            # for a small change: ``_side``)
            tables_task = side.submit("keeping the name tables",
                                      functools.partial(keep_tables, store_of(plan.vault.dir), symbols, latest))
            symbols.write = symbols.reads = symbols.table_patch = None
        # the export's symbol sections and interface.json, beside the weighing
        latest_bundle = (r.previous.bundle, latest, r.previous.facts) if r.previous is not None else None
        early = start_symbol_sections(plan, side, symbols, writer, r.facts, r.previous is None, latest_bundle,
                                      (r.reread, r.removed, r.index.facts) if plan.carry is not None else None)
        del latest_bundle
        weighed = timed("weigh", weigh_graph, plan, ex, r, merged, history, latest,
                        again if by_file is not None else None, by_file, shards)
        graph, weigh_mode = weighed.graph, weighed.mode
        kept_graph = graph if plan.carry is not None else None
        now: tuple[frozenset[str], frozenset[str]] | None = None
        if graph.moved is not None:  # (a long-lived builder's reweigh, or a weighing around a move, says it)
            now = (graph.moved[0], graph.moved[1])
        elif r.previous is not None:
            now = moved_since(r.previous, latest, r.reread, {p: r.index.facts[p] for p in r.reread},
                              graph, linked_again)
            if now is not None and history.moved is not None and history.moved.rows:  # (their messages moved)
                now = (now[0] | (history.moved.rows & r.index.facts.keys()), now[1])
            elif now is not None and history.moved is None:
                now = None
            if now is not None and plan.carry is not None and graph.structure is not None and not plan.warm:
                # (a long-lived builder's whole weighing whose structure is the latest's: the
                # rows it can differ in are named, as a reweighing names them, so that the
                # export patches the kept rows and the load compares only those)
                graph.moved = (now[0], now[1], tuple(i for i, (src, _) in enumerate(graph.endpoints) if src in now[1]))
        # (a cold build's export takes the latest's parts by their keys: ``unmoved``)
        cold = now is not None and r.previous is not None and plan.carry is None
        # (the ids the latest gave the files read again: the keys its parts are grouped by)
        old_ids = {rec.artifact_id: r.previous.facts[rec.path].artifact_id for rec in r.records
                   if r.previous is not None and now is not None and rec.path in now[0]
                   and rec.path in r.previous.facts} if cold else {}
        # (and the files that came and went: their keys are this build's or the latest's alone)
        added_ids = frozenset(rec.artifact_id for rec in r.records if r.previous is not None
                              and rec.path not in r.previous.facts) if cold else frozenset()
        gone_ids = tuple(r.previous.facts[p].artifact_id for p in r.removed) \
            if now is not None and r.previous is not None else ()
        base_bundle = str(r.previous.bundle) if r.previous is not None else ""
        # what the later phases need is in the graph rows now: the facts, the index and the
        # per-producer edge lists go before the bundle load, while the full-text index grows
        parse, languages = file_counts(plan.carry, r, latest)
        n_records, dropped = len(r.records), dict(merged.dropped)
        mode, files_read, files_removed, spool = r.mode, len(r.reread), len(r.removed), r.spool
        # (a cold build whose structure moved: its reach against the latest is found from the
        # export's groups that are not the latest's parts, for the load and the next build)
        derive = against_latest(r.previous.bundle, r.removed) if now is None and r.previous is not None \
            and plan.carry is None else None
        based = r.previous is not None  # this build started from the latest: its manifest names it (lineage)
        base_name = r.previous.bundle.name if r.previous is not None else ""
        stat_section = None
        stat_files: dict[str, list[object]] | Parts
        if plan.carry is not None:  # (a long-lived builder's: the latest's rows changed in place, their parts put)
            held = plan.carry.stat if r.previous is not None and plan.carry.bundle == r.previous.bundle else None
            plan.carry.stat = None
            stat_files, stat_section = kept_stat(store_of(plan.vault.dir), held, r.index.facts, r.reread, r.removed,
                                                 r.previous.facts if r.previous is not None else {}, not based)
        else:
            stat_files = stat_rows(r.facts)
        carried = (r.facts_header, dict(r.index.facts),  # (this build's facts by path, copied whole)
                   kept_records(plan.carry, r), r.made_under) if plan.carry is not None else None
        chain = int(r.facts_header.get("chain", 0))
        recent = {*r.reread, *r.checked}  # (what the next build's file events are looked at beside: ``_select``)
        # (what the next build's standby — the bundle this one started from — holds of the
        # files this one read or removed: ``_catch_up_known``)
        delta_of_build = (r.previous.bundle.name, {p: (r.previous.facts[p].checksum if p in r.previous.facts else None)
                                                   for p in (*r.reread, *r.removed)}) \
            if r.previous is not None and not plan.warm else \
            standby_delta(r.previous.bundle, r.index.facts) if plan.warm and r.previous is not None else None
        # (the bundle the carry is kept for: this build's, or a warming's latest, which it equals)
        kept_at = r.previous.bundle if plan.warm and r.previous is not None else plan.vault.bundle(plan.build_id)
        learned, events = r.learned, r.events
        gone_paths = list(r.removed)
        del r, e, merged  # (by_file: a long-lived builder keeps it)
        header = make_header(plan, d, parse, n_records, dropped, graph, languages, symbols, history, learned, events)
        # (what ``uptodate`` compares the next build with, and what its report then says)
        stat_extra = {"inputs": d.inputs, "scan_started_ns": d.scan_started_ns, "orphans": graph.orphans,
                      "mu": graph.mu, "sigma": graph.sigma,  # (the header's are rounded)
                      FILE_COUNTS: [dict(sorted(parse.items())), dict(sorted(languages.items()))],
                      "structure_sha256": graph.structure_key, same_structure.KEY: weighed.settings,
                      same_structure.SUM: format(graph.structure_sum, "x") if graph.structure_sum is not None else "",
                      # (ranks read back are the latest's part: not converted and hashed again)
                      "ranks": latest["ranks"] if not graph.ranked_here and "ranks" in latest
                      else put_ranks(store_of(plan.vault.dir), graph.rank_raw)}
        git_log = log_entry(store_of(plan.vault.dir), history, latest)
        if git_log is not None:
            stat_extra[GIT_LOG] = git_log
        stat_extra[HISTORY_KEY] = history.digest()
        parsed = history_entry(store_of(plan.vault.dir), history, latest)
        if parsed is not None:
            stat_extra[HISTORY_PART] = parsed
        mine = record(base_name, now)
        if mine is not None:
            stat_extra["reach"] = mine
        elif not based:  # (the spare is this build's database: nothing differs from it)
            stat_extra["reach"] = {"base": provenance.spare_name(plan.build_id), "nodes": [], "sources": []}
        kept_tables = ex.join(tables_task) if tables_task is not None else \
            {name_tables.KEY: symbols.table_entry, read_sets.KEY: None}
        stat_extra.update({k: v for k, v in kept_tables.items() if v is not None})
        same = unmoved(Path(base_bundle), now, old_ids, added_ids, gone_ids) \
            if base_bundle and plan.carry is None else None
        if same is None and graph.make is not None and plan.carry is None:
            graph.full_rows(graph.nodes)  # every row is serialised: each made once, before the export
            for _ in graph.edges:  # task's fork, not in it and again in the load (a long-lived builder's
                pass               # export runs here, and makes only the rows it serialises)
        symbol_sections = early()
        export = timed("export", start_export, plan, ex, header, graph, stat_files, writer,
                       learned.bundle_doc(), events, not based, stat_extra, same, symbol_sections, derive)
        del stat_files
        answered = None
        if derive is not None:  # (the load waits for the export's groups: it then tables only the rows they name)
            answered = timed("export_wait", ex.join, export)
            found = orjson.loads(answered).get("moved")
            if found is not None:
                now = (frozenset(found[0]), frozenset(found[1]))
        loaded: Loaded | None = None
        if content is None:  # (a warming: the tasks' files go with the staging folder)
            ex.join(export)
            ex.join(vault_files)
        else:
            # (a copy of the latest differs from this build where this build moved against it)
            reach = copy_rows(now) if content.copied else \
                standby_reach(plan.carry, content.standby, content.standby_of, graph, latest) \
                if plan.carry is not None else standby_rows(latest, content.standby_of, now) if content.standby \
                else None
            loaded = timed("load", load, plan, ex, writer, graph, symbols, header, spool, content, vault_files,
                           export, based, reach, answered, delta_of_build[1] if delta_of_build is not None
                           and not plan.warm else None)
            seconds["fts_background"] = round(loaded.content_seconds, 3)
            if loaded.compacted:
                database_mode = f"{database_mode}; {loaded.compacted}"
            seconds["export_background"] = round(loaded.export_seconds, 3)
        if plan.carry is not None and carried is not None:
            plan.carry.keep(kept_at, *carried)
            held_tests = plan.carry.test_paths
            plan.carry.test_paths = (kept_at.name, held_tests[1]) \
                if held_tests is not None and held_tests[0] == TESTS_PENDING else None
            if plan.carry.bundle is not None and d.discovery.kinds is not None:
                plan.carry.discovery, plan.carry.discovery_key = d.discovery, plan.cfg.digest()
                plan.carry.recent = recent
            if plan.carry.bundle is not None:
                plan.carry.stat = stat_section
                plan.carry.delta = delta_of_build
            if plan.carry.bundle is not None:
                # (who has an edge into each file: kept up to date for the files whose edges
                # were made again, come or gone; made again from the lists when they all were)
                remade = again[0][1] if again is not None else None
                if plan.carry.edge_targets is not None and remade is not None and by_file is not None \
                        and again is not None and again[0][0] is not None and again[1][0] is not None:
                    retarget(plan.carry.edge_targets, (again[0][0], again[1][0]), by_file, {*remade, *gone_paths})
                elif plan.warm and by_file is not None:  # (what the first save would make: made now)
                    plan.carry.edge_targets = edge_targets(by_file)
                else:
                    plan.carry.edge_targets = None
                plan.carry.symbol_table, plan.carry.edges, plan.carry.graph = symbols.table, by_file, kept_graph
                plan.carry.reads = reads_after(plan.carry, latest, kept_tables.get(read_sets.KEY), reads_update,
                                               reads_started)
                plan.carry.symbol_counts = (kept_at.name, header["counts"]["symbols"])
                plan.carry.file_counts = (kept_at.name, dict(parse), dict(languages))
                plan.carry.shard_groups = (kept_at.name, groups[0]) if groups[0] is not None else None
                moved = kept_graph.moved if kept_graph is not None else None
                plan.carry.moved = (base_name, moved) if moved is not None and base_name else None
                if plan.warm and kept_graph is not None and kept_graph.structure is not None:
                    kept_graph.structure.edges_touching(set())  # (its index of who has an edge into each file)
        ok = True
    finally:
        if not ok and plan.carry is not None:
            plan.carry.forget()
        ex.close()  # a failed build ends its children; a finished one has none left
        if not ok or plan.warm:
            writer.abort()
            provenance.drop_pending(plan.vault, plan.build_id)
        # what the report needs from the graph, then the rows go while the collector is still
        # off: re-enabled with millions of young objects alive, its first pass would scan them
        # all (measured: 0.3 s at 50k files). The graph itself is never changed.
        facts = None if graph is None else GraphFacts(graph.hubs, len(graph.edges), dict(graph.edge_counts),
                                                      graph.mu, graph.sigma, graph.orphans)
        if plan.spare is not None:  # (the process ends next: nothing is freed, object by object, before)
            plan.spare.append(dict(locals()))
        graph = export = None  # type: ignore[assignment]
        if own_process and gc_was_enabled:
            # a one-shot build's process (the CLI's): what is still alive (the previous facts,
            # the symbol rows: ~2 million objects at 20k files) goes to the permanent
            # generation first, or the collector's next full pass scans it all (0.3–0.45 s);
            # reference counting still frees it. A long-lived builder (``oracl watch``) keeps
            # what it carries, where a cycle frozen for good would never be collected: its
            # objects are frozen and at once unfrozen, which moves every one of them into the
            # oldest generation without scanning it (two list splices). The young generations'
            # passes then had nothing left to scan: at 20k files 0.19–0.20 s of collections
            # after every save, and a full pass of 0.76–0.82 s every third save, no longer in
            # the build (measured with ``gc.callbacks``); the oldest generation is still
            # collected, by the interpreter's own full passes and by the watch when it is
            # idle (``face/watch.py``).
            gc.freeze()
            if plan.carry is not None:
                gc.unfreeze()
            gc.enable()
    assert facts is not None
    if loaded is None:  # (a warming: the carry is filled, nothing was published)
        return None
    n_edges = facts.edges
    vault = plan.vault
    provenance.append_health(vault, {
        "build_id": plan.build_id, "generated_at": header["generated_at"],
        "counts": {"artifacts": n_records, "hubs": facts.hubs, "edges": n_edges,
                   "edges_by_relation": dict(sorted(facts.edge_counts.items()))},
        "mu": facts.mu, "sigma": facts.sigma, "orphans": facts.orphans,
        "dropped": dict(sorted(dropped.items())),
        "parse_errors": sum(v for k, v in parse.items() if k not in ("ok", *HELD_BACK)),
        "seconds": seconds, "bundle_bytes": loaded.bundle_bytes, "signature": loaded.signature,
        "mode": mode, "files_read": files_read, "walk": d.walk,
    })
    provenance.prune_bundles(vault, keep=max(1, plan.cfg.keep_bundles), current=plan.build_id,
                             spare=plan.carry.retired if plan.carry is not None else ())
    if plan.carry is None or chain % PRUNE_EVERY == 0:  # (a long-lived builder's: every few builds)
        provenance.prune_parts(vault)
    return BuildReport(
        build_id=plan.build_id, root=str(plan.root.resolve()), files_seen=d.discovery.seen,
        files_indexed=n_records, skipped=dict(sorted(d.discovery.skipped.items())),
        excluded_dirs=dict(sorted(d.discovery.excluded_dirs.items())),
        parse_status=dict(sorted(parse.items())),
        languages=dict(sorted(languages.items(), key=lambda kv: (-kv[1], kv[0]))),
        skipped_by_suffix=dict(sorted(d.discovery.skipped_suffixes.items(), key=lambda kv: (-kv[1], kv[0]))),
        counts=header["counts"], dropped_edges=dict(sorted(dropped.items())),
        mu=facts.mu, sigma=facts.sigma, seconds=seconds, peak_rss_mib=peak_mib,
        export_path=str(vault.export_index), export_root=loaded.export_root,
        bundle_path=str(vault.bundle(plan.build_id)), fts=plan.fts, two_layer=plan.cfg.two_layer,
        signature=loaded.signature, orphans=facts.orphans, mode=mode,
        files_read=files_read, files_removed=files_removed, symbols_mode=symbols_mode, database_mode=database_mode,
        weigh_mode=weigh_mode,
        untrusted=untrusted, walk=d.walk)
