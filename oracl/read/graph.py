"""Graph primitives over one build (a ``Snapshot``): trace, related, hub, show, fragment,
and the staleness check every answer carries. Every parameter they use or show (the query
guard, the priority cap, α) comes from the build's header.

>>> with Snapshot.open(Path(".")) as snap:                                # doctest: +SKIP
...     related(snap, "oracl/core/sign.py", k=5)["neighbours"][0]["path"]
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import orjson

from oracl.core import derive
from oracl.core.config import NOT_STRUCTURAL
from oracl.core.errors import QueryError, UnsafePathError, in_range
from oracl.core.export import r9
from oracl.core.locate import candidates, nearest, under
from oracl.core.paths import BUCKET_WEIGHTS, iso
from oracl.read.snapshot import Snapshot

DIRECTIONS = ("out", "in", "both")
MAX_DEPTH = 5
MAX_K = 500  # neighbours, hub members: the most one answer lists
MAX_FRAGMENT_LINES = 2000  # a fragment without a range shows at most this many lines
_RANGE = re.compile(r"^L?(\d+)(?:\s*[-:]\s*L?(\d+))?$")
_FRAGMENT = re.compile(r"L(\d+)(?:-(\d+))?")


def _artifact(snap: Snapshot, path: str, cwd: Path | None = None) -> dict[str, Any]:
    """The artifact ``path`` names: absolute, relative to ``cwd`` or to the root. A path
    the build does not hold is a QueryError naming the nearest indexed paths (or, for a
    folder, files inside it)."""
    tried = candidates(path, snap.root, cwd)
    for rel in tried:
        rows = snap.named("artifact_by_path", {"path": rel})
        if rows:
            return rows[0]
    known = snap.built_files()[1]
    for rel in tried:
        inside = under(rel, known)
        if inside:
            raise QueryError(f"{path!r} is a folder, not a file of the build; files in it: " + ", ".join(inside))
    near = nearest(tried[0] if tried else path, known)
    hint = ("; nearest indexed paths: " + ", ".join(near)) if near else \
        " (run `oracl query` to find a file by its words)"
    raise QueryError(f"{path!r} is not in the latest build{hint}")


def merge_fragments(fragments: list[str]) -> list[str]:
    """Line fragments sorted and merged where they touch or overlap; other fragments kept
    after them in their first order.

    >>> merge_fragments(["L35-35", "L38-38", "L37-37", "L36-36", "L90-99", "§Usage"])
    ['L35-38', 'L90-99', '§Usage']
    """
    spans: list[tuple[int, int]] = []
    other: list[str] = []
    for f in fragments:
        m = _FRAGMENT.fullmatch(f)
        if m:
            spans.append((int(m.group(1)), int(m.group(2) or m.group(1))))
        elif f and f not in other:
            other.append(f)
    merged: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return [f"L{a}-{b}" for a, b in merged] + other


def group_parallel(edges: list[dict[str, Any]], key: tuple[str, ...]) -> list[dict[str, Any]]:
    """Edges equal on ``key`` as one row: the highest weight and rank, every fragment
    (``fragments``, merged), in first-seen order."""
    grouped: dict[tuple[Any, ...], dict[str, Any]] = {}
    for e in edges:
        frag = e["source_fragment"] if e.get("direction", "out") == "out" else e["target_fragment"]
        g = grouped.get(tuple(e[k] for k in key))
        if g is None:
            grouped[tuple(e[k] for k in key)] = g = {**e, "fragments": []}
        g["weight"], g["rank"] = max(g["weight"], e["weight"]), max(g["rank"], e["rank"])
        if frag:
            g["fragments"].append(frag)
    for g in grouped.values():
        g["fragments"] = merge_fragments(g["fragments"])
    return list(grouped.values())


def staleness(snap: Snapshot, rows: list[tuple[str, str]]) -> dict[str, str]:
    """For each (path, checksum at build time): ``fresh``, ``modified``, ``deleted``,
    ``refused`` (no longer a regular file inside the root) or ``unreadable``. Only the
    files named are hashed, streamed through the snapshot's ``Workspace``."""
    out: dict[str, str] = {}
    for path, checksum in rows:
        try:
            digest = snap.workspace.sha256(path)
        except FileNotFoundError:
            out[path] = "deleted"
            continue
        except UnsafePathError:
            out[path] = "refused"
            continue
        except OSError:
            out[path] = "unreadable"
            continue
        out[path] = "fresh" if not checksum or digest == checksum else "modified"
    return out


def summary(stale: dict[str, str]) -> str:
    changed = {k: v for k, v in stale.items() if v != "fresh"}
    if not changed:
        return "fresh: the files named are unchanged since the build"
    return f"stale: {len(changed)} of {len(stale)} named files changed since the build (" + ", ".join(
        f"{p} {s}" for p, s in sorted(changed.items())[:5]) + (" …" if len(changed) > 5 else "") + ")"


TRACE_LIMIT = 50            # branches `trace` draws unless asked for more
NO_SKIP: dict[str, list[str]] = {"skip_out": [], "skip_in": []}  # every relation (the neighbourhood graph)


def trace(snap: Snapshot, path: str, direction: str = "out", depth: int = 2,
          relation: str | None = None, cwd: Path | None = None, limit: int = TRACE_LIMIT,
          cochange: bool = False) -> dict[str, Any]:
    """The dependency tree of ``path``: edges out (what it uses), in (what uses it) or both,
    breadth-first to ``depth``; a node already shown is listed again as a cycle/repeat
    marker but not expanded twice. At most ``limit`` branches are drawn, each level's
    best-ranked first (only the files drawn are followed), and ``total`` counts the
    branches found; co-change edges only with ``cochange`` (or ``relation="co_change"``),
    ``cochange_left_out`` counting those not followed."""
    if direction not in DIRECTIONS:
        raise QueryError(f"--direction must be one of {', '.join(DIRECTIONS)}")
    in_range("--depth", depth, 1, MAX_DEPTH)
    in_range("--limit", limit, 1, MAX_K)
    skip = frozenset() if cochange or relation in NOT_STRUCTURAL else NOT_STRUCTURAL
    start = _artifact(snap, path, cwd)
    shown = total = left_out = 0  # left_out: co-change branches not followed
    seen = {start["path"]}
    frontier = [start["path"]]
    order = [start["path"]]  # the nodes of the last level in the order they are drawn
    levels: list[list[dict[str, Any]]] = []
    for _ in range(depth):
        edges: list[dict[str, Any]] = []
        if direction in ("out", "both"):
            edges += [dict(e, direction="out", node=e["target"], parent=e["source"])
                      for e in snap.named("links_out", {"paths": frontier})]
        if direction in ("in", "both"):
            edges += [dict(e, direction="in", node=e["source"], parent=e["target"])
                      for e in snap.named("links_in", {"paths": frontier})]
        kept = [e for e in edges if (e["relation"] == relation if relation else e["relation"] not in skip)]
        left_out += len({(e["parent"], e["node"]) for e in edges if e["relation"] in skip and not relation})
        edges = kept
        # parallel edges (one import line naming three symbols) are one branch with their
        # fragments; a level is ordered as it is drawn (by its parent's place, then rank)
        edges = group_parallel(edges, ("direction", "parent", "node", "relation"))
        total += len(edges)
        edges = sorted(edges, key=lambda e: (-e["rank"], e["node"], e["relation"], e["parent"]))[: limit - shown]
        shown += len(edges)
        place = {p: i for i, p in enumerate(order)}
        edges.sort(key=lambda e: (place.get(e["parent"], len(place)), -e["rank"], e["node"], e["relation"]))
        nxt: list[str] = []
        for e in edges:
            e["repeat"] = e["node"] in seen
            if not e["repeat"]:
                seen.add(e["node"])
                nxt.append(e["node"])
        levels.append(edges)
        frontier, order = sorted(set(nxt)), nxt
        if not frontier or shown >= limit:
            break
    checksums = {start["path"]: start["checksum"]}
    return {"build_id": snap.build_id, "root": start["path"], "direction": direction, "depth": depth,
            "relation": relation, "levels": levels, "nodes": len(seen), "limit": limit, "shown": shown,
            "total": total, "cochange": not skip, "cochange_left_out": left_out, "notices": list(snap.notices),
            "staleness": summary(staleness(snap, list(checksums.items())))}


def _neighbour_rows(rows: list[dict[str, Any]], k: int, guard: int) -> tuple[list[dict[str, Any]], bool]:
    cut = len(rows) > guard
    merged: dict[str, dict[str, Any]] = {}
    for r in rows[: guard] if cut else rows:
        best = merged.get(r["neighbour"])
        if best is None or r["rank"] > best["rank"]:
            merged[r["neighbour"]] = {**r, "relations": sorted({r["relation"]} | set(best["relations"] if best else []))}
        else:
            best["relations"] = sorted(set(best["relations"]) | {r["relation"]})
    ordered = sorted(merged.values(), key=lambda r: (-r["rank"], -(r["priority"] or 0.0), r["neighbour"]))
    return ordered[:k], cut


def _own_fragment(row: dict[str, Any]) -> str:
    """The fragment of a ``neighbours`` row on the queried file's side: where it points
    (outgoing: the source's lines) or where it is pointed at (incoming: the target's).

    >>> _own_fragment({"outgoing": False, "source_fragment": "L1-1", "target_fragment": "L5-7"})
    'L5-7'
    """
    return str(row["source_fragment"] if row["outgoing"] else row["target_fragment"])


def related(snap: Snapshot, path: str, k: int = 10, cwd: Path | None = None, cochange: bool = False) -> dict[str, Any]:
    """The neighbourhood of ``path`` ordered by association_rank (top-k); at most the
    build's query guard of edges are considered, and the answer says when it cut the list.
    Co-change neighbours only with ``cochange``: structural relations by default."""
    in_range("--limit", k, 1, MAX_K)
    guard = snap.params.query_guard
    art = _artifact(snap, path, cwd)
    skip = [] if cochange else sorted(NOT_STRUCTURAL)
    rows = snap.named("neighbours", {"path": art["path"], "guard": guard + 1, "skip_out": skip, "skip_in": list(skip)})
    hub = snap.named("hub_of", {"path": art["path"]})
    if hub:
        rows.append({"neighbour": hub[0]["hub"], "relation": "belongs_to", "rank": hub[0]["rank"],
                     "weight": hub[0]["weight"], "outgoing": True, "source_fragment": "", "target_fragment": "",
                     "domain": art["domain"], "priority": None})
    rows.sort(key=lambda r: (-r["rank"], r["neighbour"]))
    top, cut = _neighbour_rows(rows, k, guard)
    return {"build_id": snap.build_id, "path": art["path"], "k": k, "cochange": cochange, "guard": guard,
            "guard_cut": cut,
            "neighbours": [{"path": r["neighbour"], "rank": r["rank"], "relations": r["relations"],
                            "direction": "out" if r["outgoing"] else "in", "weight": r["weight"],
                            "fragment": _own_fragment(r)}
                           for r in top],
            "notices": list(snap.notices), "staleness": summary(staleness(snap, [(art["path"], art["checksum"])]))}


GRAPH_NEIGHBOURS = 40  # neighbours drawn around the centre of a neighbourhood graph
GRAPH_EXPANDED = 8     # at depth 2: the strongest this many neighbours are expanded…
GRAPH_EACH = 8         # …each by its this many strongest neighbours
# a bounded read takes this many rows a neighbour wanted, each way (parallel edges share one)
PARALLEL_SLACK = 4
# a frontier file with more edges than this (estimated from its link density) is read by its
# best PARALLEL_SLACK × GRAPH_EACH rows each way, not whole: ~1,000 rows cost one bounded query
FRONTIER_WIDE = 1_000


def _strongest(rows: list[dict[str, Any]], per: int) -> list[str]:
    """The ``per`` neighbours with the best-ranked edge among ``rows`` (ties by path)."""
    best: dict[str, float] = {}
    for r in rows:
        best[r["neighbour"]] = max(best.get(r["neighbour"], r["rank"]), r["rank"])
    return sorted(best, key=lambda n: (-best[n], n))[:per]


def neighbourhood(snap: Snapshot, path: str, depth: int = 1, k: int = GRAPH_NEIGHBOURS,
                  cwd: Path | None = None) -> dict[str, Any]:
    """The file ``path`` and its strongest neighbours as a drawable graph: ``nodes`` (the
    depth each was reached at, the rank of its strongest edge and that edge's relation,
    its priority and domain) and ``edges`` (source, target, relation, weight, rank and
    merged fragments; parallel edges are one). Depth 1 draws the ``k`` neighbours with the
    best-ranked edges, both directions, and the file's hub; depth 2 also expands the
    strongest ``GRAPH_EXPANDED`` of them by the edges to their ``GRAPH_EACH`` strongest
    neighbours (drawn already or new). At most the build's query guard of edges is read for the centre;
    ``cut`` and ``cut_note`` say when edges were left out, with the totals."""
    if depth not in (1, 2):
        raise QueryError("--depth must be 1 or 2")
    in_range("-k", k, 1, MAX_K)
    guard = snap.params.query_guard
    art = _artifact(snap, path, cwd)
    centre = art["path"]
    nodes: dict[str, dict[str, Any]] = {centre: {
        "id": centre, "kind": "file", "depth": 0, "rank": 1.0, "priority": art["priority"],
        "domain": art["domain"], "relation": "", "more": False}}
    edges: dict[tuple[str, str, str], dict[str, Any]] = {}

    def draw(at: str, rows: list[dict[str, Any]], keep: list[str], level: int) -> None:
        for r in sorted(rows, key=lambda r: (-r["rank"], r["neighbour"], r["relation"])):
            other = r["neighbour"]
            if other not in keep:
                continue
            if other not in nodes:
                nodes[other] = {"id": other, "kind": "file", "depth": level, "rank": r["rank"],
                                "priority": r.get("priority"), "domain": r.get("domain"),
                                "relation": r["relation"], "more": False}
            source, target = (at, other) if r["outgoing"] else (other, at)
            e = edges.setdefault((source, target, r["relation"]), {
                "source": source, "target": target, "relation": r["relation"], "weight": r["weight"],
                "rank": r["rank"], "fragments": []})
            e["weight"], e["rank"] = max(e["weight"], r["weight"]), max(e["rank"], r["rank"])
            if r["fragment"]:
                e["fragments"].append(r["fragment"])

    degree = snap.named("degree", {"path": centre})[0]
    sides = {True: degree["outgoing"], False: degree["incoming"]}
    guard_cut = any(n > guard for n in sides.values())
    # the centre's best rows each way: 4 k first (parallel edges share a neighbour); the
    # whole guard only when a side was cut before it showed k different neighbours
    limit = min(PARALLEL_SLACK * k, guard)
    rows = snap.named("neighbours", {"path": centre, "guard": limit, **NO_SKIP})
    if any(n > limit and len({r["neighbour"] for r in rows if r["outgoing"] is side}) < k
           for side, n in sides.items()) and limit < guard:
        rows = snap.named("neighbours", {"path": centre, "guard": guard, **NO_SKIP})
    rows = [dict(r, fragment=_own_fragment(r)) for r in rows]
    first = _strongest(rows, k)
    draw(centre, rows, first, 1)
    total = degree["outgoing"] + degree["incoming"]
    nodes[centre]["more"] = len(first) < len({r["neighbour"] for r in rows}) or len(rows) < total
    hub_rows = snap.named("hub_of", {"path": centre})
    if hub_rows:
        h = hub_rows[0]
        nodes[h["hub"]] = {"id": h["hub"], "kind": "hub", "depth": 1, "rank": h["rank"], "priority": None,
                           "domain": art["domain"], "relation": "belongs_to", "more": False}
        edges[(centre, h["hub"], "belongs_to")] = {"source": centre, "target": h["hub"], "relation": "belongs_to",
                                                   "weight": h["weight"], "rank": h["rank"], "fragments": []}
    if depth == 2 and first:
        frontier = first[:GRAPH_EXPANDED]
        others = max(0, int(snap.header.get("counts", {}).get("nodes", 0)) - 1)
        density = {r["neighbour"]: r.get("density") or 0.0 for r in rows}
        wide = {at for at in frontier if density[at] * others > FRONTIER_WIDE}
        narrow = [at for at in frontier if at not in wide]
        around: dict[str, list[dict[str, Any]]] = defaultdict(list)
        if narrow:
            for r in snap.named("frontier_out", {"paths": narrow}) + snap.named("frontier_in", {"paths": narrow}):
                around[r["at"]].append(r)
        for at in sorted(wide):  # a hub-like file: its best rows only, as the centre's
            around[at] = [dict(r, at=at, fragment=_own_fragment(r))
                          for r in snap.named("neighbours", {"path": at, "guard": PARALLEL_SLACK * GRAPH_EACH, **NO_SKIP})]
        for at in frontier:
            near = [r for r in around[at] if r["neighbour"] != centre]
            keep = _strongest(near, GRAPH_EACH)  # drawn already or new: its best edges only
            draw(at, near, keep, 2)
            nodes[at]["more"] = at in wide or len({r["neighbour"] for r in near}) > len(keep)
    drawn = sum(1 for (s, t, rel) in edges if centre in (s, t) and rel != "belongs_to")
    note = ""
    if nodes[centre]["more"]:
        note = (f"{centre} has {total:,} edges ({degree['outgoing']:,} out, {degree['incoming']:,} in); the "
                f"{len(first)} files with the best-ranked edges are drawn ({drawn:,} edges)"
                + (f"; the query guard ({guard:,} edges a direction) applied" if guard_cut else ""))
    elif any(n["more"] for n in nodes.values()):
        note = "a node with a dashed border has neighbours that are not drawn"
    for e in edges.values():
        e["fragments"] = merge_fragments(e["fragments"])
    return {"build_id": snap.build_id, "path": centre, "depth": depth, "k": k, "guard": guard,
            "nodes": sorted(nodes.values(), key=lambda n: (n["depth"], -n["rank"], n["id"])),
            "edges": sorted(edges.values(), key=lambda e: (-e["rank"], e["source"], e["target"], e["relation"])),
            "degree": {"outgoing": degree["outgoing"], "incoming": degree["incoming"]}, "guard_cut": guard_cut,
            "cut": any(n["more"] for n in nodes.values()), "cut_note": note, "notices": list(snap.notices),
            "staleness": summary(staleness(snap, [(centre, art["checksum"])]))}


def hub(snap: Snapshot, domain: str | None = None, k: int = 20) -> dict[str, Any]:
    """Without a domain: every hub with member count, mean priority and top member. With
    one: its members ranked by the association rank of their hub edge (like ``related``
    on ``hub:domain:<d>``)."""
    in_range("-k", k, 1, MAX_K)
    guard = snap.params.query_guard
    hubs = snap.hubs()
    if domain is None:
        return {"build_id": snap.build_id, "hubs": hubs, "notices": list(snap.notices)}
    d = domain.removeprefix("hub:domain:").removeprefix("hub:").lower()
    hub_id = f"hub:domain:{d}"
    known = {h["hub"] for h in hubs}
    if hub_id not in known:
        names = ", ".join(sorted(h.removeprefix("hub:domain:") for h in known)[:20])
        raise QueryError(f"no domain {d!r} in the latest build; domains: {names}")
    total = next(h["members"] for h in hubs if h["hub"] == hub_id)
    # the ranking runs in Cypher over every member; only the top k rows come back
    members = snap.named("hub_members", {"hub": hub_id, "k": min(k, guard)})
    return {"build_id": snap.build_id, "hub": hub_id, "k": k, "guard": guard, "guard_cut": total > guard,
            "members": [{"path": r["neighbour"], "rank": r["rank"], "priority": r["priority"]} for r in members],
            "total": total, "notices": list(snap.notices)}


SHOWN_EVENTS = 10


def events_about(snap: Snapshot, path: str) -> dict[str, Any]:
    """The file's recent events (phase 6: tests, findings, notes; newest first) and the tests
    whose recorded coverage runs it."""
    rows = snap.events_on([path]).get(path, [])
    covering = sorted({(r.get("artifacts") or {}).get("test", "") for r in rows if r.get("kind") == "coverage"} - {""})
    recent = [{k: r.get(k) for k in ("kind", "decision", "summary", "timestamp_utc", "weight", "stale")}
              for r in rows if r.get("kind") != "coverage"][:SHOWN_EVENTS]
    return {"recent": recent, "count": len(rows), "covered_by": covering}


EVENT_KINDS = ("test", "finding", "coverage", "note")


def events(snap: Snapshot, path: str | None = None, kind: str | None = None, decision: str | None = None,
           k: int = 50, cwd: Path | None = None) -> dict[str, Any]:
    """The build's sensor events (phase 6), newest first: of one file, of a kind (test,
    finding, coverage, note), of a decision (pass, fail, go, no-go)."""
    in_range("k", k, 1, MAX_K)
    if kind is not None and kind not in EVENT_KINDS:
        raise QueryError(f"kind must be one of {', '.join(EVENT_KINDS)}")
    if path is not None:
        rel = _artifact(snap, path, cwd)["path"]
        rows = list(snap.events_on([rel]).get(rel, []))
    else:
        by_path = snap.events()
        rows = sorted((r for rs in by_path.values() for r in rs),
                      key=lambda r: (r.get("timestamp_utc", ""), r.get("id", "")), reverse=True)
    rows = [r for r in rows if (kind is None or r.get("kind") == kind)
            and (decision is None or r.get("decision") == decision)]
    head = snap.header.get("events") or {}
    return {"build_id": snap.build_id, "events": rows[:k], "total": len(rows), "summary": head,
            "notices": list(snap.notices)}


def learned_about(snap: Snapshot, path: str) -> list[dict[str, Any]]:
    """What the build merged from use about ``path`` (design §9, "Learning"): the words
    people typed before using it, the files used with it, each with κ and its sessions."""
    learned = snap.learned()
    rows = [{"kind": "term", "term": stem, "confidence": k, "sessions": n}
            for stem, hits in learned.terms.items() for p, k, n in hits if p == path]
    rows += [{"kind": "association", "path": other, "confidence": k, "sessions": n}
             for other, k, n in learned.partners.get(path, [])]
    return sorted(rows, key=lambda r: (-r["confidence"], r["kind"], r.get("term") or r.get("path")))


def show(snap: Snapshot, path: str, cwd: Path | None = None) -> dict[str, Any]:
    """Every stored field, the tags, the incident edges by relation, and the priority
    breakdown (bucket, weight, signal, contribution, multipliers, cap, association, δ,
    final) from which the priority can be recomputed by hand."""
    art = _artifact(snap, path, cwd)
    params = snap.params
    detail = orjson.loads(art.pop("detail"))
    tags = orjson.loads(art["tags"])
    out_edges = snap.named("links_out", {"paths": [art["path"]]})
    in_edges = snap.named("links_in", {"paths": [art["path"]]})
    by_relation: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: {"out": [], "in": []})
    # one row per (relation, side, other file): an import line naming five symbols is
    # one edge with its fragments, not five rows
    for e in group_parallel([dict(x, direction="out") for x in out_edges], ("relation", "target")):
        by_relation[e["relation"]]["out"].append(e)
    for e in group_parallel([dict(x, direction="in") for x in in_edges], ("relation", "source")):
        by_relation[e["relation"]]["in"].append(e)
    hub_rows = snap.named("hub_of", {"path": art["path"]})
    # the row holds what the file and its edges determine; freshness, P0, δ and the priority
    # are derived from them and the build's terms (oracl/core/derive.py), as every reader does
    terms = snap.terms
    comps = {**detail["components"], "freshness": r9(derive.freshness(terms, art["fresh_e"]))}
    weighted = art["p_sum"] + derive.FRESH_W * derive.freshness(terms, art["fresh_e"])
    breakdown = {
        "buckets": [{"bucket": b, "weight": w, "signal": comps[b], "contribution": w * comps[b]}
                    for b, w in BUCKET_WEIGHTS.items()],
        "weighted_sum": weighted, "m_cls": detail["m_cls"], "m_sens": detail["m_sens"],
        "uncapped": weighted * art["p_mult"], "cap": params.priority_cap,
        "base": derive.base(terms, art["p_sum"], art["p_mult"], art["fresh_e"]), "alpha": params.alpha,
        "association": art["association"], "delta": art["delta"], "final": art["priority"],
        "mu": terms.mu, "sigma": terms.sigma,
        # Eq. 5 with the role multiplier (oracl/core/derive.py)
        "role": detail.get("role", "product"), "m_role": detail.get("m_role", 1.0),
        "formula": "m_role·(P0 + α·max(δ,0)) + α·min(δ,0)",
        "sensitivity": detail.get("sensitivity"), "risk_score": detail.get("risk_score"),
    }
    for key in ("created_at", "modified_at"):
        if hasattr(art[key], "isoformat"):
            art[key] = art[key].isoformat()
    art["symbols"] = orjson.loads(art["symbols"])
    art["headings"] = orjson.loads(art["headings"])
    art["tags"] = tags
    return {"build_id": snap.build_id, "artifact": art, "hub": hub_rows[0]["hub"] if hub_rows else None,
            "edges": {r: dict(v) for r, v in sorted(by_relation.items())}, "priority": breakdown,
            "learned": learned_about(snap, art["path"]), "events": events_about(snap, art["path"]),
            "notices": list(snap.notices), "staleness": summary(staleness(snap, [(art["path"], art["checksum"])]))}


def parse_range(spec: str) -> tuple[int, int]:
    """``L40-60``, ``40-60``, ``L40`` → (40, 60) / (40, 40)."""
    m = _RANGE.match(spec.strip())
    if not m:
        raise QueryError(f"a line range looks like L40-60, not {spec[:40]!r}")
    start = int(m.group(1))
    end = int(m.group(2) or start)
    if start < 1 or end < start:
        raise QueryError(f"the range {spec!r} is empty or starts before line 1")
    return start, end


def split_locator(locator: str, range_arg: str | None = None) -> tuple[str, tuple[int, int] | None]:
    """``PATH#L40-60`` or (``PATH``, ``L40-60``)."""
    if range_arg:
        return locator, parse_range(range_arg)
    if "#" in locator:
        path, _, spec = locator.rpartition("#")
        return path, parse_range(spec)
    return locator, None


def fragment(snap: Snapshot, locator: str, range_arg: str | None = None, context: int = 0,
             cwd: Path | None = None) -> dict[str, Any]:
    """The quoted lines of a file, with a warning when the file no longer matches the
    build (stale evidence) and a clear error for a range outside the file. Only the lines
    asked for are kept (the file is streamed, its digest taken on the way), and only a
    regular file inside the root is read."""
    in_range("--context", context, 0, MAX_FRAGMENT_LINES)
    path, rng = split_locator(locator, range_arg)
    art = _artifact(snap, path, cwd)
    rel = art["path"]
    start, end = rng or (1, MAX_FRAGMENT_LINES)
    first, last = max(1, start - context), end + context
    try:
        lines, total, digest, st = snap.workspace.read_lines(rel, first, last)
    except FileNotFoundError:
        raise QueryError(f"{rel} was deleted since the build") from None
    except OSError as exc:
        raise QueryError(f"cannot read {rel}: {exc.strerror}") from None
    if rng is not None and (start > total or end > total):
        raise QueryError(f"{rel} has {total} lines; L{start}-{end} is outside it")
    notices = list(snap.notices)
    if rng is None and total > len(lines):
        notices.append(f"{rel} has {total:,} lines; the first {len(lines):,} are shown: give a range for others")
    stale = digest != art["checksum"]
    warning = (f"{rel} changed since build {snap.build_id}: these lines may not be the ones the graph "
               "describes" if stale else "")
    return {"build_id": snap.build_id, "path": rel, "start": first if lines else 1, "end": first + len(lines) - 1,
            "lines": lines, "format": art["format"], "stale": stale, "warning": warning,
            "modified_at": iso(st.st_mtime_ns), "notices": notices}
