"""The data of every page of the web view (``oracl serve``), as JSON-able dicts: the JSON
API answers with them and the HTML pages are drawn from them, so a page and its API can
never disagree. Every function reads through one ``Memory`` (the same read path as the
CLI and the MCP server) and every answer carries ``build``: the build's id, time, commit
and the working tree's freshness.

>>> with Memory.open(".") as mem:                                     # doctest: +SKIP
...     hubs(mem)["hubs"][0]["hub"]
'hub:domain:core'
"""

from __future__ import annotations

import re
from typing import Any

from oracl.core.errors import QueryError
from oracl.core.secrets import redact_typed
from oracl.read import graph
from oracl.read.memory import Memory
from oracl.read.snapshot import Snapshot

API_SCHEMA = "oracl.face.web/1"
HUB_MEMBERS = 50      # members listed on a hub's page
SEARCH_RESULTS = 10
MAX_RESULTS = 100
FRESHNESS_TTL = 30.0  # seconds a page reuses the tree's verdict (a 50k-file walk takes ~0.5 s)
_LINES = re.compile(r"L(\d+)-(\d+)")


def build(mem: Memory, wait: float = 0.02) -> dict[str, Any]:
    """The build a page answers from and the tree's freshness, waited for at most
    ``wait`` seconds (a page never waits for a large tree's walk)."""
    return mem.build_info(wait, FRESHNESS_TTL)


def _page(mem: Memory, page: str, data: dict[str, Any], wait: float = 0.02) -> dict[str, Any]:
    """``data`` with the schema, the page's name and the build."""
    return {"schema": API_SCHEMA, "page": page, "build": build(mem, wait), **data}


def hubs(mem: Memory) -> dict[str, Any]:
    """Every domain hub: members, mean priority, the top member; and the range of the mean
    priorities (the hub map's colour scale)."""
    out = mem.hub()
    rows = [dict(h, domain=h["hub"].removeprefix("hub:domain:")) for h in out["hubs"]]
    means = [h["mean_priority"] for h in rows if h["mean_priority"] is not None]
    return _page(mem, "hubs", {"hubs": rows, "priority_range": [min(means, default=0.0), max(means, default=1.0)],
                               "notices": out["notices"]})


def hub(mem: Memory, domain: str, k: int = HUB_MEMBERS) -> dict[str, Any]:
    """One hub's members ranked (``oracl hub DOMAIN``)."""
    out = mem.hub(domain, _bounded(k))
    return _page(mem, "hub", {**out, "domain": out["hub"].removeprefix("hub:domain:")})


def _file(snap: Snapshot, path: str, cwd: Any = None) -> dict[str, Any]:
    shown = graph.show(snap, path, cwd=cwd)
    rel = shown["artifact"]["path"]
    text = graph.fragment(snap, rel, cwd=cwd)
    symbols = snap.named("symbols_in_files", {"paths": [rel]})
    marks: dict[int, list[str]] = {}  # line -> the relations whose fragments cover it
    for relation, sides in shown["edges"].items():
        for side in sides.values():
            for e in side:
                for f in e["fragments"]:
                    m = _LINES.fullmatch(f)
                    if m:
                        for line in range(int(m.group(1)), min(int(m.group(2)), text["end"]) + 1):
                            marks.setdefault(line, [])
                            if relation not in marks[line]:
                                marks[line].append(relation)
    return {**shown, "text": {k: text[k] for k in ("start", "end", "lines", "stale", "warning", "notices")},
            "marks": {str(line): rels for line, rels in sorted(marks.items())},
            "symbol_rows": [s for s in symbols if s["kind"] != "module"]}


def file(mem: Memory, path: str, followed: bool = False) -> dict[str, Any]:
    """A file's page: every stored field and tag, the twelve-bucket priority breakdown,
    its edges by relation with weights, ranks and fragments, its symbols (with lines), its
    text (the first 2,000 lines) and, for each line a fragment covers, the relations.
    ``followed``: opened from a search page's result (logged as a follow-up, design §9)."""
    out = _page(mem, "file", mem.read(_file, path, cwd=mem.cwd))
    if followed:
        mem.used("web", [out["artifact"]["path"]])
    return out


def learn(mem: Memory, status: str | None = None) -> dict[str, Any]:
    """The learning proposals, pending first (``oracl learn review``)."""
    return _page(mem, "learn", mem.proposals(status or None))


def neighbourhood(mem: Memory, path: str, depth: int = 1, k: int = graph.GRAPH_NEIGHBOURS,
                  wait: float = 0.02) -> dict[str, Any]:
    """The neighbourhood graph of a file to ``depth`` 1 or 2 (nodes, edges, cut note)."""
    return _page(mem, "graph", mem.neighbourhood(path, depth, _bounded(k)), wait)


def search(mem: Memory, q: str, k: int = SEARCH_RESULTS, persona: str = "default") -> dict[str, Any]:
    """``oracl query Q --explain``: the ranked results, each with its reasons, and the
    parse passes and Cypher behind them."""
    if not q.strip():
        return _page(mem, "search", {"q": "", "results": [], "notices": []})
    # the page echoes the query: a secret typed into it is shown as its marker only
    return _page(mem, "search", {"q": redact_typed(q), **mem.search(q, _bounded(k), persona, explain=True,
                                                                     freshness=False)})


def symbol(mem: Memory, name: str) -> dict[str, Any]:
    """A symbol's definitions with its callers and callees (one level each)."""
    defs = mem.symbols(name, k=20)
    if not defs["definitions"]:
        raise QueryError(f"no symbol named {name!r} in the latest build")
    return _page(mem, "symbol", {"name": name, "definitions": defs, "callers": mem.callers(name, k=100),
                                 "callees": mem.callees(name, k=100)})


def impact(mem: Memory, path: str, depth: int = 2) -> dict[str, Any]:
    """``oracl impact PATH``: the symbols, files and tests a change to ``path`` reaches."""
    return _page(mem, "impact", {"target": path, **mem.impact([path], depth=depth, k=20)})


def _bounded(k: int) -> int:
    if not 1 <= k <= MAX_RESULTS:
        raise QueryError(f"k must be between 1 and {MAX_RESULTS}")
    return k


# ---- a workspace's pages (``oracl serve --workspace FILE``) --------------------------------

WORKSPACE_SCHEMA = "oracl.face.web-workspace/1"


def _ws(path: Any) -> Any:
    from oracl.core.members import WorkspaceFile

    return WorkspaceFile.load(path)  # loaded and verified at every page: an edit by hand shows at once


def ws_home(path: Any) -> dict[str, Any]:
    """The members (each one's build or why it does not answer), the packages they provide
    and the links between them."""
    from oracl.read.crossrepo import links_workspace

    return {"schema": WORKSPACE_SCHEMA, "page": "workspace", **links_workspace(_ws(path), withhold=True)}


def ws_search(path: Any, q: str, k: int = SEARCH_RESULTS) -> dict[str, Any]:
    from oracl.read.fanout import search_workspace

    if not q.strip():
        return {"schema": WORKSPACE_SCHEMA, "page": "search", "q": "", "results": [], "members": [], "notices": []}
    out = search_workspace(_ws(path), q, k=_bounded(k), withhold=True)
    return {"schema": WORKSPACE_SCHEMA, "page": "search", **out, "q": redact_typed(q), "query": redact_typed(q)}


def ws_impact(path: Any, member: str, target: str, hops: int = 3) -> dict[str, Any]:
    from oracl.read.crossrepo import impact_workspace

    if not member or not target:
        raise QueryError("name the member and the file or symbol that changes (?member=NAME&target=PATH)")
    return {"schema": WORKSPACE_SCHEMA, "page": "impact", "target": target,
            **impact_workspace(_ws(path), member, [target], hops=hops, withhold=True)}


def ws_callers(path: Any, name: str) -> dict[str, Any]:
    from oracl.read.crossrepo import callers_workspace

    if not name:
        raise QueryError("name a symbol (?name=NAME)")
    return {"schema": WORKSPACE_SCHEMA, "page": "callers", **callers_workspace(_ws(path), name, withhold=True)}
