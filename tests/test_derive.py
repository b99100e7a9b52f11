"""What the repository determines, derived when read (oracl/core/derive.py, issue 49):
hand-computed values for every formula, exact aggregates, and the Cypher twins equal to the
Python functions on a real Kùzu database."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from oracl.core import derive
from oracl.core.derive import EPOCH_NS, Terms, fixed, fixed_sq
from oracl.core.export import r9
from oracl.core.resources import schema_statements
from oracl.core.store import Store, StoreError, close

DAY_NS = 86_400 * 10**9


def terms(assoc: list[float], newest_ns: int = EPOCH_NS + 90 * DAY_NS, top: float = 2.0) -> Terms:
    return Terms.of(assoc, newest_ns, top, alpha=0.35, cap=2.0)


def test_mu_and_sigma_by_hand() -> None:
    t = terms([0.5, 0.25, 0.75])
    assert t.mu == 0.5
    # Σx²/n − μ² = (0.25 + 0.0625 + 0.5625)/3 − 0.25 = 1/24
    assert t.sigma == math.sqrt(1 / 24)
    assert terms([1.0, 3.0]).mu == 2.0 and terms([1.0, 3.0]).sigma == 1.0
    assert terms([0.3, 0.3, 0.3]).sigma == 0.0  # no rounding residue: the sums are exact
    assert terms([]).mu == 0.0 and terms([]).sigma == 0.0


def test_the_aggregates_are_exact_whatever_the_order_and_the_updates() -> None:
    # float addition depends on the order: (0.1 + 0.2) + 0.3 ≠ (0.3 + 0.2) + 0.1
    assert (0.1 + 0.2) + 0.3 != (0.3 + 0.2) + 0.1
    a, b = terms([0.1, 0.2, 0.3]), terms([0.3, 0.2, 0.1])
    assert (a.s1, a.s2, a.mu, a.sigma) == (b.s1, b.s2, b.mu, b.sigma)
    assert a.mu == 0.2  # the exact mean of the three doubles, rounded once
    # one file's association moves 0.2 → 0.7: take the old value away, add the new one
    patched = Terms(a.n, a.s1 - fixed(0.2) + fixed(0.7), a.s2 - fixed_sq(0.2) + fixed_sq(0.7),
                    a.newest_ns, a.rank_top, a.alpha, a.cap)
    full = terms([0.1, 0.7, 0.3])
    assert (patched.s1, patched.s2, patched.mu, patched.sigma) == (full.s1, full.s2, full.mu, full.sigma)
    assert fixed(1.0) == 1 << 1074 and fixed_sq(0.5) == 1 << 2146 and fixed(5e-324) == 1


def test_the_header_keeps_the_terms_exactly() -> None:
    t = terms([0.1, 0.7, 0.3], top=0.1 + 0.2)
    header = {"aggregates": t.to_json(), "alpha": 0.35, "caps": {"priority": 2.0}}
    assert header["aggregates"]["rank_max"] == "0x1.3333333333334p-2"
    assert Terms.from_header(header) == t


def test_priority_by_hand() -> None:
    t = terms([0.5, 0.25, 0.75])  # μ 0.5, σ √(1/24); newest 90 days after E: K = e⁻¹
    assert t.fresh_k == math.exp(-1)
    fresh_e = derive.fresh_factor(EPOCH_NS + 90 * DAY_NS)  # modified when the newest was
    assert fresh_e == math.e
    assert derive.freshness(t, fresh_e) == pytest.approx(1.0, abs=1e-15)
    # 45 days older than the newest: exp(−0.5)
    assert derive.freshness(t, derive.fresh_factor(EPOCH_NS + 45 * DAY_NS)) == pytest.approx(math.exp(-0.5), rel=1e-15)
    p0 = derive.base(t, 0.2, 1.15, fresh_e)  # (0.2 + 0.05·1)·1.15
    assert p0 == pytest.approx(0.2875, abs=1e-15)
    d = derive.delta(t, 0.75)  # 0.25/σ = √1.5
    assert d == pytest.approx(math.sqrt(1.5), rel=1e-15)
    # product, δ > 0: P0 + α·δ = 0.2875 + 0.35·1.224744871… = 0.716160705
    assert derive.priority(t, 0.2, 1.15, fresh_e, 1.0, 0.75, True) == pytest.approx(0.716160704987, abs=1e-12)
    # an empty file keeps what it loses, never what it gains: P0 alone
    assert derive.priority(t, 0.2, 1.15, fresh_e, 1.0, 0.75, False) == pytest.approx(p0, abs=1e-15)
    # an example, δ < 0: 0.5·P0 + α·δ = 0.14375 − 0.428660705 = −0.284910705
    assert derive.priority(t, 0.2, 1.15, fresh_e, 0.5, 0.25, True) == pytest.approx(-0.284910704987, abs=1e-12)
    # the cap: (3.0 + 0.05)·1 > 2; min(x, c) = 0.5·x + 0.5·c − 0.5·|x − c|
    assert derive.base(t, 3.0, 1.0, fresh_e) == 2.0 and derive.base(t, 1.0, 1.0, fresh_e) == pytest.approx(1.05)
    # no spread: δ is 0, the priority is m_role·P0
    flat = terms([0.4, 0.4])
    assert derive.priority(flat, 0.2, 1.15, fresh_e, 0.5, 0.4, True) == pytest.approx(
        0.5 * derive.base(flat, 0.2, 1.15, fresh_e), abs=1e-15)


def test_density_and_rank_by_hand() -> None:
    t = terms([0.5, 0.25, 0.75], top=2.0)
    assert derive.link_density(t, 4) == 2.0 and derive.link_density(terms([0.5]), 3) == 0.0
    assert derive.rank(t, 1.5) == 0.75 and derive.rank(terms([0.5], top=0.0), 1.5) == 0.0


def test_association_is_the_mean_of_the_heaviest() -> None:
    assert derive.association([0.2, 1.0, 0.6, 0.8], 2) == 0.9 and derive.association([], 20) == 0.0
    assert derive.own_sum({b: 1.0 for b in derive.BUCKET_WEIGHTS}) == pytest.approx(0.95, abs=1e-15)


@pytest.fixture()
def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    s = Store.open(tmp_path / "g.kuzu", read_only=False, buffer_pool_bytes=64 << 20)
    for stmt in schema_statements():
        s.execute(stmt)
    yield s
    close(tmp_path / "g.kuzu")


def test_the_cypher_twins_equal_the_python_functions_on_a_real_database(store: Store) -> None:
    rng = random.Random(49)
    rows = []
    for i in range(300):
        rows.append({
            "path": f"f{i:03}.py", "p_sum": rng.choice([0.0, rng.random(), 1.9, 3.0]),
            "p_mult": rng.choice([1.0, 1.15, 1.15 * 1.4, 1.65 * 1.8]),
            "fresh_e": derive.fresh_factor(EPOCH_NS + rng.randrange(-4000, 9000) * DAY_NS + rng.randrange(DAY_NS)),
            "m_role": rng.choice([1.0, 0.5]), "association": rng.choice([0.0, rng.random(), 0.8]),
            "degree": rng.randrange(0, 400), "size_bytes": rng.choice([0, 1, 9000]),
            "rank_raw": rng.choice([0.0, rng.random() * 3])})
    for r in rows:
        store.execute("CREATE (:Artifact {path: $path, p_sum: $p_sum, p_mult: $p_mult, fresh_e: $fresh_e, "
                      "m_role: $m_role, association: $association, degree: $degree, size_bytes: $size_bytes})",
                      {k: v for k, v in r.items() if k != "rank_raw"})
    for a, b in zip(rows, rows[1:], strict=False):
        store.execute("MATCH (a:Artifact {path: $a}), (b:Artifact {path: $b}) CREATE (a)-[:Link {rank_raw: $r}]->(b)",
                      {"a": a["path"], "b": b["path"], "r": a["rank_raw"]})
    newest = max(EPOCH_NS + 9000 * DAY_NS, 0)
    for t in (Terms.of([r["association"] for r in rows], newest, 3.0, 0.35, 2.0),
              Terms.of([0.5] * 300, newest, 0.0, 0.35, 2.0),   # σ = 0, no rank
              Terms.of([r["association"] for r in rows], EPOCH_NS, 1.0, 0.35, 1.0)):
        stmt = (f"MATCH (a:Artifact)-[l:Link]->(b:Artifact) RETURN a.path AS path, {derive.cypher_priority('a')} AS p, "
                f"{derive.cypher_own('a')} AS own, "
                f"{derive.cypher_delta('a')} AS d, {derive.cypher_density('a')} AS ld, {derive.cypher_rank('l')} AS r")
        got = {r["path"]: r for r in store.rows(stmt, derive.bind(stmt, t, None))}
        assert len(got) == 299
        for r in rows[:-1]:
            g = got[r["path"]]
            # served as the export stores them: rounded to 9 decimals
            want = (r9(derive.priority(t, r["p_sum"], r["p_mult"], r["fresh_e"], r["m_role"], r["association"],
                                       r["size_bytes"] > 0)),
                    r9(derive.delta(t, r["association"])), r9(derive.link_density(t, r["degree"])),
                    r9(derive.rank(t, r["rank_raw"])))
            assert (g["p"], g["d"], g["ld"], g["r"]) == want, r
            assert derive.served_priority(t, g["own"]) == g["p"]  # a query that only returns it


def test_the_twins_type_in_both_branches_of_a_union(store: Store) -> None:
    """A statement is prepared before its parameters are bound: an untyped term made the
    two branches' columns ANY and DOUBLE, which the engine refused to join."""
    store.execute("CREATE (:Artifact {path: 'a', association: 0.5, degree: 2})-[:Link {rank_raw: 1.5}]->"
                  "(:Artifact {path: 'b', association: 0.25, degree: 1})")
    branch = "MATCH (a:Artifact {{path: $p}}){arrow}(b:Artifact) RETURN b.path AS n, {r} AS r, {d} AS d"
    stmt = " UNION ALL ".join(branch.format(arrow=arrow, r=derive.cypher_rank("l"), d=derive.cypher_density("b"))
                              for arrow in ("-[l:Link]->", "<-[l:Link]-"))
    t = Terms.of([0.5, 0.25], EPOCH_NS, 2.0, 0.35, 2.0)
    assert store.rows(stmt, derive.bind(stmt, t, {"p": "a"})) == [{"n": "b", "r": 0.75, "d": 1.0}]


def test_a_statement_missing_a_term_is_refused_not_read_as_null(store: Store) -> None:
    stmt = f"MATCH (a:Artifact) RETURN {derive.cypher_priority('a')} AS p"
    with pytest.raises(StoreError, match="d_alpha"):
        store.rows(stmt, {})
    assert store.rows("RETURN '$not_a_parameter' AS x", {}) == [{"x": "$not_a_parameter"}]


def test_the_hub_summary_means_and_top_member_by_hand() -> None:
    import pyarrow as pa

    t = terms([0.5, 0.5])  # σ = 0: δ = 0, a priority is m_role·P0
    k = t.fresh_k
    fe = 1.0 / k  # freshness 1: P0 = (p_sum + 0.05)·p_mult
    table = pa.table({"hub": ["h:a", "h:a", "h:b"], "p_sum": [0.15, 0.35, 0.05], "p_mult": [1.0, 1.0, 2.0],
                      "fresh_e": [fe, fe, fe], "m_role": [1.0, 0.5, 1.0], "association": [0.5, 0.5, 0.5],
                      "size_bytes": [10, 10, 0]})
    rows = [{"hub": "h:a", "members": 2, "tops": ["z.py", "a.py"], "top_terms": [[0.35, 1.0, fe, 1.0, 0.5, 10.0],
                                                                                 [0.15, 1.0, fe, 1.0, 0.5, 10.0]]},
            {"hub": "h:b", "members": 1, "tops": [], "top_terms": []}]
    out = derive.summary(rows, table, t)
    # h:a: 0.2 and 0.5·0.4 = 0.2 → mean 0.2; h:b: (0.05 + 0.05)·2 = 0.2
    assert [(h["hub"], h["members"]) for h in out] == [("h:a", 2), ("h:b", 1)]
    assert out[0]["mean_priority"] == pytest.approx(0.2, abs=1e-9) and out[1]["mean_priority"] == pytest.approx(0.2, abs=1e-9)
    # the best-ranked members' highest priority: z.py (0.4) over a.py (0.2); none for h:b
    assert out[0]["top_member"] == "z.py" and out[1]["top_member"] is None
