"""The build orchestrator: the only code that sequences the phases (from ``PHASES``),
times them, honours skip flags, and writes the vault and the Kùzu bundle.

>>> report = build(Path("my-repo"))            # doctest: +SKIP
>>> report.counts["artifacts"], report.export_sha256[:8]
"""

from __future__ import annotations

import gc
import os
import resource
import shutil
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import orjson

from oracl import __version__, provenance
from oracl.config import Config, load_config
from oracl.errors import ConfigError
from oracl.export import SCHEMA_VERSION, canonical_bytes, export_bytes, sha256_hex
from oracl.extractors.providers import OVERLAY, PHASE2, PHASE3, phase2_edges, phase3_edges
from oracl.extractors.resolve import IndexView
from oracl.incremental import (
    FACTS_FILE,
    MAX_CHANGED_FRACTION,
    MIN_CHANGED_FOR_FULL,
    STAT_FILE,
    Previous,
    encode_facts,
    encode_stat,
    load_previous,
    settings,
    stat_rows,
)
from oracl.pipeline.annotate import load_learned_edges, load_learned_tags, make_record
from oracl.pipeline.discover import Discovery, read_one, walk
from oracl.pipeline.merge import EvidenceStore, MergeResult, edge_to_json, merge_edges, write_jsonl
from oracl.pipeline.weigh import WeightedGraph, weigh
from oracl.records import ArtifactRecord, Edge, FileFacts
from oracl.vault import HEADER_FILE, Vault, atomic_write, check_root, new_build_id

Progress = Callable[[str, int, int | None], None]
SKIPPABLE = ("phase2", "phase3", "fts")
PARALLEL_MIN_FILES = 256  # below this a worker pool costs more than it saves
RANK_FORK_MIN_EDGES = 20_000  # below this, ranking in a second process costs more than it saves


@dataclass(slots=True)
class BuildState:
    root: Path
    cfg: Config
    vault: Vault
    build_id: str
    now: datetime
    skip: frozenset[str]
    progress: Progress
    staging: Path
    discovery: Discovery | None = None
    facts: list[FileFacts] = field(default_factory=list)
    records: list[ArtifactRecord] = field(default_factory=list)
    index: IndexView | None = None
    phase2: list[Edge] = field(default_factory=list)
    phase3: list[Edge] = field(default_factory=list)
    overlay: list[Edge] = field(default_factory=list)
    merged: MergeResult | None = None
    graph: WeightedGraph | None = None
    spool: Any = None
    export_sha256: str = ""
    header: dict[str, Any] = field(default_factory=dict)
    content_thread: threading.Thread | None = None
    content_error: BaseException | None = None
    content_seconds: float = 0.0
    signature: str = "unsigned"
    bundle_bytes: int = 0
    parse_counts: Counter[str] = field(default_factory=Counter)
    n_records: int = 0
    full: bool = False                 # --full: never start from the previous build
    previous: Previous | None = None   # the build a selective rebuild starts from
    mode: str = ""                     # "full: why" | "incremental: …", as the report shows it
    reread: list[str] = field(default_factory=list)   # files read in this build
    removed: list[str] = field(default_factory=list)  # files of the previous build that are gone
    scan_started_ns: int = 0
    stat_files: dict[str, list[object]] = field(default_factory=dict)
    facts_header: dict[str, Any] = field(default_factory=dict)  # what facts.bin records with the facts
    export_seconds: float = 0.0    # the export writer's own time (it runs beside the load)
    children: list[Any] = field(default_factory=list)  # forked helpers still running (_Child)
    export_child: Any = None       # the _Child writing the export
    vault_child: Any = None        # the _Child writing index.jsonl and edges/*.jsonl


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
    counts: dict[str, Any]
    dropped_edges: dict[str, int]
    mu: float
    sigma: float
    seconds: dict[str, float]
    peak_rss_mib: dict[str, int]
    export_path: str
    export_sha256: str
    bundle_path: str
    fts: bool
    two_layer: bool
    mode: str           # "incremental: …" or "full: <why>"
    files_read: int     # files read and parsed by this build (the rest were reused)
    files_removed: int  # files of the previous build that are gone
    signature: str      # ed25519 | hmac-sha256 | unsigned
    orphans: int        # artifacts with no edge to or from another artifact

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}  # type: ignore[attr-defined]


# ---- Phase 1: discovery and reading (the only workspace access) -------------------------

_WORKER: dict[str, Any] = {}


def _init_worker(root: str, cfg: Config) -> None:
    _WORKER["root"], _WORKER["cfg"] = root, cfg
    gc.freeze()  # what the fork inherited is never collected; keeps the workers' GC passes small


def _read_in_worker(rel: str) -> tuple[FileFacts, str]:
    return read_one(_WORKER["root"], rel, _WORKER["cfg"])


def _phase_discover(s: BuildState) -> None:
    s.scan_started_ns = time.time_ns()
    s.discovery = walk(s.root, s.cfg, stat=not s.full)
    s.progress("discover", len(s.discovery.files), len(s.discovery.files))
    if s.full:
        s.mode = "full: requested"
    else:
        s.previous, s.mode = load_previous(s.vault, s.cfg.read_digest(), "fts" not in s.skip)


def _select(s: BuildState) -> dict[str, FileFacts]:
    """The reusable facts of unchanged files (empty for a full build); sets ``reread``,
    ``removed`` and, when too much changed for a selective rebuild to pay, drops back to full."""
    assert s.discovery is not None
    prev = s.previous
    if prev is None:
        return {}
    reused: dict[str, FileFacts] = {}
    stats = s.discovery.stats
    for rel in s.discovery.files:
        f = prev.reusable(rel, stats.get(rel))
        if f is not None:
            reused[rel] = f
    s.discovery.stats = {}
    current = set(s.discovery.files)
    s.reread = [rel for rel in s.discovery.files if rel not in reused]
    s.removed = sorted(p for p in prev.facts if p not in current)
    changed = len(s.reread) + len(s.removed)
    if changed > MAX_CHANGED_FRACTION * len(prev.facts) and changed > MIN_CHANGED_FOR_FULL:
        s.mode = (f"full: {len(s.reread):,} files to read and {len(s.removed):,} removed, "
                  f"against {len(prev.facts):,} in the previous build")
        s.previous, s.reread, s.removed = None, [], []
        return {}
    s.mode = f"incremental: {len(reused):,} reused, {len(s.reread):,} read, {len(s.removed):,} removed"
    return reused


def _phase_read(s: BuildState) -> None:
    from oracl.load import ContentSpool

    assert s.discovery is not None
    files = s.discovery.files
    s.spool = ContentSpool(s.staging / "content.arrow")
    root = os.path.realpath(s.root)
    workers = s.cfg.workers or os.cpu_count() or 1
    learned = load_learned_tags(s.vault.dir)
    reused = _select(s)
    to_read = s.reread if s.previous is not None else files
    s.reread = to_read
    fresh: dict[str, FileFacts] = {}
    records: dict[str, ArtifactRecord] = {}
    half = max(1, len(to_read) // 2)

    def take(item: tuple[FileFacts, str]) -> None:
        # the main process is mostly idle while the workers parse: it builds each record
        # as its file arrives instead of in a pass afterwards
        f, text = item
        fresh[f.path] = f
        records[f.path] = make_record(f, s.cfg, learned.get(f.path))
        s.spool.add(f.path, text)
        if len(fresh) == half:
            provenance.fault("read")
        if len(fresh) % 500 == 0:
            s.progress("read", len(fresh) + len(reused), len(files))

    if workers > 1 and len(to_read) >= PARALLEL_MIN_FILES:
        ctx = get_context("fork")
        with ctx.Pool(workers, initializer=_init_worker, initargs=(root, s.cfg)) as pool:
            for item in pool.imap(_read_in_worker, to_read, chunksize=64):
                take(item)
    else:
        for rel in to_read:
            take(read_one(root, rel, s.cfg))
    s.spool.close()
    # discovery order, whichever way each file's facts were obtained: the same list a full build makes
    facts = [reused[rel] if rel in reused else fresh[rel] for rel in files]
    s.facts = facts
    s.records = [records.get(f.path) or make_record(f, s.cfg, learned.get(f.path)) for f in facts]
    s.facts_header = {**settings(s.cfg.read_digest(), "fts" not in s.skip), "scan_started_ns": s.scan_started_ns,
                      "chain": s.previous.chain + 1 if s.previous is not None else 0}
    s.stat_files = stat_rows(facts)
    s.index = IndexView.build({f.path: f for f in facts})
    s.overlay = load_learned_edges(s.vault.dir)
    s.progress("read", len(files), len(files))


# ---- Phases 2 and 3: edges, and their merge -----------------------------------------------

def _phase2(s: BuildState) -> None:
    assert s.index is not None
    s.phase2 = phase2_edges(s.facts, s.index)


def _phase3(s: BuildState) -> None:
    assert s.index is not None
    s.phase3 = phase3_edges(s.facts, s.index)


def _phase_merge(s: BuildState) -> None:
    nodes = {f.path for f in s.facts}
    if s.cfg.two_layer:
        store = EvidenceStore(s.vault.dir / "evidence")
        store.append(PHASE2, s.phase2)
        store.append(PHASE3, s.phase3)
        store.append(OVERLAY, s.overlay)
        s.merged = store.committed_view(nodes)
    else:
        s.merged = merge_edges(s.phase2, s.phase3, s.overlay, nodes)
    s.vault_child = _fork(s, "writing the vault's JSON-lines files", lambda: _write_vault_files(s))


def _write_vault_files(s: BuildState) -> bytes:
    """``edges/{phase2,phase3,all}_edges.jsonl``, ``index.jsonl`` and the bundle's
    ``facts.bin`` (in a forked child)."""
    assert s.merged is not None
    atomic_write(s.staging / FACTS_FILE, encode_facts(s.facts, s.facts_header))
    edges_dir = s.vault.dir / "edges"
    write_jsonl(edges_dir / "phase2_edges.jsonl", (edge_to_json(e) for e in s.phase2))
    write_jsonl(edges_dir / "phase3_edges.jsonl", (edge_to_json(e) for e in s.phase3))
    write_jsonl(edges_dir / "all_edges.jsonl", (edge_to_json(e) for e in s.merged.edges))
    write_jsonl(s.vault.dir / "index.jsonl", (r.to_json() for r in s.records))
    return b""


# ---- Phase 2b: weighted assembly ------------------------------------------------------------

def _usage_from_telemetry(vault: Vault) -> Counter[str]:
    """Times each path was returned by a search (SPEC §4 usage), from the search history."""
    usage: Counter[str] = Counter()
    history = vault.dir / "logs" / "search_history.jsonl"
    try:
        with open(history, "rb") as fh:
            for line in fh:
                try:
                    row = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                if isinstance(row, dict):
                    usage.update(p for p in row.get("returned_paths", []) if isinstance(p, str))
    except OSError:
        pass
    return usage


def _sensitivity_overrides(s: BuildState) -> dict[str, str]:
    from oracl.pipeline.tags import glob_match

    out: dict[str, str] = {}
    for pattern, level in sorted(s.cfg.sensitivity_globs.items()):
        for f in s.facts:
            if glob_match(f.path, pattern):
                out[f.path] = level
    return out


def _rank_in_child(s: BuildState, edges: list[tuple[str, str, float]], tagsets: dict[str, frozenset[str]],
                   cfg: Config) -> Callable[[], list[float]]:
    """The DuoRanker in a forked child while this process makes the node rows; the ranks
    come back as raw doubles (exact)."""
    from array import array

    from oracl.pipeline.duoranker import rank_edges

    if len(edges) < RANK_FORK_MIN_EDGES:
        ranks = rank_edges(edges, tagsets, cfg.beta, cfg.gamma, cfg.lam, cfg.neighbour_cap)
        return lambda: ranks
    child = _fork(s, "ranking the edges", lambda: array("d", rank_edges(
        edges, tagsets, cfg.beta, cfg.gamma, cfg.lam, cfg.neighbour_cap)).tobytes())

    def wait() -> list[float]:
        out = array("d")
        out.frombytes(_join(s, child))
        return out.tolist()

    return wait


def _phase_weigh(s: BuildState) -> None:
    assert s.merged is not None
    s.graph = weigh(s.records, {f.path: f for f in s.facts}, s.merged.edges, s.cfg,
                    _usage_from_telemetry(s.vault), _sensitivity_overrides(s),
                    rank_job=lambda edges, tagsets, cfg: _rank_in_child(s, edges, tagsets, cfg))
    # what the later phases need is in the graph rows now: let the facts, the index and the
    # per-producer edge lists go before the bundle load, while the FTS build still grows
    s.parse_counts = Counter(f.parse_status for f in s.facts)
    s.n_records = len(s.records)
    s.index = None
    s.phase2, s.phase3, s.overlay = [], [], []
    s.facts, s.records = [], []
    s.merged.edges = []
    if s.previous is not None:
        s.previous.facts = {}


# ---- Export and bundle ---------------------------------------------------------------------

def _git_state(root: Path) -> tuple[str | None, bool | None]:
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=30)
        if head.returncode != 0:
            return None, None
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", ".",
                                 ":(exclude).oracl"], capture_output=True, text=True, timeout=60)
        return head.stdout.strip(), bool(status.stdout.strip())
    except (OSError, subprocess.SubprocessError):
        return None, None


def make_header(s: BuildState) -> dict[str, Any]:
    assert s.graph is not None and s.discovery is not None and s.merged is not None
    commit, dirty = _git_state(s.root)
    parse = s.parse_counts
    cfg = s.cfg
    return {
        "version": SCHEMA_VERSION,
        "generated_at": s.now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "build_id": s.build_id,
        "tool_version": __version__,
        "root": str(s.root.resolve()),
        "source_commit": commit,
        "dirty": dirty,
        "counts": {
            "nodes": len(s.graph.nodes),
            "nodes_by_kind": {"artifact": s.n_records, "hub": s.graph.hubs},
            "edges": len(s.graph.edges),
            "edges_by_relation": dict(sorted(s.graph.edge_counts.items())),
            "source_artifacts": {"seen": s.discovery.seen, "indexed": s.n_records},
            "dropped_edges": dict(sorted(s.merged.dropped.items())),
        },
        "mu": s.graph.mu, "sigma": s.graph.sigma,
        "alpha": cfg.alpha, "beta": cfg.beta, "gamma": cfg.gamma, "lambda": cfg.lam,
        "caps": {"neighbourhood": cfg.neighbour_cap, "query_neighbour_guard": cfg.query_neighbour_guard,
                 "priority": cfg.priority_cap},
        "relation_weights": dict(sorted(cfg.relation_weights.items())),
        "config_sha256": cfg.digest(),
        "coverage": {
            "indexed": s.n_records, "parsed": parse.get("ok", 0),
            "unparsed_by_reason": dict(sorted((k, v) for k, v in parse.items() if k != "ok")),
            "skipped_by_reason": dict(sorted(s.discovery.skipped.items())),
            "excluded_dirs_by_reason": dict(sorted(s.discovery.excluded_dirs.items())),
        },
        "two_layer": cfg.two_layer,
    }


def _write_export(s: BuildState) -> dict[str, str]:
    """The canonical export, its digest, its signature and ``stat.bin``, written into the
    staging bundle: a bundle always carries the export it was loaded from."""
    from oracl.sign import sign

    assert s.graph is not None
    t0 = time.perf_counter()
    data = export_bytes(s.header, s.graph.nodes, s.graph.edges)
    digest = sha256_hex(data)
    name = s.vault.export.name
    atomic_write(s.staging / name, data)
    atomic_write(s.staging / (name + ".sha256"), f"{digest}  {name}\n".encode())
    sig = sign(data)
    if sig:
        atomic_write(s.staging / (name + ".sig"), sig.encode() + b"\n")
    atomic_write(s.staging / HEADER_FILE, canonical_bytes(s.header))
    atomic_write(s.staging / STAT_FILE, encode_stat(s.stat_files, {
        "build_id": s.build_id, "generated_at": s.header["generated_at"],
        "source_commit": s.header["source_commit"], "dirty": s.header["dirty"],
        "config_sha256": s.header["config_sha256"]}))
    return {"sha256": digest, "signature": sig.split(":", 1)[0] if sig else "unsigned",
            "seconds": time.perf_counter() - t0}


def _phase_export(s: BuildState) -> None:
    """Start writing the export in a forked child: it serialises and hashes the rows while
    this process builds the bundle's Arrow tables and loads them (the engine is not open in
    this process yet, and the rows are only read on both sides). ``_phase_load`` joins it."""
    s.header = make_header(s)
    s.export_child = _fork(s, "writing the export", lambda: orjson.dumps(_write_export(s)))
    s.stat_files = {}


@dataclass(slots=True)
class _Child:
    pid: int
    fd: int
    what: str


def _fork(s: BuildState, what: str, work: Callable[[], bytes]) -> _Child:
    """Run ``work`` in a forked copy of this process; ``_join`` returns its bytes. Used for
    work that only reads the build's rows, beside this process's own next step (2 cores).
    The child dies with the build (PDEATHSIG) and leaves without running any cleanup."""
    read_fd, write_fd = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(read_fd)
            _die_with_parent(parent)
            payload = b"\x00" + work()
            code = 0
        except BaseException as exc:  # noqa: BLE001 – reported to the parent, which raises it
            payload = b"\x01" + f"{type(exc).__name__}: {exc}".encode("utf-8", "replace")
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(write_fd, view):]
        finally:
            os._exit(code)
    os.close(write_fd)
    child = _Child(pid, read_fd, what)
    s.children.append(child)
    return child


def _join(s: BuildState, child: _Child) -> bytes:
    from oracl.errors import VaultError

    s.children.remove(child)
    with os.fdopen(child.fd, "rb") as fh:
        data = fh.read()
    _, status = os.waitpid(child.pid, 0)
    if not data:
        raise VaultError(f"{child.what}: the process died (wait status {status})")
    if data[0] == 1:
        raise VaultError(f"{child.what} failed: {data[1:].decode('utf-8', 'replace')}")
    return data[1:]


def _reap(s: BuildState) -> None:
    """A failed build: stop the children that still run."""
    import signal

    for child in list(s.children):
        s.children.remove(child)
        try:
            os.kill(child.pid, signal.SIGKILL)
            os.waitpid(child.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(child.fd)


def _die_with_parent(parent: int | None = None) -> None:
    """SIGKILL this process when the build dies (Linux PR_SET_PDEATHSIG); with ``parent``,
    also when it died before the request was made."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
    except (OSError, AttributeError):
        pass
    if parent is not None and os.getppid() != parent:
        os._exit(1)


def _content_child(staging: str, spool: str, fts: bool, pool: int, threads: int, conn: Any,
                   previous: str = "", delete: tuple[str, ...] = ()) -> None:
    """In a child process: the bundle's schema, its Content rows and their full-text index –
    built from scratch, or (``previous`` set) patched into a copy of the previous bundle's
    database. A separate process keeps Kùzu's buffer pool (≈ 12 × the indexed text while
    the index is built) out of the main process, whose own peak is the weighted graph."""
    _die_with_parent()
    try:
        import pyarrow as pa

        from oracl import store

        t0 = time.perf_counter()
        table = pa.ipc.open_file(pa.memory_map(spool)).read_all()
        if previous:
            path = store.patch_bundle(Path(staging), Path(previous), list(delete), table,
                                      buffer_pool_bytes=pool, threads=threads)
        else:
            path = store.start_bundle(Path(staging), table, fts=fts, buffer_pool_bytes=pool, threads=threads)
        store.close(path)
        conn.send(("ok", time.perf_counter() - t0, ""))
    except BaseException as exc:  # noqa: BLE001 – reported to the parent, which re-raises it
        conn.send(("error", type(exc).__name__, str(exc)))
    finally:
        conn.close()


def _phase_content(s: BuildState) -> None:
    """Start the bundle in a child process (schema, Content rows, full-text index) while
    the graph is weighed; a thread waits for it so the load phase can join."""
    from multiprocessing import get_context

    from oracl import errors
    from oracl.vault import DB_FILE

    ctx = get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    pool = s.cfg.build_buffer_pool(s.spool.text_bytes)
    previous, delete = "", ()
    if s.previous is not None:
        # the copy holds the previous index: give the patch room for its pages
        pool = max(pool, s.cfg.build_buffer_pool(0) + (s.previous.bundle / DB_FILE).stat().st_size // 2)
        previous = str(s.previous.bundle / DB_FILE)
        old = s.previous.facts
        delete = tuple(sorted(set(s.removed) | {p for p in s.reread if p in old}))
    proc = ctx.Process(target=_content_child, name="oracl-fts", daemon=True,
                       args=(str(s.staging), str(s.spool.path), "fts" not in s.skip, pool,
                             s.cfg.db_threads, child, previous, delete))
    proc.start()
    child.close()

    def wait() -> None:
        try:
            status, a, b = parent.recv()
        except EOFError:
            status, a, b = "error", "StoreError", f"the full-text indexer died (exit code {proc.exitcode})"
        proc.join()
        if status == "ok":
            s.content_seconds = float(a)
        else:
            cls = getattr(errors, a, None)
            s.content_error = cls(b) if isinstance(cls, type) and issubclass(cls, errors.OraclError) else \
                errors.StoreError(f"full-text index: {b}")

    s.content_thread = threading.Thread(target=wait, name="oracl-fts-wait", daemon=True)
    s.content_thread.start()


def _phase_load(s: BuildState) -> None:
    from oracl import load, store

    assert s.graph is not None and s.content_thread is not None
    links, belongs = load.link_tables(s.graph.edges, s.graph.endpoints)
    tables = {"artifacts": load.artifact_table(s.graph.nodes), "hubs": load.hub_table(s.graph.nodes),
              "links": links, "belongs": belongs}
    s.content_thread.join()
    if s.content_error is not None:
        raise s.content_error
    store.finish_bundle(s.staging / store.DB_FILE, tables, after_each=lambda: provenance.fault("copy"))
    del tables
    os.unlink(s.spool.path)
    _join(s, s.vault_child)
    answer = orjson.loads(_join(s, s.export_child))
    s.export_sha256, s.signature = answer["sha256"], answer["signature"]
    s.export_seconds = float(answer["seconds"])
    manifest_sha256 = provenance.write_manifest(s.staging, s.build_id, s.export_sha256, s.header["counts"])
    final = s.vault.bundle(s.build_id)
    os.replace(s.staging, final)
    store.fsync_dir(s.vault.mirror)
    provenance.fault("flip")
    provenance.flip_latest(s.vault, s.build_id, s.export_sha256, s.header["generated_at"], manifest_sha256)
    provenance.publish_export(s.vault, final)
    provenance.snapshot(s.vault, final, s.build_id, s.cfg.snapshots)
    s.bundle_bytes = sum(f.stat().st_size for f in final.iterdir() if f.is_file())


PHASES: tuple[tuple[str, Callable[[BuildState], None]], ...] = (
    ("discover", _phase_discover),
    ("read", _phase_read),
    ("content", _phase_content),
    ("phase2", _phase2),
    ("phase3", _phase3),
    ("merge", _phase_merge),
    ("weigh", _phase_weigh),
    ("export", _phase_export),
    ("load", _phase_load),
)


def build(root: Path, *, cfg: Config | None = None, skip: tuple[str, ...] = (),
          progress: Progress | None = None, now: datetime | None = None, full: bool = False,
          **overrides: Any) -> BuildReport:
    """Build the graph of ``root`` into ``root/.oracl`` and return the report.

    By default the build is selective: files whose ``(path, mtime_ns, size)`` did not
    change since the previous build keep their facts and are not read again; the result
    is the same as a full build's (``full=True`` forces one).
    ``skip`` names phases to leave out: ``phase2``, ``phase3`` (edge producers), ``fts``.
    ``overrides`` are Config fields (alpha, beta, gamma, lam, neighbour_cap, two_layer, …).
    """
    root = Path(root)
    bad = sorted(set(skip) - set(SKIPPABLE))
    if bad:
        raise ConfigError(f"cannot skip {', '.join(bad)}: skippable phases are {', '.join(SKIPPABLE)}")
    check_root(root)
    cfg = cfg or load_config(root, **overrides)
    if os.environ.get("ORACL_TWO_LAYER") == "1" and not cfg.two_layer:
        from dataclasses import replace
        cfg = replace(cfg, two_layer=True)
    now = now or datetime.now(UTC)
    vault = Vault(root)
    with provenance.build_lock(vault):
        return _run(root, cfg, vault, now, skip, progress, full)


def _run(root: Path, cfg: Config, vault: Vault, now: datetime, skip: tuple[str, ...],
         progress: Progress | None, full: bool = False) -> BuildReport:
    build_id = new_build_id(now)
    staging = vault.mirror / f"{build_id}.tmp"
    staging.mkdir(parents=True, exist_ok=True)
    state = BuildState(root=root, cfg=cfg, vault=vault, build_id=build_id, now=now,
                       skip=frozenset(skip), progress=progress or (lambda *_: None), staging=staging,
                       full=full)
    seconds: dict[str, float] = {}
    peak_mib: dict[str, int] = {}
    # The build allocates millions of small acyclic objects (facts, edges, rows); the cyclic
    # collector re-scanning them cost ~25 % of the main process's time. Reference counting
    # still frees everything; one collection runs at the end.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for name, phase in PHASES:
            if name in state.skip:
                seconds[name] = 0.0
                continue
            t0 = time.perf_counter()
            state.progress(name, 0, None)
            phase(state)
            seconds[name] = round(time.perf_counter() - t0, 3)
            peak_mib[name] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        seconds["fts_background"] = round(state.content_seconds, 3)
        seconds["export_background"] = round(state.export_seconds, 3)
    finally:
        _reap(state)
        if state.content_thread is not None and state.content_thread.is_alive():
            state.content_thread.join()  # never leave kuzu writing into a folder we delete
        from oracl.store import DB_FILE, close

        close(staging / DB_FILE)  # a failed build must not keep the staging database open
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
        n_edges = len(state.graph.edges) if state.graph is not None else 0
        # free the rows while the collector is still off: re-enabled with millions of young
        # objects alive, its first pass would scan them all (measured: 0.3 s at 50k files)
        if state.graph is not None:
            state.graph.nodes, state.graph.edges, state.graph.endpoints = [], [], []
        state.facts, state.records, state.previous, state.spool = [], [], None, None
        if gc_was_enabled:
            gc.enable()
    assert state.graph is not None and state.discovery is not None and state.merged is not None
    parse = state.parse_counts
    provenance.append_health(vault, {
        "build_id": build_id, "generated_at": state.header["generated_at"],
        "counts": {"artifacts": state.n_records, "hubs": state.graph.hubs,
                   "edges": n_edges,
                   "edges_by_relation": dict(sorted(state.graph.edge_counts.items()))},
        "mu": state.graph.mu, "sigma": state.graph.sigma, "orphans": state.graph.orphans,
        "dropped": dict(sorted(state.merged.dropped.items())),
        "parse_errors": sum(v for k, v in parse.items() if k != "ok"),
        "seconds": seconds, "bundle_bytes": state.bundle_bytes, "signature": state.signature,
        "mode": state.mode, "files_read": len(state.reread),
    })
    provenance.prune_bundles(vault, keep=max(1, cfg.keep_bundles), current=build_id)
    return BuildReport(
        build_id=build_id, root=str(root.resolve()), files_seen=state.discovery.seen,
        files_indexed=state.n_records, skipped=dict(sorted(state.discovery.skipped.items())),
        excluded_dirs=dict(sorted(state.discovery.excluded_dirs.items())),
        parse_status=dict(sorted(parse.items())),
        counts=state.header["counts"], dropped_edges=dict(sorted(state.merged.dropped.items())),
        mu=state.graph.mu, sigma=state.graph.sigma, seconds=seconds, peak_rss_mib=peak_mib,
        export_path=str(vault.export), export_sha256=state.export_sha256,
        bundle_path=str(vault.bundle(build_id)), fts="fts" not in state.skip, two_layer=cfg.two_layer,
        signature=state.signature, orphans=state.graph.orphans, mode=state.mode,
        files_read=len(state.reread), files_removed=len(state.removed))
