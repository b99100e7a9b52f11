"""The fast DuoRanker against the plain reference on random graphs, plus the caps."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracl.builder.pipeline.duoranker import jaccard, rank_edges, rank_edges_reference

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
