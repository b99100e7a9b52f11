from __future__ import annotations

from pathlib import Path

from oracl.builder.extractors.providers import OVERLAY, PHASE2, PHASE3
from oracl.builder.pipeline.merge import EvidenceStore, merge_edges
from oracl.core.records import Edge

NODES = {"a.py", "b.py", "c.md"}


def e(src: str, dst: str, rel: str = "imports", kappa: float = 1.0, sf: str = "L1-1", tf: str = "",
      producer: str = PHASE3) -> Edge:
    return Edge(src, dst, rel, kappa, sf, tf, producer, "t")


def test_phase2_wins_a_collision_and_fragments_keep_sites_apart() -> None:
    p3 = [e("a.py", "b.py", kappa=0.9), e("a.py", "b.py", sf="L9-9")]
    p2 = [e("a.py", "b.py", kappa=1.0, producer=PHASE2)]
    res = merge_edges(p2, p3, [], NODES)
    assert [(x.source_fragment, x.producer, x.confidence) for x in res.edges] == [
        ("L1-1", PHASE2, 1.0), ("L9-9", PHASE3, 1.0)]
    assert res.dropped == {"duplicate": 1}


def test_self_loops_and_missing_targets_are_dropped_and_counted() -> None:
    res = merge_edges([], [e("a.py", "a.py"), e("a.py", ""), e("a.py", "zzz.py"), e("c.md", "a.py", "references")],
                      [e("b.py", "c.md", "learned_association", 0.7, "", "", OVERLAY)], NODES)
    assert [(x.source, x.target, x.relation) for x in res.edges] == [
        ("b.py", "c.md", "learned_association"), ("c.md", "a.py", "references")]
    assert res.dropped == {"self_loop": 1, "dangling": 2}


def test_merge_is_sorted_by_canonical_key() -> None:
    res = merge_edges([], [e("c.md", "a.py", "mentions"), e("a.py", "b.py")], [], NODES)
    assert [x.key for x in res.edges] == sorted(x.key for x in res.edges)


def test_two_layer_committed_view_equals_merge(tmp_path: Path) -> None:
    p2 = [e("a.py", "b.py", producer=PHASE2)]
    p3 = [e("a.py", "b.py", kappa=0.5), e("c.md", "a.py", "mentions", 0.6), e("a.py", "a.py")]
    ov = [e("b.py", "c.md", "learned_association", 0.7, "", "", OVERLAY)]
    store = EvidenceStore(tmp_path / "evidence")
    store.append(PHASE3, p3[:1])
    store.append(PHASE2, p2)
    store.append(PHASE3, p3[1:])  # appends, never rewrites
    store.append(OVERLAY, ov)
    assert sorted(p.name for p in (tmp_path / "evidence").iterdir()) == [
        "overlay.jsonl", "phase2_repo_edges.jsonl", "phase3_static_edges.jsonl"]
    view = store.committed_view(NODES)
    direct = merge_edges(p2, p3, ov, NODES)
    assert view.edges == direct.edges and view.dropped == direct.dropped


def test_evidence_partition_refuses_another_producer(tmp_path: Path) -> None:
    import pytest

    store = EvidenceStore(tmp_path)
    with pytest.raises(ValueError, match="appended to the phase2_repo_edges partition"):
        store.append(PHASE2, [e("a.py", "b.py")])


def test_merge_by_source_is_merge_edges_and_remerges_only_what_it_is_told() -> None:
    """Source by source, the merge is ``merge_edges`` of the streams in file order (a
    collision is always within one source: the key begins with it): the same edges in the
    same order, the same drops; kept, only the sources named again are merged again."""
    from oracl.builder.pipeline.merge import merge_by_source

    nodes = {"a.py", "b.py", "c.md"}
    two = {"a.py": [Edge("a.py", "b.py", "imports", 1.0, "L1-1", "", PHASE2)], "b.py": [], "c.md": []}
    three = {"a.py": [Edge("a.py", "b.py", "imports", 1.0, "L1-1", "", PHASE3),   # Phase 2 wins it
                      Edge("a.py", "a.py", "mentions", 0.6, "L2-2", "", PHASE3)],  # a self-loop
             "b.py": [Edge("b.py", "gone.py", "mentions", 0.6, "L3-3", "", PHASE3)],  # dangling
             "c.md": [Edge("c.md", "a.py", "references", 0.95, "L1-1", "", PHASE3)]}
    tail = [Edge("b.py", "a.py", "co_changed", 0.5, "", "", PHASE3)]
    overlay = [Edge("c.md", "a.py", "references", 0.95, "L1-1", "", OVERLAY),  # Phase 3 wins it
               Edge("c.md", "b.py", "references", 0.4, "", "", OVERLAY)]
    whole = merge_edges([x for p in sorted(nodes) for x in two[p]],
                        [x for p in sorted(nodes) for x in three[p]] + tail, overlay, nodes)
    by = merge_by_source(two, three, tail, overlay, nodes)
    assert by.result().edges == whole.edges and by.result().dropped == whole.dropped
    assert dict(whole.dropped) == {"duplicate": 2, "self_loop": 1, "dangling": 1}
    assert [(e.source, e.target, e.producer) for e in whole.edges] == [
        ("a.py", "b.py", PHASE2), ("b.py", "a.py", PHASE3), ("c.md", "b.py", OVERLAY),  # ("" sorts first)
        ("c.md", "a.py", PHASE3)]
    # kept: a.py's edges changed, only a.py named again; c.md's lists are the kept ones
    three2 = {**three, "a.py": [Edge("a.py", "c.md", "mentions", 0.6, "L9-9", "", PHASE3)]}
    again = merge_by_source(two, three2, tail, overlay, nodes, by, {"a.py"})
    assert again.edges["c.md"] is by.edges["c.md"]
    fresh = merge_edges([x for p in sorted(nodes) for x in two[p]],
                        [x for p in sorted(nodes) for x in three2[p]] + tail, overlay, nodes)
    assert again.result().edges == fresh.edges and again.result().dropped == fresh.dropped
    stale = merge_by_source(two, three2, tail, overlay, nodes, by, set())  # told nothing: a.py kept, wrongly
    assert stale.result().edges != fresh.edges
    # another tail (b.py's co-change edge gone): b.py is merged again besides those named,
    # the others' lists are the kept ones
    other = merge_by_source(two, three2, [], overlay, nodes, by, {"a.py"})
    assert other.fixed_again == {"b.py"} and other.edges["c.md"] is by.edges["c.md"]
    assert other.result().edges == merge_by_source(two, three2, [], overlay, nodes).result().edges
    # another overlay (c.md → b.py gone): c.md's run merged again, b.py's kept
    moved = merge_by_source(two, three, tail, overlay[:1], nodes, by, set())
    assert moved.fixed_again == {"c.md"} and moved.edges["b.py"] is by.edges["b.py"]
    assert moved.result().edges == merge_by_source(two, three, tail, overlay[:1], nodes).result().edges
    assert moved.result().dropped == merge_by_source(two, three, tail, overlay[:1], nodes).result().dropped
