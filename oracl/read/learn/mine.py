"""``oracl learn``: the follow-up log (``logs/usage.jsonl``) mined into proposals
(design §9, "Learning"). Pure: rows in, proposals out; the build is seen through a
``BuildView`` (which files exist, which are withheld, a file's words and domain).

**Sessions.** The rows of one ``session_id``, split where it pauses for more than
``WINDOW`` seconds. A session *uses* a file it followed up; a use is *evidence* only when
the file was not the first result of the search before it (``rank`` null or > 1): being
returned is never evidence, and following up what already came first teaches nothing
(the loop would reinforce itself).

**Three kinds of proposal**, each gated by support and pointwise mutual information over
the ``N`` sessions:

* ``association`` — files ``a`` and ``b`` used in one session, at least one as evidence
  (``n_ab``); ``n_a``, ``n_b`` the sessions using each;
* ``term`` — a word of the query (its stem) and a file used as evidence after it, when
  the file's text lacks the word (the vocabulary gap); ``n_t`` the sessions whose queries
  hold the word, ``n_p`` those using the file as evidence;
* ``tag`` — a ``domain:X`` filter followed by an evidence use of a file outside ``X``:
  ``n_Xp`` of the ``n_p`` filtered sessions using the file.

With ``w = 0.5 ** (age_days / HALF_LIFE_DAYS)`` per session (its last row against
``now``) and ``s`` the sum of ``w`` over the supporting sessions:

    PMI = ln(n_xy · N / (n_x · n_y)),  lift = e^PMI,  nPMI = PMI / −ln(n_xy / N)
    κ(association, term) = nPMI · s / (s + 1)       gate: n_xy ≥ MIN_SUPPORT, PMI > 0
    κ(tag) = (n_Xp / n_p) · s / (s + 1)             gate: n_Xp ≥ MIN_TAG_SUPPORT, share ≥ ½

κ is rounded to 4 places; a proposal below ``MIN_CONFIDENCE`` is not made. Example: 10
sessions, two of them using both ``a`` and ``b`` and no other using either, both today:
PMI = ln(2·10/(2·2)) = ln 5, nPMI = ln 5 / ln 5 = 1, κ = 1 · 2/3 = 0.6667.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from oracl.core.errors import OraclError
from oracl.core.secrets import MARKED, redact_typed
from oracl.read.learn.usage import WINDOW, parse_time

HALF_LIFE_DAYS = 90.0
MIN_SUPPORT = 2
MIN_TAG_SUPPORT = 3
MIN_CONFIDENCE = 0.05
MAX_SESSION_FILES = 20   # a session using more files pairs its first 20 only
MAX_EXAMPLES = 3
EXAMPLE_CHARS = 200
MAX_TERMS = 40           # words of one query considered (a pasted report has hundreds)
FLUSH_EVERY = 10_000     # rows between folds of the sessions that have ended


class BuildView(Protocol):
    """What the miner asks of the build it proposes against."""

    def exists(self, path: str) -> bool: ...
    def withheld(self, path: str) -> bool: ...
    def has_term(self, path: str, stem: str) -> bool: ...
    def domain(self, path: str) -> str | None: ...


@dataclass(slots=True)
class _Session:
    start: datetime
    last: datetime
    used: dict[str, bool] = field(default_factory=dict)  # path → evidence
    terms: set[str] = field(default_factory=set)
    gap: dict[tuple[str, str], str] = field(default_factory=dict)  # (stem, path) → the query
    filtered: dict[tuple[str, str], bool] = field(default_factory=dict)  # (domain, path) → evidence
    queries: dict[str, str] = field(default_factory=dict)  # path → a query it followed


@dataclass(slots=True)
class _Evidence:
    n: int = 0
    s: float = 0.0
    last: datetime | None = None
    examples: list[str] = field(default_factory=list)

    def add(self, w: float, at: datetime, query: str | None) -> None:
        self.n += 1
        self.s += w
        self.last = at if self.last is None or at > self.last else self.last
        if query and query not in self.examples and len(self.examples) < MAX_EXAMPLES:
            self.examples.append(query)


@dataclass(slots=True)
class Mined:
    """The proposals and what the mining saw."""

    proposals: list[dict[str, Any]]
    sessions: int
    rows: int
    skipped: Counter[str]


def weight(age_days: float) -> float:
    """The recency decay of a session ``age_days`` old."""
    return 0.5 ** (max(0.0, age_days) / HALF_LIFE_DAYS)


def pmi(n_xy: int, n_x: int, n_y: int, n: int) -> float:
    return math.log(n_xy * n / (n_x * n_y))


def npmi(n_xy: int, n_x: int, n_y: int, n: int) -> float:
    """PMI normalised to [−1, 1] (1: the two only ever occur together)."""
    if n_xy >= n:
        return 0.0
    return pmi(n_xy, n_x, n_y, n) / -math.log(n_xy / n)


def confidence(strength: float, s: float) -> float:
    """κ: the association's strength (nPMI, or a tag's share) times ``s / (s + 1)``."""
    return round(strength * s / (s + 1.0), 4)


def proposal_id(kind: str, *subject: str) -> str:
    return hashlib.sha256("\0".join((kind, *subject)).encode()).hexdigest()[:12]


def clean_query(text: object) -> str:
    """A logged query as a proposal may show it: secrets redacted again (a hand-written or
    old log line may hold one), markers kept, cut to ``EXAMPLE_CHARS``."""
    if not isinstance(text, str):
        return ""
    return " ".join(redact_typed(text).split())[:EXAMPLE_CHARS]


def query_terms(text: str) -> list[str]:
    """The stems a query searches for (the query plane's own parse: its stop words, no
    synonyms, no filters), never a secret's marker."""
    from oracl.read.query.parse import SearchQueryBuilder

    try:
        pq = SearchQueryBuilder().parse(MARKED.sub(" ", text))
    except OraclError:
        return []
    out: list[str] = []
    for t in pq.terms:
        if t.weight_class != "stop" and t.origin == "query" and len(t.stem) >= 3 and not t.stem.isdigit() \
                and t.stem not in out:
            out.append(t.stem)
    return out[:MAX_TERMS]


def query_domains(text: str) -> list[str]:
    from oracl.read.query.parse import SearchQueryBuilder

    try:
        return list(SearchQueryBuilder().parse(MARKED.sub(" ", text)).filters.domains)
    except OraclError:
        return []


class Miner:
    """Fold usage rows, then ``result()``. ``now`` fixes the decay's reference."""

    def __init__(self, view: BuildView, now: datetime | None = None) -> None:
        self.view = view
        self.now = now or datetime.now(UTC)
        self.open: dict[str, _Session] = {}
        self.sessions = 0
        self.rows = 0
        self.skipped: Counter[str] = Counter()
        self.n_file: Counter[str] = Counter()          # sessions using a file
        self.n_file_ev: Counter[str] = Counter()       # sessions using a file as evidence
        self.n_term: Counter[str] = Counter()          # sessions whose queries hold a stem
        self.n_file_filtered: Counter[str] = Counter()  # sessions using a file after a domain filter
        self.pairs: dict[tuple[str, str], _Evidence] = defaultdict(_Evidence)
        self.terms: dict[tuple[str, str], _Evidence] = defaultdict(_Evidence)
        self.tags: dict[tuple[str, str], _Evidence] = defaultdict(_Evidence)
        self._parsed: dict[str, tuple[list[str], list[str]]] = {}

    def _parse(self, query: str) -> tuple[list[str], list[str]]:
        got = self._parsed.get(query)
        if got is None:
            if len(self._parsed) > 4096:
                self._parsed.clear()
            got = self._parsed[query] = (query_terms(query), query_domains(query))
        return got

    def add(self, row: dict[str, Any]) -> None:
        at = parse_time(row.get("timestamp"))
        sid, path = row.get("session_id"), row.get("path")
        if at is None or not isinstance(sid, str) or not sid or not isinstance(path, str) or not path:
            self.skipped["unreadable row"] += 1
            return
        rank = row.get("rank")
        if rank is not None and (not isinstance(rank, int) or isinstance(rank, bool) or rank < 1):
            self.skipped["unreadable row"] += 1
            return
        self.rows += 1
        s = self.open.get(sid)
        if s is not None and (at - s.last).total_seconds() > WINDOW:
            self._fold(self.open.pop(sid))
            s = None
        if s is None:
            s = self.open[sid] = _Session(at, at)
        s.last = max(s.last, at)
        evidence = rank is None or rank > 1
        if len(s.used) < MAX_SESSION_FILES or path in s.used:
            s.used[path] = s.used.get(path, False) or evidence
        query = clean_query(row.get("query"))
        if query:
            stems, domains = self._parse(query)
            s.terms.update(stems)
            s.queries.setdefault(path, query)
            if evidence:
                for stem in stems:
                    s.gap.setdefault((stem, path), query)
            for d in domains:
                s.filtered[(d, path)] = s.filtered.get((d, path), False) or evidence
        if self.rows % FLUSH_EVERY == 0:
            for key in [k for k, v in self.open.items() if (at - v.last).total_seconds() > WINDOW]:
                self._fold(self.open.pop(key))

    def _fold(self, s: _Session) -> None:
        self.sessions += 1
        w = weight((self.now - s.last).total_seconds() / 86400)
        used = sorted(s.used)
        self.n_file.update(used)
        self.n_file_ev.update(p for p in used if s.used[p])
        self.n_term.update(s.terms)
        for i, a in enumerate(used):
            for b in used[i + 1:]:
                if s.used[a] or s.used[b]:
                    self.pairs[(a, b)].add(w, s.last, s.queries.get(b) or s.queries.get(a))
        for key, query in s.gap.items():
            self.terms[key].add(w, s.last, query)
        for p in {p for _, p in s.filtered}:
            self.n_file_filtered[p] += 1
        for (d, p), ev in s.filtered.items():
            if ev:
                self.tags[(d, p)].add(w, s.last, s.queries.get(p))

    def _usable(self, *paths: str) -> bool:
        for p in paths:
            if not self.view.exists(p):
                self.skipped["file not in the build"] += 1
                return False
            if self.view.withheld(p):
                self.skipped["withheld file"] += 1
                return False
        return True

    def result(self) -> Mined:
        for key in list(self.open):
            self._fold(self.open.pop(key))
        n = self.sessions
        out: list[dict[str, Any]] = []

        def common(ev: _Evidence, kappa: float, p: float | None) -> dict[str, Any]:
            return {"confidence": kappa, "support": ev.n, "weighted_support": round(ev.s, 4),
                    "pmi": round(p, 4) if p is not None else None,
                    "lift": round(math.exp(p), 4) if p is not None else None,
                    "last_seen": ev.last.strftime("%Y-%m-%dT%H:%M:%SZ") if ev.last else None,
                    "examples": list(ev.examples), "status": "pending"}

        for (a, b), ev in sorted(self.pairs.items()):
            if ev.n < MIN_SUPPORT:
                continue
            p = pmi(ev.n, self.n_file[a], self.n_file[b], n)
            kappa = confidence(npmi(ev.n, self.n_file[a], self.n_file[b], n), ev.s) if p > 0 else 0.0
            if kappa >= MIN_CONFIDENCE and self._usable(a, b):
                out.append({"id": proposal_id("association", a, b), "kind": "association", "source": a,
                            "target": b, **common(ev, kappa, p)})
        for (stem, path), ev in sorted(self.terms.items()):
            if ev.n < MIN_SUPPORT:
                continue
            p = pmi(ev.n, self.n_term[stem], self.n_file_ev[path], n)
            kappa = confidence(npmi(ev.n, self.n_term[stem], self.n_file_ev[path], n), ev.s) if p > 0 else 0.0
            if kappa < MIN_CONFIDENCE or not self._usable(path):
                continue
            if self.view.has_term(path, stem):  # not a gap: the file's own words already say it
                self.skipped["word already in the file"] += 1
                continue
            out.append({"id": proposal_id("term", stem, path), "kind": "term", "term": stem, "path": path,
                        **common(ev, kappa, p)})
        for (domain, path), ev in sorted(self.tags.items()):
            share = ev.n / self.n_file_filtered[path]
            if ev.n < MIN_TAG_SUPPORT or share < 0.5 or self.view.domain(path) == domain:
                continue
            kappa = confidence(share, ev.s)
            if kappa >= MIN_CONFIDENCE and self._usable(path):
                out.append({"id": proposal_id("tag", path, "domain", domain), "kind": "tag", "path": path,
                            "tag": "domain", "value": domain, **common(ev, kappa, None)})
        return Mined(out, n, self.rows, self.skipped)


def mine(rows: Iterable[dict[str, Any]], view: BuildView, now: datetime | None = None) -> Mined:
    """Proposals from usage rows (in log order)."""
    m = Miner(view, now)
    for row in rows:
        m.add(row)
    return m.result()
