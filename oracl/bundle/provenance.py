"""The provenance chain around a build (design §7): the build lock, reader locks on bundles,
publishing the export beside its bundle, snapshots, the health history, and the fault
points the crash tests use.

Layout of one build (everything under ``.oracl/``)::

    mirror/<build_id>/graph.kuzu              the Kùzu bundle
    mirror/<build_id>/export.idx (+ .sha256, .sig)   the export of that build: its index
    parts/<2 hex>/<sha256>                    the parts every kept index names (core/parts.py)
    mirror/<build_id>/manifest.json           SHA-256 of each file, export root, counts
    mirror/<build_id>/readers.lock            shared-locked by every process reading it
    mirror/LATEST.json                        the bundle readers open, flipped atomically
    export.idx (+ sidecars)                   hard links to the latest bundle's export index
    snapshots/<build_id>/…                    hard links to earlier export indexes, newest N kept
    graph_health_history.jsonl                one line per build
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import signal
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from stat import S_ISREG
from typing import Any

import orjson

from oracl.core.errors import BuildLockedError, OraclError
from oracl.core.seal import line_sealed, seal_line, seal_next, user_key, write_sealed
from oracl.core.vault import (
    EXPORT,
    EXPORT_INDEX,
    LATEST_KIND,
    MANIFEST,
    READERS_LOCK,
    Vault,
    append_fd,
    atomic_write,
    read_control,
)

EXPORT_DIGEST_KIND = "export-digest"  # the seal of the published ``.sha256``: repair trusts only this user's export

SIDECARS = (EXPORT_INDEX, EXPORT_INDEX + ".sha256", EXPORT_INDEX + ".sig")
LEGACY = (EXPORT, EXPORT + ".sha256", EXPORT + ".sig")  # the whole export a build before parts kept at the top
HEALTH = "graph_health_history.jsonl"
FAULT_ENV = "ORACL_FAULT"


def fault(point: str) -> None:
    """Crash tests: ``ORACL_FAULT=<point>`` kills this process with SIGKILL at ``point``
    (``read``, ``copy``, ``flip``; ``after <phase>`` for each phase the orchestrator times; in publish ``sealed``, ``flipped``, ``published <file>``
    for each of the export's files, ``published``), the way a power cut or the OOM killer
    would."""
    if os.environ.get(FAULT_ENV) == point:
        os.kill(os.getpid(), signal.SIGKILL)


@contextmanager
def build_lock(vault: Vault) -> Iterator[None]:
    """One build (or bundle rebuild) per vault at a time; a second one fails at once."""
    vault.create()
    fd = os.open(vault.dir / "build.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BuildLockedError(f"another oracl build is running on {vault.dir}") from None
        yield
    finally:
        os.close(fd)


def prune_bundles(vault: Vault, keep: int, current: str, spare: Collection[Path] = ()) -> list[str]:
    """Remove bundles beyond the newest ``keep`` unless a reader holds them, and staging
    folders left by crashed builds but those in ``spare`` (a long-lived builder's standby
    folders set aside, which it removes itself). Returns the names removed."""
    removed: list[str] = []
    if not vault.mirror.is_dir():
        return removed
    bundles = sorted(p for p in vault.mirror.iterdir() if p.is_dir() and not p.name.endswith(".tmp"))
    for old in bundles[:-keep] if keep > 0 else bundles:
        if old.name == current:
            continue
        try:
            fd = os.open(old / READERS_LOCK, os.O_RDONLY)
        except OSError:
            fd = -1
        try:
            if fd >= 0:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # a reader holds it; a later build will remove it
            shutil.rmtree(old, ignore_errors=True)
            removed.append(old.name)
        finally:
            if fd >= 0:
                os.close(fd)
    for stale in vault.mirror.glob("*.tmp"):
        if stale.name != f"{current}.tmp" and stale not in spare:
            shutil.rmtree(stale, ignore_errors=True)
    return removed


PENDING = ".pending-"  # vault.dir/.pending-<build_id>: a build's JSON-lines files until it publishes


def pending_dir(vault: Vault, build_id: str) -> Path:
    path = vault.dir / f"{PENDING}{build_id}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def move_pending(vault: Vault, build_id: str) -> None:
    """A published build's JSON-lines files into the vault, one atomic rename each."""
    src = vault.dir / f"{PENDING}{build_id}"
    if not src.is_dir():
        return
    for path in sorted(p for p in src.rglob("*") if p.is_file()):
        dst = vault.dir / path.relative_to(src)
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, dst)
    shutil.rmtree(src, ignore_errors=True)


JSONL_FILES = ("index.jsonl", "edges/phase2_edges.jsonl", "edges/phase3_edges.jsonl", "edges/all_edges.jsonl")


def drop_jsonl(vault: Vault) -> None:
    """The vault's JSON-lines files removed (a build that did not write them: ``jsonl``
    off), so that none describes an earlier tree."""
    for name in JSONL_FILES:
        try:
            os.unlink(vault.dir / name)
        except FileNotFoundError:
            pass


def drop_pending(vault: Vault, build_id: str) -> None:
    shutil.rmtree(vault.dir / f"{PENDING}{build_id}", ignore_errors=True)


def clean_stale(vault: Vault) -> list[str]:
    """At the start of every build (under the build lock): the staging folders and pending
    files of builds that were killed. Returns their names."""
    removed = []
    stale = list(vault.mirror.glob("*.tmp")) if vault.mirror.is_dir() else []
    stale += list(vault.dir.glob(f"{PENDING}*")) if vault.dir.is_dir() else []
    for path in stale:
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path.name)
    return removed


def link_or_copy(src: Path, dst: Path) -> None:
    """Put ``src`` at ``dst`` atomically: a hard link (no copy of a large export) moved
    into place with os.replace; a copy where links are not possible."""
    tmp = dst.with_name(f".{dst.name}.tmp{os.getpid()}")
    if tmp.exists():
        tmp.unlink()
    try:
        os.link(src, tmp)
    except OSError:
        shutil.copyfile(src, tmp)
    os.replace(tmp, dst)


def publish_export(vault: Vault, bundle: Path) -> None:
    """Make the bundle's export index (and its sidecars) the vault's top-level copy, one
    atomic rename each (``verify`` reads the bundle's own and accepts a copy a kill left
    behind); the whole export an older build kept there goes."""
    for name in LEGACY:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(vault.dir / name)
    for name in SIDECARS:
        src = bundle / name
        if name == EXPORT_INDEX + ".sha256" and src.exists():  # what repair may trust: sealed (design §11)
            seal_next(vault.dir / name, EXPORT_DIGEST_KIND, src.read_bytes())
        if src.exists():
            link_or_copy(src, vault.dir / name)
        elif (vault.dir / name).exists():
            (vault.dir / name).unlink()  # an unsigned build must not keep an older signature
        fault(f"published {name}")


def snapshot(vault: Vault, bundle: Path, build_id: str, keep: int) -> Path:
    """A timestamped copy (hard links) of the export index and its sidecars (their parts
    stay in the store while an index names them); oldest rotated out."""
    target = vault.dir / "snapshots" / build_id
    target.mkdir(parents=True, exist_ok=True)
    for name in SIDECARS:
        if (bundle / name).exists():
            link_or_copy(bundle / name, target / name)
    snaps = sorted(p for p in target.parent.iterdir() if p.is_dir())
    for old in snaps[:-keep] if keep > 0 else snaps:
        shutil.rmtree(old, ignore_errors=True)
    return target


HEALTH_KIND = "health"  # what a health line's seal binds it to (core.seal)


def prune_parts(vault: Vault) -> int:
    """Remove the parts nothing kept names: the export indexes (the bundles', the
    snapshots', the top-level one), the bundles' ``symbols.seg`` (its group entries) and
    ``stat.bin`` (its rows, its edges' raw ranks, its name tables, its reads, its type names,
    its git log and what it parsed into). Under the build lock, after the bundles were pruned. When one
    of those files is there but cannot be read, nothing goes (its parts may be all a build
    has). Returns how many went."""
    from oracl.core.parts import decode_index, digests, store_of
    from oracl.core.vault import STAT_FILE, SYMBOLS_FILE

    def listed(key: str) -> Any:  # the parts a JSON file lists under key: [digest, length, …] each
        return lambda data: {str(g[0]) for g in orjson.loads(data).get(key, [])}  # (an older format lists none)

    def stat_parts(data: bytes) -> set[str]:  # its rows' parts, the raw ranks, the name tables and reads it recorded
        doc = orjson.loads(data)
        ranks, tables, reads, types = doc.get("ranks"), doc.get("symbol_table"), doc.get("read_sets"), \
            doc.get("interface_types")
        log = doc.get("git_log")  # (the history's git log: ``orchestrator.GIT_LOG``)
        parsed = doc.get("history")  # (what it parsed into: ``orchestrator.HISTORY_PART``)
        named = [tables, tables.get("patch") if isinstance(tables, dict) else None,
                 *((reads.get("base"), reads.get("delta"), reads.get("recent")) if isinstance(reads, dict) else ())]
        return {str(d) for d, _ in doc.get("parts", [])} | ({str(ranks[0])} if isinstance(ranks, list) and ranks else set()) \
            | ({str(types[0])} if isinstance(types, list) and types else set()) \
            | ({str(log[0])} if isinstance(log, list) and log else set()) \
            | ({str(parsed[0])} if isinstance(parsed, list) and parsed else set()) \
            | {str(p["part"]) for p in named if isinstance(p, dict) and "part" in p}

    readers = {EXPORT_INDEX: lambda data: digests(decode_index(data)), SYMBOLS_FILE: listed("groups"),
               STAT_FILE: stat_parts}
    named: list[Path] = [vault.export_index]
    for folder in (vault.mirror, vault.dir / "snapshots"):
        if folder.is_dir():
            named += [b / name for b in folder.iterdir() if b.is_dir() for name in readers]
    keep: set[str] = set()
    read: set[tuple[int, int]] = set()  # (a snapshot's export index is a link to its bundle's: read once)
    for path in named:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            continue
        except OSError:
            return 0
        try:
            st = os.fstat(fd)
            if not S_ISREG(st.st_mode):
                return 0
            if (st.st_dev, st.st_ino) in read:
                continue
            read.add((st.st_dev, st.st_ino))
            with os.fdopen(os.dup(fd), "rb") as fh:
                keep |= readers[path.name](fh.read())
        except (OSError, OraclError, ValueError, KeyError, TypeError, AttributeError):
            return 0
        finally:
            os.close(fd)
    return store_of(vault.dir).prune(keep)


def append_health(vault: Vault, row: dict[str, Any]) -> None:
    """One sealed line per build; appended with O_APPEND so concurrent writers never
    interleave."""
    line = seal_line(user_key(), HEALTH_KIND, orjson.dumps(row, option=orjson.OPT_SORT_KEYS)) + b"\n"
    fd = append_fd(vault.dir / HEALTH)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def read_health(vault: Vault) -> list[dict[str, Any]]:
    """Every line of the health history this user's ORACL wrote (a torn last line, a line
    that came with the tree or one with a flipped byte is skipped: it proves nothing)."""
    try:
        raw = read_control(vault.dir / HEALTH, 1 << 30)
    except OSError:  # missing, a link, a FIFO: no history this user's oracl wrote
        return []
    rows = []
    key = user_key()
    for line in raw.splitlines():
        if not line_sealed(key, HEALTH_KIND, line):
            continue
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows


def health_trend(rows: list[dict[str, Any]], threshold: float) -> list[dict[str, Any]]:
    """Each build with the relative change of its counts against the previous one, and a
    flag when any of artifacts, hubs or edges moved by more than ``threshold``."""
    out = []
    prev: dict[str, Any] | None = None
    for row in rows:
        moved: dict[str, float] = {}
        if prev is not None:
            for key in ("artifacts", "hubs", "edges"):
                a, b = prev["counts"].get(key, 0), row["counts"].get(key, 0)
                change = (b - a) / a if a else (0.0 if b == a else 1.0)
                if abs(change) > threshold:
                    moved[key] = change
        out.append({**row, "moved": moved, "flagged": bool(moved)})
        prev = row
    return out


def write_manifest(bundle: Path, build_id: str, export_root: str, counts: dict[str, Any],
                   lineage: dict[str, Any] | None = None, known: dict[str, str] | None = None) -> str:
    """Seal a bundle: the SHA-256 of each of its files (the database by its identity on
    this disk, ``file_identity``: never read whole), the export digest and the counts, and
    ``lineage`` (what the next build needs to update this bundle's database in place when
    it is the standby: ``database.claim_standby``). ``known``: the digests of files
    hard-linked from the bundle before (its facts shards), taken as they are. Returns the
    manifest's own digest, which LATEST records."""
    from oracl.core.export import sha256_file
    from oracl.core.vault import DB_FILE, file_identity

    def seal_of(f: Path) -> str:
        if f.name == EXPORT_INDEX:
            return export_root  # known: not hashed twice
        if known and f.name in known:
            return known[f.name]
        return file_identity(f) if f.name == DB_FILE else sha256_file(f)

    with os.scandir(bundle) as found:  # (the entry's own type: ~520 files, no stat each)
        names = sorted(e.name for e in found if e.is_file(follow_symlinks=False)
                       and e.name not in ("manifest.json", READERS_LOCK))
    files = {name: seal_of(bundle / name) for name in names}
    manifest = {"build_id": build_id, "export_root": export_root, "counts": counts, "files": files}
    if lineage:
        manifest["lineage"] = lineage
    data = orjson.dumps(manifest, option=orjson.OPT_SORT_KEYS)
    atomic_write(bundle / "manifest.json", data)
    (bundle / READERS_LOCK).touch()
    return hashlib.sha256(data).hexdigest()


DELTA_MAX = 2_000  # the most files a lineage lists with their checksums in the bundle it started from


def lineage(vault: Vault, symbols_whole: bool, symbols_moved: list[str] | None = None,
            delta: Mapping[str, str | None] | None = None) -> dict[str, Any] | None:
    """What a build that started from the latest bundle records of it in its manifest:
    that bundle's name and manifest digest (as LATEST, sealed, holds them), whether this
    build made every symbol row again, and which files' symbol rows it made again though
    their bytes did not change (``symbols_moved``: a file came, went or changed what names
    resolve to); and ``delta``, when it lists at most ``DELTA_MAX`` files: each file this
    build read or removed → its checksum in that bundle (None where it had no such file).
    The next build takes that bundle over as its standby (``database.claim_standby``) and
    catches those files up; with ``delta`` it finds them without reading the standby's
    checksums of every file (``recorded_delta``)."""
    try:
        latest = vault.read_latest()
    except Exception:  # noqa: BLE001 – no latest build: nothing to start from next time
        return None
    base, digest = latest.get("bundle", latest.get("build_id")), latest.get("manifest_sha256")
    if not isinstance(base, str) or not isinstance(digest, str):
        return None
    out: dict[str, Any] = {"base": base, "base_manifest_sha256": digest, "symbols_whole": symbols_whole}
    if symbols_moved:
        out["symbols_moved"] = sorted(symbols_moved)
    if delta is not None and len(delta) <= DELTA_MAX:
        out["delta"] = {p: delta[p] for p in sorted(delta)}
    return out


def recorded_delta(vault: Vault, latest_bundle: Path) -> tuple[str, dict[str, str | None]] | None:
    """(the bundle the latest build started from, each file it read or removed → its
    checksum there), as the latest's lineage records it (``lineage``'s ``delta``), when the
    latest is ``latest_bundle`` and its manifest is the one LATEST seals; else None."""
    try:
        latest = vault.read_latest()
        if vault.bundle(str(latest.get("bundle", latest["build_id"]))) != latest_bundle:
            return None
        raw = (latest_bundle / MANIFEST).read_bytes()
        if hashlib.sha256(raw).hexdigest() != latest.get("manifest_sha256"):
            return None
        held = orjson.loads(raw).get("lineage") or {}
    except Exception:  # noqa: BLE001 – none recorded: the standby's checksums are read when it is claimed
        return None
    base, delta = held.get("base") if isinstance(held, dict) else None, \
        held.get("delta") if isinstance(held, dict) else None
    if not isinstance(base, str) or not isinstance(delta, dict) or not all(
            isinstance(p, str) and (c is None or isinstance(c, str)) for p, c in delta.items()):
        return None
    return base, delta


SPARE = "-spare"  # mirror/<build_id>-spare: a full build's database, copied for its first rebuild


def spare_name(build_id: str) -> str:
    return f"{build_id}{SPARE}"


def copy_spare(vault: Vault, build_id: str, db: Path) -> None:
    """A copy of a full build's database (``db``, closed) in the spare's staging folder:
    run beside the export, so the first rebuild after a full build finds a standby to bring
    up to date in place instead of copying the database itself."""
    from oracl.core.vault import DB_FILE

    staging = vault.mirror / f"{spare_name(build_id)}.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    shutil.copyfile(db, staging / DB_FILE)


def seal_spare(vault: Vault, build_id: str, bundle_staging: Path) -> dict[str, Any] | None:
    """The spare ``copy_spare`` made, sealed and moved into place as a bundle a
    ``claim_standby`` takes: its database, the full build's ``stat.bin`` (a hard link: the
    same files, so nothing is caught up) and a manifest. Returns the lineage the full
    build's manifest records of it (its symbol rows are the full build's: not whole), or
    None when it cannot be made (the first rebuild then copies the database, as before)."""
    from oracl.core.vault import DB_FILE, STAT_FILE, file_identity

    name = spare_name(build_id)
    staging = vault.mirror / f"{name}.tmp"
    try:
        link_or_copy(bundle_staging / STAT_FILE, staging / STAT_FILE)
        files = {DB_FILE: file_identity(staging / DB_FILE),
                 STAT_FILE: hashlib.sha256((staging / STAT_FILE).read_bytes()).hexdigest()}
        data = orjson.dumps({"build_id": name, "spare_of": build_id, "files": files}, option=orjson.OPT_SORT_KEYS)
        atomic_write(staging / "manifest.json", data)
        (staging / READERS_LOCK).touch()
        staging.replace(vault.mirror / name)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        return None
    return {"base": name, "base_manifest_sha256": hashlib.sha256(data).hexdigest(), "symbols_whole": False}


def flip_latest(vault: Vault, build_id: str, export_root: str, generated_at: str,
                manifest_sha256: str) -> None:
    """Point readers at a sealed bundle: one atomic rename of LATEST.json."""
    write_sealed(vault.latest, LATEST_KIND, orjson.dumps({"build_id": build_id, "bundle": build_id,
                                             "export_root": export_root,
                                             "manifest_sha256": manifest_sha256,
                                             "generated_at": generated_at},
                                            option=orjson.OPT_SORT_KEYS))
