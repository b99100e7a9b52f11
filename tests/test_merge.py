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
