"""Hand-computed association, μ, σ, δ, link density, priority and DuoRanker values
(design §4–6) on a three-file graph:

    A = core/a.py ──imports κ1.0──▶ B = core/b.py
    C = docs/c.md ──references κ0.95──▶ A ,  C ──mentions κ0.6──▶ B
    plus A, B ─belongs_to─▶ hub:domain:core ; C ─belongs_to─▶ hub:domain:docs
"""

from __future__ import annotations

import math

import pytest

from oracl.builder.pipeline.annotate import make_record
from oracl.builder.pipeline.weigh import association, tagset, weigh
from oracl.core.config import Config
from oracl.core.records import ArtifactRecord, Edge, FileFacts

T = 1_700_000_000 * 10**9


def facts(path: str, **kw: object) -> FileFacts:
    return FileFacts(path=path, artifact_id="id-" + path, checksum="0" * 64, size_bytes=1,
                     mtime_ns=kw.pop("mtime_ns", T), ctime_ns=T, parse_status="ok", **kw)  # type: ignore[arg-type]


def _sample() -> tuple[Config, dict[str, FileFacts], list[ArtifactRecord], list[Edge]]:
    """Three files and three edges: (the config, the facts, the records, the merged edges)."""
    cfg = Config()
    fs = {"core/a.py": facts("core/a.py", module_docstring=True, defs=2, documented_defs=1),
          "core/b.py": facts("core/b.py"),
          "docs/c.md": facts("docs/c.md")}
    records = [make_record(f, cfg) for f in fs.values()]
    merged = [Edge("core/a.py", "core/b.py", "imports", 1.0, "L1-1"),
              Edge("docs/c.md", "core/a.py", "references", 0.95, "L2-2"),
              Edge("docs/c.md", "core/b.py", "mentions", 0.6, "L3-3")]
    return cfg, fs, records, merged


@pytest.fixture
def graph():  # type: ignore[no-untyped-def]
    cfg, fs, records, merged = _sample()
    return weigh(records, fs, merged, cfg)


def node(g, node_id: str) -> dict:  # type: ignore[no-untyped-def]
    return g.full(next(n for n in g.nodes if n["id"] == node_id))  # (as read: derived under the graph's terms)


def rank(g, src: str, dst: str) -> float:  # type: ignore[no-untyped-def]
    return next(e["association_rank"] for e in g.edges if e["source"] == src and e["target"] == dst)


# incident weights w = ρ·κ: imports 1.0·1.0, references 0.6·0.95 = 0.57, mentions 0.5·0.6 = 0.3,
# belongs_to 0.8·1.0 = 0.8
ASSOC = {"A": (1.0 + 0.57 + 0.8) / 3, "B": (1.0 + 0.3 + 0.8) / 3, "C": (0.57 + 0.3 + 0.8) / 3,
         "core": (0.8 + 0.8) / 2, "docs": 0.8}
MU = (0.79 + 0.7 + 1.67 / 3 + 0.8 + 0.8) / 5
SIGMA = math.sqrt(sum((x - MU) ** 2 for x in (0.79, 0.7, 1.67 / 3, 0.8, 0.8)) / 5)


def test_association_mu_sigma_delta(graph) -> None:  # type: ignore[no-untyped-def]
    assert ASSOC["A"] == pytest.approx(0.79) and ASSOC["B"] == pytest.approx(0.7)
    assert graph.mu == pytest.approx(MU) and graph.sigma == pytest.approx(SIGMA)
    assert MU == pytest.approx(0.729333333) and SIGMA == pytest.approx(0.0941723, abs=1e-6)
    a = node(graph, "id-core/a.py")["priority_detail"]
    assert a["association"] == pytest.approx(0.79)
    assert a["delta"] == pytest.approx((0.79 - MU) / SIGMA, abs=1e-8)
    hub = node(graph, "hub:domain:core")
    assert hub == {"id": "hub:domain:core", "kind": "hub", "tags": {"domain": "core"},
                   "association": 0.8, "delta": pytest.approx((0.8 - MU) / SIGMA, abs=1e-8),
                   "link_density": 0.5}


def test_link_density_is_degree_over_n_minus_one(graph) -> None:  # type: ignore[no-untyped-def]
    assert node(graph, "id-core/a.py")["link_density"] == 0.75      # 3 edges / (5 − 1)
    assert node(graph, "hub:domain:docs")["link_density"] == 0.25


def test_priority_breakdown_of_a(graph) -> None:  # type: ignore[no-untyped-def]
    a = node(graph, "id-core/a.py")
    d = a["priority_detail"]
    assert d["components"] == {"security": 0.0, "connectivity": 0.08, "usage": 0.0, "authority": 0.1,
                               "lifecycle": 1.0, "testing": 0.0, "documentation": 0.75,
                               "freshness": 1.0, "governance": 0.3, "cost_savings": 0.0,
                               "instruction": 0.0, "completeness": 1.0}
    # 0.1·0.08 + 0.1·0.1 + 0.08 + 0.05·0.75 + 0.05 + 0.04·0.3 + 0.03 = 0.2275; × m_cls 1.15
    assert d["base"] == pytest.approx(0.2275 * 1.15)
    assert (d["m_cls"], d["m_sens"], d["risk_score"]) == (1.15, 1.0, 0)
    assert a["priority"] == pytest.approx(0.2275 * 1.15 + 0.35 * (0.79 - MU) / SIGMA, abs=1e-8)
    assert (a["link_count"], a["backrefs"]) == (1, 1)


def test_duoranker_hand_values(graph) -> None:  # type: ignore[no-untyped-def]
    # J(A,B) = 1 (same six tags); J(C,A) = J(C,B) = 4/8 (domain and format differ);
    # J(artifact, its hub) = 1/6. Only C→A→B parallels an edge (C→B): R_inf = 0.6·0.57·1.0.
    raw = {("A", "B"): 1.0 * (0.2 + 0.8 * 1.0),
           ("C", "A"): 0.57 * (0.2 + 0.8 * 0.5),
           ("C", "B"): 0.3 * (0.2 + 0.8 * 0.5) + 0.5 * 0.6 * 0.57 * 1.0,
           ("A", "core"): 0.8 * (0.2 + 0.8 / 6) + 0.5 * 0.6 * 1.0 * 0.8}
    top = max(raw.values())
    assert top == 1.0
    assert rank(graph, "id-core/a.py", "id-core/b.py") == 1.0
    assert rank(graph, "id-docs/c.md", "id-core/a.py") == pytest.approx(0.342)
    assert rank(graph, "id-docs/c.md", "id-core/b.py") == pytest.approx(0.351)
    # A→hub also has a 2-path A→B→hub: 0.8·(0.2 + 0.8/6) + 0.5·0.6·1.0·0.8
    assert rank(graph, "id-core/a.py", "hub:domain:core") == pytest.approx(
        0.8 * (0.2 + 0.8 / 6) + 0.5 * 0.6 * 1.0 * 0.8, abs=1e-8)
    assert rank(graph, "id-core/b.py", "hub:domain:core") == pytest.approx(0.8 * (0.2 + 0.8 / 6), abs=1e-8)


def test_edge_rows_carry_weights_and_fragments(graph) -> None:  # type: ignore[no-untyped-def]
    e = next(x for x in graph.edges if x["relation"] == "references")
    assert e["relation_weight"] == 0.57 and e["metadata"]["confidence"] == 0.95
    assert (e["source_fragment"], e["target_fragment"]) == ("L2-2", "")
    assert graph.edge_counts == {"imports": 1, "references": 1, "mentions": 1, "belongs_to": 3}


def test_helpers() -> None:
    assert association([0.2, 0.9, 0.5], cap=2) == pytest.approx(0.7)
    assert association([], cap=250) == 0.0
    assert tagset({"domain": "core", "x": ["a", "b"], "placeholder": False}) == frozenset(
        {"domain=core", "x=a", "x=b", "placeholder=false"})


def test_sigma_zero_gives_zero_delta() -> None:
    cfg = Config()
    fs = {"a.md": facts("a.md"), "b.md": facts("b.md")}
    g = weigh([make_record(f, cfg) for f in fs.values()], fs, [], cfg)
    assert g.sigma == 0.0
    assert all(n.get("priority_detail", {"delta": 0.0})["delta"] == 0.0 for n in g.nodes)


def test_freshness_against_newest_artifact() -> None:
    cfg = Config()
    fs = {"a.md": facts("a.md"), "b.md": facts("b.md", mtime_ns=T - 90 * 86_400 * 10**9)}
    g = weigh([make_record(f, cfg) for f in fs.values()], fs, [], cfg)
    assert node(g, "id-b.md")["priority_detail"]["components"]["freshness"] == pytest.approx(math.exp(-1))


def test_an_empty_file_gains_nothing_from_its_association() -> None:
    """flask's empty ``py.typed``: its one edge, the hub membership (0.8), makes its association
    the largest of the graph; it keeps α·min(δ, 0) = 0, so its priority is its base, while a
    file of the same association with content gains α·δ."""
    cfg = Config()
    fs = {"core/a.py": facts("core/a.py"), "core/b.py": facts("core/b.py"), "core/c.py": facts("core/c.py"),
          "core/py.typed": FileFacts(path="core/py.typed", artifact_id="id-core/py.typed", checksum="0" * 64,
                                     size_bytes=0, mtime_ns=T, ctime_ns=T, parse_status="ok")}
    g = weigh([make_record(f, cfg) for f in fs.values()], fs, [Edge("core/a.py", "core/b.py", "mentions", 0.6, "L1-1")],
              cfg)
    # mentions 0.5·0.6 = 0.3: A and B (0.3 + 0.8) / 2 = 0.55; C, py.typed and the hub 0.8
    mu = (0.55 * 2 + 0.8 * 3) / 5
    sigma = math.sqrt((2 * (0.55 - mu) ** 2 + 3 * (0.8 - mu) ** 2) / 5)
    typed, c = node(g, "id-core/py.typed"), node(g, "id-core/c.py")
    assert typed["priority_detail"]["delta"] == pytest.approx((0.8 - mu) / sigma, abs=1e-8) and (0.8 - mu) / sigma > 0
    assert typed["priority"] == typed["priority_detail"]["base"]
    assert c["priority"] == pytest.approx(c["priority_detail"]["base"] + 0.35 * (0.8 - mu) / sigma, abs=1e-8)


def _three(cfg: Config, b_mtime: int = T, b_size: int = 1, mention: str = "L3-3",
           imports: str = "imports") -> tuple[list, dict, list]:  # type: ignore[type-arg]
    fs = {"core/a.py": facts("core/a.py", module_docstring=True, defs=2, documented_defs=1),
          "core/b.py": FileFacts(path="core/b.py", artifact_id=f"id-b-{b_mtime}-{b_size}", checksum="0" * 64,
                                 size_bytes=b_size, mtime_ns=b_mtime, ctime_ns=T, parse_status="ok"),
          "docs/c.md": facts("docs/c.md")}
    records = [make_record(f, cfg) for f in fs.values()]
    merged = [Edge("core/a.py", "core/b.py", imports, 1.0, "L1-1"),
              Edge("docs/c.md", "core/a.py", "references", 0.95, "L2-2"),
              Edge("docs/c.md", "core/b.py", "mentions", 0.6, mention)]
    return records, fs, merged


def _same(a, b) -> None:  # type: ignore[no-untyped-def]
    assert [a.full(n) for n in a.nodes] == [b.full(n) for n in b.nodes]  # (rows as read)
    assert a.edges == b.edges and a.stored == b.stored and a.terms == b.terms
    assert (a.mu, a.sigma, a.hubs, a.rank_raw, a.edge_counts, a.endpoints, a.orphans) == \
        (b.mu, b.sigma, b.hubs, b.rank_raw, b.edge_counts, b.endpoints, b.orphans)


def test_reweigh_gives_weighs_graph_when_the_structure_stays() -> None:
    """A long-lived builder's weighing: an edit of B (newer: the repository's newest mtime
    moves, so every row's freshness, P0 and priority do; B's artifact id moves, so every edge
    row naming B does; a mention's line moves) gives exactly the graph ``weigh`` makes of the
    new inputs; an edge whose relation moved, or another domain, gives None."""
    from oracl.builder.pipeline.weigh import reweigh

    cfg = Config()
    before = weigh(*_three(cfg), cfg, keep=True)
    later = T + 30 * 86_400 * 10**9
    records, fs, merged = _three(cfg, b_mtime=later, b_size=7, mention="L9-9")
    records = [records[0], records[1], before.structure.records[2]]  # C unchanged: the very record kept
    fs["docs/c.md"] = before.structure.facts[2]
    fresh = weigh(records, fs, merged, cfg)
    again = reweigh(before, records, fs, merged, cfg)
    assert again is not None
    _same(again, fresh)
    assert node(again, "id-docs/c.md")["priority_detail"]["components"]["freshness"] == \
        pytest.approx(math.exp(-30 / 90))  # C is now 30 days older than the newest file
    assert {e["target"] for e in again.edges if e["source"] == "id-core/a.py"} >= {f"id-b-{later}-7"}
    # a second edit on the reweighed graph: every row as read is weigh's again (a row left
    # under the first reweigh's terms is derived under the second's when read)
    later2 = later + 5 * 86_400 * 10**9
    records2, fs2, merged2 = _three(cfg, b_mtime=later2, b_size=8, mention="L9-9")
    records2 = [again.structure.records[0], records2[1], again.structure.records[2]]
    fs2["core/a.py"], fs2["docs/c.md"] = again.structure.facts[0], again.structure.facts[2]
    fresh2 = weigh(records2, fs2, merged2, cfg)
    twice = reweigh(again, records2, fs2, merged2, cfg)
    assert twice is not None and twice.epoch == 2
    _same(twice, fresh2)
    # the rows a reach names, found through the kept indexes: those a scan of every row finds
    for paths, sources in ((set(), set()), ({"core/b.py"}, {"core/a.py"}),
                           ({"core/a.py", "docs/c.md", "x"}, {"core/b.py", "docs/c.md"})):
        found = twice.rows_in(paths, sources)
        assert found == ([i for i, n in enumerate(twice.nodes) if n["kind"] == "hub" or n["path"] in paths],
                         [i for i, (src, _) in enumerate(twice.endpoints) if src in sources]), (paths, sources)
    assert len(twice.rows_in({"core/b.py"}, {"core/a.py"})[1]) >= 2  # type: ignore[index]  # (a → b, its hub)
    assert len(twice.rows_in({"core/b.py"}, set())[0]) == 1 + twice.hubs  # type: ignore[index]
    assert fresh2.rows_in({"core/a.py"}, set()) is None  # (a whole weigh's graph: its caller scans)
    # each file's edge rows by either end (its merged run and its membership found by
    # bisection, the edges into it through who has one): those a scan finds. Rows: a → b (0),
    # c → a (1), c → b (2), then the memberships in path order: a (3), b (4), c (5)
    s = twice.structure
    assert s is not None and s.edges_of("docs/c.md") == [1, 2, 5] and s.edges_of("x") == []
    for paths in ({"core/a.py"}, {"core/b.py"}, {"docs/c.md", "core/b.py"}, set()):
        assert s.edges_touching(paths) == [i for i, e in enumerate(s.edges) if e.source in paths or e.target in paths]
    assert s.edges_touching({"core/b.py"}) == [0, 2, 4]
    moved = weigh(*_three(cfg), cfg, keep=True)
    assert reweigh(moved, *_three(cfg, imports="references"), cfg) is None


def test_the_structure_sum_is_a_multiset_hash_of_records_and_runs_by_hand() -> None:
    """``structure_sum``: each record's term is SHAKE-256 of ``r`` and its (path, tags,
    review status, savings) as sorted-key JSON, each source's the same of ``e`` and its
    (target, relation, κ) list, read as a little-endian 2,048-bit number; the sum is
    taken mod 2^2048 (a source with no edge adds nothing). Moving the latest's sum by the
    terms that moved (``moved_sum``) gives a whole sum's value, and the key follows it."""
    import hashlib

    import orjson

    from oracl.builder.pipeline.weigh import key_of, moved_sum, record_part, run_part, structure_sum
    from oracl.core.records import ArtifactRecord, Edge

    def shake(doc: bytes) -> int:
        return int.from_bytes(hashlib.shake_256(doc).digest(256), "little")

    a = ArtifactRecord("id-a", "c", "a.py", "py", 1, "t", "t", {"domain": "root", "format": "py"})
    b = ArtifactRecord("id-b", "c", "b.py", "py", 1, "t", "t", {"domain": "root", "format": "py"})
    ab = Edge("a.py", "b.py", "imports", 1.0)
    ba = Edge("b.py", "a.py", "references", 0.5)
    want = (shake(b'r["a.py",{"domain":"root","format":"py"},"draft",0.0]')
            + shake(b'r["b.py",{"domain":"root","format":"py"},"draft",0.0]')
            + shake(b'e["a.py",[["b.py","imports",1.0]]]') + shake(b'e["b.py",[["a.py","references",0.5]]]')) % (1 << 2048)
    assert record_part(a) == shake(b"r" + orjson.dumps(("a.py", a.tags, "draft", 0.0), option=orjson.OPT_SORT_KEYS))
    assert structure_sum([a, b], [ab, ba]) == want == structure_sum([b, a], [ab, ba])
    assert run_part("a.py", []) == 0 and structure_sum([a, b], [ba]) == (want - run_part("a.py", [ab])) % (1 << 2048)
    # b's edge goes, a second edge out of a comes: the latest's sum moved by those two runs
    ab2 = Edge("a.py", "b.py", "references", 0.5)
    after = structure_sum([a, b], [ab, ab2])
    assert moved_sum(want, [run_part("a.py", [ab, ab2])], [run_part("a.py", [ab]), run_part("b.py", [ba])]) == after
    cfg = Config()
    assert key_of(after, cfg, {}, {}) != key_of(want, cfg, {}, {})
    assert key_of(want, cfg, {}, {}) == key_of(structure_sum([b, a], [ab, ba]), cfg, {}, {})


def test_newest_kept_reads_every_file_only_when_a_file_read_again_held_the_newest() -> None:
    """``newest_kept``: the newest mtime of a build whose files are the latest's, from the
    files read again and the mtime each had in the latest (``KeptStructure.reread``)."""
    from types import SimpleNamespace

    from oracl.builder.pipeline.weigh import KeptStructure, newest_kept
    from oracl.core import derive

    now = {"a": 1_000, "b": 2_000, "c": 1_500}  # (c read again: 3,000 in the latest, the newest then)
    facts = {p: SimpleNamespace(mtime_ns=t) for p, t in now.items()}
    records = [SimpleNamespace(path=p) for p in now]

    def kept(before: int, reread: tuple[tuple[str, int], ...] | None) -> KeptStructure:
        terms = derive.Terms(3, 0, 0, before, 0.0, 0.5, 1.0)
        return KeptStructure("k", terms, lambda n: None, 0, reread=reread)

    # c held the newest (3,000) and is older now: every file's read, b's 2,000 the newest
    assert newest_kept(kept(3_000, (("c", 3_000),)), facts, records) == 2_000  # type: ignore[arg-type]
    # c did not hold it (b's 2,000 did) and is older than it: the latest's 2,000
    assert newest_kept(kept(2_000, (("c", 1_200),)), facts, records) == 2_000  # type: ignore[arg-type]
    # c is the newest now (1,500 against the latest's 1,400): its own
    assert newest_kept(kept(1_400, (("c", 900),)), facts, records) == 1_500  # type: ignore[arg-type]
    # the files read again not known: every file's
    assert newest_kept(kept(9_999, None), facts, records) == 2_000  # type: ignore[arg-type]


def test_a_proven_structures_rows_are_found_by_halving_as_a_scan_finds_them(graph) -> None:  # type: ignore[no-untyped-def]
    """``_weigh_kept``'s graph finds the rows of a cold build's reach (``rows_in``) by
    halving its edges, which are in source order with the memberships in path order: the
    very rows a scan of every node and edge finds, in the same order."""
    from oracl.builder.pipeline.weigh import KeptStructure

    cfg, fs, records, merged = _sample()
    kept = KeptStructure("k", graph.terms, lambda n: [0.0] * n, 0, relations=dict(graph.edge_counts))
    lazy = weigh(records, fs, merged, cfg, lazy=True, proven=kept)
    assert lazy.find_rows is not None and lazy.edge_counts == graph.edge_counts
    # rows: a, b, c, then the hubs core and docs; edges: the three merged, then a's, b's
    # and c's memberships
    assert len(lazy.nodes) == 5 and len(lazy.endpoints) == 6
    for paths, sources, want in ((set(), set(), ([3, 4], [])),
                                 ({"docs/c.md"}, {"docs/c.md"}, ([2, 3, 4], [1, 2, 5])),
                                 ({"core/b.py", "core/a.py"}, {"core/b.py", "core/a.py", "gone.py"},
                                  ([0, 1, 3, 4], [0, 3, 4]))):
        got = lazy.rows_in(paths, sources)
        scanned = ([i for i, n in enumerate(lazy.nodes) if n["kind"] == "hub" or n["path"] in paths],
                   [i for i, (src, _) in enumerate(lazy.endpoints) if src in sources])
        assert got == scanned == want, (paths, got, scanned)
    # the sources of the edges into a file, from the index of the merged edges by target
    assert lazy.sources_into is not None
    for into, want_sources in (({"core/b.py"}, {"core/a.py", "docs/c.md"}), ({"core/a.py"}, {"docs/c.md"}),
                               ({"docs/c.md", "gone.py"}, set()), ({"b.py", "core/b"}, set())):
        scanned_sources = {src for src, dst in lazy.endpoints if dst in into}
        assert lazy.sources_into(into) == scanned_sources == want_sources, into


def test_the_edges_into_a_file_are_found_side_by_side_and_not_by_a_suffix() -> None:
    """``_weigh_kept``'s edges into a node (``sources_into``): two edges in a row into the
    same file are both found, and a path that ends another (``b.py``, ``core/b.py``) is not
    taken for it."""
    from oracl.builder.pipeline.weigh import KeptStructure

    cfg = Config()
    fs = {p: facts(p) for p in ("core/a.py", "core/b.py", "core/c.py", "b.py")}
    records = [make_record(f, cfg) for f in fs.values()]
    merged = [Edge("b.py", "core/c.py", "imports", 1.0, "L1-1"), Edge("core/a.py", "core/c.py", "imports", 1.0, "L1-1"),
              Edge("core/b.py", "core/c.py", "imports", 1.0, "L1-1"), Edge("core/c.py", "core/b.py", "imports", 1.0, "")]
    full = weigh(records, fs, merged, cfg)
    lazy = weigh(records, fs, merged, cfg, lazy=True,
                 proven=KeptStructure("k", full.terms, lambda n: [0.0] * n, 0))
    assert lazy.sources_into is not None
    assert lazy.sources_into({"core/c.py"}) == {"b.py", "core/a.py", "core/b.py"}
    assert lazy.sources_into({"b.py"}) == set() and lazy.sources_into({"core/b.py"}) == {"core/c.py"}
    # (the rows made when read are the whole weighing's)
    assert [lazy.full(n) for n in lazy.nodes] == list(full.nodes)


def test_many_rows_readied_together_are_the_rows_made_one_by_one() -> None:
    """``WeightedGraph.full_rows`` past ``READY_ONE_BY_ONE`` rows finds the edges into all
    of them in one pass (``_weigh_kept``'s ``ready``): a star of twelve files into
    ``core/c.py``, a chain among them and a path that ends another's, made together, are
    the whole weighing's rows, as made one by one in a second graph."""
    from oracl.builder.pipeline.weigh import READY_ONE_BY_ONE, KeptStructure

    cfg = Config()
    paths = ["core/c.py", "c.py", *(f"core/m{i:02d}.py" for i in range(12))]
    fs = {p: facts(p) for p in paths}
    records = [make_record(f, cfg) for f in fs.values()]
    merged = sorted([*(Edge(f"core/m{i:02d}.py", "core/c.py", "imports", 1.0, "L1-1") for i in range(12)),
                     *(Edge(f"core/m{i:02d}.py", f"core/m{i + 1:02d}.py", "references", 0.5, "") for i in range(11)),
                     Edge("core/m00.py", "c.py", "tests", 0.9, "")], key=lambda e: (e.source, e.target))
    full = weigh(records, fs, merged, cfg)
    proven = KeptStructure("k", full.terms, lambda n: [0.0] * n, 0)
    together = weigh(records, fs, merged, cfg, lazy=True, proven=proven)
    one_by_one = weigh(records, fs, merged, cfg, lazy=True, proven=proven)
    assert len(paths) > READY_ONE_BY_ONE and together.ready is not None
    assert together.full_rows(together.nodes) == list(full.nodes)
    assert [one_by_one.full(n) for n in one_by_one.nodes] == list(full.nodes)
    assert together.sources_into({"core/c.py"}) == {f"core/m{i:02d}.py" for i in range(12)}
    assert together.sources_into({"c.py"}) == {"core/m00.py"}
