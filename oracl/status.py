"""``oracl status``: how far the working tree has moved since the latest build.

A stat walk of the tree (the build's own discovery rules) against the bundle's
``stat.bin`` (path → size, mtime, checksum, ctime): files whose size, mtime and ctime
match are unchanged without being read; the others are hashed, so a touched-but-identical
file is not reported as modified, and a rewrite that restored the old mtime is. Neither
the database nor the export is opened (unless LATEST or stat.bin is missing: then the
reader's fail-open path and the database answer).

``freshness`` is the same check as a one-line summary, cached for a few seconds per
process, for the answers of query, show, context and the MCP tools.

>>> status(Path("."))["verdict"]        # doctest: +SKIP
'fresh: the build matches the working tree'
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import orjson

from oracl.errors import OraclError, VaultError
from oracl.incremental import STAT_FILE
from oracl.vault import Vault, check_root

FRESHNESS_TTL = 5.0  # seconds a process reuses its last tree check
_CACHE: dict[str, tuple[float, str, dict[str, Any]]] = {}
_CACHE_LOCK = threading.Lock()


def _head(root: Path) -> str | None:
    try:
        r = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def _built(root: Path) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """(LATEST record with the build's time and commit, path → [size, mtime_ns, checksum, status])."""
    vault = Vault(root)
    try:
        latest = vault.read_latest()
        bundle = vault.bundle(str(latest.get("bundle", latest["build_id"])))
        doc = orjson.loads((bundle / STAT_FILE).read_bytes())
        files = doc.pop("files")
        return {**latest, **{k: doc.get(k) for k in ("generated_at", "source_commit")}}, files
    except (OraclError, OSError, orjson.JSONDecodeError, KeyError, AttributeError, TypeError):
        pass
    # a bundle from before stat.bin, one rebuilt from the export, or a damaged LATEST: the
    # readers' path (which rebuilds a bundle from a verified export, or says to build)
    from oracl.stats import open_latest, read_header

    store, latest = open_latest(root)
    header = read_header(root, str(latest.get("bundle", latest["build_id"])))
    files = {r["path"]: [r["size"], _micros(r["mtime"]) * 1000, r["checksum"], "ok"]
             for r in store.named("artifact_stats")}
    return {**latest, "generated_at": header["generated_at"], "source_commit": header.get("source_commit")}, files


def _changed(root: Path, built: dict[str, list[Any]]) -> tuple[list[str], list[str], list[str]]:
    from oracl.config import load_config
    from oracl.pipeline.discover import walk

    found = walk(root, load_config(root), stat=True)
    stats = found.stats
    base = os.path.realpath(root)
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
            with open(os.path.join(base, path), "rb") as fh:
                digest = hashlib.file_digest(fh, "sha256").hexdigest()
        except OSError:
            modified.append(path)
            continue
        if digest != checksum:
            modified.append(path)
    return added, modified, sorted(deleted)


def status(root: Path) -> dict[str, Any]:
    """Build id and time, the commit built from and the current HEAD, and the files added,
    modified and deleted since the build, with a one-line verdict."""
    root = Path(root)
    check_root(root)
    latest, built = _built(root)
    added, modified, deleted = _changed(root, built)
    head = _head(root)
    built_from = latest.get("source_commit")
    changed = len(added) + len(modified) + len(deleted)
    if changed == 0 and (head == built_from or head is None):
        verdict = "fresh: the build matches the working tree"
    elif changed == 0:
        verdict = f"fresh files, but HEAD moved from {str(built_from)[:12]} to {head[:12] if head else '?'}"
    else:
        verdict = (f"stale: {len(added)} added, {len(modified)} modified, {len(deleted)} deleted since the build; "
                   "run `oracl build`")
    return {"build_id": latest["build_id"], "generated_at": latest["generated_at"], "source_commit": built_from,
            "head": head, "added": added, "modified": modified, "deleted": deleted, "verdict": verdict,
            "fresh": changed == 0}


def freshness(root: Path, ttl: float = FRESHNESS_TTL) -> str:
    """``status``'s verdict for an answer to carry, re-checked at most every ``ttl`` seconds
    per process (an MCP server answering a burst of calls walks the tree once)."""
    key = str(Path(root).resolve())
    now = time.monotonic()
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
    if hit is not None and now - hit[0] < ttl:
        return f"{hit[1]} (checked {now - hit[0]:.0f} s ago)"
    try:
        s = status(Path(root))
    except (VaultError, OSError) as exc:
        return f"freshness unknown: {exc}"
    verdict = s["verdict"]
    with _CACHE_LOCK:
        _CACHE[key] = (now, verdict, s)
    return verdict


class FreshnessCheck:
    """``freshness(root)`` in a background thread, started at once: the tree walk overlaps
    the query it will be attached to.

    >>> check = FreshnessCheck(root); answer = search(root, "x"); check.result()   # doctest: +SKIP
    'fresh: the build matches the working tree'
    """

    def __init__(self, root: Path) -> None:
        self._value = "freshness unknown: the check did not finish"
        self._thread = threading.Thread(target=self._run, args=(Path(root),), name="oracl-freshness", daemon=True)
        self._thread.start()

    def _run(self, root: Path) -> None:
        try:
            self._value = freshness(root)
        except Exception as exc:  # noqa: BLE001 – a freshness check never fails an answer
            self._value = f"freshness unknown: {type(exc).__name__}"

    def result(self, timeout: float = 30.0) -> str:
        self._thread.join(timeout)
        return self._value


def _micros(ts: Any) -> int:
    """A stored (naive UTC) timestamp as microseconds since the epoch."""
    from datetime import datetime

    if ts is None:
        return -1
    delta = ts.replace(tzinfo=None) - datetime(1970, 1, 1)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
