"""``oracl watch``: rebuild after changes settle, one line per rebuild.

The tree is polled (the build's own discovery, then one ``stat`` per file): portable, no
extra dependency, and it sees exactly the files a build would index. A change starts a
quiet period; the rebuild (selective, so its cost follows the change) runs once no file
changed for ``settle`` seconds. A failed rebuild prints its one-line error and the watch
goes on; a build already running elsewhere is waited for.

>>> watch(Path("."), emit=print, max_builds=1)       # doctest: +SKIP
12:00:03 build 20261130T120003…  incremental: 50,003 reused, 1 read, 0 removed  12.3 s  (1 file changed)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from oracl.core.errors import BuildLockedError, NoBuildError, OraclError

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


def watch(root: Path, *, emit: Callable[[str], None], settle: float = 1.0, interval: float = 1.0,
          max_builds: int = 0, sleep: Callable[[float], None] = time.sleep,
          executor_kind: str = "in-process") -> int:
    """Watch ``root`` until interrupted (or ``max_builds`` rebuilds); returns the rebuilds.
    ``executor_kind`` is the builds' (the CLI forks its helpers)."""
    from oracl.builder.orchestrator import build
    from oracl.read.status import status

    root = Path(root)
    builds = 0
    last = tree_stat(root)  # before the first check: an edit made after it is seen at the first poll

    def rebuild(reason: str) -> bool:
        """One build; False when another process holds the build lock (try again later)."""
        nonlocal builds
        t0 = time.perf_counter()
        try:
            r = build(root, executor_kind=executor_kind)
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
        emit(f"{_stamp()} watching {root} ({state['verdict']})")
        start = "" if state["fresh"] else "stale at start"
    except NoBuildError:
        emit(f"{_stamp()} watching {root} (no build yet)")
        start = "no build yet"
    except OraclError as exc:  # a damaged vault: the first build mends it
        emit(f"{_stamp()} watching {root} ({str(exc).split(';')[0]})")
        start = "the latest build is unreadable"
    if start and rebuild(start):
        start = ""
    pending: set[str] = set()
    quiet_since = 0.0
    poll = 0.0
    while not max_builds or builds < max_builds:
        # on a big tree a look costs time: never spend more than a third of a core on looking
        sleep(max(interval, 2 * poll))
        t0 = time.perf_counter()
        now = tree_stat(root)
        poll = time.perf_counter() - t0
        changed = _diff(last, now)
        last = now
        if changed:
            pending |= changed
            quiet_since = time.monotonic()
            continue
        if (pending or start) and time.monotonic() - quiet_since >= settle:
            # ``last`` stays the tree as it was before the build: an edit made while the
            # build runs shows up at the next poll and brings another rebuild
            why = f"{len(pending)} file{'s' if len(pending) != 1 else ''} changed" if pending else start
            if rebuild(why):
                pending, start = set(), ""
    return builds
