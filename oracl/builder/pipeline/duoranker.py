"""The DuoRanker (design §6, Eq. 7–10): an association rank for every edge.

    R_dir(u→v) = w_uv · (γ + (1−γ)·J(T_u, T_v))
    R_inf(u→v) = λ · Σ_x w_ux · w_xv      over 2-paths u→x→v, each node's out-neighbourhood
                                          capped to its ``cap`` heaviest edges
    R = R_dir + β·R_inf ;  association_rank = R / max_e R

Parallel edges between the same ordered pair count once in the 2-path term, with their
largest weight. ``rank_edges`` is the fast version; ``rank_edges_reference`` is the plain
one it is tested against.

>>> rank_edges([("a", "b", 1.0), ("a", "x", 1.0), ("x", "b", 0.5)], {}, 0.5, 0.2, 0.6, 250)
[1.0, 0.5714285714285715, 0.28571428571428575]
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence

WeightedEdge = tuple[str, str, float]  # (source, target, w = ρ·κ)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b|; 0 for two empty sets."""
    if not a and not b:
        return 0.0
    return len(a & b) / len(a | b)


def capped_out(edges: Sequence[WeightedEdge], cap: int) -> dict[str, dict[str, float]]:
    """Each node's out-neighbours (parallel edges collapsed to their largest weight),
    keeping the ``cap`` heaviest; ties broken by target id so the result is deterministic."""
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for u, v, w in edges:
        if w > out[u].get(v, float("-inf")):
            out[u][v] = w
    capped: dict[str, dict[str, float]] = {}
    for u, nbrs in out.items():
        if len(nbrs) > cap:
            keep = sorted(nbrs.items(), key=lambda kv: (-kv[1], kv[0]))[:cap]
            capped[u] = dict(keep)
        else:
            capped[u] = nbrs
    return capped


def _normalise(raw: list[float]) -> list[float]:
    top = max(raw, default=0.0)
    return [r / top if top > 0 else 0.0 for r in raw]


def rank_edges(edges: Sequence[WeightedEdge], tagsets: Mapping[str, frozenset[str]],
               beta: float, gamma: float, lam: float, cap: int) -> list[float]:
    """association_rank of each edge, in input order."""
    return _normalise(raw_ranks(edges, tagsets, beta, gamma, lam, cap))


def raw_ranks(edges: Sequence[WeightedEdge], tagsets: Mapping[str, frozenset[str]],
              beta: float, gamma: float, lam: float, cap: int) -> list[float]:
    """R of each edge, in input order (the bundle stores R; the rank is R / max R,
    derived when read: oracl/core/derive.py)."""
    out = capped_out(edges, cap)
    empty: frozenset[str] = frozenset()
    jcache: dict[tuple[str, str], float] = {}
    inf_cache: dict[tuple[str, str], float] = {}
    raw: list[float] = []
    for u, v, w in edges:
        pair = (u, v)
        j = jcache.get(pair)
        if j is None:
            j = jcache[pair] = jaccard(tagsets.get(u, empty), tagsets.get(v, empty))
        r_inf = inf_cache.get(pair)
        if r_inf is None:
            s = 0.0
            for x, w_ux in out.get(u, {}).items():
                w_xv = out.get(x, {}).get(v)
                if w_xv is not None and x != v:
                    s += w_ux * w_xv
            r_inf = inf_cache[pair] = lam * s
        raw.append(w * (gamma + (1 - gamma) * j) + beta * r_inf)
    return raw


def rank_one(u: str, v: str, w: float, out: Mapping[str, Mapping[str, float]],
             tags_of: Callable[[str], frozenset[str]], beta: float, gamma: float, lam: float) -> float:
    """R of one edge u→v of weight ``w``, as ``raw_ranks`` computes it (the same terms in
    the same order: the same double), from the capped out-neighbourhoods ``out`` of u and
    of each of u's out-neighbours (``capped_out`` of their edges in the graph's order) and
    the nodes' tag sets: what a build weighing around a move ranks again
    (``weigh_around``).

    >>> out = capped_out([("a", "b", 1.0), ("a", "x", 1.0), ("x", "b", 0.5)], 250)
    >>> rank_one("a", "b", 1.0, out, lambda n: frozenset(), 0.5, 0.2, 0.6) == raw_ranks(
    ...     [("a", "b", 1.0), ("a", "x", 1.0), ("x", "b", 0.5)], {}, 0.5, 0.2, 0.6, 250)[0]
    True
    """
    j = jaccard(tags_of(u), tags_of(v))
    s = 0.0
    for x, w_ux in out.get(u, {}).items():
        w_xv = out.get(x, {}).get(v)
        if w_xv is not None and x != v:
            s += w_ux * w_xv
    return w * (gamma + (1 - gamma) * j) + beta * (lam * s)


def rank_edges_reference(edges: Sequence[WeightedEdge], tagsets: Mapping[str, frozenset[str]],
                         beta: float, gamma: float, lam: float, cap: int) -> list[float]:
    """The same ranks computed the obvious way: for each edge, every node as a middle."""
    nodes = sorted({n for u, v, _ in edges for n in (u, v)})
    best: dict[tuple[str, str], float] = {}
    for u, v, w in edges:
        best[(u, v)] = max(best.get((u, v), float("-inf")), w)
    allowed: set[tuple[str, str]] = set()
    for u in nodes:
        outs = sorted(((v, w) for (a, v), w in best.items() if a == u), key=lambda t: (-t[1], t[0]))
        allowed.update((u, v) for v, _ in outs[:cap])
    raw = []
    for u, v, w in edges:
        a, b = tagsets.get(u, frozenset()), tagsets.get(v, frozenset())
        j = len(a & b) / len(a | b) if (a | b) else 0.0
        s = sum(best[(u, x)] * best[(x, v)] for x in nodes
                if x not in (u, v) and (u, x) in allowed and (x, v) in allowed)
        raw.append(w * (gamma + (1 - gamma) * j) + beta * lam * s)
    top = max(raw, default=0.0)
    return [r / top if top > 0 else 0.0 for r in raw]
