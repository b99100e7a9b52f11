"""What the repository determines, derived when it is read (design §4, §6, issue 49).

A file's rows hold only what the file and its edges determine:

* ``p_sum``  Σ_b w_b·c_b over every bucket but freshness (c_b as the export shows it)
* ``p_mult`` m_cls · m_sens
* ``fresh_e`` exp((mtime − E) / τ), E = 2000-01-01, τ = 90 days
* ``m_role``, the association value ``assoc``, the degree (every edge, both directions)
* each edge's raw DuoRanker value R

The repository's terms are a handful of numbers, the *aggregates*, kept in the header:
n (nodes), Σassoc and Σassoc² held exactly (integers scaled by 2^1074 and 2^2148, so
adding and taking away a file's value never drifts), the newest mtime and the largest R.
From them:

    μ = Σassoc / n            σ = √(Σassoc²/n − μ²)   (σ ≤ 1e-12 → 0)
    freshness = min(1, fresh_e · K)     K = exp(−(newest − E)/τ)
    P0        = min(cap, (p_sum + w_fresh·freshness) · p_mult)
    δ         = (assoc − μ)/σ, 0 when σ = 0
    priority  = m_role·(P0 + α·max(δ, 0)) + α·min(δ, 0)   (max(δ, 0) is 0 for an empty file)
    link_density = degree / (n − 1)           association_rank = R / max R

The same operations, in the same order, are spelled once in Python (``priority`` …) and
once as Cypher (``cypher_priority`` …, the expressions the ``.cypher`` files name with
``/*=priority(a)*/``): a build, ``show``, ``verify``, the export writer, the web view and
MCP all go through this module, and a test checks the two agree on a real database.

>>> t = Terms(n=3, s1=fixed(0.5) + fixed(0.25) + fixed(0.75), s2=fixed_sq(0.5) + fixed_sq(0.25) + fixed_sq(0.75),
...           newest_ns=EPOCH_NS, rank_top=2.0, alpha=0.35, cap=2.0)
>>> t.mu, round(t.sigma, 12)                         # mean 0.5, √(0.875/3 − 0.25) = √(1/24)
(0.5, 0.204124145232)
>>> round(priority(t, 0.2, 1.0, 1.0, 1.0, 0.75, True), 12)   # δ = 0.25/σ = 1.2247…: 0.25 + 0.35·δ
0.678660704987
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from oracl.core.export import r9
from oracl.core.paths import BUCKET_WEIGHTS

EPOCH_NS = 946_684_800 * 10**9          # 2000-01-01T00:00:00Z
TAU_NS = 90 * 86_400e9                  # the freshness half-life's scale: 90 days
FRESH_W = BUCKET_WEIGHTS["freshness"]
HALF_FRESH_W = FRESH_W / 2
SIGMA_FLOOR = 1e-12                     # a spread below this is none (δ = 0)
_S1 = 1074                              # every double is an integer times 2^-1074
_S2 = 2 * _S1


def fixed(x: float) -> int:
    """``x`` · 2^1074, exactly (an integer: every finite double is a multiple of 2^-1074)."""
    n, d = x.as_integer_ratio()
    return n << (_S1 - (d.bit_length() - 1))


def fixed_sq(x: float) -> int:
    """``x²`` · 2^2148, exactly."""
    n, d = x.as_integer_ratio()
    return (n * n) << (_S2 - 2 * (d.bit_length() - 1))


@dataclass(frozen=True, slots=True)
class Stored:
    """What a node's row holds of its priority and density: what the file and its edges
    determine. A hub has only ``assoc`` and ``degree``."""

    p_sum: float
    p_mult: float
    fresh_e: float
    m_role: float
    assoc: float
    degree: int


def association(incident: list[float], cap: int) -> float:
    """Eq. 4: mean of the ``cap`` heaviest incident edge weights (0 for an isolated node)."""
    if not incident:
        return 0.0
    top = sorted(incident, reverse=True)[:cap]
    return sum(top) / len(top)


def own_sum(components: dict[str, float]) -> float:
    """p_sum: Σ_b w_b·c_b over every bucket but freshness, in the buckets' order."""
    return sum(BUCKET_WEIGHTS[b] * components[b] for b in BUCKET_WEIGHTS if b != "freshness")


def fresh_factor(mtime_ns: int) -> float:
    """A file's stored freshness factor: exp((mtime − E)/τ)."""
    return math.exp((mtime_ns - EPOCH_NS) / TAU_NS)


@dataclass(frozen=True, slots=True)
class Terms:
    """The repository's terms of one build: the aggregates and the parameters α and cap."""

    n: int               # nodes (artifacts and hubs)
    s1: int              # Σassoc · 2^1074
    s2: int              # Σassoc² · 2^2148
    newest_ns: int       # the newest artifact's mtime
    rank_top: float      # the largest raw edge rank R
    alpha: float
    cap: float

    # what the formulas use, computed once (a Fraction of 2,000-bit integers per call cost
    # a full build 1–2 s at 20k files): μ, σ, and the divisors, infinite where the term is
    # none (a division by them is then 0: δ without spread, a rank without edges, the
    # density of a lone node) – no branch
    mu: float = field(init=False, compare=False)
    sigma: float = field(init=False, compare=False)
    sigma_div: float = field(init=False, compare=False)
    mos: float = field(init=False, compare=False)       # μ/σ
    top_div: float = field(init=False, compare=False)
    n1_div: float = field(init=False, compare=False)
    fresh_k: float = field(init=False, compare=False)   # exp(−(newest − E)/τ)

    def __post_init__(self) -> None:
        mu = sigma = 0.0
        if self.n:
            m = Fraction(self.s1, self.n << _S1)
            mu = float(m)
            var = Fraction(self.s2, self.n << _S2) - m * m
            sigma = math.sqrt(float(var)) if var > 0 else 0.0
            sigma = sigma if sigma > SIGMA_FLOOR else 0.0
        sigma_div = sigma or math.inf
        for name, value in (("mu", mu), ("sigma", sigma), ("sigma_div", sigma_div), ("mos", mu / sigma_div),
                            ("top_div", self.rank_top if self.rank_top > 0.0 else math.inf),
                            ("n1_div", float(self.n - 1) if self.n > 1 else math.inf),
                            ("fresh_k", math.exp(-(self.newest_ns - EPOCH_NS) / TAU_NS))):
            object.__setattr__(self, name, value)

    def params(self) -> dict[str, Any]:
        """The Cypher parameters the derived expressions use."""
        return {"d_mu": self.mu, "d_mos": self.mos, "d_sigma": self.sigma_div, "d_alpha": self.alpha, "d_cap": self.cap,
                "d_fresh_k": self.fresh_k, "d_rank_top": self.top_div, "d_n1": self.n1_div}

    def to_json(self) -> dict[str, Any]:
        """The header's ``aggregates``, exact: the sums as hexadecimal integers (JSON numbers
        are not that wide), the largest R as a hexadecimal float (the export rounds floats)."""
        return {"n": self.n, "assoc_sum": hex(self.s1), "assoc_sq_sum": hex(self.s2),
                "newest_mtime_ns": self.newest_ns, "rank_max": self.rank_top.hex()}

    @classmethod
    def from_header(cls, header: dict[str, Any]) -> Terms:
        agg = header["aggregates"]
        return cls(n=int(agg["n"]), s1=int(agg["assoc_sum"], 16), s2=int(agg["assoc_sq_sum"], 16),
                   newest_ns=int(agg["newest_mtime_ns"]), rank_top=float.fromhex(agg["rank_max"]),
                   alpha=float(header["alpha"]), cap=float(header["caps"]["priority"]))

    @classmethod
    def of(cls, assoc: list[float], newest_ns: int, rank_top: float, alpha: float, cap: float) -> Terms:
        """The terms of a whole build (a full build's, and what a patched one must equal)."""
        return cls(n=len(assoc), s1=sum(map(fixed, assoc)), s2=sum(map(fixed_sq, assoc)),
                   newest_ns=newest_ns, rank_top=rank_top, alpha=alpha, cap=cap)


def freshness(t: Terms, fresh_e: float) -> float:
    """exp(−(newest − mtime)/τ) (shown by ``oracl show``; P0 uses w_fresh·p_mult·fresh_e·K)."""
    return fresh_e * t.fresh_k


def _own(p_sum: float, p_mult: float, fresh_e: float, k: float) -> float:
    """(p_sum + w_fresh·freshness)·p_mult, as p_sum·p_mult + w_fresh·p_mult·fresh_e·K."""
    return p_sum * p_mult + FRESH_W * p_mult * fresh_e * k


def base(t: Terms, p_sum: float, p_mult: float, fresh_e: float) -> float:
    """P0 = min(cap, x), x = (p_sum + w_fresh·freshness)·p_mult, as 0.5·x + 0.5·cap − 0.5·|x − cap|."""
    x = _own(p_sum, p_mult, fresh_e, t.fresh_k)
    return 0.5 * x + 0.5 * t.cap - 0.5 * abs(x - t.cap)


def delta(t: Terms, assoc: float) -> float:
    """(assoc − μ)/σ, as assoc/σ − μ/σ."""
    return assoc / t.sigma_div - t.mos


def priority(t: Terms, p_sum: float, p_mult: float, fresh_e: float, m_role: float, assoc: float,
             nonempty: bool) -> float:
    """m_role·(P0 + α·max(δ, 0)) + α·min(δ, 0), an empty file keeping only what it loses;
    written without nested parentheses, term by term, exactly as ``cypher_priority``:
    max(δ, 0) = 0.5·δ + 0.5·|δ| and min(δ, 0) = 0.5·δ − 0.5·|δ|, min(x, c) likewise.
    (The engine's parser takes ~0.1 s per statement on nested parentheses, measured: a
    cold reader prepared the nested form in 0.14 s, this one in 0.04 s, a bare column in 0.02 s.)"""
    k, sd, mos, a, cap = t.fresh_k, t.sigma_div, t.mos, t.alpha, t.cap
    ne = 0.5 if nonempty else 0.0
    x = _own(p_sum, p_mult, fresh_e, k)
    ad = abs(assoc / sd - mos)
    return (m_role * 0.5 * p_sum * p_mult + m_role * HALF_FRESH_W * p_mult * fresh_e * k + m_role * 0.5 * cap
            - m_role * 0.5 * abs(x - cap)
            + a * m_role * ne * assoc / sd - a * m_role * ne * mos + a * m_role * ne * ad
            + a * 0.5 * assoc / sd - a * 0.5 * mos - a * 0.5 * ad)


def link_density(t: Terms, degree: int) -> float:
    return degree / t.n1_div


def rank(t: Terms, raw: float) -> float:
    return raw / t.top_div


# The Cypher twins: the same operations in the same order, on a row's stored columns and
# the parameters of ``Terms.params``. Only these constant texts enter a statement.

def _p(name: str) -> str:
    """A term's parameter. ``Store.execute`` prepares a statement with the terms' values:
    prepared without them, Kùzu 0.11.3 types an expression of one as ANY, and a UNION then
    refuses to join it with the other branch's DOUBLE."""
    return f"$d_{name}"


def _cy_delta(assoc: str) -> str:
    return f"{assoc} / {_p('sigma')} - {_p('mos')}"


def _served(expr: str) -> str:
    """What readers serve: the value rounded as the export stores it (``r9``; the engine's
    ``round`` gives Python's on 200,000 random values, and ties between equal ranks are
    broken by priority, then path, as before the values were derived)."""
    return f"round({expr}, 9)"


def cypher_priority(v: str) -> str:
    k, sd, mos, a, cap = _p("fresh_k"), _p("sigma"), _p("mos"), _p("alpha"), _p("cap")
    ne = f"CASE WHEN {v}.size_bytes > 0 THEN 0.5 ELSE 0.0 END"
    x = f"{v}.p_sum * {v}.p_mult + {FRESH_W!r} * {v}.p_mult * {v}.fresh_e * {k}"
    ad = f"abs({v}.association / {sd} - {mos})"
    m = f"{v}.m_role"
    return _served(f"{m} * 0.5 * {v}.p_sum * {v}.p_mult + {m} * {HALF_FRESH_W!r} * {v}.p_mult * {v}.fresh_e * {k} + {m} * 0.5 * {cap}"
                   f" - {m} * 0.5 * abs({x} - {cap})"
                   f" + {a} * {m} * {ne} * {v}.association / {sd} - {a} * {m} * {ne} * {mos} + {a} * {m} * {ne} * {ad}"
                   f" + {a} * 0.5 * {v}.association / {sd} - {a} * 0.5 * {mos} - {a} * 0.5 * {ad}")


def cypher_delta(v: str) -> str:
    return _served(_cy_delta(f"{v}.association"))


def cypher_density(v: str) -> str:
    return _served(f"CAST({v}.degree AS DOUBLE) / {_p('n1')}")


def cypher_rank(e: str) -> str:
    return _served(f"{e}.rank_raw / {_p('rank_top')}")


def cypher_own(v: str) -> str:
    """The stored terms of a priority, for a query that only returns it (``finish`` derives
    it in Python): cheaper for a cold reader to prepare than the expression."""
    return f"[{v}.p_sum, {v}.p_mult, {v}.fresh_e, {v}.m_role, {v}.association, CAST({v}.size_bytes AS DOUBLE)]"


def finish(rows: list[dict[str, Any]], t: Terms) -> list[dict[str, Any]]:
    """Rows with each ``priority`` a query returned as its stored terms (``/*=own(a)*/``)
    derived, rounded as the export stores it."""
    if rows and isinstance(rows[0].get("priority"), list):
        for r in rows:
            own = r["priority"]
            if own is not None:
                r["priority"] = served_priority(t, own)
    return rows


def summary(rows: list[dict[str, Any]], member_terms: Any, t: Terms) -> list[dict[str, Any]]:
    """``hub_summary``'s rows with each hub's mean priority (over ``member_terms``, the Arrow
    table of ``hub_member_terms``; summed with ``math.fsum``, so the order rows come in does
    not matter) and its top member: of its best-ranked members (``tops``, ``top_terms``), the
    highest priority, then the first path."""
    cols = [member_terms.column(c).to_pylist() for c in
            ("hub", "p_sum", "p_mult", "fresh_e", "m_role", "association", "size_bytes")]
    by_hub: dict[str, list[float]] = {}
    for hub, p_sum, p_mult, fresh_e, m_role, assoc, size in zip(*cols, strict=True):
        by_hub.setdefault(hub, []).append(r9(priority(t, p_sum, p_mult, fresh_e, m_role, assoc, size > 0)))
    out = []
    for r in rows:
        tops = sorted(zip(r["tops"], r["top_terms"], strict=True), key=lambda pt: (-served_priority(t, pt[1]), pt[0]))
        values = by_hub.get(r["hub"], [])
        out.append({"hub": r["hub"], "members": r["members"],
                    "mean_priority": math.fsum(values) / len(values) if values else None,
                    "top_member": tops[0][0] if tops else None})
    return out


def served_priority(t: Terms, own: list[float]) -> float:
    p_sum, p_mult, fresh_e, m_role, assoc, size = own
    return r9(priority(t, p_sum, p_mult, fresh_e, m_role, assoc, size > 0))


def with_terms(name: str, t: Terms, params: dict[str, Any] | None) -> dict[str, Any] | None:
    """``params`` and the terms the named query's derived values use."""
    from oracl.core.resources import query

    return bind(query(name), t, params)


_TERM = re.compile(r"\$(d_\w+)")


@functools.lru_cache(maxsize=256)
def _terms_in(statement: str) -> frozenset[str]:
    return frozenset(_TERM.findall(statement))


def bind(statement: str, t: Terms, params: dict[str, Any] | None) -> dict[str, Any] | None:
    """``params`` and the terms ``statement`` uses (only those: the engine refuses a
    parameter a statement does not name)."""
    need = _terms_in(statement)
    if not need:
        return params
    terms = t.params()
    return {**{p: terms[p] for p in need if p in terms}, **(params or {})}


CYPHER = {"own": cypher_own, "priority": cypher_priority, "delta": cypher_delta, "density": cypher_density, "rank": cypher_rank}


# A full-text table keeps the rows an update superseded (``live`` false) until they are more
# than this many: Kùzu 0.11.3's full-text delete takes another document's postings with it
# (measured: with ~1,000 or more documents, every deleted document lost one more from the
# results of the terms it shared; tests/test_change_faults.py), so the write path
# (oracl/bundle/database.py) never deletes a row from an index. The superseded ones still
# count in BM25's document frequencies and lengths, so past the bound the index is made
# again without them (about what a full build's index costs). ``oracl status`` says how many a build holds: a term held per
# epoch, as issue 49 allows when one cannot be derived when read.
FTS_SUPERSEDED_MIN = 64


def fts_superseded_max(live: int) -> int:
    """How many superseded rows a full-text table of ``live`` rows keeps (1 in 200 of
    them, and at least ``FTS_SUPERSEDED_MIN``)."""
    return max(FTS_SUPERSEDED_MIN, live // 200)
