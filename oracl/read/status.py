"""``oracl status``: how far the working tree has moved since the build a ``Snapshot``
holds.

A stat walk of the tree (the build's own discovery rules) against the bundle's
``stat.bin`` (path → size, mtime, checksum, ctime): files whose size, mtime and ctime
match are unchanged without being read; the others are hashed (streamed, regular files
inside the root only), so a touched-but-identical file is not reported as modified, and a
rewrite that restored the old mtime is. ``tree_status`` opens neither the database nor
the export (unless the bundle has no ``stat.bin``: then its database answers); ``status``
also counts the full-text rows in-place updates superseded (``full_text``).

``FreshnessCheck`` is the same check as a one-line summary for the answers of query,
show, context and the MCP tools: the walk runs in a thread beside the answer, and only
walks and hashes – everything it compares with was read from the snapshot beforehand, in
the caller's thread. A snapshot keeps its last verdict for a few seconds.

>>> with Snapshot.open(Path(".")) as snap:          # doctest: +SKIP
...     tree_status(snap)["verdict"]
'fresh: the build matches the working tree'
"""

from __future__ import annotations

import subprocess
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from oracl.core.children import git
from oracl.core.errors import OraclError, UnsafePathError
from oracl.core.paths import utc
from oracl.core.vault import STAT_FILE, Repair
from oracl.read.snapshot import MemoKey, Snapshot

FRESHNESS_TTL = 5.0  # seconds a snapshot reuses its last tree check
FRESHNESS: MemoKey[tuple[float, str]] = MemoKey("freshness")  # (monotonic time checked, verdict)
_FRESHNESS_THREAD: MemoKey[threading.Thread] = MemoKey("freshness_thread")


def _head(root: Path) -> str | None:
    try:
        r = git(root, "rev-parse", "HEAD", text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def _changed(snap: Snapshot, built: dict[str, list[Any]]) -> tuple[list[str], list[str], list[str]]:
    from oracl.core.config import load_config
    from oracl.core.walk import walk

    found = walk(snap.root, load_config(snap.root, packages={}), stat=True)
    stats = found.stats
    added: list[str] = []
    modified: list[str] = []
    deleted = set(built)
    for path in found.files:
        old = built.get(path)
        if old is None:
            added.append(path)
            continue
        deleted.discard(path)
        st = stats.get(path)
        if st is None:
            deleted.add(path)
            continue
        size, mtime_ns, checksum = old[0], old[1], old[2]
        ctime_ns = old[4] if len(old) > 4 else st.st_ctime_ns  # unknown for a bundle's database rows
        if st.st_size == size and st.st_ctime_ns == ctime_ns and (
                st.st_mtime_ns == mtime_ns or st.st_mtime_ns // 1000 == mtime_ns // 1000 and mtime_ns % 1000 == 0):
            continue  # same size, mtime and ctime: unchanged without reading it
        try:
            digest = snap.workspace.sha256(path)
        except (OSError, UnsafePathError):
            modified.append(path)
            continue
        if digest != checksum:
            modified.append(path)
    return added, modified, sorted(deleted)


def status(root: Path, *, repair: Repair | None = None) -> dict[str, Any]:
    """``tree_status`` of the latest build of ``root``, and how far its full-text index is
    from a full build's (``full_text``: this one opens the database)."""
    with Snapshot.open(Path(root), repair=repair) as snap:
        out = tree_status(snap)
        out["full_text"] = full_text(snap)
        out["notices"] = list(snap.notices)
        return out


def full_text(snap: Snapshot) -> str:
    """The rows in-place updates superseded that the full-text indexes still count (their
    BM25 document frequencies and lengths include them until the index is made again past
    its bound: schema/001_nodes.cypher), in words; "" when none."""
    from oracl.core.derive import fts_superseded_max

    held = []
    for table, dead in snap.superseded().items():
        if dead:
            live = int(snap.store.rows(f"MATCH (c:{table}) WHERE c.live RETURN count(*) AS n")[0]["n"])
            held.append(f"{dead:,} {table} row{'s' if dead != 1 else ''} (made again past {fts_superseded_max(live):,})")
    if not held:
        return ""
    return (", ".join(held) + " superseded by in-place updates and still counted by the full-text index: "
            "BM25 differs from a full build's by them")


def tree_status(snap: Snapshot, built: tuple[dict[str, Any], dict[str, list[Any]]] | None = None) -> dict[str, Any]:
    """Build id and time, the commit built from and the current HEAD, and the files added,
    modified and deleted since the build, with a one-line verdict."""
    info, files = built if built is not None else snap.built_files()
    added, modified, deleted = _changed(snap, files)
    head = _head(snap.root)
    built_from = info.get("source_commit")
    changed = len(added) + len(modified) + len(deleted)
    if changed == 0 and (head == built_from or head is None):
        verdict = "fresh: the build matches the working tree"
    elif changed == 0:
        verdict = f"fresh files, but HEAD moved from {str(built_from)[:12]} to {head[:12] if head else '?'}"
    else:
        verdict = (f"stale: {len(added)} added, {len(modified)} modified, {len(deleted)} deleted since the build; "
                   "run `oracl build`")
    return {"build_id": snap.build_id, "generated_at": info.get("generated_at"), "source_commit": built_from,
            "head": head, "added": added, "modified": modified, "deleted": deleted, "verdict": verdict,
            "fresh": changed == 0, "coverage": coverage_age(snap)}


def coverage_age(snap: Snapshot, now: datetime | None = None) -> str | None:
    """How old the newest recorded coverage of the build is (phase 6, design §5d), in
    words; None when it holds none."""
    try:
        newest = (snap.header.get("events") or {}).get("newest_coverage")
    except OraclError:
        return None
    if not isinstance(newest, str):
        return None
    at = utc(newest)
    if at is None:
        return None
    days = ((now or datetime.now(UTC)) - at).total_seconds() / 86400
    age = "today" if days < 1 else f"{int(days)} day{'s' if int(days) != 1 else ''} old"
    return f"newest coverage {newest} ({age})"


class FreshnessCheck:
    """``tree_status``'s verdict for an answer to carry, computed in a background thread
    started at once (the tree walk overlaps the answer). The thread only walks and
    hashes; it never opens LATEST, a bundle or the engine. A snapshot reuses a verdict
    for ``ttl`` seconds (an MCP server answering a burst of calls walks the tree once),
    and a check still running is joined, never started twice.

    >>> check = FreshnessCheck(snap); answer = search(snap, "x"); check.result()   # doctest: +SKIP
    'fresh: the build matches the working tree'
    """

    def __init__(self, snap: Snapshot, ttl: float = FRESHNESS_TTL) -> None:
        self._snap = snap
        self._thread: threading.Thread | None = None
        now = time.monotonic()
        hit = snap.memo.get(FRESHNESS)
        if hit is not None and now - hit[0] < ttl:
            self._value = f"{hit[1]} (checked {now - hit[0]:.0f} s ago)"
            return
        self._value = "freshness unknown: the check did not finish"
        with snap.memo.locked():
            running = snap.memo.get(_FRESHNESS_THREAD)
            if running is not None and running.is_alive():
                self._thread = running
                return
            # a bundle without stat.bin answers from its database: that read happens here
            built = None if (snap.bundle / STAT_FILE).is_file() else snap.built_files()
            self._thread = threading.Thread(target=self._run, args=(snap, built, now), name="oracl-freshness",
                                            daemon=True)
            snap.memo.put(_FRESHNESS_THREAD, self._thread)
            self._thread.start()

    @staticmethod
    def _run(snap: Snapshot, built: Any, started: float) -> None:
        try:
            if built is None:
                built = snap.built_files(database=False)
            value = tree_status(snap, built)["verdict"]
        except (OraclError, OSError) as exc:
            value = f"freshness unknown: {exc}"
        except Exception as exc:  # noqa: BLE001 – a freshness check never fails an answer
            value = f"freshness unknown: {type(exc).__name__}"
        snap.memo.put(FRESHNESS, (started, value))

    def result(self, timeout: float = 30.0) -> str:
        """The verdict, waiting at most ``timeout`` seconds for the walk. A walk that has
        not finished gives the previous verdict with its age, when there is one."""
        if self._thread is None:
            return self._value
        self._thread.join(timeout)
        hit = self._snap.memo.get(FRESHNESS)
        if not self._thread.is_alive() and hit is not None:
            return hit[1]
        if hit is not None:
            return f"{hit[1]} (checked {time.monotonic() - hit[0]:.0f} s ago; a new check is running)"
        return "freshness unknown: the working tree is still being checked"
