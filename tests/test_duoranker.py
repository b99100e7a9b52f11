"""The fast DuoRanker against the plain reference on random graphs, plus the caps."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracl.builder.pipeline.duoranker import (
    capped_out,
    jaccard,
    rank_edges,
    rank_edges_reference,
    rank_one,
    raw_ranks,
)

NODES = [f"n{i}" for i in range(8)]
TAGS = ["domain=a", "domain=b", "format=py", "format=md", "lifecycle=active"]

edge_st = st.tuples(st.sampled_from(NODES), st.sampled_from(NODES),
                    st.sampled_from([0.3, 0.4, 0.5, 0.57, 0.8, 1.0]))


@settings(max_examples=200, deadline=None)
@given(edges=st.lists(edge_st, max_size=40).map(lambda es: [e for e in es if e[0] != e[1]]),
       tags=st.dictionaries(st.sampled_from(NODES), st.frozensets(st.sampled_from(TAGS))),
       cap=st.integers(1, 5), beta=st.sampled_from([0.0, 0.5, 1.0]), gamma=st.sampled_from([0.0, 0.2, 1.0]))
def test_fast_equals_reference(edges, tags, cap, beta, gamma) -> None:  # type: ignore[no-untyped-def]
    fast = rank_edges(edges, tags, beta, gamma, 0.6, cap)
    ref = rank_edges_reference(edges, tags, beta, gamma, 0.6, cap)
    assert fast == pytest.approx(ref, abs=1e-12)
    assert all(0.0 <= r <= 1.0 for r in fast)
    if fast and max(fast) > 0:
        assert max(fast) == pytest.approx(1.0)


def test_parallel_edges_use_their_largest_weight_in_two_paths() -> None:
    # a→x twice (0.3 and 1.0), x→b 0.5, a→b 1.0: R_inf(a→b) = 0.6·1.0·0.5
    ranks = rank_edges([("a", "x", 0.3), ("a", "x", 1.0), ("x", "b", 0.5), ("a", "b", 1.0)], {},
                       0.5, 0.2, 0.6, 250)
    raw_ab = 1.0 * 0.2 + 0.5 * 0.6 * 1.0 * 0.5
    assert ranks[3] == 1.0
    assert ranks[0] == pytest.approx(0.3 * 0.2 / raw_ab)


def test_cap_keeps_only_the_heaviest_out_edges() -> None:
    # with cap 1, a keeps only a→b (1.0); the 2-path a→x→b is cut, so R(a→b) = R_dir only
    edges = [("a", "b", 1.0), ("a", "x", 0.9), ("x", "b", 0.9)]
    capped = rank_edges(edges, {}, 0.5, 0.2, 0.6, 1)
    uncapped = rank_edges(edges, {}, 0.5, 0.2, 0.6, 250)
    assert capped == pytest.approx([1.0, 0.9, 0.9])
    raw = 0.2 + 0.5 * 0.6 * 0.81
    assert uncapped == pytest.approx([1.0, 0.18 / raw, 0.18 / raw])


def test_jaccard() -> None:
    assert jaccard(frozenset(), frozenset()) == 0.0
    assert jaccard(frozenset({"a", "b"}), frozenset({"b", "c"})) == pytest.approx(1 / 3)


def test_empty_graph() -> None:
    assert rank_edges([], {}, 0.5, 0.2, 0.6, 250) == []


@settings(max_examples=200, deadline=None)
@given(edges=st.lists(edge_st, max_size=40).map(lambda es: [e for e in es if e[0] != e[1]]),
       tags=st.dictionaries(st.sampled_from(NODES), st.frozensets(st.sampled_from(TAGS))),
       cap=st.integers(1, 5), beta=st.sampled_from([0.0, 0.5, 1.0]), gamma=st.sampled_from([0.0, 0.2, 1.0]))
def test_one_edge_ranked_from_its_neighbourhood_is_the_same_double(edges, tags, cap, beta,  # type: ignore[no-untyped-def]
                                                                    gamma) -> None:
    """``rank_one`` (what a build weighing around a move ranks again) from the capped
    out-neighbourhoods of only the edge's source and that source's out-neighbours — each
    made from those nodes' edges alone, in the graph's order — is ``raw_ranks``' value, bit
    for bit."""
    whole = raw_ranks(edges, tags, beta, gamma, 0.6, cap)
    for i, (u, v, w) in enumerate(edges):
        out = capped_out([e for e in edges if e[0] == u], cap)
        for x in list(out.get(u, {})):
            out.update(capped_out([e for e in edges if e[0] == x], cap))
        got = rank_one(u, v, w, out, lambda n: tags.get(n, frozenset()), beta, gamma, 0.6)
        assert got == whole[i], (i, got, whole[i])


def test_one_edge_ranked_by_hand() -> None:
    # a→b 1.0, a→x 1.0, x→b 0.5; β 0.5, γ 0.2, λ 0.6, no tags (J = 0):
    # R(a→b) = 1.0·0.2 + 0.5·0.6·(1.0·0.5) = 0.35; R(x→b) = 0.5·0.2 = 0.1 (x's only 2-path ends in b)
    out = capped_out([("a", "b", 1.0), ("a", "x", 1.0), ("x", "b", 0.5)], 250)
    assert rank_one("a", "b", 1.0, out, lambda n: frozenset(), 0.5, 0.2, 0.6) == pytest.approx(0.35, abs=1e-15)
    assert rank_one("x", "b", 0.5, out, lambda n: frozenset(), 0.5, 0.2, 0.6) == pytest.approx(0.1, abs=1e-15)
    # tagged alike (J = 1): R_dir = w, R(a→b) = 1.0 + 0.15
    same = frozenset({"domain=a"})
    assert rank_one("a", "b", 1.0, out, lambda n: same, 0.5, 0.2, 0.6) == pytest.approx(1.15, abs=1e-15)
