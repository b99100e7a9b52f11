"""History as evidence (design §5c): co-change edges and past commit messages, read from
the repository's git history up to the built commit (``HEAD``) and never beyond it.

* **co-change**: files changed in the same commit are related. For files a and b,

      s(a, b) = Σ_commits touching both  r(c) / (n(c) − 1),   r(c) = 0.5 ^ (age(c) / HALF_LIFE_DAYS)

  with n(c) the number of files the commit changed (a sweep of more than
  ``MAX_COMMIT_FILES`` counts for nothing) and age(c) its distance in days from HEAD's
  commit time rounded down to a whole number of ``REFERENCE_DAYS`` (a commit dated after
  HEAD counts as HEAD's time; those of the last days have an age below 0). So the result
  depends on the history only, not on the clock, and a new commit moves only the pairs of
  the files it changed (and of a commit it pushes out of the newest ``MAX_COMMITS``) while
  HEAD's time stays in the same ``REFERENCE_DAYS`` (issue 49: counted from HEAD's own
  time, every commit moved every pair's κ, and so every rank). A pair
  needs ``MIN_SUPPORT`` commits; each file keeps its ``MAX_PARTNERS`` strongest partners
  as ``co_change`` edges with κ = s / (s + 1).
* **messages**: each file's newest ``MESSAGES_PER_FILE`` commit subjects (of commits that
  are not sweeps), redacted like every text ORACL keeps, become extra text of that file.

A tree that is not in a git repository, a shallow clone's missing past, or a git that
fails or takes longer than ``TIMEOUT`` seconds gives no history and the build goes on.

The log read is kept (``Log``: a part of the vault, named in ``stat.bin``), so that git is
read only for what is new (issue 49): while the commit and the shallow boundary are the
latest build's, the kept log is parsed again (with this build's files) and git is not run;
after new commits, ``git rev-list`` gives the walk's order (the same as ``git log``'s)
and only the commits the kept log lacks are read with their files. What is parsed is
byte for byte what ``git log`` gives at that commit (tested against it).

>>> h = parse_log(b"\\x1ec1\\x1f2592000\\x1ffix cookie jar\\x1f\\n\\na.py\\nb.py\\n"
...               b"\\x1ec2\\x1f2592000\\x1fadd jar\\x1f\\n\\na.py\\nb.py\\nc.md\\n", {"a.py", "b.py"})
>>> [(e.source, e.target, e.confidence) for e in h.edges]
[('a.py', 'b.py', 0.6), ('b.py', 'a.py', 0.6)]
>>> h.messages["a.py"]
'fix cookie jar · add jar'
"""

from __future__ import annotations

import hashlib
import subprocess
from collections import defaultdict
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import orjson

from oracl.core.children import git
from oracl.core.records import Edge
from oracl.core.secrets import redact_text

MAX_COMMITS = 5000        # the newest commits read
MAX_COMMIT_FILES = 30     # a commit changing more files is a sweep (renames, formatting, releases)
HALF_LIFE_DAYS = 365.0
REFERENCE_DAYS = 30       # ages count from HEAD's commit time rounded down to a multiple of these
MIN_SUPPORT = 2           # commits a pair must share
MAX_PARTNERS = 8          # co-change edges kept per file
MESSAGES_PER_FILE = 12
MESSAGE_CHARS = 1500
TIMEOUT = 120
RELATION = "co_change"
PRODUCER = "history"
_FORMAT = "--format=%x1e%H%x1f%ct%x1f%s%x1f"
_PER_COMMIT = ("--no-renames", "--relative", "--name-only", "--no-textconv", _FORMAT)
MAX_NEW_BY_NAME = 1000  # new commits read by name (on the command line); more: the whole log again


@dataclass(frozen=True, slots=True)
class Log:
    """``git log``'s output for the history (``text``) and what it is a function of
    (``key``: the commit, the shallow boundary, the commits read)."""

    key: str
    text: bytes


@dataclass(frozen=True, slots=True)
class Moved:
    """What moved between the latest build's history and this one's: the files whose
    commit messages moved (their rows are made again) and those whose co-change edges did
    (their runs of the merged edges are merged again), and the latest's co-change edges
    (what its merge was made with)."""

    rows: frozenset[str]
    sources: frozenset[str]
    edges: list[Edge]


@dataclass(slots=True)
class History:
    edges: list[Edge] = field(default_factory=list)
    messages: dict[str, str] = field(default_factory=dict)
    commits: int = 0      # commits read
    head: str = ""        # the commit the history ends at
    note: str = ""        # why there is none, when there is none
    log: Log | None = None  # what was parsed (kept for the next build)
    read: str = ""        # how the log was had: "kept", "new commits N", "whole" (a build's report)
    # what moved against the latest build's history (``moved_between``); None: not known
    # (no latest, or its history could not be had again): every file's is then taken as moved
    moved: Moved | None = None
    _digest: str = ""

    def digest(self) -> str:
        """A digest of what the graph takes of the history: its edges and messages
        (``stat.bin`` records it; the next build proves the history it had again by it)."""
        if not self._digest:
            self._digest = hashlib.sha256(orjson.dumps([[[*e] for e in self.edges],
                                                        sorted(self.messages.items())])).hexdigest()
        return self._digest


def to_part(h: History) -> bytes:
    """What a build keeps of the history it weighed with (``from_part`` reads it back)."""
    return orjson.dumps({"edges": [[*e] for e in h.edges], "messages": h.messages, "commits": h.commits,
                         "head": h.head})


def from_part(data: bytes, digest: str) -> History | None:
    """The history ``to_part`` kept, said to have ``digest`` (its part was checked against
    its own); None when it is not such a part."""
    try:
        doc = orjson.loads(data)
        h = History([Edge(*row) for row in doc["edges"]], dict(doc["messages"]), int(doc["commits"]),
                    str(doc["head"]))
    except (ValueError, TypeError, KeyError):
        return None
    h._digest = digest
    return h


def moved_between(old: History, new: History) -> Moved:
    """The files whose messages, and the sources whose co-change edges, differ between
    ``old`` and ``new``."""
    rows = frozenset(p for p in old.messages.keys() | new.messages.keys()
                     if old.messages.get(p) != new.messages.get(p))
    if old.edges == new.edges:
        return Moved(rows, frozenset(), old.edges)
    runs: dict[str, list[list[Edge]]] = defaultdict(lambda: [[], []])
    for side, edges in enumerate((old.edges, new.edges)):
        for e in edges:
            runs[e.source][side].append(e)
    return Moved(rows, frozenset(s for s, (a, b) in runs.items() if a != b), old.edges)


def read_history(root: Path, paths: AbstractSet[str], max_commits: int = MAX_COMMITS, head: str | None = None,
                 kept: Log | None = None, parsed: History | None = None) -> History:
    """The history of ``root``'s files up to ``head`` (a commit; None: HEAD), see the
    module's docstring. ``kept``: the log a build before read, used for what it holds;
    ``parsed``: what that build parsed it into, with files that are ``paths`` (taken
    instead of parsing the log again while the log is the same)."""
    try:
        if head is None:
            proc = git(root, "rev-parse", "--verify", "HEAD^{commit}", text=True, timeout=TIMEOUT)
            if proc.returncode != 0:
                return History(note="not a git repository with a HEAD commit")
            head = proc.stdout.strip()
        key = _log_key(root, head, max_commits)
        if kept is not None and kept.key == key:
            if parsed is not None:
                parsed.log, parsed.read = kept, "kept"
                return parsed
            log, how = kept, "kept"
        else:
            found = _log_again(root, head, max_commits, kept) if kept is not None else None
            if found is not None:
                log, how = Log(key, found[0]), f"new commits {found[1]}"
            else:
                proc = git(root, "log", head, f"--max-count={max_commits}", "--no-merges", *_PER_COMMIT,
                           timeout=TIMEOUT)
                if proc.returncode != 0:
                    return History(note="not a git repository with a HEAD commit")
                log, how = Log(key, proc.stdout), "whole"
    except (OSError, subprocess.SubprocessError) as exc:
        return History(note=f"git log failed: {type(exc).__name__}")
    history = parse_log(log.text, paths)
    history.log, history.read = log, how
    return history


def _log_key(root: Path, head: str, max_commits: int) -> str:
    """What ``git log`` at ``head`` is a function of: the commit, the commits read, and a
    shallow clone's boundary (``git fetch --deepen`` moves it, not the commit)."""
    proc = git(root, "rev-parse", "--git-path", "shallow", text=True, timeout=TIMEOUT)
    shallow = ""
    if proc.returncode == 0 and proc.stdout.strip():
        where = Path(root) / proc.stdout.strip()
        try:
            shallow = hashlib.sha256(where.read_bytes()).hexdigest()[:32]
        except OSError:
            shallow = ""  # (not shallow)
    return f"{head}:{max_commits}:{shallow}"


def _log_again(root: Path, head: str, max_commits: int, kept: Log) -> tuple[bytes, int] | None:
    """``git log``'s output at ``head`` from ``kept`` and the commits it lacks, or None
    (too many new ones, or a git that fails: the whole log is read). ``git rev-list`` walks
    as ``git log`` does (same options, same order); each commit's record is the same
    bytes whichever walk printed it."""
    proc = git(root, "rev-list", f"--max-count={max_commits}", "--no-merges", head, text=True, timeout=TIMEOUT)
    if proc.returncode != 0:
        return None
    order = proc.stdout.split()
    records = {rec.split(b"\x1f", 1)[0].decode("ascii", "replace"): rec for rec in kept.text.split(b"\x1e")[1:]}
    new = [sha for sha in order if sha not in records]
    if len(new) > MAX_NEW_BY_NAME:
        return None
    if new:
        proc = git(root, "log", "--no-walk=unsorted", *_PER_COMMIT, *new, timeout=TIMEOUT)
        if proc.returncode != 0:
            return None
        for rec in proc.stdout.split(b"\x1e")[1:]:
            records[rec.split(b"\x1f", 1)[0].decode("ascii", "replace")] = rec
    if any(sha not in records for sha in order):
        return None
    return b"".join(b"\x1e" + records[sha] for sha in order), len(new)


def parse_log(out: bytes, paths: AbstractSet[str]) -> History:
    """``git log --name-only --format=%x1e%H%x1f%ct%x1f%s%x1f`` output → History."""
    commits: list[tuple[str, int, str, list[str]]] = []
    for record in out.split(b"\x1e")[1:]:
        parts = record.split(b"\x1f", 3)
        if len(parts) < 4:
            continue
        sha, ct, raw_subject, names = parts
        try:
            when = int(ct)
        except ValueError:
            continue
        files = [n for n in names.decode("utf-8", "surrogateescape").splitlines() if n]
        commits.append((sha.decode("ascii", "replace"), when, raw_subject.decode("utf-8", "replace").strip(), files))
    if not commits:
        return History(note="no commits")
    head_time = commits[0][1]
    reference = head_time - head_time % (REFERENCE_DAYS * 86_400)
    strength: dict[tuple[str, str], float] = defaultdict(float)
    support: dict[tuple[str, str], int] = defaultdict(int)
    subjects: dict[str, list[str]] = defaultdict(list)
    for _, when, subject, files in commits:
        n = len(files)
        if n > MAX_COMMIT_FILES:
            continue
        known = sorted({f for f in files if f in paths})
        for f in known:
            if len(subjects[f]) < MESSAGES_PER_FILE and subject:
                subjects[f].append(subject[:200])
        if n < 2 or len(known) < 2:
            continue
        recency = 0.5 ** ((reference - min(when, head_time)) / 86_400 / HALF_LIFE_DAYS)
        w = recency / (n - 1)
        for a, b in combinations(known, 2):
            strength[(a, b)] += w
            support[(a, b)] += 1
    partners: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for (a, b), s in strength.items():
        if support[(a, b)] >= MIN_SUPPORT:
            partners[a].append((s, b))
            partners[b].append((s, a))
    edges = []
    for a in sorted(partners):
        for s, b in sorted(partners[a], key=lambda x: (-x[0], x[1]))[:MAX_PARTNERS]:
            edges.append(Edge(a, b, RELATION, round(s / (s + 1), 6), producer=PRODUCER, provider="git"))
    messages = {f: redact_text(" · ".join(v))[:MESSAGE_CHARS] for f, v in sorted(subjects.items())}
    return History(edges, messages, len(commits), commits[0][0])
