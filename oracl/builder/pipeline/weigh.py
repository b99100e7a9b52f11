"""Phase 2b, last: hubs, association, μ/σ, δ, priority, link density, DuoRanker (design §4, §6).

Input: the Phase 1 records and facts, the merged edges (artifacts named by path).
Output: the export's nodes and edges (artifacts named by their node id, the artifact_id).
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from oracl.builder.extractors.code import CODE_LANGUAGES
from oracl.builder.pipeline import priority as prio
from oracl.builder.pipeline.duoranker import raw_ranks
from oracl.core import derive
from oracl.core.config import NOT_STRUCTURAL, Config
from oracl.core.derive import association
from oracl.core.export import r9
from oracl.core.paths import is_test_path, role
from oracl.core.records import ArtifactNode, ArtifactRecord, Edge, EdgeRow, FileFacts, NodeRow

HUB_PREFIX = "hub:domain:"
CONTINUOUS_BUCKETS = ("security", "connectivity", "usage", "authority", "documentation", "freshness",
                      "cost_savings")


def hub_id(domain: str) -> str:
    return HUB_PREFIX + domain


DESCRIPTIVE_TAGS = frozenset({"parse_reason"})  # said of one file only: no similarity between two


def tagset(tags: Mapping[str, object]) -> frozenset[str]:
    """The Jaccard set ``{"k=v"}`` of a node's exported tags (a list gives one item each),
    descriptive tags (a parse failure's reason) left out."""
    out: set[str] = set()
    for k, v in tags.items():
        if k in DESCRIPTIVE_TAGS:
            continue
        for item in (v if isinstance(v, list | tuple) else [v]):
            text = ("true" if item else "false") if isinstance(item, bool) else str(item)
            out.add(f"{k}={text}")
    return frozenset(out)






@dataclass(slots=True)
class WeightedGraph:
    nodes: list[NodeRow]
    edges: list[EdgeRow]
    mu: float
    sigma: float
    hubs: int
    terms: derive.Terms | None = None
    # node id (path or hub id) → its stored terms; each edge's raw rank R, in edge order
    stored: dict[str, derive.Stored] = field(default_factory=dict)
    rank_raw: list[float] = field(default_factory=list)
    edge_counts: Counter[str] = field(default_factory=Counter)
    # (source path, target path or hub id) of each edge row, in the same order: the bundle's
    # rel tables are keyed by path, the export by node id
    endpoints: list[tuple[str, str]] = field(default_factory=list)
    orphans: int = 0  # artifacts with no artifact–artifact edge


RankJob = Callable[[list[tuple[str, str, float]], dict[str, frozenset[str]], Config], Callable[[], list[float]]]


def rank_here(edges: list[tuple[str, str, float]], tagsets: dict[str, frozenset[str]],
              cfg: Config) -> Callable[[], list[float]]:
    """The DuoRanker's raw values R, computed now (``weigh``'s default ``rank_job``)."""
    ranks = raw_ranks(edges, tagsets, cfg.beta, cfg.gamma, cfg.lam, cfg.neighbour_cap)
    return lambda: ranks


def weigh(records: list[ArtifactRecord], facts: Mapping[str, FileFacts], merged: list[Edge],
          cfg: Config, usage: Mapping[str, int] | None = None,
          sensitivity_overrides: Mapping[str, str] | None = None,
          rank_job: RankJob = rank_here, history: Mapping[str, str] | None = None) -> WeightedGraph:
    """``rank_job`` starts the edge ranking and returns a function that waits for it: the
    builder runs it in a second process while this one makes the node rows. ``history``
    is each file's past commit messages (design §5c). Edges of a relation in
    ``NOT_STRUCTURAL`` (co-change) are weighted and ranked like every edge but do not
    count towards association, degree or back-references: they say the files changed
    together, not that one depends on the other."""
    history = history or {}
    usage = usage or {}
    sensitivity_overrides = sensitivity_overrides or {}
    domains = sorted({str(r.tags["domain"]) for r in records})
    hub_edges = [Edge(r.path, hub_id(str(r.tags["domain"])), "belongs_to", 1.0, "", "", "hubs", "hubs")
                 for r in records]
    edges = merged + hub_edges
    wcache: dict[tuple[str, float], float] = {}
    weights = []
    for e in edges:  # w = ρ·κ, rounded once per distinct (relation, κ)
        w = wcache.get((e.relation, e.confidence))
        if w is None:
            w = wcache[(e.relation, e.confidence)] = r9(cfg.relation_prior(e.relation) * e.confidence)
        weights.append(w)

    incident: dict[str, list[float]] = defaultdict(list)
    for e, w in zip(edges, weights, strict=True):
        if e.relation in NOT_STRUCTURAL:
            continue
        incident[e.source].append(w)
        incident[e.target].append(w)
    all_nodes = [r.path for r in records] + [hub_id(d) for d in domains]
    assoc = {n: association(incident.get(n, []), cfg.association_cap) for n in all_nodes}
    degree_all = Counter[str]()
    for e in edges:
        degree_all[e.source] += 1
        degree_all[e.target] += 1

    degree_aa = Counter[str]()
    referrers: dict[str, set[str]] = defaultdict(set)
    referred: dict[str, set[str]] = defaultdict(set)
    tested: set[str] = set()
    for e in merged:
        if e.relation in NOT_STRUCTURAL:
            continue
        degree_aa[e.source] += 1
        degree_aa[e.target] += 1
        referrers[e.target].add(e.source)
        referred[e.source].add(e.target)
        if e.relation == "tests" and is_test_path(e.source):
            tested.add(e.target)

    tagsets = {r.path: tagset(r.tags) for r in records}
    tagsets.update({hub_id(d): tagset({"domain": d}) for d in domains})
    ranked = rank_job([(e.source, e.target, w) for e, w in zip(edges, weights, strict=True)], tagsets, cfg)

    newest = max((facts[r.path].mtime_ns for r in records), default=0)
    # the largest R is filled in once the ranks are in (priorities do not use it)
    terms = derive.Terms.of(list(assoc.values()), newest, 0.0, cfg.alpha, cfg.priority_cap)
    mu, sigma = terms.mu, terms.sigma
    stored: dict[str, derive.Stored] = {}
    node_rows: list[NodeRow] = []
    for r in records:
        f = facts[r.path]
        tags = r.tags
        fmt = str(tags.get("format", ""))
        risk = prio.risk_score(r.path, len(f.sensitive_apis), f.secret_key_names)
        sens = prio.sensitivity(risk, f.key_material or f.credential_literal,
                                sensitivity_overrides.get(r.path, ""))
        testing = 1.0 if r.path in tested else 0.5 if is_test_path(r.path) else 0.0
        inputs = prio.PriorityInputs(
            risk_score=risk, degree=degree_aa[r.path], usage=usage.get(r.path, r.usage),
            backrefs=len(referrers[r.path] - {r.path}), lifecycle=str(tags["lifecycle"]),
            testing=testing,
            documentation=prio.documentation_signal(fmt, f.module_docstring, f.defs, f.documented_defs,
                                                    code=f.language in CODE_LANGUAGES),
            age_days=(newest - f.mtime_ns) / 86_400e9, review_status=r.review_status,
            estimated_savings=r.estimated_savings, content_type=str(tags["content_type"]),
            placeholder=bool(tags["placeholder"]))
        comp = prio.components(inputs)
        fresh_e = derive.fresh_factor(f.mtime_ns)
        comp["freshness"] = derive.freshness(terms, fresh_e)  # derived: the newest mtime is the repository's
        for b in CONTINUOUS_BUCKETS:  # the others are exact constants (0, 0.3, 0.5, 1 …)
            comp[b] = r9(comp[b])
        cls = str(tags["classification"])
        p_sum = derive.own_sum(comp)
        p_mult = prio.M_CLS.get(cls, 1.15) * prio.M_SENS[sens]
        p0 = derive.base(terms, p_sum, p_mult, fresh_e)
        file_role = role(r.path)
        st = stored[r.path] = derive.Stored(p_sum, p_mult, fresh_e, prio.M_ROLE[file_role], assoc[r.path],
                                     degree_all[r.path])
        dl = derive.delta(terms, st.assoc)
        node: ArtifactNode = {  # the record's fields, then these
            **r.to_json(),  # type: ignore[typeddict-item]
            "id": r.artifact_id,
            "kind": "artifact",
            "usage": inputs.usage,
            "link_count": len(referred[r.path]),
            "backrefs": inputs.backrefs,
            # an empty file (flask's py.typed) has no content to be important for: its only edge,
            # the hub membership, would make its association the maximum (0.8) and lift it above
            # the code; it keeps what it loses, never what it would gain
            "priority": r9(derive.priority(terms, p_sum, p_mult, fresh_e, st.m_role, st.assoc, f.size_bytes > 0)),
            "link_density": r9(derive.link_density(terms, st.degree)),
            "priority_detail": {
                "components": comp, "m_cls": prio.M_CLS.get(cls, 1.15), "m_sens": prio.M_SENS[sens],
                "sensitivity": sens, "risk_score": risk, "base": r9(p0),
                "association": r9(assoc[r.path]), "delta": r9(dl),
                "role": file_role, "m_role": prio.M_ROLE[file_role],
            },
            "parse_status": f.parse_status,
            "line_count": f.line_count,
            "symbols": f.symbols,      # tuples serialise as JSON arrays
            "headings": f.headings,
            "history": history.get(r.path, ""),
        }
        node_rows.append(node)
    for d in domains:
        hid = hub_id(d)
        stored[hid] = derive.Stored(0.0, 0.0, 0.0, 0.0, assoc[hid], degree_all[hid])
        node_rows.append({"id": hid, "kind": "hub", "tags": {"domain": d},
                          "association": r9(assoc[hid]), "delta": r9(derive.delta(terms, assoc[hid])),
                          "link_density": r9(derive.link_density(terms, degree_all[hid]))})

    raw = ranked()
    terms = dataclasses.replace(terms, rank_top=max(raw, default=0.0))
    ids = {r.path: r.artifact_id for r in records}
    edge_rows: list[EdgeRow] = []
    counts: Counter[str] = Counter()
    for e, w, rank in zip(edges, weights, raw, strict=True):
        counts[e.relation] += 1
        edge_rows.append({
            "source": ids[e.source], "target": ids.get(e.target, e.target),
            "relation": e.relation, "source_fragment": e.source_fragment,
            "target_fragment": e.target_fragment,
            "metadata": {"confidence": e.confidence, "producer": e.producer, "provider": e.provider},
            "relation_weight": w, "association_rank": r9(derive.rank(terms, rank)),
        })
    endpoints = [(e.source, e.target) for e in edges]
    orphans = sum(1 for r in records if degree_aa[r.path] == 0)
    return WeightedGraph(node_rows, edge_rows, mu, sigma, len(domains), terms, stored, raw, counts, endpoints,
                         orphans)
