"""Phase 2b, last: hubs, association, μ/σ, δ, priority, link density, DuoRanker (design §4, §6).

Input: the Phase 1 records and facts, the merged edges (artifacts named by path).
Output: the export's nodes and edges (artifacts named by their node id, the artifact_id).
"""

from __future__ import annotations

import bisect
import dataclasses
import hashlib
import itertools
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import orjson

from oracl.builder.extractors.code import CODE_LANGUAGES
from oracl.builder.pipeline import priority as prio
from oracl.builder.pipeline.annotate import record_domain
from oracl.builder.pipeline.duoranker import raw_ranks
from oracl.core import derive
from oracl.core.config import NOT_STRUCTURAL, Config
from oracl.core.derive import association
from oracl.core.export import edge_sort_key, r9
from oracl.core.paths import is_test_path, role
from oracl.core.records import ArtifactNode, ArtifactRecord, Edge, EdgeRow, FileFacts, NodeRow

HUB_PREFIX = "hub:domain:"
CONTINUOUS_BUCKETS = ("security", "connectivity", "usage", "authority", "documentation", "freshness",
                      "cost_savings")


def hub_id(domain: str) -> str:
    return HUB_PREFIX + domain


READY_ONE_BY_ONE = 8  # up to this many rows readied at once, their edges in are found one by one (``_weigh_kept``)
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
    edges: Sequence[EdgeRow]  # (a list, or ``EdgeRows`` made when read)
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
    endpoints: Sequence[tuple[str, str]] = field(default_factory=list)
    orphans: int = 0  # artifacts with no artifact–artifact edge
    structure: Structure | None = None  # kept for ``reweigh`` (a long-lived builder's)
    # (reweigh's) the paths whose artifact rows, and the files whose outgoing edge rows, may
    # differ from the previous build's in their stored form; None: any may (a whole weigh)
    # (and the indexes of those edge rows)
    moved: tuple[frozenset[str], frozenset[str], tuple[int, ...]] | None = None
    # ``structure_key``: equal for two graphs whose weights, association values, degrees and
    # raw ranks are equal ('' when not computed)
    structure_key: str = ""
    structure_sum: int | None = None  # its ``structure_sum`` (None when not known)
    # (a cold build whose structure is the latest's: ``weigh(lazy=True)``) what makes an
    # artifact's row and stored terms when first read (``full``): until then its node is
    # {"id", "kind", "path"} and ``stored`` lacks it. None: every row is whole.
    make: Callable[[str], tuple[ArtifactNode, derive.Stored]] | None = None
    made: dict[str, NodeRow] = field(default_factory=dict)
    # (``_weigh_kept``'s) what ``rows_in`` answers for a graph no ``reweigh`` made: its rows
    # found by halving its edges (in source order, the memberships in path order)
    find_rows: Callable[[Set[str], Set[str]], tuple[list[int], list[int]]] | None = None
    # (``_weigh_kept``'s) the sources of the edges into any of the paths given, from an index
    # of its merged edges by target (its memberships end in hubs)
    sources_into: Callable[[Set[str]], set[str]] | None = None
    # (``_weigh_kept``'s) what readies the rows of many paths at once before ``full`` makes
    # them (their edges in, found in one pass over the edges, not a pass each)
    ready: Callable[[Iterable[str]], None] | None = None
    ranked_here: bool = True  # False: the raw ranks are the latest build's (equal structure)
    # (``reweigh``'s) an artifact row's derived values (freshness, P0, δ, priority, link
    # density) are made under ``terms`` when the row is read (``full``), not for every row
    # at every build: a row's values are this graph's when its path's epoch here (else
    # ``base_epoch``) is ``epoch``. None: every row's are (``weigh``'s graph).
    epochs: dict[str, int] | None = None
    epoch: int = 0
    base_epoch: int = 0
    make_epoch: int = 0  # (with ``epochs``) the epoch of the terms ``make`` makes a row under
    # (a long-lived builder's graph weighed around a move from the previous graph's rows:
    # ``weigh_around``) the previous graph's number of edge rows, and the stretches of its
    # edge list put in other places: (old start, old stop, new start, new stop), ascending;
    # every edge row outside them is the previous graph's, in the same order
    spliced: tuple[int, list[tuple[int, int, int, int]]] | None = None

    def rows_in(self, paths: Set[str], sources: Set[str]) -> tuple[list[int], list[int]] | None:
        """(the indexes of the artifact rows of ``paths`` and of every hub row, the indexes
        of the edge rows whose source is in ``sources``), ascending, found through the
        indexes a reweighed graph's structure keeps (no pass over every row); None for a
        graph ``reweigh`` did not make (its caller scans the rows)."""
        s = self.structure
        if s is None or self.epochs is None:
            return self.find_rows(paths, sources) if self.find_rows is not None else None
        if s.places is None:
            s.places = {r.path: i for i, r in enumerate(s.records)}
        places, ends = s.places, self.endpoints
        nodes = sorted(places[p] for p in paths if p in places) + list(range(len(s.records), len(self.nodes)))
        return nodes, [i for i in s.edges_touching(set(sources)) if ends[i][0] in sources]

    def full_rows(self, nodes: Iterable[NodeRow]) -> list[NodeRow]:
        """``[self.full(n) for n in nodes]``, the rows left to be made readied together."""
        nodes = list(nodes)
        if self.ready is not None:
            self.ready(str(n["path"]) for n in nodes if n["kind"] == "artifact" and str(n["path"]) not in self.made)
        return [self.full(n) for n in nodes]

    def full(self, n: NodeRow) -> NodeRow:
        """``n`` as a whole row under this graph's terms: itself; for a node left to be
        made when read, its row (made once; its stored terms put in ``stored``); for a row
        ``reweigh`` kept, itself with its derived values made again under ``terms``."""
        if n["kind"] != "artifact":
            return n
        path = str(n["path"])
        if self.make is not None and "checksum" not in n:
            row = self.made.get(path)
            if row is None:
                row, self.stored[path] = self.make(path)
                self.made[path] = row
                if self.epochs is not None:  # (made under the terms of the graph that made ``make``)
                    self.epochs[path] = self.make_epoch
            if self.epochs is None:
                return row
            n = row
        if self.epochs is not None and self.epochs.get(path, self.base_epoch) != self.epoch:
            assert self.terms is not None
            _derive_again(n, self.stored[path], self.terms, int(n["size_bytes"]) > 0)
            self.epochs[path] = self.epoch
        return n


T = TypeVar("T")


class PerEdge(Sequence[T], Generic[T]):
    """``[of(e) for e in edges]``, each item made when read and not kept: a cold build
    weighed around a move reads the weights and ends of a few hundred of its 100,000 edges
    (``weigh_around``); a pass over them makes each once, as the list did."""

    __slots__ = ("_edges", "_of")

    def __init__(self, edges: Sequence[Edge], of: Callable[[Edge], T]) -> None:
        self._edges, self._of = edges, of

    @property
    def edges(self) -> Sequence[Edge]:
        """The edges the items are made of (a pass that needs only their fields reads these)."""
        return self._edges

    def __len__(self) -> int:
        return len(self._edges)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self._of(e) for e in self._edges[i]]
        return self._of(self._edges[i])

    def __iter__(self) -> Iterator[T]:
        return map(self._of, self._edges)


def ends_of(e: Edge) -> tuple[str, str]:
    """An edge's (source, target): a row's endpoints (``WeightedGraph.endpoints``)."""
    return e.source, e.target


class EdgeRows(Sequence[EdgeRow]):
    """A cold build's edge rows when its structure is the latest's (``weigh(lazy=True)``):
    each made when first read, and kept. The export orders and groups them by keys made
    from the edges themselves (``order``) and serialises only the groups that moved; the
    load tables only the rows the standby can differ in: a few hundred of 100,000."""

    def __init__(self, edges: list[Edge], weights: Sequence[float], raw: list[float], ids: Mapping[str, str],
                 terms: derive.Terms) -> None:
        self._edges, self._weights, self._raw, self._ids, self._terms = edges, weights, raw, ids, terms
        self._rows: list[EdgeRow | None] = [None] * len(edges)
        # (``_weigh_kept``'s) each file's run's place in the merged edges, and their number: the
        # edges after them are the memberships, one a file, in path order (``memberships``)
        self.runs: tuple[Mapping[str, tuple[int, int]], int] | None = None

    def by_source(self) -> tuple[list[str], Callable[[str], list[int]], Mapping[str, str]] | None:
        """With ``runs``: (every source's id, sorted — each file's, since each has its
        membership —, what gives the indexes of the rows of the file of an id in the
        export's order, ``order()``'s, and each id's file), without a pass over every
        edge; None when the runs do not account for every edge."""
        if self.runs is None:
            return None
        at, n_merged = self.runs
        ids = self._ids
        if len(ids) != len(self._edges) - n_merged or any(s not in ids for s in at):
            return None
        path_of = {i: p for p, i in ids.items()}
        if len(path_of) != len(ids):
            return None  # (two files with one id: the whole order sorts them out)
        in_path_order = sorted(ids)

        def rows_of(source_id: str) -> list[int]:
            path = path_of[source_id]
            a, b = at.get(path, (0, 0))
            held = list(range(a, b))
            held.append(n_merged + bisect.bisect_left(in_path_order, path))
            if len(held) > 1:
                held.sort(key=self._within)
            return held

        return sorted(path_of), rows_of, path_of

    def __len__(self) -> int:
        return len(self._rows)

    def _row(self, i: int) -> EdgeRow:
        row = self._rows[i]
        if row is None:
            row = self._rows[i] = _edge_row(self._edges[i], self._weights[i], self._raw[i], self._ids, self._terms)
        return row

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return [self._row(k) for k in range(*i.indices(len(self._rows)))]
        return self._row(i if i >= 0 else len(self._rows) + i)

    def __setitem__(self, i: int, row: EdgeRow) -> None:
        """A row made again (``reweigh``: its edge's fragments, or an end's id, moved)."""
        self._rows[i] = row

    def __iter__(self) -> Iterator[EdgeRow]:
        return (self._row(i) for i in range(len(self._rows)))

    def order(self, within: bool = True) -> tuple[list[int], list[str]]:
        """The rows' indexes in ``edge_sort_key`` order (a stable sort's), and each one's
        source id: grouped by source, each group sorted on its own; or (``within`` false)
        each group in edge order, sorted only where its rows are made (``sort_within``:
        the export writes a few groups of a cold build's 20,000, and sorting every one was
        ~170 ms of its 0.5 s at 20k files)."""
        ids, edges = self._ids, self._edges
        src = [ids[e.source] for e in edges]
        groups: dict[str, list[int]] = defaultdict(list)
        for i, s in enumerate(src):
            groups[s].append(i)
        out: list[int] = []
        for s in sorted(groups):
            held = groups[s]
            if within and len(held) > 1:
                held.sort(key=self._within)
            out.extend(held)
        return out, [src[i] for i in out]

    def _within(self, i: int) -> tuple[str, str, str, str]:
        e = self._edges[i]
        return e.source_fragment, self._ids.get(e.target, e.target), e.target_fragment, e.relation

    def sort_within(self, at: list[int], keys: Sequence[str]) -> list[int]:
        """``at``, a stretch of ``order(within=False)`` (``keys``: its source ids), with
        each source's indexes sorted as ``order()`` sorts them: a stretch the export's
        groups cut holds whole sources (``parts.grouped`` never parts equal keys)."""
        out: list[int] = []
        start, n = 0, len(at)
        for i in range(1, n + 1):
            if i == n or keys[i] != keys[start]:
                held = at[start:i]
                if len(held) > 1:
                    held.sort(key=self._within)
                out.extend(held)
                start = i
        return out


def edge_order(edges: Sequence[EdgeRow], within: bool = True) -> tuple[list[int], list[str]]:
    """The export's order of ``edges`` (``edge_sort_key``, stable) and each row's source
    id; ``within`` false: rows made when read (``EdgeRows``) are left in edge order inside
    each source, for ``EdgeRows.sort_within`` to sort where they are made."""
    if isinstance(edges, EdgeRows):
        return edges.order(within)
    order = sorted(range(len(edges)), key=lambda i: edge_sort_key(edges[i]))
    return order, [edges[i]["source"] for i in order]


RankJob = Callable[[list[tuple[str, str, float]], dict[str, frozenset[str]], Config], Callable[[], list[float]]]


def rank_here(edges: list[tuple[str, str, float]], tagsets: dict[str, frozenset[str]],
              cfg: Config) -> Callable[[], list[float]]:
    """The DuoRanker's raw values R, computed now (``weigh``'s default ``rank_job``)."""
    ranks = raw_ranks(edges, tagsets, cfg.beta, cfg.gamma, cfg.lam, cfg.neighbour_cap)
    return lambda: ranks


@dataclass(slots=True)
class Structure:
    """What the edges determine of every node, whatever the files' contents: the weights,
    the association values, the degrees, who refers to whom, which files are tested, the
    tag sets the ranking compared. Kept (``WeightedGraph.structure``) for ``reweigh``."""

    edges: list[Edge]                 # merged + hub membership, in row order
    weights: Sequence[float]          # (a list; ``PerEdge`` in a graph weighed around a move from cold)
    assoc: dict[str, float]
    degree_all: Counter[str]
    degree_aa: Counter[str]
    referrers: dict[str, set[str]]
    referred: dict[str, set[str]]
    tested: set[str]
    tagsets: dict[str, frozenset[str]]
    domains: list[str]
    # the inputs it was made from, compared by ``reweigh``
    records: list[ArtifactRecord] = field(default_factory=list)
    facts: list[FileFacts] = field(default_factory=list)
    merged: list[Edge] = field(default_factory=list)
    settings: tuple[object, ...] = ()
    # (``reweigh``'s, made when first needed, and patched by ``weigh_around``: they hold
    # while the structure does) each file → the sources of the merged edges into it, and
    # each record's place
    into: dict[str, set[str]] | None = None
    places: dict[str, int] | None = None

    def edges_of(self, source: str) -> list[int]:
        """The indexes of the edge rows that start in ``source``: its run of the merged
        edges (sorted by source) and its hub membership (the memberships are in path
        order), each found by bisection."""
        edges, n = self.edges, len(self.merged)
        out: list[int] = []
        for lo, hi in ((0, n), (n, len(edges))):
            a = bisect.bisect_left(edges, source, lo, hi, key=_source)
            b = bisect.bisect_right(edges, source, a, hi, key=_source)
            out.extend(range(a, b))
        return out

    def edges_touching(self, paths: set[str]) -> list[int]:
        """The indexes of the edge rows with an end in ``paths``, ascending."""
        if self.into is None:
            into: dict[str, set[str]] = defaultdict(set)
            for e in self.merged:
                into[e.target].add(e.source)
            self.into = dict(into)
        edges, found = self.edges, set()
        for p in paths:
            found.update(self.edges_of(p))
            for src in self.into.get(p, ()):
                found.update(i for i in self.edges_of(src) if edges[i].target == p)
        return sorted(found)


def _source(e: Edge) -> str:
    return e.source


def move_source(index: dict[str, set[str]], source: str, was: set[str], now: set[str]) -> None:
    """``index`` (each target → the sources with an edge into it) moved in place for
    ``source``, whose targets were ``was`` and are ``now``; a target left with none goes."""
    for t in was - now:
        sources = index.get(t)
        if sources is not None:
            sources.discard(source)
            if not sources:
                del index[t]
    for t in now - was:
        index.setdefault(t, set()).add(source)


def memberships(domain: Mapping[str, str]) -> list[Edge]:
    """Each file's hub membership (``domain``: path → its domain), in path order: the edges
    after the merged ones. (In path order, not the walk's, so that a build whose files came
    or went finds where the latest's rank of each kept membership is: ``weigh_around``.)"""
    return [Edge(p, hub_id(domain[p]), "belongs_to", 1.0, "", "", "hubs", "hubs") for p in sorted(domain)]


def _structure(records: list[ArtifactRecord], merged: list[Edge], cfg: Config) -> Structure:
    """Every node's structure, in one pass over the edges and one over the hub memberships
    (the weights, degrees, incident weights and references were four passes over the 99k
    edges of a 20k-file workspace). The association sorts each node's incident weights, so
    the order they are met in does not move it."""
    domains = sorted({str(r.tags["domain"]) for r in records})
    hubs = {d: hub_id(d) for d in domains}
    hub_edges = memberships({r.path: str(r.tags["domain"]) for r in records})
    edges = merged + hub_edges
    wcache: dict[tuple[str, float], float] = {}
    weights: list[float] = []
    add_weight = weights.append
    incident: dict[str, list[float]] = defaultdict(list)
    degree_all = Counter[str]()
    degree_aa = Counter[str]()
    referrers: dict[str, set[str]] = defaultdict(set)
    referred: dict[str, set[str]] = defaultdict(set)
    tested: set[str] = set()
    for e in merged:
        rel, src, dst = e.relation, e.source, e.target
        w = wcache.get((rel, e.confidence))
        if w is None:  # w = ρ·κ, rounded once per distinct (relation, κ)
            w = wcache[(rel, e.confidence)] = r9(cfg.relation_prior(rel) * e.confidence)
        add_weight(w)
        degree_all[src] = degree_all.get(src, 0) + 1
        degree_all[dst] = degree_all.get(dst, 0) + 1
        if rel in NOT_STRUCTURAL:
            continue
        incident[src].append(w)
        incident[dst].append(w)
        degree_aa[src] = degree_aa.get(src, 0) + 1
        degree_aa[dst] = degree_aa.get(dst, 0) + 1
        referrers[dst].add(src)
        referred[src].add(dst)
        if rel == "tests" and is_test_path(src):
            tested.add(dst)
    if hub_edges:
        w = wcache.get(("belongs_to", 1.0))
        if w is None:
            w = r9(cfg.relation_prior("belongs_to") * 1.0)
        structural = "belongs_to" not in NOT_STRUCTURAL
        for e in hub_edges:
            add_weight(w)
            degree_all[e.source] = degree_all.get(e.source, 0) + 1
            degree_all[e.target] = degree_all.get(e.target, 0) + 1
            if structural:
                incident[e.source].append(w)
                incident[e.target].append(w)
    cap = cfg.association_cap
    assoc = {r.path: association(incident.get(r.path, []), cap) for r in records}
    assoc.update({hubs[d]: association(incident.get(hubs[d], []), cap) for d in domains})
    return Structure(edges, weights, assoc, degree_all, degree_aa, referrers, referred, tested, {}, domains)


def _with_tagsets(s: Structure, records: list[ArtifactRecord]) -> Structure:
    """``s`` with every node's tag set (what the ranker compares; a build that reads the
    latest's ranks back never needs them: its key is made from the tags themselves)."""
    s.tagsets = {r.path: tagset(r.tags) for r in records}
    s.tagsets.update({hub_id(d): tagset({"domain": d}) for d in s.domains})
    return s


def _artifact_node(r: ArtifactRecord, f: FileFacts, s: Structure, terms: derive.Terms, newest: int,
                   usage: Mapping[str, int], sensitivity_overrides: Mapping[str, str],
                   history: Mapping[str, str]) -> tuple[ArtifactNode, derive.Stored]:
    """One artifact's node row and its stored terms."""
    tags = r.tags
    fmt = str(tags.get("format", ""))
    risk = prio.risk_score(r.path, len(f.sensitive_apis), f.secret_key_names)
    sens = prio.sensitivity(risk, f.key_material or f.credential_literal,
                            sensitivity_overrides.get(r.path, ""))
    testing = 1.0 if r.path in s.tested else 0.5 if is_test_path(r.path) else 0.0
    inputs = prio.PriorityInputs(
        risk_score=risk, degree=s.degree_aa[r.path], usage=usage.get(r.path, r.usage),
        backrefs=len(s.referrers[r.path] - {r.path}), lifecycle=str(tags["lifecycle"]),
        testing=testing,
        documentation=prio.documentation_signal(fmt, f.module_docstring, f.defs, f.documented_defs,
                                                code=f.language in CODE_LANGUAGES),
        age_days=(newest - f.mtime_ns) / 86_400e9, review_status=r.review_status,
        estimated_savings=r.estimated_savings, content_type=str(tags["content_type"]),
        placeholder=bool(tags["placeholder"]))
    comp = prio.components(inputs)  # (its freshness is the derived one, set by _derive_again)
    fresh_e = derive.fresh_factor(f.mtime_ns)
    for b in CONTINUOUS_BUCKETS:  # the others are exact constants (0, 0.3, 0.5, 1 …)
        comp[b] = r9(comp[b])
    cls = str(tags["classification"])
    p_sum = derive.own_sum(comp)
    p_mult = prio.M_CLS.get(cls, 1.15) * prio.M_SENS[sens]
    file_role = role(r.path)
    assoc = s.assoc[r.path]
    st = derive.Stored(p_sum, p_mult, fresh_e, prio.M_ROLE[file_role], assoc, s.degree_all[r.path])
    node: ArtifactNode = {  # the record's fields, then these (the derived ones: _derive_again)
        **r.to_json(),  # type: ignore[typeddict-item]
        "id": r.artifact_id,
        "kind": "artifact",
        "usage": inputs.usage,
        "link_count": len(s.referred[r.path]),
        "backrefs": inputs.backrefs,
        # an empty file (flask's py.typed) has no content to be important for: its only edge,
        # the hub membership, would make its association the maximum (0.8) and lift it above
        # the code; it keeps what it loses, never what it would gain
        "priority": 0.0,
        "link_density": 0.0,
        "priority_detail": {
            "components": comp, "m_cls": prio.M_CLS.get(cls, 1.15), "m_sens": prio.M_SENS[sens],
            "sensitivity": sens, "risk_score": risk, "base": 0.0,
            "association": r9(assoc), "delta": 0.0,
            "role": file_role, "m_role": prio.M_ROLE[file_role],
        },
        "parse_status": f.parse_status,
        "line_count": f.line_count,
        "symbols": f.symbols,      # tuples serialise as JSON arrays
        "headings": f.headings,
        "history": history.get(r.path, ""),
    }
    _derive_again(node, st, terms, f.size_bytes > 0)
    return node, st


def _derive_again(node: ArtifactNode, st: derive.Stored, terms: derive.Terms, nonempty: bool) -> None:
    """An artifact row's derived values (freshness, P0, δ, priority, link density) from its
    stored terms under ``terms``: the one place they are set, when the row is made
    (``_artifact_node``) and when only the terms moved (``reweigh``)."""
    detail = node["priority_detail"]
    detail["components"]["freshness"] = r9(derive.freshness(terms, st.fresh_e))
    detail["base"] = r9(derive.base(terms, st.p_sum, st.p_mult, st.fresh_e))
    detail["delta"] = r9(derive.delta(terms, st.assoc))
    node["priority"] = r9(derive.priority(terms, st.p_sum, st.p_mult, st.fresh_e, st.m_role, st.assoc, nonempty))
    node["link_density"] = r9(derive.link_density(terms, st.degree))


def _hub_rows(s: Structure, terms: derive.Terms, stored: dict[str, derive.Stored]) -> list[NodeRow]:
    rows: list[NodeRow] = []
    for d in s.domains:
        hid = hub_id(d)
        stored[hid] = derive.Stored(0.0, 0.0, 0.0, 0.0, s.assoc[hid], s.degree_all[hid])
        rows.append({"id": hid, "kind": "hub", "tags": {"domain": d},
                     "association": r9(s.assoc[hid]), "delta": r9(derive.delta(terms, s.assoc[hid])),
                     "link_density": r9(derive.link_density(terms, s.degree_all[hid]))})
    return rows


class IdsAt(Mapping[str, str]):
    """path → artifact id of ``records``, looked up by each record's place (``reweigh``:
    only the moved edges' ends are asked for)."""

    def __init__(self, records: list[ArtifactRecord], places: dict[str, int]) -> None:
        self._records, self._places = records, places

    def __getitem__(self, path: str) -> str:
        return self._records[self._places[path]].artifact_id

    def __iter__(self) -> Iterator[str]:
        return iter(self._places)

    def __len__(self) -> int:
        return len(self._places)


class RecordsAt(Mapping[str, ArtifactRecord]):
    """path → the record of ``records``, looked up by its place: no map of every record."""

    def __init__(self, records: list[ArtifactRecord], places: dict[str, int]) -> None:
        self._records, self._places = records, places

    def __getitem__(self, path: str) -> ArtifactRecord:
        return self._records[self._places[path]]

    def __contains__(self, path: object) -> bool:
        return path in self._places

    def __iter__(self) -> Iterator[str]:
        return iter(self._places)

    def __len__(self) -> int:
        return len(self._places)


def _edge_row(e: Edge, w: float, rank: float, ids: Mapping[str, str], terms: derive.Terms) -> EdgeRow:
    return {
        "source": ids[e.source], "target": ids.get(e.target, e.target),
        "relation": e.relation, "source_fragment": e.source_fragment,
        "target_fragment": e.target_fragment,
        "metadata": {"confidence": e.confidence, "producer": e.producer, "provider": e.provider},
        "relation_weight": w, "association_rank": r9(derive.rank(terms, rank)),
    }


STRUCTURE_BYTES = 256  # a part's hash and the sum: 2,048 bits (a multiset hash needs a wide sum to resist collisions)
_STRUCTURE_MOD = 1 << (8 * STRUCTURE_BYTES)


def _part(kind: bytes, doc: bytes) -> int:
    return int.from_bytes(hashlib.shake_256(kind + doc).digest(STRUCTURE_BYTES), "little")


def record_part(r: ArtifactRecord) -> int:
    """A record's term of ``structure_sum``: its path, tags (its domain and tag set follow
    from them), review status and estimated savings (what a record holds besides its file's
    facts)."""
    return _part(b"r", orjson.dumps((r.path, r.tags, r.review_status, r.estimated_savings),
                                    option=orjson.OPT_SORT_KEYS))


def run_part(source: str, run: Sequence[Edge]) -> int:
    """A source's term of ``structure_sum``: the (target, relation, κ) of its merged edges in
    order (0 when it has none)."""
    if not run:
        return 0
    return _part(b"e", orjson.dumps([source, [(e.target, e.relation, e.confidence) for e in run]]))


def structure_sum(records: Sequence[ArtifactRecord], merged: Sequence[Edge]) -> int:
    """The sum, modulo 2^2048, of every record's ``record_part`` and every source's
    ``run_part`` (the merged edges are grouped by source, sorted): a multiset hash, so a
    build that knows what moved against the latest moves the latest's sum by those terms
    (``weigh_around``) instead of hashing every record and edge again."""
    total = sum(map(record_part, records))
    start, n = 0, len(merged)
    for i in range(1, n + 1):
        if i == n or merged[i].source != merged[start].source:
            total += run_part(merged[start].source, merged[start:i])
            start = i
    return total % _STRUCTURE_MOD


def moved_sum(total: int, plus: Sequence[int], minus: Sequence[int]) -> int:
    """``total`` with the terms ``plus`` added and ``minus`` taken away (mod 2^2048)."""
    return (total + sum(plus) - sum(minus)) % _STRUCTURE_MOD


def key_of(total: int, cfg: Config, usage: Mapping[str, int], sensitivity_overrides: Mapping[str, str]) -> str:
    """``structure_key`` of a structure whose ``structure_sum`` is ``total``."""
    h = hashlib.sha256()
    h.update(orjson.dumps([cfg.digest(), sorted(usage.items()), sorted(sensitivity_overrides.items())]))
    h.update(total.to_bytes(STRUCTURE_BYTES, "little"))
    return h.hexdigest()


def structure_key(s: Structure, records: list[ArtifactRecord], cfg: Config, usage: Mapping[str, int],
                  sensitivity_overrides: Mapping[str, str]) -> tuple[str, int]:
    """A digest of what ``reweigh`` requires to be unchanged before it keeps a graph's
    structure, and its ``structure_sum``: the files with each one's tags (its domain and
    tag set follow from them; the files are in path order, as are the hub memberships),
    review status and estimated savings, the (source, target, relation, κ) of every merged
    edge in order (the history's co-change edges among them), and the settings (the
    configuration, usage, sensitivity overrides). Two builds with equal keys have equal
    weights, association values, degrees and raw ranks, so their artifact rows differ only
    where the files' own facts or commit messages do (``history.Moved.rows``), and their
    edge rows only where an endpoint's did (``builder/reach.py``)."""
    total = structure_sum(records, s.merged)
    return key_of(total, cfg, usage, sensitivity_overrides), total


def settings_key(cfg: Config, usage: Mapping[str, int], sensitivity_overrides: Mapping[str, str],
                 learned: Mapping[str, object], overlay: Sequence[Edge]) -> str:
    """A digest of what every record and edge besides the files' own facts and the
    history is made under: the configuration, usage, sensitivity overrides, the learned
    tags, and the learned overlay's edges (every field). Two builds with equal keys make
    equal records and merged edges from equal facts and equal histories: what
    ``KeptStructure``'s proof leans on for every file it does not look at. The history is
    not in it: what moved of it is known file by file (``history.Moved``), and only those
    files' rows and runs are made again (issue 49: every commit moved the whole key)."""
    h = hashlib.sha256()
    h.update(orjson.dumps([cfg.digest(), sorted(usage.items()), sorted(sensitivity_overrides.items())]))
    h.update(orjson.dumps(learned, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS))
    h.update(orjson.dumps([(e.source, e.target, e.relation, e.confidence, e.source_fragment, e.target_fragment,
                            e.producer, e.provider) for e in overlay]))
    return h.hexdigest()


@dataclass(frozen=True, slots=True)
class KeptStructure:
    """The latest build's structure, taken by a cold build that proved, file by file, that
    its own is the same (``builder/same_structure.py``): its ``structure_key``, the
    aggregates of its header (n, Σassoc, Σassoc²: the association values are the
    structure's), what reads its raw ranks back and its orphans."""

    key: str
    terms: derive.Terms
    ranks: Callable[[int], list[float] | None]
    orphans: int
    total: int | None = None  # its ``structure_sum`` (None: the latest recorded none)
    relations: Mapping[str, int] | None = None  # its graph's edges by relation (None: counted here)
    reread: tuple[tuple[str, int], ...] | None = None  # the files read again and their mtimes in the latest


def newest_kept(kept: KeptStructure, facts: Mapping[str, FileFacts], records: Sequence[ArtifactRecord]) -> int:
    """The newest mtime of ``records``' files, whose files are the latest's (``kept``'s): the
    newest of the files read again when it is not older than the latest's newest; else the
    latest's newest, unless only files read again held it (then every file's is read)."""
    before = kept.terms.newest_ns
    if kept.reread is not None and records:
        newest = max((facts[p].mtime_ns for p, _ in kept.reread), default=0)
        if newest >= before:
            return newest
        if not any(old == before for _, old in kept.reread):
            return before
    return max((facts[r.path].mtime_ns for r in records), default=0)


def _weigh_kept(records: list[ArtifactRecord], facts: Mapping[str, FileFacts], merged: list[Edge], cfg: Config,
                usage: Mapping[str, int], sensitivity_overrides: Mapping[str, str], history: Mapping[str, str],
                kept: KeptStructure, places: Mapping[str, tuple[int, int]] | None = None) -> WeightedGraph | None:
    """``weigh(lazy=True)``'s graph for a structure proven to be the latest's, without a
    pass that works out every node's structure: the weights and edges are made (a list
    each), the hubs' and the rows' structure is worked out only for the nodes made, from
    an index of each node's edges, and μ, σ, the orphans and the raw ranks are the
    latest's. None when the latest's figures do not fit (``weigh`` then makes the whole)."""
    member = [record_domain(r) for r in records]
    members = Counter(member)
    domains = sorted(members)
    hubs = {d: hub_id(d) for d in domains}
    if kept.terms.n != len(records) + len(domains) or any(h in facts for h in hubs.values()):
        return None  # (a file named as a hub is: the whole pass sorts it out)
    n_merged = len(merged)
    domain_of = {r.path: d for r, d in zip(records, member, strict=True)}
    edges = merged + memberships(domain_of)
    wcache: dict[tuple[str, float], float] = {}

    def weight(e: Edge) -> float:  # w = ρ·κ, as ``_structure``
        w = wcache.get((e.relation, e.confidence))
        if w is None:
            w = wcache[(e.relation, e.confidence)] = r9(cfg.relation_prior(e.relation) * e.confidence)
        return w

    raw = kept.ranks(len(edges))
    if raw is None:
        return None
    # (the weights and ends made when read, as a weighing around a move makes them: a cold
    # build reads those of its reach and of the export's groups written; two lists of every
    # edge were 0.2–0.4 s of a one-file rebuild at 50k files)
    weights: Sequence[float] = PerEdge(edges, weight)
    endpoints: Sequence[tuple[str, str]] = PerEdge(edges, ends_of)
    s = Structure(edges, weights, {}, Counter(), Counter(), defaultdict(set), defaultdict(set), set(), {}, domains)
    cap = cfg.association_cap
    w_member = r9(cfg.relation_prior("belongs_to") * 1.0)
    member_w = [w_member] if "belongs_to" not in NOT_STRUCTURAL else []  # (each membership's part of the association)
    for d in domains:  # a hub's edges are its members' memberships (no file is named as one, no edge ends in one)
        h = hubs[d]
        s.degree_all[h] = members[d]
        s.assoc[h] = association(member_w * members[d], cap)
    joined: list[str] = []  # (every merged edge's target, in order, each after a NUL: made when first asked)
    incoming: dict[str, list[int]] = {}
    targets: list[str] = []  # (every merged edge's target, in order: made when first needed)

    def targets_of() -> list[str]:
        if not targets:  # (one walk over the edges, whose objects lie all over the heap: shared)
            targets.extend([e.target for e in merged])
        return targets

    def into(node: str) -> list[int]:
        """The merged edges into ``node``, ascending: found in one string of every merged
        edge's target, each after a NUL (no path holds one), by ``str.find``, which reads
        it in C, an edge's place being the NULs before its target's — a few milliseconds a
        node at 50,000 files, where an index of every target was 0.2–0.5 s, a scan of the
        edges themselves 40 ms a node (their strings lie all over the heap), and a cold
        build asks of a few dozen nodes."""
        got = incoming.get(node)
        if got is None:
            if not joined:
                joined.append("\0" + "\0".join(targets_of()) + "\0")
            blob, needle = joined[0], "\0" + node + "\0"
            got, at, seen, place = [], blob.find(needle), 0, 0
            while at >= 0:
                place += blob.count("\0", seen, at)
                seen = at
                got.append(place)
                at = blob.find(needle, at + len(needle) - 1)
            incoming[node] = got
        return got

    def ready(paths: Iterable[str]) -> None:
        """The edges into each of ``paths`` found together (``into`` finds them for one):
        past ``READY_ONE_BY_ONE`` paths, by one pass over a list of every merged edge's
        target (made once, ~40 ms at 50,000 files, a set's probe an edge), where
        ``into`` reads the whole string again for each path (~5 ms each)."""
        want = {p for p in paths if p not in incoming}
        if len(want) <= READY_ONE_BY_ONE:
            return
        found: dict[str, list[int]] = {p: [] for p in want}
        every = targets_of()
        # (the places whose target is wanted, picked in C: a loop of dictionary probes was
        # 2.5 × as long)
        for i in itertools.compress(itertools.count(), map(want.__contains__, every)):
            found[every[i]].append(i)
        incoming.update(found)

    def fill(node: str) -> None:
        """An artifact's entries of ``s``, as ``_structure`` makes them: its merged edges
        as a source (a run of ``merged``, sorted by source) and as a target (an index
        made when first asked), and its hub membership, which counts only towards the
        degree and, when structural, the association (summed sorted: order is no matter)."""
        if node in s.assoc:
            return
        incident: list[float] = list(member_w)
        degree_all, degree_aa = 1, 0
        a = bisect.bisect_left(merged, node, 0, n_merged, key=_source)
        b = bisect.bisect_right(merged, node, a, n_merged, key=_source)
        for run, as_target in ((range(a, b), False), (into(node), True)):
            for i in run:
                degree_all += 1
                e = edges[i]
                if e.relation in NOT_STRUCTURAL:
                    continue
                incident.append(weight(e))
                degree_aa += 1
                if not as_target:
                    s.referred[node].add(e.target)
                    continue
                s.referrers[node].add(e.source)
                if e.relation == "tests" and is_test_path(e.source):
                    s.tested.add(node)
        s.degree_all[node], s.degree_aa[node] = degree_all, degree_aa
        s.assoc[node] = association(incident, cap)

    newest = newest_kept(kept, facts, records)
    terms = derive.Terms(kept.terms.n, kept.terms.s1, kept.terms.s2, newest, 0.0, cfg.alpha, cfg.priority_cap)
    by_path = {r.path: r for r in records}

    def make(path: str) -> tuple[ArtifactNode, derive.Stored]:
        fill(path)
        return _artifact_node(by_path[path], facts[path], s, terms, newest, usage, sensitivity_overrides, history)

    node_rows: list[NodeRow] = [{"id": r.artifact_id, "kind": "artifact", "path": r.path}  # type: ignore[misc]
                                for r in records]
    stored: dict[str, derive.Stored] = {}
    node_rows.extend(_hub_rows(s, terms, stored))
    edge_terms = dataclasses.replace(terms, rank_top=max(raw, default=0.0))
    ids = {r.path: r.artifact_id for r in records}
    # (the edges by relation: the latest's, whose merged edges and memberships these are,
    # relation for relation, when its header's add up to them)
    relations = Counter(kept.relations) if kept.relations is not None and sum(kept.relations.values()) == len(edges) \
        else Counter(e.relation for e in edges)
    rows = EdgeRows(edges, weights, raw, ids, edge_terms)
    if places is not None:  # (each file's edges: its run of the merged ones and its membership, after them)
        rows.runs = (places, n_merged)
    graph = WeightedGraph(node_rows, rows, edge_terms.mu, edge_terms.sigma,
                          len(domains), edge_terms, stored, raw, relations, endpoints, kept.orphans)
    graph.structure_key, graph.make, graph.ranked_here = kept.key, make, False
    graph.structure_sum = kept.total
    record_at: dict[str, int] = {}
    in_path_order: list[str] = []

    def find_rows(paths: Set[str], sources: Set[str]) -> tuple[list[int], list[int]]:
        """``rows_in``: the rows of ``paths`` (artifacts, in record order, then every hub)
        and the edges whose source is in ``sources`` (each one's run of the merged edges,
        which are in source order, and its membership, the memberships in path order)."""
        if not record_at:
            record_at.update((r.path, i) for i, r in enumerate(records))
            in_path_order.extend(sorted(domain_of))
        rows = sorted(record_at[p] for p in paths if p in record_at) + list(range(len(records), len(node_rows)))
        keep: list[int] = []
        for src in sources:
            a = bisect.bisect_left(merged, src, 0, n_merged, key=_source)
            keep.extend(range(a, bisect.bisect_right(merged, src, a, n_merged, key=_source)))
            j = bisect.bisect_left(in_path_order, src)
            if j < len(in_path_order) and in_path_order[j] == src:
                keep.append(n_merged + j)
        keep.sort()
        return rows, keep

    graph.find_rows, graph.ready = find_rows, ready

    def sources_into(paths: Set[str]) -> set[str]:
        ready(paths)
        return {merged[i].source for p in paths for i in into(p)}

    graph.sources_into = sources_into
    return graph


def weigh(records: list[ArtifactRecord], facts: Mapping[str, FileFacts], merged: list[Edge],
          cfg: Config, usage: Mapping[str, int] | None = None,
          sensitivity_overrides: Mapping[str, str] | None = None,
          rank_job: RankJob = rank_here, history: Mapping[str, str] | None = None,
          keep: bool = False, latest_key: str = "",
          latest_ranks: Callable[[int], list[float] | None] | None = None, lazy: bool = False,
          proven: KeptStructure | None = None,
          places: Mapping[str, tuple[int, int]] | None = None) -> WeightedGraph:
    """``rank_job`` starts the edge ranking and returns a function that waits for it: the
    builder runs it in a second process while this one makes the node rows. ``history``
    is each file's past commit messages (design §5c). Edges of a relation in
    ``NOT_STRUCTURAL`` (co-change) are weighted and ranked like every edge but do not
    count towards association, degree or back-references: they say the files changed
    together, not that one depends on the other. ``keep``: the graph keeps its
    ``structure`` and inputs, for ``reweigh`` of the next build (a long-lived builder's).

    ``latest_key``, ``latest_ranks``: the latest build's ``structure_key`` and what reads
    its raw ranks back (given the number of edges; None when they cannot be read). When
    this graph's key is that one, its raw ranks are those (equal structure, equal ranks)
    and the DuoRanker does not run; with ``lazy`` too, the artifact rows are made only when
    read (``WeightedGraph.full``): a cold build reads few of them. ``proven`` (with ``lazy``):
    the latest's structure, proven the same file by file: no pass over every node's
    structure and no key is made (``_weigh_kept``), unless its figures do not fit; ``places``
    (with ``proven``): each source's run's place in ``merged`` (``BySource.places``), which
    its edge rows then keep for the export to group them by source (``EdgeRows.runs``)."""
    history = history or {}
    usage = usage or {}
    sensitivity_overrides = sensitivity_overrides or {}
    if proven is not None and lazy and not keep:
        graph = _weigh_kept(records, facts, merged, cfg, usage, sensitivity_overrides, history, proven, places)
        if graph is not None:
            return graph
    s = _structure(records, merged, cfg)
    s.merged = merged
    edges, weights = s.edges, s.weights
    key, total = structure_key(s, records, cfg, usage, sensitivity_overrides)
    kept = latest_ranks(len(edges)) if latest_ranks is not None and latest_key and key == latest_key else None
    if kept is None or keep:
        _with_tagsets(s, records)
    if kept is not None:
        ranked: Callable[[], list[float]] = lambda: kept  # noqa: E731
    else:
        ranked = rank_job([(e.source, e.target, w) for e, w in zip(edges, weights, strict=True)], s.tagsets, cfg)

    newest = max((facts[r.path].mtime_ns for r in records), default=0)
    # the largest R is filled in once the ranks are in (priorities do not use it)
    terms = derive.Terms.of(list(s.assoc.values()), newest, 0.0, cfg.alpha, cfg.priority_cap)
    mu, sigma = terms.mu, terms.sigma
    stored: dict[str, derive.Stored] = {}
    node_rows: list[NodeRow] = []
    make: Callable[[str], tuple[ArtifactNode, derive.Stored]] | None = None
    if kept is not None and lazy and not keep:
        by_path = {r.path: r for r in records}
        node_terms = terms  # (the rows' terms: ``terms`` is rebound below, with the largest R)

        def make(path: str) -> tuple[ArtifactNode, derive.Stored]:
            return _artifact_node(by_path[path], facts[path], s, node_terms, newest, usage, sensitivity_overrides,
                                  history)

        node_rows.extend({"id": r.artifact_id, "kind": "artifact", "path": r.path}  # type: ignore[misc]
                         for r in records)
    else:
        for r in records:
            node, stored[r.path] = _artifact_node(r, facts[r.path], s, terms, newest, usage, sensitivity_overrides,
                                                  history)
            node_rows.append(node)
    node_rows.extend(_hub_rows(s, terms, stored))

    raw = ranked()
    terms = dataclasses.replace(terms, rank_top=max(raw, default=0.0))
    ids = {r.path: r.artifact_id for r in records}
    counts: Counter[str] = Counter(e.relation for e in edges)
    edge_rows: Sequence[EdgeRow] = EdgeRows(edges, weights, raw, ids, terms) if make is not None else \
        [_edge_row(e, w, rank, ids, terms) for e, w, rank in zip(edges, weights, raw, strict=True)]
    endpoints = [(e.source, e.target) for e in edges]
    orphans = sum(1 for r in records if s.degree_aa[r.path] == 0)
    graph = WeightedGraph(node_rows, edge_rows, mu, sigma, len(s.domains), terms, stored, raw, counts, endpoints,
                          orphans)
    graph.structure_key, graph.structure_sum = key, total
    graph.make, graph.ranked_here = make, kept is None
    if keep:
        s.records, s.facts, s.merged = list(records), [facts[r.path] for r in records], merged
        s.settings = (cfg, dict(usage), dict(sensitivity_overrides))
        graph.structure = s
    return graph


def reweigh(previous: WeightedGraph, records: list[ArtifactRecord], facts: Mapping[str, FileFacts],
            merged: list[Edge], cfg: Config, usage: Mapping[str, int] | None = None,
            sensitivity_overrides: Mapping[str, str] | None = None,
            history: Mapping[str, str] | None = None, places: list[int] | None = None,
            patched: tuple[list[Edge], list[int]] | None = None,
            rows_again: Set[str] = frozenset()) -> WeightedGraph | None:
    """``weigh``'s graph made from the previous build's (``previous``, kept with its
    ``structure``) when the edges' structure did not move: the same files in the same
    order, the same (source, target, relation, κ) edges in the same order, the same
    settings, and every changed record in the same domain with the same tag set. Then the
    weights, association values, degrees and raw ranks are the previous build's; the
    changed files' rows are made again, every other row's derived values follow the new
    newest mtime when the row is read (``WeightedGraph.full``), and the edge rows whose fragments or producer moved are made again.
    None when the structure moved (``weigh`` then makes every row). The previous graph's
    rows are reused, and changed, in place.
    ``places``: the only places where a record or its facts can differ from the previous
    graph's (a long-lived builder's read: every other file's are the very objects it
    kept, ``orchestrator.records_in_order``); ``patched``: the merged list ``merged`` is a
    copy of, and the only places where an edge can differ (``BySource.result``). Only
    those places are compared, when that list is the previous graph's. ``rows_again``:
    files whose rows are made again though their records did not move (their commit
    messages did: ``history.Moved.rows``)."""
    s = previous.structure
    if s is None:
        return None
    usage = usage or {}
    sensitivity_overrides = sensitivity_overrides or {}
    history = history or {}
    if (len(records) != len(s.records) or len(merged) != len(s.merged)
            or s.settings != (cfg, dict(usage), dict(sensitivity_overrides))):
        return None
    changed: list[int] = []
    for i in range(len(records)) if places is None else places:
        r, old = records[i], s.records[i]
        if r.path != old.path:
            return None
        if r is not old or facts[r.path] is not s.facts[i]:
            if r.tags.get("domain") != old.tags.get("domain") or tagset(r.tags) != s.tagsets[r.path]:
                return None
            changed.append(i)
    if rows_again:
        place = s.places if s.places is not None else {r.path: i for i, r in enumerate(records)}
        seen = set(changed)
        changed.extend(sorted(i for i in (place.get(p) for p in rows_again) if i is not None and i not in seen))
    moved: list[int] = []
    at: Sequence[int] = range(len(merged)) if patched is None or patched[0] is not s.merged else patched[1]
    for i in at:
        e, old_e = merged[i], s.merged[i]
        if e is not old_e and e != old_e:
            if (e.source, e.target, e.relation, e.confidence) != (old_e.source, old_e.target, old_e.relation,
                                                                   old_e.confidence):
                return None
            moved.append(i)
    if previous.terms is None:
        return None
    # the newest mtime: the newest changed file's when it is not older than the previous
    # newest; else the previous newest, unless only changed files held it (then every file's)
    before = previous.terms.newest_ns
    newest = max((facts[records[i].path].mtime_ns for i in changed), default=0)
    if newest < before:
        newest = before if not any(s.facts[i].mtime_ns == before for i in changed) else \
            max((facts[r.path].mtime_ns for r in records), default=0)
    terms = dataclasses.replace(previous.terms, newest_ns=newest)
    # the rows and stored terms are the previous graph's, changed in place (it is not read
    # again): the changed files' rows made again; every other row's derived values follow the
    # new terms when the row is read (``full``), not here (0.13 s a save at 20k files)
    nodes, stored = previous.nodes, previous.stored
    epochs = previous.epochs if previous.epochs is not None else {}
    base = previous.base_epoch if previous.epochs is not None else previous.epoch
    epoch = previous.epoch + 1
    for i in changed:
        r = records[i]
        nodes[i], stored[r.path] = _artifact_node(r, facts[r.path], s, terms, newest, usage,
                                                  sensitivity_overrides, history)
        epochs[r.path] = epoch
    del nodes[len(records):]
    nodes.extend(_hub_rows(s, terms, stored))
    edges = merged + s.edges[len(merged):]  # (the hub memberships: the same files in the same domains)
    # a changed file's artifact id (its path, mtime and size) is in every row of its edges
    renamed = {records[i].path for i in changed if records[i].artifact_id != s.records[i].artifact_id}
    if renamed:
        moved = sorted({*moved, *s.edges_touching(renamed)})
    # (a graph weighed around a move keeps its edge rows made when read: only the moved set)
    edge_rows = previous.edges if isinstance(previous.edges, list | EdgeRows) else list(previous.edges)
    if moved:
        if s.places is None:
            s.places = {r.path: i for i, r in enumerate(records)}
        ids = IdsAt(records, s.places)
        for i in moved:
            edge_rows[i] = _edge_row(edges[i], s.weights[i], previous.rank_raw[i], ids, terms)
    if places is not None:  # (the other places' facts are the kept ones)
        for i in changed:
            s.facts[i] = facts[records[i].path]
        s.records, s.merged, s.edges = list(records), merged, edges
    else:
        s.records, s.facts, s.merged, s.edges = list(records), [facts[r.path] for r in records], merged, edges
    graph = WeightedGraph(nodes, edge_rows, previous.mu, previous.sigma, previous.hubs, terms, stored,
                          previous.rank_raw, previous.edge_counts, previous.endpoints, previous.orphans)
    graph.structure = s
    graph.epochs, graph.epoch, graph.base_epoch = epochs, epoch, base
    # (a graph weighed around a move: its rows not yet read are made when read, under the
    # terms of the graph that weighed it, then derived again under these: ``full``)
    graph.make, graph.made, graph.make_epoch = previous.make, previous.made, previous.make_epoch
    graph.structure_key = previous.structure_key  # (the structure did not move)
    graph.structure_sum = previous.structure_sum
    graph.moved = (frozenset(records[i].path for i in changed), frozenset(edges[i].source for i in moved),
                   tuple(moved))
    return graph
