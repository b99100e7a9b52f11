"""A cold build whose edges moved, weighed around the move (issue 49).

When a file's edges change (a function added, an import made), ``weigh`` used to work out
every node's structure, rank every edge and make every artifact row: 1.5 s of a 9.8 s
one-file rebuild at 20,007 files, and every row then serialised and compared. The latest
build's structure is known (its header's exact aggregates, its raw ranks, its orphans) and
so are both builds' edges of every file (``edge_shards``), so the move can be weighed
where it happened:

* the sources whose merged edges differ are the files that came or went and those whose
  run of the merged edges is not the latest's (the edge shards keep each file's run:
  ``edge_shards.Kept``; neither build's Phase 2 and Phase 3 lists are read); of those, the
  ones whose (target, relation, κ) moved change the structure;
* a node's association, degrees, referrers and tests come from its incident edges: only
  the endpoints of those sources' old and new runs can have other values, and the exact
  aggregates n, Σassoc, Σassoc² (``derive.Terms``: integers) and the orphan count move by
  their differences;
* an edge's raw rank R reads its endpoints' tag sets and the capped out-neighbourhoods of
  its source and of the source's out-neighbours (``duoranker``): only the edges that start
  in a source whose edges moved, in one with an edge into such a source, or in or into a
  file whose tag set moved are ranked again; every other edge keeps the latest's R, found
  at the same place in its source's run;
* the artifact rows are made when read (``WeightedGraph.make``), and the graph says which
  rows can differ from the latest's (``WeightedGraph.moved``): the export serialises and
  the load tables only those.

The same files in the same order, the same settings (``weigh.settings_key``), no file's
domain moved and no file named as a hub are required; otherwise (or when the latest's
figures cannot be read) ``weigh`` makes the whole, as before. What this gives equals the
whole pass exactly: the tests compare every export byte and every table row after each
step of a sequence of such edits.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from oracl.builder.pipeline import weigh
from oracl.builder.pipeline.annotate import record_domain
from oracl.builder.pipeline.duoranker import capped_out, rank_one
from oracl.builder.pipeline.edge_lists import edge_row
from oracl.builder.pipeline.weigh import (
    HUB_PREFIX,
    EdgeRows,
    PerEdge,
    Structure,
    WeightedGraph,
    hub_id,
    key_of,
    memberships,
    move_source,
    moved_sum,
    record_part,
    run_part,
    structure_sum,
    tagset,
)
from oracl.core import derive
from oracl.core.config import NOT_STRUCTURAL, Config
from oracl.core.derive import association, fixed, fixed_sq
from oracl.core.export import r9
from oracl.core.paths import is_test_path
from oracl.core.records import ArtifactNode, ArtifactRecord, Edge, FileFacts, NodeRow


@dataclasses.dataclass(frozen=True, slots=True)
class Latest:
    """What the latest build recorded of its structure: its header's terms, its orphans and
    what reads its raw ranks back (given their number)."""

    terms: derive.Terms
    orphans: int
    ranks: Callable[[int], list[float] | None]
    total: int | None = None  # its ``weigh.structure_sum`` (None: it recorded none)
    relations: Mapping[str, int] | None = None  # its graph's edges by relation (its header's; None: not read)


@dataclasses.dataclass(slots=True)
class _Node:
    """One node's structure, as ``weigh._structure`` works it out."""

    assoc: float
    degree_all: int
    degree_aa: int
    referred: set[str]
    referrers: set[str]
    tested: bool


def _shape(edges: list[Edge]) -> list[tuple[str, str, str, float]]:
    return [(e.source, e.target, e.relation, e.confidence) for e in edges]


def weigh_around(records: list[ArtifactRecord], facts: Mapping[str, FileFacts], previous: Mapping[str, FileFacts],
                 old_records: Mapping[str, ArtifactRecord], merged: list[Edge], kept_runs: Mapping[str, list[Any]],
                 cfg: Config, latest: Latest, usage: Mapping[str, int], sensitivity_overrides: Mapping[str, str],
                 history: Mapping[str, str], same: Callable[[str], bool] | None = None,
                 prior: WeightedGraph | None = None, places: Mapping[str, tuple[int, int]] | None = None,
                 rows_again: AbstractSet[str] = frozenset()) -> tuple[WeightedGraph | None, str]:
    """``weigh(lazy=True)``'s graph, made around what moved since the latest build (see the
    module's text), or None and why not. ``previous``: the latest's facts; ``old_records``:
    the records the latest made of the files read again and of the files gone (from its
    facts); ``kept_runs`` (the latest's edge shards', merged with this build's overlay and
    history: the settings key says so): each of the latest's files' run of its merged
    edges, as rows. The sources that differ are those that came or went and those whose
    run is not the latest's (an edge into a file that came or went included: merged only
    while both ends are there). ``graph.moved`` also names the files added and gone.
    ``same``: says of a source that its run is the latest's without comparing it (a
    long-lived builder's: the very list it kept); the others' are compared row by row.
    ``prior``: the latest build's graph, kept with its structure (a long-lived builder's):
    its structure is patched where the move reached and its rows are kept but the moved
    ones (``_from_prior``), so the graph can be reweighed at the next save and its export
    rows patched (``graph.spliced``); without it (or when it does not fit) the structure of
    a node is worked out when its row is read, and the graph keeps none. With ``prior`` and
    no file come or gone, the lists of every edge (weights, ends, raw ranks) are the
    prior's with the runs that differ put in place, and who has an edge into a file is its
    kept index (``Structure.into``), so no pass over every edge is made. ``places``: each
    source's run's place in ``merged`` (the builder's merge says it: ``BySource.places``);
    else found by a pass over the merged edges. ``rows_again``: files whose rows are made
    again though nothing of theirs above moved (their commit messages did:
    ``history.Moved.rows``)."""
    paths = [r.path for r in records]
    added = {p for p in paths if p not in previous}
    gone = {p for p in previous if p not in facts}
    if any(p not in old_records for p in gone):
        return None, "a file gone has no record"
    domain = {r.path: record_domain(r) for r in records}
    domains = sorted(set(domain.values()))
    hubs = {d: hub_id(d) for d in domains}
    if any(h in facts or h in previous for h in hubs.values()):
        return None, "a file is named as a hub"
    old_domain = {**domain, **{p: str(old.tags["domain"]) for p, old in old_records.items()}}
    for p in added:
        del old_domain[p]
    if sorted(set(old_domain.values())) != domains:
        return None, "a domain came or went"
    if latest.terms.n != len(previous) + len(domains):
        return None, "the latest's figures do not fit"
    retagged: set[str] = set()  # files read again whose tag set (what the ranker compares) moved
    kept_s = prior.structure if prior is not None else None
    # (a long-lived builder's save whose files neither came nor went: the prior's lists
    # spliced; its places of the records serve as the records by path)
    fast = (prior is not None and kept_s is not None and not added and not gone and prior.terms is not None
            and kept_s.settings == (cfg, dict(usage), dict(sensitivity_overrides))
            and kept_s.domains == domains and prior.hubs == len(domains)
            and len(prior.edges) == len(kept_s.edges) == len(prior.rank_raw) == len(kept_s.weights)
            == len(prior.endpoints) and [r.path for r in kept_s.records] == paths)
    by_path: Mapping[str, ArtifactRecord]
    if fast:
        assert kept_s is not None
        if kept_s.places is None:
            kept_s.places = {p: i for i, p in enumerate(paths)}
        by_path = weigh.RecordsAt(records, kept_s.places)
    else:
        by_path = {r.path: r for r in records}
    for path, old in old_records.items():
        if path in gone:
            continue
        if str(old.tags["domain"]) != domain[path]:
            return None, f"{path}'s domain moved"
        if tagset(old.tags) != tagset(by_path[path].tags):
            retagged.add(path)
    nodes, old_nodes = set(paths), set(previous)
    n_merged = len(merged)
    runs: Mapping[str, tuple[int, int]]  # each source's run of the merged edges (sorted by source)
    if places is not None:
        runs = places
    else:
        found: dict[str, tuple[int, int]] = {}
        start = 0
        for i in range(1, n_merged + 1):
            if i == n_merged or merged[i].source != merged[start].source:
                found[merged[start].source] = (start, i)
                start = i
        runs = found
    empty = (0, 0)

    def run(s: str) -> tuple[int, int]:
        return runs.get(s, empty)

    # the sources whose merged edges differ: they came or went, or their run is not the latest's
    if any(p not in kept_runs for p in gone):
        return None, "a file that came or went has no edges"
    differ: set[str] = set(added) | gone
    for p in paths:
        if p in added:
            continue
        if same is not None and same(p) and p in kept_runs:
            continue
        rows: list[Any] | None = kept_runs.get(p)
        if rows is None:
            return None, f"{p} has no kept edges"
        a, b = run(p)
        if len(rows) != b - a or any(tuple(row) != edge_row(merged[i]) for i, row in enumerate(rows, a)):
            differ.add(p)
    old_runs = {s: [Edge._make(row) for row in kept_runs[s]] for s in differ if s in previous}
    if any(e.source != s for s, run_was in old_runs.items() for e in run_was):
        return None, "an edge starts in another file"
    moved_structure: set[str] = set(added)
    for s in sorted(differ):
        if s in old_runs:
            a, b = run(s)
            if _shape(old_runs[s]) != _shape(merged[a:b]):
                moved_structure.add(s)
    wcache: dict[tuple[str, float], float] = {}

    def weight(e: Edge) -> float:
        w = wcache.get((e.relation, e.confidence))
        if w is None:
            w = wcache[(e.relation, e.confidence)] = r9(cfg.relation_prior(e.relation) * e.confidence)
        return w

    incoming: Mapping[str, list[int]]
    hub_at: Mapping[str, int]
    weights: Sequence[float]
    spliced: _Spliced | None = None
    if fast:  # (the prior's lists with the runs that differ put in place)
        assert prior is not None and kept_s is not None
        spliced = _splice(prior, kept_s, merged, differ, moved_structure, run, weight)
        if spliced is None:
            return None, "the kept graph's lists do not fit"
        edges, weights = spliced.edges, spliced.weights
        _patch_into(kept_s, differ, old_runs, merged, run, gone)
        assert kept_s.into is not None
        incoming = _Incoming(kept_s.into, merged, run)
        hub_at = _HubAt(kept_s.edges, len(kept_s.merged), n_merged, facts)
    else:
        # the edges: the merged ones, then each file's hub membership, in path order
        edges = merged + memberships(domain)
        if prior is None:  # (each made when read: the graph is not kept)
            weights = PerEdge(edges, weight)
        else:
            pairs = [(e.relation, e.confidence) for e in edges]
            for pair in set(pairs):
                if pair not in wcache:
                    wcache[pair] = r9(cfg.relation_prior(pair[0]) * pair[1])
            weights = [wcache[pair] for pair in pairs]
        in_path_order = sorted(paths)
        hub_at = {p: n_merged + i for i, p in enumerate(in_path_order)}
        into_lists: dict[str, list[int]] = defaultdict(list)
        for i in range(n_merged):
            into_lists[merged[i].target].append(i)
        incoming = into_lists
    old_into: dict[str, list[Edge]] = defaultdict(list)
    for before in old_runs.values():
        for e in before:
            old_into[e.target].append(e)
    cap = cfg.association_cap
    w_member = r9(cfg.relation_prior("belongs_to") * 1.0)
    member_w = [w_member] if "belongs_to" not in NOT_STRUCTURAL else []

    def structure_of(out: list[Edge], into: list[Edge]) -> _Node:
        """A node's structure from its merged edges as a source and as a target (and its
        hub membership, counted towards the degree and, when structural, the association)."""
        incident: list[float] = list(member_w)
        degree_all, degree_aa = 1, 0
        referred: set[str] = set()
        referrers: set[str] = set()
        tested = False
        for group, as_target in ((out, False), (into, True)):
            for e in group:
                degree_all += 1
                if e.relation in NOT_STRUCTURAL:
                    continue
                incident.append(weight(e))
                degree_aa += 1
                if not as_target:
                    referred.add(e.target)
                    continue
                referrers.add(e.source)
                if e.relation == "tests" and is_test_path(e.source):
                    tested = True
        return _Node(association(incident, cap), degree_all, degree_aa, referred, referrers, tested)

    def now_of(node: str) -> _Node:
        a, b = run(node)
        return structure_of(merged[a:b], [merged[i] for i in incoming.get(node, ())])

    def then_of(node: str) -> _Node:
        out = old_runs[node] if node in old_runs else merged[slice(*run(node))]
        into = [merged[i] for i in incoming.get(node, ()) if merged[i].source not in differ]
        into.extend(old_into.get(node, ()))
        return structure_of(out, into)

    # the nodes whose structure can have moved: the ends of the moved sources' runs
    touched: set[str] = set(gone)
    for s in sorted(moved_structure | gone):
        touched.add(s)
        touched.update(e.target for e in old_runs.get(s, ()))
        a, b = run(s)
        touched.update(e.target for e in merged[a:b])
    s1, s2, orphans = latest.terms.s1, latest.terms.s2, latest.orphans
    # a hub's association is the mean of its members' equal weights: equal, but for the last
    # bits of a sum of another count of them
    was_members, members = Counter(old_domain.values()), Counter(domain.values())
    for d in domains:
        if was_members[d] != members[d]:
            was_hub, now_hub = association(member_w * was_members[d], cap), association(member_w * members[d], cap)
            s1, s2 = s1 - fixed(was_hub) + fixed(now_hub), s2 - fixed_sq(was_hub) + fixed_sq(now_hub)
    made_nodes: dict[str, _Node] = {}
    for node in sorted(touched):
        if node in old_nodes:
            was = then_of(node)
            s1, s2, orphans = s1 - fixed(was.assoc), s2 - fixed_sq(was.assoc), orphans - (was.degree_aa == 0)
        if node in nodes:
            now = made_nodes[node] = now_of(node)
            s1, s2, orphans = s1 + fixed(now.assoc), s2 + fixed_sq(now.assoc), orphans + (now.degree_aa == 0)
    # the raw ranks: the latest's, where an edge's inputs to the ranker did not move. The
    # latest's edges were its merged ones (each source's run, in source order) and then its
    # files' memberships in path order.
    spans_of: dict[str, tuple[int, int, int, int]] = {}
    if spliced is not None:
        raw, spans_of = spliced.raw, spliced.spans
    else:
        old_len = {s: len(old) for s, old in old_runs.items()}
        every = sorted(set(runs) | set(old_runs))
        n_old_merged = sum(old_len.get(s, 0) if s in differ else (lambda ab: ab[1] - ab[0])(run(s)) for s in every)
        old_order = sorted(old_nodes)
        old_raw = latest.ranks(n_old_merged + len(old_order))
        if old_raw is None:
            return None, "the latest's ranks cannot be read"
        raw = [0.0] * len(edges)
        start_old = start_new = 0
        # (each source's run's place in the latest's merged edges and in this build's, where it
        # would be when it has none)
        for s in every:
            a, b = run(s)
            if s not in moved_structure and s in nodes:  # (the same (target, relation, κ) in the same order)
                raw[a:b] = old_raw[start_old:start_old + (b - a)]
            was_len = old_len.get(s, 0) if s in differ else b - a
            spans_of[s] = (start_old, start_old + was_len, start_new, start_new + (b - a))
            start_old, start_new = start_old + was_len, start_new + (b - a)
        old_hub = {p: n_old_merged + i for i, p in enumerate(old_order)}
    again: set[str] = set(moved_structure) | retagged
    for c in moved_structure | gone:  # (a 2-path through a source whose edges moved: its in-neighbours')
        again.update(merged[i].source for i in incoming.get(c, ()))
    for t in retagged:  # (the Jaccard term of every edge into a retagged file)
        again.update(merged[i].source for i in incoming.get(t, ()))
    again -= gone
    if spliced is None:
        assert old_raw is not None
        for p in in_path_order:
            if p not in again and p not in added:
                raw[hub_at[p]] = old_raw[old_hub[p]]
    tagsets: dict[str, frozenset[str]] = {}

    def tags_of(node: str) -> frozenset[str]:
        got = tagsets.get(node)
        if got is None:
            record = by_path.get(node)
            got = tagsets[node] = tagset(record.tags) if record is not None else \
                tagset({"domain": node.removeprefix(HUB_PREFIX)})
        return got

    def out_edges(node: str) -> list[int]:
        a, b = run(node)
        return [*range(a, b), *([hub_at[node]] if node in hub_at else [])]

    outs: dict[str, dict[str, float]] = {}
    for u in again:
        outs.update(capped_out([(u, edges[i].target, weights[i]) for i in out_edges(u)], cfg.neighbour_cap))
    middle: set[str] = set()
    for u in again:
        middle.update(outs.get(u, {}))
    for x in middle - set(outs):
        outs.update(capped_out([(x, edges[i].target, weights[i]) for i in out_edges(x)], cfg.neighbour_cap))
    for u in sorted(again):
        for i in out_edges(u):
            raw[i] = rank_one(u, edges[i].target, weights[i], outs, tags_of, cfg.beta, cfg.gamma, cfg.lam)
    read_again = {p for p in old_records if p not in gone} | added
    # the newest mtime: the newest file read again's when it is not older than the latest's
    # newest; else the latest's, unless a file read again or gone held it (then a pass)
    newest_was = prior.terms.newest_ns if fast and prior is not None and prior.terms is not None else \
        latest.terms.newest_ns
    newest = max((facts[p].mtime_ns for p in read_again), default=0)
    if newest < newest_was:
        newest = newest_was if not any(previous[p].mtime_ns == newest_was for p in (*read_again, *gone)
                                       if p in previous) else max((facts[p].mtime_ns for p in paths), default=0)
    terms = derive.Terms(len(paths) + len(domains), s1, s2, newest, 0.0, cfg.alpha, cfg.priority_cap)
    moved_nodes = read_again | touched | retagged | gone | (rows_again & nodes)
    # an edge row holds its target's id (a file read again has another) and its raw rank
    moved_sources = differ | again | read_again
    for t in read_again:
        moved_sources.update(merged[i].source for i in incoming.get(t, ()))
    edge_terms = dataclasses.replace(terms, rank_top=max(raw, default=0.0))
    ids: Mapping[str, str]
    endpoints: Sequence[tuple[str, str]]
    if spliced is not None and kept_s is not None and kept_s.places is not None:
        ids, endpoints, counts = weigh.IdsAt(records, kept_s.places), spliced.endpoints, spliced.counts
    else:
        ids = {r.path: r.artifact_id for r in records}
        endpoints = PerEdge(edges, weigh.ends_of) if prior is None else [(e.source, e.target) for e in edges]
        counts = Counter(e.relation for e in edges)
    if prior is not None:
        graph = _from_prior(prior, records, facts, previous, merged, edges, weights, raw, endpoints, ids, terms,
                            edge_terms, made_nodes, moved_nodes, moved_sources, added, gone, domains, members,
                            member_w, cfg, usage, sensitivity_overrides, history,
                            spliced if spliced is not None else _General(spans_of, n_old_merged, old_order),
                            differ, old_runs, run, by_path, counts)
        if graph is not None:
            graph.orphans = orphans
            _keyed(graph, latest, by_path, old_records, old_runs, read_again, differ, nodes, merged, run, records,
                   cfg, usage, sensitivity_overrides, history)
            return graph, _said(moved_structure, gone, added, touched, again) + "; the kept graph patched"
    st = Structure(edges, weights, {}, Counter(), Counter(), defaultdict(set), defaultdict(set), set(), {}, domains)
    for d in domains:  # a hub's edges are its members' memberships (no file is named as one)
        st.degree_all[hubs[d]] = members[d]
        st.assoc[hubs[d]] = association(member_w * members[d], cap)

    def fill(node: str) -> None:
        if node in st.assoc:
            return
        got = made_nodes.get(node) or now_of(node)
        st.assoc[node], st.degree_all[node], st.degree_aa[node] = got.assoc, got.degree_all, got.degree_aa
        st.referred[node], st.referrers[node] = got.referred, got.referrers
        if got.tested:
            st.tested.add(node)

    def make(path: str) -> tuple[ArtifactNode, derive.Stored]:
        fill(path)
        return weigh._artifact_node(by_path[path], facts[path], st, terms, newest, usage, sensitivity_overrides,
                                    history)

    node_rows: list[NodeRow] = [{"id": r.artifact_id, "kind": "artifact", "path": r.path}  # type: ignore[misc]
                                for r in records]
    stored: dict[str, derive.Stored] = {}
    node_rows.extend(weigh._hub_rows(st, terms, stored))
    graph = WeightedGraph(node_rows, EdgeRows(edges, weights, raw, ids, edge_terms), edge_terms.mu, edge_terms.sigma,
                          len(domains), edge_terms, stored, raw, counts, endpoints, orphans)
    _keyed(graph, latest, by_path, old_records, old_runs, read_again, differ, nodes, merged, run, records, cfg, usage,
           sensitivity_overrides, history)
    graph.make = make
    graph.moved = (frozenset(moved_nodes), frozenset(moved_sources), ())
    return graph, _said(moved_structure, gone, added, touched, again)


def _said(moved_structure: set[str], gone: set[str], added: set[str], touched: set[str], again: set[str]) -> str:
    came_went = f", {len(added):,} came and {len(gone):,} went" if added or gone else ""
    return (f"around the move: {_files(len(moved_structure | gone))} edges moved{came_went}; "
            f"{_owned(len(touched), 'node')} structure and {_files(len(again))} edge ranks made again")


def _keyed(graph: WeightedGraph, latest: Latest, by_path: Mapping[str, ArtifactRecord],
           old_records: Mapping[str, ArtifactRecord], old_runs: Mapping[str, list[Edge]], read_again: set[str],
           differ: set[str], nodes: set[str], merged: list[Edge], run: Callable[[str], tuple[int, int]],
           records: list[ArtifactRecord], cfg: Config, usage: Mapping[str, int],
           sensitivity_overrides: Mapping[str, str], history: Mapping[str, str]) -> None:
    """The graph's ``structure_sum`` and key: the latest's sum moved by the records and runs
    that moved (every record and run summed when the latest recorded none)."""
    if latest.total is not None:
        total = moved_sum(
            latest.total,
            [*(record_part(by_path[p]) for p in sorted(read_again)),
             *(run_part(src, merged[slice(*run(src))]) for src in sorted(differ) if src in nodes)],
            [*(record_part(old_records[p]) for p in sorted(old_records)),
             *(run_part(src, old_runs[src]) for src in sorted(old_runs))])
    else:
        total = structure_sum(records, merged)
    graph.structure_key, graph.structure_sum = key_of(total, cfg, usage, sensitivity_overrides), total


@dataclasses.dataclass(slots=True)
class _Spliced:
    """A long-lived builder's lists of every edge when no file came or went: the prior's,
    with the runs of the sources that differ put in place (``_splice``)."""

    edges: list[Edge]
    weights: list[float]
    endpoints: list[tuple[str, str]]
    raw: list[float]
    counts: Counter[str]
    spans: dict[str, tuple[int, int, int, int]]  # each differing source's run: old start/stop, new start/stop
    old_merged: list[Edge]                        # the prior's merged edges (sorted by source)
    n_merged: int

    def span(self, src: str, run: Callable[[str], tuple[int, int]]) -> tuple[int, int, int, int]:
        got = self.spans.get(src)
        if got is None:  # (a source whose run did not move, as long in both lists: where it lies)
            a = bisect.bisect_left(self.old_merged, src, key=_source)
            b = bisect.bisect_right(self.old_merged, src, a, key=_source)
            got = (a, b, *run(src))
        return got

    def member(self, p: str, hub_at: Mapping[str, int]) -> tuple[int, int, int, int]:
        k = hub_at[p] - self.n_merged  # (its place among the memberships: the same in both builds)
        n_old = len(self.old_merged)
        return n_old + k, n_old + k + 1, self.n_merged + k, self.n_merged + k + 1


@dataclasses.dataclass(frozen=True, slots=True)
class _General:
    """The places a weighing without the prior's lists found: each source's run in both
    builds (``spans_of``), the latest's number of merged edges and its files in path order."""

    spans: Mapping[str, tuple[int, int, int, int]]
    n_old_merged: int
    old_order: list[str]


def _source(e: Edge) -> str:
    return e.source


def _splice(prior: WeightedGraph, s: Structure, merged: list[Edge], differ: set[str], moved_structure: set[str],
            run: Callable[[str], tuple[int, int]], weight: Callable[[Edge], float]) -> _Spliced | None:
    """The prior's lists of every edge with the run of each source in ``differ`` put in its
    place (the merged edges are sorted by source; the hub memberships, after them, are the
    same files' in the same domains): its weights and ends made, its raw ranks the prior's
    when its (target, relation, κ) did not move (else 0, ranked again by the caller), the
    relation counts moved by its old and new edges. None when the lengths do not add up."""
    old, n_old = s.merged, len(s.merged)
    spans: dict[str, tuple[int, int, int, int]] = {}
    for src in sorted(differ):
        a = bisect.bisect_left(old, src, key=_source)
        b = bisect.bisect_right(old, src, a, key=_source)
        spans[src] = (a, b, *run(src))
    weights: list[float] = []
    ends: list[tuple[str, str]] = []
    raw: list[float] = []
    counts = Counter(prior.edge_counts)
    done = 0
    for src, (oa, ob, a, b) in spans.items():  # (in source order: ascending in both lists)
        if oa < done or len(weights) + (oa - done) != a:
            return None
        weights.extend(s.weights[done:oa])
        ends.extend(prior.endpoints[done:oa])
        raw.extend(prior.rank_raw[done:oa])
        now = merged[a:b]
        weights.extend(map(weight, now))
        ends.extend((e.source, e.target) for e in now)
        raw.extend(prior.rank_raw[oa:ob] if src not in moved_structure else [0.0] * (b - a))
        counts.subtract(e.relation for e in old[oa:ob])
        counts.update(e.relation for e in now)
        done = ob
    weights.extend(s.weights[done:])
    ends.extend(prior.endpoints[done:])
    raw.extend(prior.rank_raw[done:])
    edges = merged + s.edges[n_old:]
    if not len(edges) == len(weights) == len(ends) == len(raw):
        return None
    return _Spliced(edges, weights, ends, raw, Counter({k: v for k, v in counts.items() if v > 0}), spans, old,
                    len(merged))


def _patch_into(s: Structure, differ: set[str], old_runs: Mapping[str, list[Edge]], merged: list[Edge],
                run: Callable[[str], tuple[int, int]], gone: set[str]) -> None:
    """``s.into`` (who has a merged edge into each file) moved to this build's merged edges:
    only the sources in ``differ`` have other edges (made whole when it was not made)."""
    if s.into is None:
        into: dict[str, set[str]] = defaultdict(set)
        for e in merged:
            into[e.target].add(e.source)
        s.into = dict(into)
        return
    for src in differ:
        move_source(s.into, src, {e.target for e in old_runs.get(src, ())},
                    {e.target for e in merged[slice(*run(src))]})
    for p in gone:
        s.into.pop(p, None)


class _Incoming(Mapping[str, list[int]]):
    """The indexes of the merged edges into a file, ascending, found from who has one
    (``Structure.into``) and each such source's run: no index of every edge."""

    def __init__(self, into: Mapping[str, set[str]], merged: list[Edge], run: Callable[[str], tuple[int, int]]):
        self._into, self._merged, self._run = into, merged, run

    def __getitem__(self, target: str) -> list[int]:
        sources = self._into.get(target)
        if not sources:
            raise KeyError(target)
        merged = self._merged
        return [i for src in sorted(sources) for i in range(*self._run(src)) if merged[i].target == target]

    def __iter__(self) -> Iterator[str]:
        return iter(self._into)

    def __len__(self) -> int:
        return len(self._into)


class _HubAt(Mapping[str, int]):
    """A file's hub membership's index in this build's edges: the memberships follow the
    merged edges in path order (the prior's memberships, the same files), found by bisection."""

    def __init__(self, edges: list[Edge], lo: int, n_merged: int, files: Mapping[str, object]) -> None:
        self._edges, self._lo, self._n, self._files = edges, lo, n_merged, files

    def __getitem__(self, path: str) -> int:
        if path not in self._files:
            raise KeyError(path)
        return self._n + bisect.bisect_left(self._edges, path, self._lo, len(self._edges), key=_source) - self._lo

    def __contains__(self, path: object) -> bool:
        return path in self._files

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)


def _from_prior(prior: WeightedGraph, records: list[ArtifactRecord], facts: Mapping[str, FileFacts],
                previous: Mapping[str, FileFacts], merged: list[Edge], edges: list[Edge], weights: Sequence[float],
                raw: list[float], endpoints: Sequence[tuple[str, str]], ids: Mapping[str, str], terms: derive.Terms,
                edge_terms: derive.Terms, made_nodes: Mapping[str, _Node], moved_nodes: set[str],
                moved_sources: set[str], added: set[str], gone: set[str], domains: list[str],
                members: Counter[str], member_w: list[float], cfg: Config, usage: Mapping[str, int],
                sensitivity_overrides: Mapping[str, str], history: Mapping[str, str],
                where: _Spliced | _General, differ: set[str], old_runs: Mapping[str, list[Edge]],
                run: Callable[[str], tuple[int, int]], by_path: Mapping[str, ArtifactRecord],
                counts: Counter[str]) -> WeightedGraph | None:
    """The graph weighed around the move made from ``prior`` (the latest build's, kept with
    its structure), changed in place (it is not read again): its structure patched at the
    nodes whose incident edges moved (``made_nodes``: every one of them there) and at the
    files that came, went or were read again; its artifact rows kept but the moved nodes',
    made when read (under these terms; a kept row's derived values follow them when read:
    ``WeightedGraph.full``); its edge rows made when read, and ``spliced`` says where the
    latest's moved (for the export's kept rows). ``where``: the prior's lists spliced (no
    file came or went: the caller checked the prior fits), or the places a weighing of
    every edge found. None when ``prior`` is not the latest's."""
    s = prior.structure
    if s is None or prior.terms is None:
        return None
    spliced = where if isinstance(where, _Spliced) else None
    general = where if isinstance(where, _General) else None
    paths: list[str] | None = None
    old_paths: list[str] | None = None
    if general is not None:
        if s.settings != (cfg, dict(usage), dict(sensitivity_overrides)):
            return None
        old_paths = [r.path for r in s.records]
        if (len(old_paths) != len(previous) or len(s.merged) != general.n_old_merged or prior.hubs != len(domains)
                or len(prior.edges) != general.n_old_merged + len(general.old_order)
                or len(prior.rank_raw) != len(prior.edges)
                or any(p not in previous for p in old_paths) or s.domains != domains):
            return None
    for node in sorted(made_nodes.keys() | gone):
        got = made_nodes.get(node)
        if got is None:  # (a file gone)
            for table in (s.assoc, s.degree_all, s.degree_aa, s.referrers, s.referred, s.tagsets):
                table.pop(node, None)
            s.tested.discard(node)
            continue
        s.assoc[node], s.degree_all[node], s.degree_aa[node] = got.assoc, got.degree_all, got.degree_aa
        s.referred[node], s.referrers[node] = got.referred, got.referrers
        if got.tested:
            s.tested.add(node)
        else:
            s.tested.discard(node)
    for p in moved_nodes:
        if p in facts:
            s.tagsets[p] = tagset(by_path[p].tags)
    cap = cfg.association_cap
    for d in domains:  # (a hub's: its members' memberships)
        s.degree_all[hub_id(d)] = members[d]
        s.assoc[hub_id(d)] = association(member_w * members[d], cap)
    # the rows: the latest's, but the moved nodes' (made when read)
    stored, made = prior.stored, prior.made
    epochs = prior.epochs if prior.epochs is not None else {}
    base = prior.base_epoch if prior.epochs is not None else prior.epoch
    for p in moved_nodes:
        stored.pop(p, None)
        made.pop(p, None)
        epochs.pop(p, None)
    for d in domains:
        stored.pop(hub_id(d), None)
    nodes: list[NodeRow]
    same_files = spliced is not None
    if general is not None:
        paths = [r.path for r in records]
        same_files = not added and not gone and paths == old_paths
    if same_files:
        nodes = prior.nodes
        del nodes[len(records):]
        places = s.places if s.places is not None else {r.path: i for i, r in enumerate(records)}
        for p in moved_nodes:
            if p in places:
                r = records[places[p]]
                nodes[places[p]] = {"id": r.artifact_id, "kind": "artifact", "path": r.path}  # type: ignore[call-overload]
                s.facts[places[p]] = facts[p]  # (the others' are the kept ones)
        s.places = places
    else:
        assert old_paths is not None and paths is not None
        row_of = dict(zip(old_paths, prior.nodes, strict=False))
        nodes = [{"id": r.artifact_id, "kind": "artifact", "path": r.path}  # type: ignore[misc]
                 if r.path in moved_nodes else row_of[r.path] for r in records]
        s.facts, s.places = [facts[p] for p in paths], None
    newest = terms.newest_ns
    if general is not None and s.into is not None:  # (the spliced lists' caller patched it)
        _patch_into(s, differ, old_runs, merged, run, gone)
    s.records, s.merged, s.edges, s.weights = list(records), merged, edges, weights

    def make(path: str) -> tuple[ArtifactNode, derive.Stored]:
        return weigh._artifact_node(by_path[path], facts[path], s, terms, newest, usage, sensitivity_overrides,
                                    history)

    nodes.extend(weigh._hub_rows(s, terms, stored))
    graph = WeightedGraph(nodes, EdgeRows(edges, weights, raw, ids, edge_terms), edge_terms.mu, edge_terms.sigma,
                          len(domains), edge_terms, stored, raw, counts, endpoints)
    graph.structure, graph.make, graph.made = s, make, made
    graph.epochs, graph.epoch, graph.base_epoch = epochs, prior.epoch + 1, base
    graph.make_epoch = graph.epoch
    # where the latest's edge rows moved: each moved source's run of the merged edges, then
    # the hub memberships of the moved sources and of the files that came and went (in path
    # order, after the merged edges)
    spans: list[tuple[int, int, int, int]] = []
    n_merged = len(merged)
    if spliced is not None:
        hub_at = _HubAt(edges, n_merged, n_merged, facts)
        for src in sorted(moved_sources):
            span = spliced.span(src, run)
            if span[1] > span[0] or span[3] > span[2]:
                spans.append(span)
            if src in facts:
                spans.append(spliced.member(src, hub_at))
    else:
        assert general is not None and paths is not None
        for src in sorted(moved_sources):
            at = general.spans.get(src)
            if at is not None and (at[1] > at[0] or at[3] > at[2]):  # (none: no run in either build)
                spans.append(at)
        new_order = sorted(paths)
        for p in sorted({p for p in moved_sources if p in previous or p in facts} | added | gone):
            oi = general.n_old_merged + bisect.bisect_left(general.old_order, p)
            ni = n_merged + bisect.bisect_left(new_order, p)
            spans.append((oi, oi + (p in previous), ni, ni + (p in facts)))
    spans.sort()
    graph.spliced = (len(prior.edges), spans)
    graph.moved = (frozenset(moved_nodes), frozenset(moved_sources),
                   tuple(i for _, _, a, b in spans for i in range(a, b)))
    return graph


def _owned(n: int, noun: str) -> str:
    """"1 file's", "3 files'": ``n`` of ``noun`` in the possessive."""
    return f"{n:,} {noun}'s" if n == 1 else f"{n:,} {noun}s'"


def _files(n: int) -> str:
    return _owned(n, "file")
