"""The walk (design §1): every indexable file below a root, in sorted order, with the
reasons the others were left out — the suffix filter, the exclusion classes of folders,
``.gitignore`` inside a git work tree, no symlink out of the root and no loop. Shared by
the build, the freshness check and ``oracl watch``, so all three see the same tree."""

from __future__ import annotations

import bisect
import os
import stat as stat_mod
import subprocess
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from oracl.core.children import git
from oracl.core.config import Config
from oracl.core.errors import RootError
from oracl.core.paths import binary_suffix, glob_match
from oracl.core.secrets import holds_token, is_secret_file
from oracl.core.vault import VAULT as VAULT_DIR

VCS_DIRS = frozenset({".git", ".hg", ".svn"})
CACHE_DIRS = frozenset({"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox",
                        ".nox", "node_modules"})
BUILD_DIRS = frozenset({"build", "dist"})
EXTRA_NAMES = frozenset({".gitkeep"})  # suffix-less names that are still indexed


@dataclass(slots=True)
class Discovery:
    """The result of a walk: sorted repo-relative POSIX paths and the skip counters."""

    files: list[str] = field(default_factory=list)
    seen: int = 0
    skipped: Counter[str] = field(default_factory=Counter)  # file-level reasons
    excluded_dirs: Counter[str] = field(default_factory=Counter)  # directory-level reasons
    skipped_suffixes: Counter[str] = field(default_factory=Counter)  # "reason .suffix" → files
    git_root: str | None = None
    stats: dict[str, os.stat_result] = field(default_factory=dict)  # with walk(stat=True)
    # with walk(record=True), what ``triage`` needs to take in changed paths without a walk:
    # every file seen → (the reason it was skipped, '' when listed; its "reason .suffix"
    # counter, ''; whether it is a symbolic link), the folders walked ('' the root) and
    # the folders left out
    kinds: dict[str, tuple[str, str, bool]] | None = None
    walked: set[str] = field(default_factory=set)
    pruned: set[str] = field(default_factory=set)
    links: list[str] = field(default_factory=list)  # the listed files that are symbolic links


def _git_ignored(root: Path) -> tuple[set[str], tuple[str, ...], str | None]:
    """Files and directory prefixes git ignores under ``root`` (empty outside a work tree)."""
    try:
        top = git(root, "rev-parse", "--show-toplevel", text=True, timeout=30)
        if top.returncode != 0:
            return set(), (), None
        out = git(root, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory", timeout=120)
    except (OSError, subprocess.SubprocessError):
        return set(), (), None
    if out.returncode != 0:
        return set(), (), top.stdout.strip() or None
    files: set[str] = set()
    dirs: list[str] = []
    for item in out.stdout.decode("utf-8", "surrogateescape").split("\0"):
        if item.endswith("/"):
            dirs.append(item)
        elif item:
            files.add(item)
    return files, tuple(dirs), top.stdout.strip()


def _dir_exclusion(name: str, rel: str, abspath: str, cfg: Config, at_root: bool) -> str:
    """The exclusion class of a directory, or '' when it is walked."""
    if name in VCS_DIRS:
        return "vcs"
    if name.startswith(".venv") or name == "venv" or os.path.isfile(os.path.join(abspath, "pyvenv.cfg")):
        return "virtualenv"
    if name in CACHE_DIRS:
        return "cache"
    if name in BUILD_DIRS or name.endswith(".egg-info"):
        return "build_output"
    if at_root and name == VAULT_DIR:
        return "vault"
    if os.path.exists(os.path.join(abspath, ".git")):
        return "embedded_repository"
    slash = rel + "/"
    if any(slash.startswith(p.rstrip("/") + "/") for p in cfg.derived_outputs):
        return "derived_output"
    if any(name == pat or glob_match(rel, pat) for pat in cfg.exclude_dirs):
        return "configured"
    return ""


def walk(root: Path, cfg: Config, *, stat: bool = False, record: bool = False) -> Discovery:
    """List every indexable file below ``root``: suffix filter, exclusion classes,
    ``.gitignore`` (inside a git work tree), no symlink out of the root, no loop.
    ``stat=True`` also keeps each listed file's ``stat`` (links followed; a file that
    cannot be stat'ed is listed without one), taken from the directory entry.
    ``record=True`` also keeps what each file seen was found to be and which folders were
    walked or left out (``triage``)."""
    if not root.exists():
        raise RootError(f"root {str(root)!r} does not exist")
    if not root.is_dir():
        raise RootError(f"root {str(root)!r} is not a directory")
    root_real = os.path.realpath(root)
    result = Discovery()
    ignored_files: set[str] = set()
    ignored_dirs: tuple[str, ...] = ()
    if cfg.gitignore:
        ignored_files, ignored_dirs, result.git_root = _git_ignored(root)
    suffixes = tuple(s.lower() for s in cfg.suffixes)
    st = os.stat(root_real)
    visited: set[tuple[int, int]] = {(st.st_dev, st.st_ino)}
    stack: list[tuple[str, str]] = [(root_real, "")]
    kinds: dict[str, tuple[str, str, bool]] | None = {} if record else None
    result.kinds = kinds
    while stack:
        absdir, reldir = stack.pop()
        if record:
            result.walked.add(reldir)
        try:
            entries = sorted(os.scandir(absdir), key=lambda e: e.name)
        except OSError:
            result.excluded_dirs["unreadable"] += 1
            continue
        for entry in entries:
            rel = f"{reldir}/{entry.name}" if reldir else entry.name
            if not _utf8(entry.name):  # a name that is not UTF-8 cannot be a key of the graph or the export
                if entry.is_dir(follow_symlinks=False):
                    result.excluded_dirs["undecodable_name"] += 1
                else:
                    result.seen += 1
                    result.skipped["undecodable_name"] += 1
                if kinds is not None:  # (never a key: ``triage`` asks for a walk when one changes)
                    result.pruned.add(rel)
                continue
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir(follow_symlinks=True)
            except OSError:
                is_link, is_dir = True, False
            if holds_token(entry.name):  # a token as a name would be a key of the index and the export
                if is_dir:
                    result.excluded_dirs["secret_in_name"] += 1
                    if kinds is not None:
                        result.pruned.add(rel)
                else:
                    result.seen += 1
                    result.skipped["secret_in_name"] += 1
                    if kinds is not None:
                        kinds[rel] = ("secret_in_name", "", is_link)
                continue
            if is_dir:
                target = entry.path
                if is_link:
                    # a link out of the root is never followed; a link inside it is an alias
                    # (or a loop) of a folder the walk reaches anyway under its real name
                    real = os.path.realpath(entry.path)
                    inside = real == root_real or real.startswith(root_real + os.sep)
                    result.excluded_dirs["symlink_alias" if inside else "symlink_outside_root"] += 1
                    if kinds is not None:
                        result.pruned.add(rel)
                    continue
                reason = _dir_exclusion(entry.name, rel, target, cfg, at_root=not reldir)
                if not reason and ignored_dirs and (rel + "/") in ignored_dirs:
                    reason = "gitignored"
                if reason:
                    result.excluded_dirs[reason] += 1
                    if kinds is not None:
                        result.pruned.add(rel)
                    continue
                try:
                    dst = os.stat(target)
                except OSError:
                    result.excluded_dirs["unreadable"] += 1
                    if kinds is not None:
                        result.pruned.add(rel)
                    continue
                key = (dst.st_dev, dst.st_ino)
                if key in visited:
                    result.excluded_dirs["symlink_loop"] += 1
                    if kinds is not None:
                        result.pruned.add(rel)
                    continue
                visited.add(key)
                stack.append((target, rel))
                continue
            result.seen += 1
            name = entry.name
            if suffixes:  # an explicit list: only those suffixes
                if not name.lower().endswith(suffixes) and name not in EXTRA_NAMES and not is_secret_file(rel):
                    result.skipped["suffix"] += 1
                    result.skipped_suffixes[f"suffix {_suffix(name)}"] += 1
                    if kinds is not None:
                        kinds[rel] = ("suffix", f"suffix {_suffix(name)}", is_link)
                    continue
            elif binary_suffix(name):  # never text: not even opened (anything else is sniffed)
                result.skipped["binary"] += 1
                result.skipped_suffixes[f"binary {_suffix(name)}"] += 1
                if kinds is not None:
                    kinds[rel] = ("binary", f"binary {_suffix(name)}", is_link)
                continue
            if rel in ignored_files or (ignored_dirs and any(rel.startswith(d) for d in ignored_dirs)):
                result.skipped["gitignored"] += 1
                if kinds is not None:
                    kinds[rel] = ("gitignored", "", is_link)
                continue
            if is_link:
                real = os.path.realpath(entry.path)
                if not os.path.exists(real):
                    result.skipped["broken_symlink"] += 1
                    if kinds is not None:
                        kinds[rel] = ("broken_symlink", "", is_link)
                    continue
                if not real.startswith(root_real + os.sep):
                    result.skipped["symlink_outside_root"] += 1
                    if kinds is not None:
                        kinds[rel] = ("symlink_outside_root", "", is_link)
                    continue
            if kinds is not None:
                kinds[rel] = ("", "", is_link)
                if is_link:
                    result.links.append(rel)
            result.files.append(rel)
            if stat:
                try:
                    result.stats[rel] = entry.stat()
                except OSError:
                    pass
    result.files.sort()
    return result



# a change to an entry of one of these names can move what the walk lists (the ignore
# rules, a folder becoming a virtualenv or an embedded repository): taken in by a walk
WALK_NAMES = frozenset({".gitignore", ".git", "pyvenv.cfg"})

Change = tuple[str, os.stat_result | None]  # a listed or seen file's new stat, None: gone


def triage(root: Path, d: Discovery, changed: Iterable[str]) -> list[Change] | None:
    """What the paths ``changed`` (root-relative POSIX, as file events name them) change in
    ``d`` (a ``walk(stat=True, record=True)`` of ``root``), found with one ``lstat`` each
    and no walk: [(a listed file, its new stat) | (a file seen, None: gone)], [] when none
    moves what the walk lists or their stats (a path under a folder the walk left out, one
    that came and went between two looks). None when a walk must decide: a folder came,
    went or moved; an entry the walk never saw is there; a file's kind moved (a file, a
    folder, a link); a name in ``WALK_NAMES``; a path outside the root. The listed symbolic
    links are looked at again every time (their target's change names no path of theirs)."""
    if d.kinds is None:
        return None
    root_real = os.path.realpath(root)
    out: list[Change] = []
    for rel in sorted(set(changed)):
        parts = rel.split("/")
        if not rel or any(p in ("", ".", "..") for p in parts) or parts[-1] in WALK_NAMES:
            return None
        if any("/".join(parts[:i]) in d.pruned for i in range(1, len(parts))):
            continue  # under a folder left out: nothing the walk lists
        if rel in d.pruned or rel in d.walked or "/".join(parts[:-1]) not in d.walked:
            return None  # a folder itself, or an entry of a folder not walked
        kind = d.kinds.get(rel)
        try:
            lst: os.stat_result | None = os.lstat(os.path.join(root_real, rel))
        except FileNotFoundError:
            lst = None
        except OSError:
            return None
        if kind is None:
            if lst is None:
                continue
            return None
        if lst is None:
            out.append((rel, None))
            continue
        if stat_mod.S_ISDIR(lst.st_mode) or stat_mod.S_ISLNK(lst.st_mode) != kind[2]:
            return None
        if not kind[0] and not kind[2]:  # (a listed link is looked at below)
            out.append((rel, lst))
    for rel in d.links:
        try:
            out.append((rel, os.stat(os.path.join(root_real, rel))))
        except OSError:
            return None  # a link broken or gone: what the walk says of it
    return out


def take_in(d: Discovery, changes: list[Change]) -> None:
    """``triage``'s changes made to ``d``, in place: a gone file leaves the listing and the
    counters as the walk would count it; a listed file's stat is the new one."""
    assert d.kinds is not None
    for rel, st in changes:
        if st is not None:
            d.stats[rel] = st
            continue
        reason, counter, _ = d.kinds.pop(rel)
        d.seen -= 1
        for counts, key in ((d.skipped, reason), (d.skipped_suffixes, counter)):
            if key:
                counts[key] -= 1
                if counts[key] <= 0:
                    del counts[key]
        if not reason:
            at = bisect.bisect_left(d.files, rel)
            if at < len(d.files) and d.files[at] == rel:
                del d.files[at]
            d.stats.pop(rel, None)
            if rel in d.links:
                d.links.remove(rel)


def moved(d: Discovery, changes: list[Change]) -> list[str]:
    """The paths of ``changes`` that move ``d``: gone, or listed with another size, mtime or ctime."""
    def key(st: os.stat_result | None) -> tuple[int, int, int] | None:
        return None if st is None else (st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    return [rel for rel, st in changes if st is None or key(st) != key(d.stats.get(rel))]


def _suffix(name: str) -> str:
    return "." + name.rsplit(".", 1)[1].lower() if "." in name[1:] else "(none)"


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # surrogate-escaped bytes of a non-UTF-8 name
        return False
    return True
