"""HTML for the web view, drawn from the page data of ``oracl.face.pages`` (never from the
database): a hub map, a hub's members, a file page, a neighbourhood graph, search, a
symbol's callers and callees, and a change's impact. Every value is escaped; pages carry
no inline script or style (the server's Content-Security-Policy forbids both), so charts
are SVG with presentation attributes and the graph is drawn by ``web/oracl.js`` with the
vendored Cytoscape.js from the data the JSON API gives.

``standalone_graph`` is the exception: one self-contained file (``oracl graph --html``)
with the stylesheet, Cytoscape.js, the script and the data inlined, for a review or a
README.

>>> squarify([6, 6, 4, 3, 2, 2, 1], 0, 0, 6, 4)[0]
(0, 0, 3.0, 2.0)
>>> colour(0.5), colour(0.125)
('#21918c', '#402a70')
"""

from __future__ import annotations

import re
from html import escape
from importlib.resources import files
from typing import Any
from urllib.parse import quote, urlencode

import orjson

ASSETS = files("oracl.face") / "web"
# one colour per relation (the graph's edges and nodes, and the legend): Okabe–Ito, which
# stays apart for the common colour-vision deficiencies
RELATION_COLOURS = {
    "imports": "#0072B2", "references": "#009E73", "tests": "#D55E00", "configures": "#CC79A7",
    "mentions": "#E69F00", "links": "#56B4E9", "co_change": "#999999", "belongs_to": "#000000",
}
OTHER_COLOUR = "#6b4f9e"
_LINE_FRAGMENT = re.compile(r"L\d+(-\d+)?")  # a fragment that is lines of this file (either side's)
# the hub map's scale, low to high mean priority (viridis, five stops)
SCALE = ("#440154", "#3b528b", "#21918c", "#5ec962", "#fde725")


def colour(t: float) -> str:
    """The scale's colour at ``t`` in [0, 1] (linear between stops)."""
    t = min(1.0, max(0.0, t)) * (len(SCALE) - 1)
    i = min(int(t), len(SCALE) - 2)
    a, b = SCALE[i], SCALE[i + 1]
    f = t - i
    mix = [round(int(a[j:j + 2], 16) * (1 - f) + int(b[j:j + 2], 16) * f) for j in (1, 3, 5)]
    return "#" + "".join(f"{v:02x}" for v in mix)


def _dark(hex_colour: str) -> bool:
    r, g, b = (int(hex_colour[j:j + 2], 16) for j in (1, 3, 5))
    return 0.299 * r + 0.587 * g + 0.114 * b < 140


def squarify(sizes: list[float], x: float, y: float, w: float, h: float) -> list[tuple[float, float, float, float]]:
    """Rectangles (x, y, w, h) tiling the box, one per size (sorted largest first), each
    with an area proportional to its size and a ratio near 1 (Bruls, Huizing and van
    Wijk's squarified treemap)."""
    total = sum(sizes)
    if not sizes or total <= 0:
        return []
    scale = w * h / total
    areas = [s * scale for s in sizes]
    out: list[tuple[float, float, float, float]] = []

    def worst(row: list[float], side: float) -> float:
        s = sum(row)
        return max(max(side * side * r / (s * s), (s * s) / (side * side * r)) for r in row)

    row: list[float] = []
    i = 0
    while i < len(areas):
        side = min(w, h)
        a = areas[i]
        if not row or worst(row + [a], side) <= worst(row, side):
            row.append(a)
            i += 1
            if i < len(areas):
                continue
        # lay the row along the shorter side
        s = sum(row)
        if w >= h:
            col_w = s / h
            yy = y
            for r in row:
                out.append((x, yy, col_w, r / col_w))
                yy += r / col_w
            x, w = x + col_w, w - col_w
        else:
            row_h = s / w
            xx = x
            for r in row:
                out.append((xx, y, r / row_h, row_h))
                xx += r / row_h
            y, h = y + row_h, h - row_h
        row = []
    return out


# -- pieces --------------------------------------------------------------------------------

_UNSHOWN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _e(value: Any) -> str:
    """HTML text: escaped, and a control or bidirectional character shown as ``\\uNNNN``
    (an entity would still reverse the name)."""
    text = _UNSHOWN.sub(lambda m: f"\\u{ord(m.group()):04x}", "" if value is None else str(value))
    return escape(text, quote=True)


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, list):
        return ", ".join(str(x) for x in v)
    return str(v)


def _num(value: Any, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def file_url(path: str) -> str:
    return "/file/" + quote(path)


def graph_url(path: str, depth: int = 1) -> str:
    return "/graph/" + quote(path) + (f"?depth={depth}" if depth != 1 else "")


def hub_url(hub_id: str) -> str:
    return "/hub/" + quote(hub_id.removeprefix("hub:domain:"))


def symbol_url(name: str) -> str:
    return "/symbol/" + quote(name)


def _file_link(path: str) -> str:
    return f'<a class="path" href="{_e(file_url(path))}">{_e(path)}</a>'


def _table(cls: str, head: list[str], rows: list[list[str]]) -> str:
    """A table; cells are HTML already escaped by the caller."""
    th = "".join(f"<th>{_e(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>'


def _notes(data: dict[str, Any]) -> str:
    lines = list(data.get("notices") or [])
    if data.get("staleness") and not str(data["staleness"]).startswith("fresh"):
        lines.append(data["staleness"])
    return "".join(f'<p class="notice">{_e(n)}</p>' for n in lines)


def layout(title: str, data: dict[str, Any], body: str, *, q: str = "") -> str:
    """The page around ``body``: the bar (hub map, search), and the build's id, time,
    commit and the tree's freshness."""
    b = data["build"]
    fresh = str(b["freshness"])
    state = "fresh" if fresh.startswith("fresh") else ("stale" if fresh.startswith("stale") else "unknown")
    commit = f' · commit <code>{_e(str(b["source_commit"])[:12])}</code>' if b.get("source_commit") else ""
    notices = "".join(f'<p class="notice">{_e(n)}</p>' for n in b.get("notices") or [])
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(title)} · ORACL</title>
<link rel="stylesheet" href="/static/oracl.css">
<script src="/static/cytoscape.min.js" defer></script>
<script src="/static/oracl.js" defer></script>
</head><body>
<header class="bar"><a class="brand" href="/">ORACL</a>
<span class="root" title="{_e(b['root'])}">{_e(b['root'].rstrip('/').rsplit('/', 1)[-1])}</span>
<a href="/">Hub map</a> <a href="/learn">Learned</a>
<form class="search" action="/search" method="get" role="search">
<input type="search" name="q" value="{_e(q)}" placeholder="search the memory" aria-label="search text">
<button type="submit">Search</button></form></header>
<div class="build" id="build">build <code id="build-id">{_e(b['build_id'])}</code> · built
<time>{_e(b['generated_at'])}</time>{commit} · <span class="freshness {state}" id="freshness">{_e(fresh)}</span></div>
{notices}
<main>
{body}
</main>
</body></html>
"""


# -- pages ---------------------------------------------------------------------------------

def hubs_page(data: dict[str, Any]) -> str:
    hubs = data["hubs"]
    lo, hi = data["priority_range"]
    span = (hi - lo) or 1.0
    width, height = 960.0, 480.0
    boxes = squarify([max(h["members"], 1) for h in hubs], 0, 0, width, height)
    cells = []
    for h, (x, y, w, hh) in zip(hubs, boxes, strict=False):
        t = 0.5 if h["mean_priority"] is None else (h["mean_priority"] - lo) / span
        fill = colour(t)
        ink = "#ffffff" if _dark(fill) else "#111111"
        label = h["domain"]
        size = max(10.0, min(28.0, min(w / max(len(label), 4) * 1.6, hh / 3)))
        fits = w >= len(label) * size * 0.62 + 8 and hh >= size + 8  # else the tooltip and the table name it
        cells.append(
            f'<a href="{_e(hub_url(h["hub"]))}" class="hub" data-hub="{_e(h["hub"])}">'
            f'<title>{_e(h["hub"])}: {h["members"]} members, mean priority {_num(h["mean_priority"])}, '
            f'top member {_e(h["top_member"])}</title>'
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{hh:.1f}" fill="{fill}"/>'
            + (f'<text x="{x + 6:.1f}" y="{y + size + 4:.1f}" font-size="{size:.0f}" fill="{ink}">{_e(label)}</text>'
               if fits else "")
            + (f'<text x="{x + 6:.1f}" y="{y + 2 * size + 6:.1f}" font-size="{size * 0.6:.0f}" fill="{ink}">'
               f'{h["members"]} · {_num(h["mean_priority"], 2)}</text>' if fits and hh > 2.6 * size and w > 60 else "")
            + "</a>")
    stops = "".join(f'<rect x="{i * 40}" y="0" width="40" height="12" fill="{colour(i / 7)}"/>' for i in range(8))
    legend = (f'<figure class="legend"><svg width="320" height="12" role="img" aria-label="colour scale">{stops}</svg>'
              f'<figcaption>mean priority {_num(lo, 2)} → {_num(hi, 2)}; area: members</figcaption></figure>')
    rows = [[f'<a href="{_e(hub_url(h["hub"]))}">{_e(h["domain"])}</a>', str(h["members"]),
             _num(h["mean_priority"]), _file_link(h["top_member"])] for h in hubs]
    body = (f'<h1>Hub map <small>{len(hubs)} domain hubs</small></h1>'
            f'<svg class="treemap" id="hub-map" viewBox="0 0 {width:.0f} {height:.0f}" role="img" '
            f'aria-label="domain hubs sized by members, coloured by mean priority">{"".join(cells)}</svg>{legend}'
            + _table("hubs", ["hub", "members", "mean priority", "top member"], rows) + _notes(data))
    return layout("Hub map", data, body)


def hub_page(data: dict[str, Any]) -> str:
    rows = [[str(i), _file_link(m["path"]), _num(m["rank"]), _num(m["priority"]),
             f'<a href="{_e(graph_url(m["path"]))}">graph</a>'] for i, m in enumerate(data["members"], 1)]
    cut = (f'<p class="notice">the hub has more members than the query guard ({data["guard"]:,}) lets a '
           'query rank; the first are shown</p>' if data.get("guard_cut") else "")
    body = (f'<h1>Hub <code>{_e(data["hub"])}</code> <small>{len(data["members"])} of {data["total"]} '
            'members, best-ranked first</small></h1>' + cut
            + _table("members", ["#", "member", "rank", "priority", ""], rows) + _notes(data))
    return layout(data["hub"], data, body)


def _chart(priority: dict[str, Any]) -> str:
    """The twelve buckets as horizontal bars: each bucket's weighted contribution (filled)
    against its weight (outlined), the signal as a number."""
    buckets = priority["buckets"]
    width, row, label = 640, 22, 130
    scale = (width - label - 170) / max(b["weight"] for b in buckets)
    bars = []
    for i, b in enumerate(buckets):
        y = i * row
        bars.append(
            f'<g class="bucket" data-bucket="{_e(b["bucket"])}">'
            f'<text x="0" y="{y + 15}" class="label">{_e(b["bucket"])}</text>'
            f'<rect x="{label}" y="{y + 4}" width="{b["weight"] * scale:.1f}" height="14" class="weight"/>'
            f'<rect x="{label}" y="{y + 4}" width="{max(b["contribution"], 0) * scale:.1f}" height="14" class="part"/>'
            f'<text x="{label + b["weight"] * scale + 8:.1f}" y="{y + 15}" class="value">'
            f'{b["signal"]:.3f} × {b["weight"]:.2f} = {b["contribution"]:.4f}</text></g>')
    p = priority
    formula = (f"Σ {p['weighted_sum']:.4f} × m_cls {p['m_cls']:g} × m_sens {p['m_sens']:g} = {p['uncapped']:.4f}; "
               f"cap {p['cap']:g} → base {p['base']:.4f}; α {p['alpha']:g}, association {p['association']:.4f}, "
               f"δ {p['delta']:.4f} → priority {p['final']:.4f}")
    return (f'<svg class="chart" id="priority-chart" width="{width}" height="{len(buckets) * row}" role="img" '
            f'aria-label="priority by bucket">{"".join(bars)}</svg><p class="formula">{_e(formula)}</p>')


def file_page(data: dict[str, Any]) -> str:
    art = data["artifact"]
    path = art["path"]
    raw = art["tags"]
    pairs = raw.items() if isinstance(raw, dict) else ((t, None) for t in raw)
    tags = "".join(f'<li class="tag">{_e(k)}' + ("" if v is None else f" <b>{_e(_value(v))}</b>") + "</li>"
                   for k, v in pairs)
    fields = [("domain", art["domain"]), ("type", art["content_type"]), ("format", art["format"]),
              ("lifecycle", art["lifecycle"]), ("classification", art["classification"]),
              ("priority", _num(art["priority"], 4)), ("lines", art["line_count"]), ("bytes", art["size_bytes"]),
              ("modified", art["modified_at"]), ("checksum", art["checksum"]), ("hub", data.get("hub") or "–")]
    kv = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in fields)
    sym_rows = [[_e(s["kind"]), _symbol_link(s),
                 f'<a href="#L{s["start"]}">L{s["start"]}-{s["end"]}</a>'] for s in data["symbol_rows"]]
    symbols = (_table("symbols", ["kind", "symbol (callers and callees)", "lines"], sym_rows) if sym_rows
               else '<p class="muted">no symbols</p>')
    edge_html = []
    for relation, sides in data["edges"].items():
        rows = []
        for side in ("out", "in"):
            for e in sides[side]:
                other = e["target"] if side == "out" else e["source"]
                frags = " ".join(
                    f'<a href="#L{f[1:].split("-")[0]}">{_e(f)}</a>' if _LINE_FRAGMENT.fullmatch(f)
                    else _e(f) for f in e["fragments"])
                rows.append([("→" if side == "out" else "←"), _file_link(other), _num(e["weight"]),
                             _num(e["rank"]), frags])
        edge_html.append(f'<h3>{_swatch(relation)}{_e(relation)} '
                         f'<small>{len(rows)}</small></h3>'
                         + _table("edges", ["", "file", "weight", "rank", "fragments"], rows))
    text = data["text"]
    marks = data["marks"]
    lines = []
    for n, line in enumerate(text["lines"], text["start"]):
        rels = marks.get(str(n))
        cls = ' class="hit"' if rels else ""
        title = f' title="{_e(", ".join(rels))}"' if rels else ""
        lines.append(f'<span id="L{n}"{cls}{title}><a href="#L{n}" class="ln">{n}</a>{_e(line)}\n</span>')
    text_notes = "".join(f'<p class="notice">{_e(n)}</p>' for n in text["notices"])
    warn = f'<p class="notice">{_e(text["warning"])}</p>' if text["warning"] else ""
    body = f"""<h1><code>{_e(path)}</code></h1>
<p class="links"><a href="{_e(graph_url(path))}">neighbourhood graph</a> ·
<a href="{_e(graph_url(path, 2))}">depth 2</a> · <a href="/impact/{_e(quote(path))}">impact of a change</a></p>
<p class="staleness">{_e(data['staleness'])}</p>
<ul class="tags">{tags}</ul>
<div class="cols"><section><h2>Fields</h2><table class="kv">{kv}</table></section>
<section><h2>Priority</h2>{_chart(data['priority'])}</section></div>
<section><h2>Neighbourhood</h2>{_graph_div(graph_api(path, 1), set(data['edges']) | {"belongs_to"}, walk=True)}</section>
<section><h2>Symbols</h2>{symbols}</section>
<section><h2>Edges by relation</h2>{"".join(edge_html) or '<p class="muted">no edges</p>'}</section>
{_events_html(data.get("events") or {})}
<section><h2>Text</h2>{warn}{text_notes}<pre class="text" id="text">{"".join(lines)}</pre></section>
{_notes(data)}"""
    return layout(path, data, body)


def _events_html(events: dict[str, Any]) -> str:
    """A file's recent events and its covering tests (phase 6), when it has any."""
    if not events.get("recent") and not events.get("covered_by"):
        return ""
    rows = [[_e(e["timestamp_utc"]), _e(e["kind"]), _e(e["decision"]),
             _num(e["weight"]) + (' <span class="stale">stale</span>' if e["stale"] else ""), _e(e["summary"])]
            for e in events["recent"]]
    covered = "".join(f"<li><code>{_e(t)}</code></li>" for t in events["covered_by"][:50])
    return (f'<section id="events"><h2>Events <small>{events["count"]} · newest first</small></h2>'
            + (_table("events", ["when", "kind", "decision", "weight", "summary"], rows) if rows else "")
            + (f'<h3>Covered by</h3><ul class="covering">{covered}</ul>' if covered else "") + "</section>")


def graph_api(path: str, depth: int) -> str:
    return "/api/graph/" + quote(path) + "?" + urlencode({"depth": depth})


def _swatch(relation: str) -> str:
    fill = RELATION_COLOURS.get(relation, OTHER_COLOUR)
    return f'<svg class="swatch" width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="{fill}"/></svg>'


def _legend(relations: set[str]) -> str:
    """The colours of the relations drawn (known ones in their fixed order first)."""
    order = [r for r in RELATION_COLOURS if r in relations] + sorted(relations - set(RELATION_COLOURS))
    items = "".join(f'<li>{_swatch(r)}{_e(r)}</li>' for r in order)
    return f'<ul class="legend-rel">{items}</ul>'


def _graph_div(src: str, relations: set[str], *, walk: bool) -> str:
    colours = _e(orjson.dumps({**RELATION_COLOURS, "": OTHER_COLOUR}).decode())
    return (f'<div class="graph" data-src="{_e(src)}" data-walk="{"server" if walk else "off"}" '
            f'data-colours="{colours}" aria-label="neighbourhood graph"></div>' + _legend(relations))


def _node_rows(data: dict[str, Any], *, links: bool) -> list[list[str]]:
    rows = []
    for n in data["nodes"]:
        if links:
            name = (f'<a href="{_e(hub_url(n["id"]))}">{_e(n["id"])}</a>' if n["kind"] == "hub"
                    else _file_link(n["id"]))
        else:
            name = _e(n["id"])
        rows.append([str(n["depth"]), name, _e(n["relation"] or "centre"), _num(n["rank"]), _num(n["priority"]),
                     "more" if n["more"] else ""])
    return rows


def graph_page(data: dict[str, Any]) -> str:
    path, depth = data["path"], data["depth"]
    other = 2 if depth == 1 else 1
    cut = f'<p class="notice cut" id="cut">{_e(data["cut_note"])}</p>' if data["cut_note"] else ""
    body = (f'<h1>Neighbourhood of <code>{_e(path)}</code> <small>depth {depth}: {len(data["nodes"])} nodes, '
            f'{len(data["edges"])} edges</small></h1>'
            f'<p class="links"><a href="{_e(file_url(path))}">file page</a> · '
            f'<a href="{_e(graph_url(path, other))}">depth {other}</a> · click a node to walk on</p>{cut}'
            + _graph_div(graph_api(path, depth), {e["relation"] for e in data["edges"]}, walk=True)
            + _table("nodes", ["depth", "node", "relation", "rank", "priority", ""], _node_rows(data, links=True))
            + _notes(data))
    return layout(f"graph {path}", data, body)


def search_page(data: dict[str, Any]) -> str:
    q = data["q"]
    if not q:
        return layout("Search", data, '<h1>Search</h1><p class="muted">Type what you are looking for: two words, '
                      'a commit message or a pasted bug report.</p>')
    rows = []
    for r in data["results"]:
        stale = "" if r.get("stale", "fresh") == "fresh" else f' <span class="stale">{_e(r["stale"])}</span>'
        # a result's links say they were followed from a search: the file page logs the follow-up
        followed = file_url(r["path"]) + "?from=search"
        spans = " ".join(f'<a href="{_e(followed)}#L{sp["start"]}">L{sp["start"]}-{sp["end"]}</a> '
                         f'{_e(sp.get("label", ""))}' for sp in r.get("spans") or [])
        rows.append([str(r["rank"]), f'<a class="path" href="{_e(followed)}">{_e(r["path"])}</a>' + stale, _num(r["score"]), _e(r["domain"]),
                     _e(r["content_type"]), _num(r["priority"]), spans, _e(", ".join(r["matched_fields"])),
                     f'<span class="why">{_e(r.get("why", ""))}</span>'])
    explain = data.get("explain") or {}
    passes = "".join(f"<tr><th>{_e(a)}</th><td>{_e(b)}</td></tr>" for a, b in explain.get("passes", []))
    cypher = "".join(f'<h4>{_e(c["template"])}</h4><pre>{_e(c["text"])}</pre><p class="muted">params '
                     + _e(", ".join(f"{k}={v}" for k, v in sorted(c["params"].items()))) + "</p>"
                     for c in explain.get("cypher", []))
    body = (f'<h1>Search <small>{len(data["results"])} results · {data["query_class"]} · '
            f'{data["latency_ms"]:.0f} ms</small></h1>'
            + (_table("results", ["#", "path", "score", "domain", "type", "priority", "evidence", "matched", "why"],
                     rows)
               if rows else '<p class="muted" id="no-results">nothing matched</p>')
            + f'<details><summary>How the query was read (parse passes and Cypher)</summary>'
              f'<table class="kv">{passes}</table>{cypher}</details>' + _notes(data))
    return layout(f"search {q}", data, body, q=q)


def learn_page(data: dict[str, Any]) -> str:
    """The learning proposals (``oracl learn review``): deciding them stays on the command
    line (this server only reads)."""
    rows = []
    for p in data["proposals"]:
        what = (f"{_file_link(p['source'])} ↔ {_file_link(p['target'])}" if p["kind"] == "association"
                else f"<code>{_e(p['term'])}</code> → {_file_link(p['path'])}" if p["kind"] == "term"
                else f"{_file_link(p['path'])}: {_e(p['tag'])} = {_e(p['value'])}")
        rows.append([f"<code>{_e(p['id'])}</code>", _e(p["status"]), _e(p["kind"]), what, _num(p["confidence"]),
                     str(p.get("support", 0)), "" if p.get("pmi") is None else _num(p["pmi"]),
                     _e((p.get("examples") or [""])[0])])
    body = (f'<h1>Learned from use <small>{len(rows)} proposals · {data.get("sessions", 0)} sessions · mined '
            f'{_e(str(data.get("mined_at") or "never"))}</small></h1>'
            '<p class="muted">Proposals wait here until someone decides them: <code>oracl learn accept ID</code> or '
            '<code>oracl learn reject ID</code>; only accepted ones enter the next build.</p>'
            + (_table("proposals", ["id", "status", "kind", "what", "κ", "support", "PMI", "example query"], rows)
               if rows else '<p class="muted" id="no-proposals">no proposals: run <code>oracl learn</code></p>'))
    return layout("learned from use", data, body)


def _symbol_link(r: dict[str, Any]) -> str:
    """A symbol named by where it is defined (``path:LINE``), never ambiguous."""
    where = f"{r['path']}:{r['start']}"
    return f'<a href="{_e(symbol_url(where))}">{_e(r["qualified"])}</a>'


def _symbol_rows(rows: list[dict[str, Any]], lines_in: str | None = None) -> list[list[str]]:
    """Rows of symbols; a row's call ``lines`` are in the caller: the row's own file, or
    ``lines_in`` (for callees, the file of the symbol they are called from)."""
    out = []
    for r in rows:
        where = file_url(lines_in or r["path"])
        lines = " ".join(f'<a href="{_e(where)}#L{n}">L{n}</a>' for n in r.get("lines") or [])
        out.append([_e(r.get("kind", "")), _symbol_link(r),
                    f'<a href="{_e(file_url(r["path"]))}#L{r["start"]}">{_e(r["path"])}:{r["start"]}</a>',
                    _num(r["confidence"], 2) if "confidence" in r else "", lines])
    return out


def symbol_page(data: dict[str, Any]) -> str:
    defs = data["definitions"]["definitions"]
    callers = [r for level in data["callers"]["levels"] for r in level]
    callees = [r for level in data["callees"]["levels"] for r in level]
    head = ["kind", "symbol", "defined at", "confidence", "call lines"]
    title = defs[0]["qualified"] if len({d["qualified"] for d in defs}) == 1 else data["name"]
    home = defs[0]["path"] if len({d["path"] for d in defs}) == 1 else None
    body = (f'<h1>Symbol <code>{_e(title)}</code> <small>{len(defs)} definition{"s" if len(defs) != 1 else ""} of '
            f'{_e(data["name"])}</small></h1>'
            + _table("definitions", head, _symbol_rows(defs))
            + f'<h2>Callers <small>{len(callers)}</small></h2>' + _table("callers", head, _symbol_rows(callers))
            + f'<h2>Callees <small>{len(callees)}</small></h2>'
            + _table("callees", head, _symbol_rows(callees, lines_in=home))
            + _notes(data["callers"]))
    return layout(f"symbol {data['name']}", data, body)


def impact_page(data: dict[str, Any]) -> str:
    files_ = [[_file_link(f["path"]), _num(f["score"]), str(f["distance"]), _e("; ".join(f["reasons"][:3]))]
              for f in data["files"]]
    tests = [[_file_link(f["path"]), _num(f["score"]), str(f["distance"]), _e("; ".join(f["reasons"][:3]))]
             for f in data["tests"]]
    syms = [[_symbol_link(s),
             f'<a href="{_e(file_url(s["path"]))}#L{s["start"]}">{_e(s["path"])}:{s["start"]}</a>',
             _num(s["score"]), _e(s["relation"]), str(s["distance"])] for s in data["symbols"]]
    hubs = ", ".join(f'<a href="{_e(hub_url(h["hub"]))}">{_e(h["hub"])}</a> ({h["files"]})' for h in data["hubs"])
    body = (f'<h1>Impact of a change to <code>{_e(data["target"])}</code></h1><p>hubs touched: {hubs or "–"}</p>'
            f'<h2>Files <small>{data["file_count"]}</small></h2>'
            + _table("files", ["file", "score", "distance", "why"], files_)
            + f'<h2>Tests to run <small>{data["test_count"]}</small></h2>'
            + _table("tests", ["test file", "score", "distance", "why"], tests)
            + f'<h2>Symbols reached <small>{data["symbol_count"]}</small></h2>'
            + _table("symbols", ["symbol", "where", "score", "relation", "distance"], syms) + _notes(data))
    return layout(f"impact {data['target']}", data, body)


def error_page(data: dict[str, Any], status: int, message: str) -> str:
    return layout("Error", data, f'<h1>{status}</h1><p class="error" id="error">{_e(message)}</p>')


def standalone_graph(data: dict[str, Any]) -> str:
    """One HTML file drawing ``data`` (a neighbourhood): the stylesheet, Cytoscape.js, the
    script and the data inline, nothing fetched."""
    css = (ASSETS / "oracl.css").read_text("utf-8")
    lib = (ASSETS / "cytoscape.min.js").read_text("utf-8")
    js = (ASSETS / "oracl.js").read_text("utf-8")
    # inside <script>, "</" could end the element early; JSON allows the escaped form
    blob = orjson.dumps(data).decode().replace("</", "<\\/")
    b = data["build"]
    rows = _table("nodes", ["depth", "node", "relation", "rank", "priority", ""], _node_rows(data, links=False))
    cut = f'<p class="notice cut">{_e(data["cut_note"])}</p>' if data["cut_note"] else ""
    colours = _e(orjson.dumps({**RELATION_COLOURS, "": OTHER_COLOUR}).decode())
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Neighbourhood of {_e(data['path'])} · ORACL</title>
<style>{css}</style></head><body>
<h1>Neighbourhood of <code>{_e(data['path'])}</code> <small>depth {data['depth']}: {len(data['nodes'])} nodes,
{len(data['edges'])} edges</small></h1>
<div class="build">build <code>{_e(b['build_id'])}</code> · built <time>{_e(b['generated_at'])}</time> ·
{_e(b['freshness'])}</div>{cut}
<div class="graph" data-walk="off" data-colours="{colours}"></div>{_legend({e["relation"] for e in data["edges"]})}
{rows}
<script type="application/json" id="graph-data">{blob}</script>
<script>{lib}</script>
<script>{js}</script>
</body></html>
"""



# ---- a workspace's pages ---------------------------------------------------------------------

def ws_layout(title: str, data: dict[str, Any], body: str, *, q: str = "") -> str:
    """A workspace page: the bar (members, search across them) and the members' builds."""
    members = " · ".join(f'<span class="member {"ok" if m["ok"] else "down"}" title="{_e(m.get("error", m["root"]))}">'
                         f'{_e(m["name"])}</span>' for m in data.get("members") or [])
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(title)} · ORACL workspace</title>
<link rel="stylesheet" href="/static/oracl.css">
</head><body>
<header class="bar"><a class="brand" href="/">ORACL</a>
<span class="root">{_e(str(data.get("workspace", "")).rstrip("/").rsplit("/", 1)[-1])}</span>
<a href="/">Members</a>
<form class="search" action="/search" method="get" role="search">
<input type="search" name="q" value="{_e(q)}" placeholder="search every member" aria-label="search text">
<button type="submit">Search</button></form></header>
<div class="build" id="members">{members}</div>
<main>
{body}
</main>
</body></html>
"""


def _ws_notes(data: dict[str, Any]) -> str:
    return "".join(f'<p class="notice">{_e(n)}</p>' for n in data.get("notices") or [])


def ws_home_page(data: dict[str, Any]) -> str:
    members = [[_e(m["name"]), f'<code>{_e(m.get("build_id", ""))}</code>' if m["ok"] else
                f'<span class="error">{_e(m["error"])}</span>', _e(m.get("checked", ""))] for m in data["members"]]
    links = [[_e(x["consumer"]), _e(x["provider"]), f'{_e(x["package"])} ({_e(x["ecosystem"])})',
              f'{_e(x["manifest"])}:{x["line"]}', str(x["files"])] for x in data["links"]]
    packages = [[_e(p["repository"]), f'{_e(p["package"])} ({_e(p["ecosystem"])})',
                 _e(", ".join(p["prefixes"]))] for p in data["packages"]]
    body = (f'<h1>Workspace <small>{len(data["members"])} members</small></h1>'
            + _table("members", ["member", "build", "checked"], members)
            + f'<h2>Links <small>{len(links)}</small></h2>'
            + (_table("links", ["consumer", "provider", "package", "declared", "files importing it"], links)
               if links else '<p class="muted" id="no-links">no member depends on a package another provides</p>')
            + f'<h2>Packages provided <small>{len(packages)}</small></h2>'
            + _table("packages", ["member", "package", "imported as"], packages)
            + '<form class="ask" action="/impact" method="get"><label>What does a change reach? member '
              '<input name="member" aria-label="member"></label> <label>file or symbol '
              '<input name="target" aria-label="file or symbol"></label> <button type="submit">Impact</button></form>'
            + _ws_notes(data))
    return ws_layout("workspace", data, body)


def ws_search_page(data: dict[str, Any]) -> str:
    if not data["q"]:
        return ws_layout("Search", data, '<h1>Search every member</h1>')
    rows = [[str(r["rank"]), _e(r["repository"]), f'<span class="path">{_e(r["path"])}</span>',
             str(r.get("member_rank", "")), _num(r.get("score") or 0), _e(", ".join(r.get("matched_fields") or []))]
            for r in data["results"]]
    body = (f'<h1>Search <small>{len(rows)} results across {len(data["members"])} members</small></h1>'
            + (_table("results", ["#", "repository", "path", "rank there", "score there", "matched"], rows)
               if rows else '<p class="muted" id="no-results">nothing matched</p>') + _ws_notes(data))
    return ws_layout(f"search {data['q']}", data, body, q=data["q"])


def ws_impact_page(data: dict[str, Any]) -> str:
    parts = [f'<h1>Impact of <code>{_e(data["target"])}</code> in {_e(data["member"])} '
             f'<small>{data["reached_repositories"]} other repositories, {data["reached_files"]} files there</small></h1>']
    for sec in data["repositories"]:
        head = (f'{_e(sec["repository"])} <small>hop {sec["hop"]}, through {_e(sec["via"])}: '
                f'{_e(", ".join(sec["packages"]))}</small>' if sec["hop"] else f'{_e(sec["repository"])} <small>changed</small>')
        parts.append(f'<h2 class="repository" data-repository="{_e(sec["repository"])}">{head}</h2>')
        if sec["hop"]:
            parts.append(_table("entries", ["file", "line", "confidence", "uses"],
                                [[f'<span class="path">{_e(e["path"])}</span>', str(e["line"]), _num(e["confidence"], 2),
                                  _e(f'{e["uses"]} → {e["defined"]}')] for e in sec["entries"]]))
        for title, rows, total in (("Tests to run", sec["tests"], sec["test_count"]),
                                   ("Files reached", sec["files"], sec["file_count"])):
            parts.append(f'<h3>{title} <small>{total}</small></h3>' + _table(
                "files", ["file", "score", "distance", "why"],
                [[f'<span class="path">{_e(f["path"])}</span>', _num(f["score"]), str(f["distance"]),
                  _e("; ".join(f["reasons"][:3]))] for f in rows]))
    return ws_layout(f"impact {data['target']}", data, "".join(parts) + _ws_notes(data))


def ws_callers_page(data: dict[str, Any]) -> str:
    rows = [[_e(c["repository"]), _e(c["qualified"]),
             f'<span class="path">{_e(c["path"])}</span>:{_e(",".join(str(x) for x in c["lines"][:6]))}',
             _num(c["confidence"], 2), _e(f'through {c["across"]}: {", ".join(c["calls"][:3])}' if c["across"]
                                          else c.get("resolution", ""))] for c in data["callers"]]
    body = (f'<h1>Callers of <code>{_e(data["query"])}</code> <small>{data["total"]}, {data["across"]} in other '
            'repositories</small></h1>' + _table("callers", ["repository", "caller", "where", "confidence", "how"], rows)
            + _ws_notes(data))
    return ws_layout(f"callers {data['query']}", data, body)


def ws_error_page(status: int, message: str) -> str:
    return ws_layout("Error", {}, f'<h1>{status}</h1><p class="error" id="error">{_e(message)}</p>')
