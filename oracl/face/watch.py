"""``oracl watch``: rebuild after changes settle, one line per rebuild.

By default the watch sleeps on the platform's file events (``watchfiles``: inotify on
Linux, FSEvents on macOS, ReadDirectoryChangesW on Windows) and looks at the tree only
when something under it changed: an idle watch costs nothing, however big the tree. The
paths the events name are looked at one by one against the last build's walk
(``walk.triage``: one ``lstat`` each), and the next build is handed them (``build(changed=…)``:
that walk with them taken in, no walk of the tree). Where they cannot say what moved (a
file or folder the walk never saw, an ignore file), what changed is decided as the polling
watch decides it — the build's own discovery and one ``stat`` per file, compared with the
last look — and the build walks; both see exactly the files a build would index and
nothing else (an editor's swap file wakes the watch, finds no change, and builds
nothing). Events under ``.oracl/`` (the builds' own writes) and ``.git/`` are dropped
before they wake it. Where file events cannot be had (no
``watchfiles``, a file system without them, the kernel's watch limit reached) or with
``poll=True``, the tree is polled every ``interval`` seconds instead, and the first line
says so.

A change starts a quiet period; the rebuild (selective, so its cost follows the change)
runs once no file changed for ``settle`` seconds. A failed rebuild prints its one-line
error and the watch goes on; a build already running elsewhere is waited for.

>>> watch(Path("."), emit=print, max_builds=1)       # doctest: +SKIP
12:00:03 build 20261130T120003…  incremental: 50,003 reused, 1 read, 0 removed  12.3 s  (1 file changed)
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

from oracl.core.errors import BuildLockedError, NoBuildError, OraclError
from oracl.core.walk import moved, triage

# a full pass of the collector once this many builds ran, when the watch is next idle (0.8 s
# at 20k files: never inside a build)
GC_EVERY_BUILDS = 8

TreeStat = dict[str, tuple[int, int, int]]


def tree_stat(root: Path) -> TreeStat:
    """path → (size, mtime_ns, ctime_ns) of every file a build would index (with a broken
    ``[tool.oracl]`` the default rules: the watch goes on, and the build says what is wrong)."""
    from oracl.core.config import Config, load_config
    from oracl.core.errors import ConfigError
    from oracl.core.walk import walk

    try:
        cfg = load_config(root)
    except ConfigError:
        cfg = Config()
    found = walk(root, cfg, stat=True)
    return {rel: (st.st_size, st.st_mtime_ns, st.st_ctime_ns) for rel, st in found.stats.items()}


def _diff(a: TreeStat, b: TreeStat) -> set[str]:
    """The paths added, removed or changed in size or mtime between two looks."""
    return (a.keys() ^ b.keys()) | {k for k in a.keys() & b.keys() if a[k] != b[k]}


def _stamp() -> str:
    return datetime.now().strftime("%H:%M:%S")


IGNORED_DIRS = (".oracl", ".git")  # the vault (the builds' own writes) and git's internals


def ignored(root: str, path: str) -> bool:
    """An event at ``path`` (absolute) that cannot change what a build indexes: anything
    under ``root``'s ``.oracl/`` or ``.git/``, or outside ``root``. (A ``.git`` of a folder
    below the root is not: it makes that folder an embedded repository, which the walk
    leaves out.)"""
    rel = os.path.relpath(path, root)
    if rel == ".." or rel.startswith(".." + os.sep):
        return True
    parts = rel.split(os.sep)
    if len(parts) > 1 and parts[-1] == ".git" and parts[0] not in IGNORED_DIRS:
        return False
    return any(part in IGNORED_DIRS for part in parts)


# what a wake says: None, look at the whole tree; else the root-relative paths file events
# named (none: only time passed)
Wake = set[str] | None


def _polled(root: Path, interval: float, sleep: Callable[[float], None]) -> Iterator[Wake]:
    """Wake every ``interval`` seconds (never spending more than a third of a core on
    looking: a look that took t seconds is followed by at least 2t of sleep)."""
    poll = 0.0
    while True:
        sleep(max(interval, 2 * poll))
        t0 = time.perf_counter()
        yield None
        poll = time.perf_counter() - t0


def _events(root: Path, wake: float) -> Iterator[Wake]:
    """Block on file events; the root-relative paths they named under ``root``, an empty
    set at least every ``wake`` seconds (so a quiet period can end)."""
    import watchfiles

    top = str(root.resolve())
    for batch in watchfiles.watch(top, watch_filter=lambda _change, path: not ignored(top, path),
                                  debounce=200, step=20, rust_timeout=max(20, int(wake * 1000)),
                                  yield_on_timeout=True, raise_interrupt=True):
        yield {os.path.relpath(path, top).replace(os.sep, "/") for _change, path in batch}


def _source(root: Path, poll: bool, interval: float, settle: float,
            sleep: Callable[[float], None]) -> tuple[Iterator[Wake], str]:
    """The looks' clock and how it is said: file events when they can be had, else polling."""
    if not poll:
        try:
            events = _events(root, settle if settle > 0 else 0.05)
            next(events)  # starts the watcher: an error (no watchfiles, no inotify watches left) is raised here
            return events, "file events"
        except (ImportError, OSError, RuntimeError) as exc:
            why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return _polled(root, interval, sleep), f"polling every {interval:g} s: file events unavailable ({why})"
    return _polled(root, interval, sleep), f"polling every {interval:g} s"


def watch(root: Path, *, emit: Callable[[str], None], settle: float = 1.0, interval: float = 1.0,
          max_builds: int = 0, sleep: Callable[[float], None] = time.sleep,
          executor_kind: str = "in-process", poll: bool = False) -> int:
    """Watch ``root`` until interrupted (or ``max_builds`` rebuilds); returns the rebuilds.
    ``poll``: look every ``interval`` seconds instead of waiting for file events.
    ``executor_kind`` is the builds' (the CLI forks its helpers)."""
    from oracl.builder.incremental import Carry
    from oracl.builder.orchestrator import build, warm
    from oracl.read.status import status

    root = Path(root)
    builds = 0
    carry = Carry()  # each build's facts, kept for the next: it decodes facts.bin only when LATEST moved
    last = tree_stat(root)  # before the watcher starts: an edit made after it is seen at the first look
    looks, how = _source(root, poll, interval, settle, sleep)

    def rebuild(reason: str, hints: set[str] | None) -> bool:
        """One build; False when another process holds the build lock (try again later).
        ``hints``: every path the file events named since the last build (the build takes
        them into that build's walk), None when a look at the whole tree found the change."""
        nonlocal builds
        t0 = time.perf_counter()
        try:
            r = build(root, executor_kind=executor_kind, carry=carry, changed=hints)
        except BuildLockedError:
            emit(f"{_stamp()} another build is running; trying again after it")
            return False
        except OraclError as exc:
            emit(f"{_stamp()} build failed ({reason}): {exc}")
            builds += 1
            return True
        builds += 1
        emit(f"{_stamp()} build {r.build_id}  {r.mode}  {time.perf_counter() - t0:.1f} s  ({reason})")
        return True

    start = ""  # why the tree needs a build before any change, until one succeeds
    try:
        state = status(root)
        emit(f"{_stamp()} watching {root} ({state['verdict']}; {how})")
        start = "" if state["fresh"] else "stale at start"
    except NoBuildError:
        emit(f"{_stamp()} watching {root} (no build yet; {how})")
        start = "no build yet"
    except OraclError as exc:  # a damaged vault: the first build mends it
        emit(f"{_stamp()} watching {root} ({str(exc).split(';')[0]}; {how})")
        start = "the latest build is unreadable"
    if start and rebuild(start, None):
        start = ""
    elif not start:  # up to date: the carry filled from the latest now, not by the first save
        warmed = warm(root, carry, executor_kind=executor_kind)
        if warmed.startswith("warmed"):  # (else the tree moved, or a build holds the lock: the first build fills it)
            emit(f"{_stamp()} {warmed}")
    pending: set[str] = set()
    hints: set[str] | None = set()  # the paths named since the last build; None: the build walks
    quiet_since = 0.0
    collected_at = builds  # the builds done when the collector last ran a full pass here
    first = how == "file events"  # the watcher is up: look once for what changed before it was
    try:
        while not max_builds or builds < max_builds:
            wake: Wake = None if first else next(looks)
            first = False
            changed: set[str] = set()
            # named paths are looked at one by one against the last build's walk (what they
            # change, with one lstat each); a look at the whole tree when they cannot say
            found = triage(root, carry.discovery, wake) if wake and carry.discovery is not None else None
            if wake is None or (wake and found is None):
                now = tree_stat(root)
                changed = _diff(last, now)
                last = now
                if changed:
                    hints = None
            elif found is not None:
                changed = set(moved(carry.discovery, found))
                for rel, st in found:  # (``last`` follows, so a later look does not find them again)
                    if rel in changed:
                        if st is None:
                            last.pop(rel, None)
                        else:
                            last[rel] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
                if changed and hints is not None:
                    hints |= wake
            if changed:
                pending |= changed
                quiet_since = time.monotonic()
                continue
            if (pending or start) and time.monotonic() - quiet_since >= settle:
                # ``last`` stays the tree as it was before the build: an edit made while the
                # build runs is seen at the next look and brings another rebuild
                why = f"{len(pending)} file{'s' if len(pending) != 1 else ''} changed" if pending else start
                if rebuild(why, hints if pending and not start else None):
                    pending, start, hints = set(), "", set()
            elif not pending and not start and builds - collected_at >= GC_EVERY_BUILDS:
                # quiet: the full pass the builds leave to the oldest generation (what they
                # carry is put there unscanned, ``orchestrator._run``) runs now, not in a build
                gc.collect()
                collected_at = builds
    finally:
        close = getattr(looks, "close", None)
        if close is not None:
            close()  # stops the file watcher
    return builds
