"""The only module that imports rich: progress displays and tables for the CLI."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

out = Console()
err = Console(stderr=True)


@contextmanager
def build_progress(enabled: bool) -> Iterator[Any]:
    """A callback ``(phase, done, total)`` that drives one progress row per phase."""
    if not enabled:
        yield lambda *_: None
        return
    # no refresh thread (auto_refresh off): the build forks its helpers, and a fork with
    # another thread alive is refused; each update redraws instead
    progress = Progress(SpinnerColumn(), TextColumn("{task.description:<9}"), BarColumn(),
                        MofNCompleteColumn(), TimeElapsedColumn(), console=err, transient=False,
                        auto_refresh=False)
    tasks: dict[str, Any] = {}
    last: list[str] = []

    def update(phase: str, done: int, total: int | None) -> None:
        if phase not in tasks:
            if last and last[-1] in tasks:
                t = progress.tasks[tasks[last[-1]]]
                progress.update(tasks[last[-1]], total=t.total or max(t.completed, 1),
                                completed=t.total or max(t.completed, 1))
            tasks[phase] = progress.add_task(phase, total=total)
            last.append(phase)
        progress.update(tasks[phase], completed=done, total=total, refresh=True)

    with progress:
        yield update
        if last:
            t = progress.tasks[tasks[last[-1]]]
            progress.update(tasks[last[-1]], total=t.total or 1, completed=t.total or 1, refresh=True)


def _kv_table(title: str, rows: dict[str, Any]) -> Table:
    t = Table(title=title, show_header=False, title_justify="left")
    t.add_column(style="bold")
    t.add_column(justify="right")
    for k, v in rows.items():
        t.add_row(str(k), str(v))
    return t


def build_summary(r: dict[str, Any]) -> None:
    counts = r["counts"]
    out.print(f"[bold green]Built[/] {r['root']}  build [cyan]{r['build_id']}[/]")
    out.print(f"[dim]{r['mode']}[/]", highlight=False)
    files = {"seen": r["files_seen"], "indexed": r["files_indexed"], "read": r["files_read"]}
    if r["files_removed"]:
        files["removed since the previous build"] = r["files_removed"]
    files.update({f"skipped: {k}": v for k, v in r["skipped"].items() if k not in ("suffix", "binary")})
    by_suffix = list(r["skipped_by_suffix"].items())
    files.update({f"skipped: {k}": v for k, v in by_suffix[:8]})
    if len(by_suffix) > 8:
        files["skipped: other suffixes"] = sum(v for _, v in by_suffix[8:])
    files.update({f"not parsed: {k}": v for k, v in r["parse_status"].items() if k != "ok"})
    files.update({f"dirs excluded: {k}": v for k, v in r["excluded_dirs"].items()})
    out.print(_kv_table("Files", files))
    langs = list(r["languages"].items())
    out.print(_kv_table("Files per language", dict(langs[:12]) | (
        {"other languages": sum(v for _, v in langs[12:])} if len(langs) > 12 else {})))
    graph = {"nodes": counts["nodes"], "artifacts": counts["nodes_by_kind"]["artifact"],
             "hubs": counts["nodes_by_kind"]["hub"], "edges": counts["edges"]}
    graph.update({f"edges: {k}": v for k, v in counts["edges_by_relation"].items()})
    graph.update({f"dropped: {k}": v for k, v in r["dropped_edges"].items()})
    graph.update({"μ (association mean)": f"{r['mu']:.4f}", "σ (association std)": f"{r['sigma']:.4f}",
                  "full-text index": "yes" if r["fts"] else "skipped"})
    out.print(_kv_table("Graph", graph))
    if counts.get("symbols"):
        out.print(_kv_table("Symbols", _symbol_rows(counts["symbols"])))
    secs = {(k.replace("_background", " (beside the phases)")): f"{v:.2f} s" for k, v in r["seconds"].items()}
    secs["total (the phases)"] = f"{sum(v for k, v in r['seconds'].items() if not k.endswith('_background')):.2f} s"
    out.print(_kv_table("Seconds per phase", secs))
    out.print(f"export  {r['export_path']}\nsha256  {r['export_sha256']}\nbundle  {r['bundle_path']}")
    if r["signature"] == "unsigned":
        out.print("signed  no – the export is unsigned (set ORACL_ED25519_PRIVATE_KEY; `oracl keygen` makes a key)")
    else:
        out.print(f"signed  {r['signature']}")


def _symbol_rows(sym: dict[str, Any]) -> dict[str, Any]:
    rows: dict[str, Any] = {"symbols": sym["symbols"]}
    rows.update({f"edges: {k}": v for k, v in sym["edges_by_relation"].items()})
    rows.update({"calls to nothing defined here": sym["calls_unresolved"],
                 "calls too ambiguous to link": sym["calls_too_ambiguous"]})
    return rows


def stats_view(s: dict[str, Any], top: int = 15, hubs_only: bool = False) -> None:
    if not hubs_only:
        out.print(f"[bold]Build[/] [cyan]{s['build_id']}[/] of {s['root']} at {s['generated_at']}"
                  + (f" (commit {s['source_commit'][:12]})" if s.get("source_commit") else ""))
        summary = {"artifacts": s["artifacts"], "hubs": len(s["hubs"]), "edges": s["edges"]}
        summary.update({f"edges: {k}": v for k, v in s["edges_by_relation"].items()})
        summary.update({"μ": f"{s['mu']:.4f}", "σ": f"{s['sigma']:.4f}",
                        "parsed": f"{s['coverage']['parsed']} / {s['coverage']['indexed']}"})
        out.print(_kv_table("Graph", summary))
        if s.get("symbols"):
            out.print(_kv_table("Symbols", _symbol_rows(s["symbols"])))
    t = Table(title="Domain hubs", title_justify="left")
    for col, just in (("hub", "left"), ("members", "right"), ("mean priority", "right"), ("top member", "left")):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for h in s["hubs"][:top]:
        t.add_row(h["hub"], str(h["members"]), f"{h['mean_priority']:.3f}", h["top_member"] or "")
    if len(s["hubs"]) > top:
        t.caption = f"{len(s['hubs']) - top} more hubs"
    out.print(t)


def error_line(message: str) -> None:
    err.print(f"Error: {message}", markup=False, highlight=False, soft_wrap=True)


def notice(message: str) -> None:
    err.print(f"Note: {message}", markup=False, highlight=False, soft_wrap=True)


def keygen_done(priv: Any, pub: Any) -> None:
    out.print(f"private key  {priv}  (mode 0600; never commit it, never put it in the vault)")
    out.print(f"public key   {pub}")
    out.print("Sign every build:   export ORACL_ED25519_PRIVATE_KEY=" + str(priv))
    out.print(f"Verify a build:     oracl verify ROOT --public-key {pub}")


def verified(checked: list[str]) -> None:
    out.print("[bold green]Verified[/]")
    for line in checked:
        out.print(f"  ✓ {line}", markup=False, highlight=False)


def health_view(rows: list[dict[str, Any]], threshold: float) -> None:
    if not rows:
        out.print("No builds recorded yet.")
        return
    t = Table(title=f"Graph health (flag: a count moved more than {threshold:.0%})", title_justify="left")
    for col in ("build", "artifacts", "hubs", "edges", "μ", "σ", "orphans", "dangling", "parse errors",
                "seconds", "bundle MiB", "signed", "flag"):
        t.add_column(col, justify="left" if col in ("build", "signed", "flag") else "right",
                     no_wrap=col == "build")
    for r in rows:
        c = r["counts"]
        flag = ", ".join(f"{k} {v:+.0%}" for k, v in r["moved"].items())
        t.add_row(r["build_id"][:15], str(c["artifacts"]), str(c["hubs"]), str(c["edges"]), f"{r['mu']:.4f}",
                  f"{r['sigma']:.4f}", str(r["orphans"]), str(r["dropped"].get("dangling", 0)),
                  str(r["parse_errors"]), f"{sum(r['seconds'].values()):.1f}",
                  f"{r['bundle_bytes'] / 2**20:.1f}", r.get("signature", "unsigned"),
                  f"[bold red]⚑ {flag}[/]" if flag else "")
    out.print(t)


def query_view(result: Any, explain: bool) -> None:
    q = result.query
    if explain:
        t = Table(title="Parse", title_justify="left", show_header=False)
        t.add_column(style="bold")
        t.add_column()
        for name, what in q.passes:
            t.add_row(name, what)
        out.print(t)
        for c in result.compiled:
            out.print(f"[bold]Cypher[/] ({c.template})")
            out.print(c.cypher, markup=False, highlight=False)
            out.print("params " + ", ".join(f"{k}={v!r}" for k, v in sorted(c.params.items())),
                      markup=False, highlight=False)
    t = Table(title=f"{len(result.results)} results · build {result.build_id} · {result.latency_ms:.0f} ms",
              title_justify="left")
    for col, just in (("#", "right"), ("path", "left"), ("score", "right"), ("domain", "left"),
                      ("type", "left"), ("lifecycle", "left"), ("priority", "right"), ("matched", "left")):
        t.add_column(col, justify=just, overflow="fold" if col == "path" else "ellipsis")  # type: ignore[arg-type]
    for r in result.results:
        t.add_row(str(r["rank"]), r["path"], f"{r['score']:.3f}", r["domain"], r["content_type"],
                  r["lifecycle"], f"{r['priority']:.3f}", ", ".join(r["matched_fields"]))
    out.print(t)
    if explain:
        for e in result.explain:
            parts = ", ".join(f"{m['term']}→{m['field']} {m['contribution']:g}" for m in e["matches"][:12])
            out.print(f"  {e['path']}: A(m)={e['amplification']:g} × Σ + tag {e['tag_bonus']:g} = "
                      f"{e['lexical']:.3f}; bm25 {e['bm25_normalised']:.3f}; φ {e['persona']:g}; {parts}",
                      markup=False, highlight=False)


def _stale_line(r: dict[str, Any]) -> None:
    if r.get("staleness"):
        style = "yellow" if r["staleness"].startswith("stale") else "dim"
        out.print(f"[{style}]{r['staleness']}[/]", highlight=False)
    freshness_line(r.get("freshness", ""))


def plain_line(text: str) -> None:
    """One line, flushed at once (``oracl watch`` output read by other programs)."""
    out.print(text, markup=False, highlight=False, soft_wrap=True)
    out.file.flush()


def freshness_line(verdict: str) -> None:
    """The working tree against the build, as ``oracl status`` says it."""
    if verdict:
        style = "dim" if verdict.startswith("fresh:") else "yellow"
        out.print(f"tree: {verdict}", style=style, markup=False, highlight=False)


def trace_view(r: dict[str, Any]) -> None:
    from rich.tree import Tree

    arrow = {"out": "→", "in": "←", "both": "↔"}[r["direction"]]
    tree = Tree(f"[bold]{r['root']}[/] ({arrow} depth {r['depth']}" + (f", {r['relation']}" if r["relation"] else "") + ")")
    branches = {r["root"]: tree}
    for level in r["levels"]:
        nxt: dict[str, Any] = {}
        for e in level:
            parent = branches.get(e["parent"])
            if parent is None:
                continue
            sym = "→" if e["direction"] == "out" else "←"
            frag = " ".join(e.get("fragments") or [])
            label = (f"{sym} [cyan]{e['node']}[/]  [dim]{e['relation']} w={e['weight']:.2f} "
                     f"rank={e['rank']:.3f}{' ' + frag if frag else ''}[/]")
            if e["repeat"]:
                parent.add(label + " [dim](shown above)[/]")
            else:
                nxt[e["node"]] = parent.add(label)
        branches.update(nxt)
    out.print(tree)
    out.print(f"[dim]{r['nodes']} files · build {r['build_id']}[/]")
    _stale_line(r)


def related_view(r: dict[str, Any]) -> None:
    t = Table(title=f"Related to {r['path']} (top {r['k']} by association rank)", title_justify="left")
    for col in ("#", "neighbour", "rank", "relations", "dir", "fragment"):
        t.add_column(col, justify="right" if col in ("#", "rank") else "left")
    for i, n in enumerate(r["neighbours"], 1):
        t.add_row(str(i), n["path"], f"{n['rank']:.3f}", ", ".join(n["relations"]), n["direction"], n["fragment"] or "")
    if r["guard_cut"]:
        t.caption = f"only the {r['guard']} highest-ranked edges were considered"
    out.print(t)
    _stale_line(r)


def hub_view(r: dict[str, Any]) -> None:
    if "hubs" in r:
        stats_view({"build_id": r["build_id"], "root": "", "generated_at": "", "artifacts": sum(h["members"] for h in r["hubs"]),
                    "hubs": r["hubs"], "edges": 0, "edges_by_relation": {}, "mu": 0.0, "sigma": 0.0,
                    "coverage": {"parsed": 0, "indexed": 0}}, top=len(r["hubs"]), hubs_only=True)
        return
    t = Table(title=f"{r['hub']}: top {len(r['members'])} of {r['total']} members", title_justify="left")
    for col in ("#", "member", "rank", "priority"):
        t.add_column(col, justify="left" if col == "member" else "right")
    for i, m in enumerate(r["members"], 1):
        t.add_row(str(i), m["path"], f"{m['rank']:.3f}", f"{m['priority']:.3f}")
    out.print(t)


def show_view(r: dict[str, Any]) -> None:
    _show_tables(r)
    freshness_line(r.get("freshness", ""))


def _show_tables(r: dict[str, Any]) -> None:
    a = r["artifact"]
    fields = {k: v for k, v in a.items() if k not in ("tags", "symbols", "headings")}
    fields["hub"] = r["hub"]
    fields["symbols"] = f"{len(a['symbols'])} (" + ", ".join(s[0] for s in a["symbols"][:8]) + (" …" if len(a["symbols"]) > 8 else "") + ")"
    fields["headings"] = len(a["headings"])
    history = a.get("history") or ""
    fields["history"] = (history[:200] + (" …" if len(history) > 200 else "")) or "none (no git history)"
    out.print(_kv_table(a["path"], fields))
    out.print(_kv_table("Tags", a["tags"]))
    t = Table(title="Edges by relation", title_justify="left")
    for col in ("relation", "direction", "other file", "weight", "rank", "fragment"):
        t.add_column(col)
    for rel, sides in r["edges"].items():
        for side, edges in sides.items():
            for e in edges[:15]:
                other = e["target"] if side == "out" else e["source"]
                frag = e["source_fragment"] if side == "out" else e["target_fragment"]
                t.add_row(rel, side, other, f"{e['weight']:.2f}", f"{e['rank']:.3f}", frag or "")
            if len(edges) > 15:
                t.add_row(rel, side, f"… {len(edges) - 15} more", "", "", "")
    out.print(t)
    p = r["priority"]
    t = Table(title="Priority breakdown (design Eq. 2 and 6)", title_justify="left")
    for col in ("bucket", "weight w_b", "signal c_b", "contribution"):
        t.add_column(col, justify="left" if col == "bucket" else "right")
    for b in p["buckets"]:
        t.add_row(b["bucket"], f"{b['weight']:.2f}", f"{b['signal']:.6f}", f"{b['contribution']:.6f}")
    t.add_row("Σ w_b·c_b", "", "", f"{p['weighted_sum']:.6f}")
    t.add_row("× m_cls", "", "", f"{p['m_cls']:.2f}")
    t.add_row(f"× m_sens ({p['sensitivity']}, risk {p['risk_score']})", "", "", f"{p['m_sens']:.2f}")
    t.add_row(f"= min(cap {p['cap']}, {p['uncapped']:.6f})  P0", "", "", f"{p['base']:.6f}")
    t.add_row(f"association {p['association']:.6f} → δ", "", "", f"{p['delta']:.6f}")
    t.add_row(f"final = P0 + {p['alpha']}·δ", "", "", f"{p['final']:.6f}")
    out.print(t)
    _stale_line(r)


def fragment_view(r: dict[str, Any]) -> None:
    from rich.syntax import Syntax

    if r["warning"]:
        err.print(f"Warning: {r['warning']}", markup=False, highlight=False)
    from oracl.extractors.code import LANGUAGE_OF_SUFFIX

    lexer = {"md": "markdown", "yaml": "yaml", "yml": "yaml", "json": "json", "toml": "toml", "ps1": "powershell",
             "ini": "ini", "cfg": "ini", "cypher": "cypher", "rst": "rst", "html": "html", "erb": "erb",
             "j2": "jinja", "jinja": "jinja", "xml": "xml", "sql": "sql", "css": "css"}.get(r["format"]) \
        or LANGUAGE_OF_SUFFIX.get(r["format"], "text")
    out.print(f"[bold]{r['path']}[/] L{r['start']}-{r['end']}")
    out.print(Syntax("\n".join(r["lines"]), lexer, line_numbers=True, start_line=r["start"], word_wrap=True))


def rows_view(r: dict[str, Any]) -> None:
    t = Table(show_lines=False)
    for col in r["columns"]:
        t.add_column(str(col), overflow="fold")
    for row in r["rows"][:500]:
        t.add_row(*["" if v is None else str(v) for v in row])
    out.print(t)
    out.print(f"[dim]{len(r['rows'])} row(s)" + (" (500 shown)" if len(r["rows"]) > 500 else "") + "[/]")


def console_banner(build_id: str) -> None:
    out.print(f"ORACL Cypher console · build {build_id} · read-only · :help for help, :quit to leave")


def console_text(text: str) -> None:
    out.print(text, markup=False, highlight=False)


def status_view(r: dict[str, Any]) -> None:
    out.print(f"build   {r['build_id']} at {r['generated_at']}")
    if r.get("source_commit") or r.get("head"):
        out.print(f"commit  built from {str(r['source_commit'])[:12]}, HEAD now {str(r['head'])[:12]}")
    for label in ("added", "modified", "deleted"):
        items = r[label]
        if items:
            out.print(f"{label:9}{len(items)}: " + ", ".join(items[:8]) + (" …" if len(items) > 8 else ""),
                      markup=False, highlight=False)
    style = "green" if r["fresh"] else "yellow"
    out.print(f"[{style}]{r['verdict']}[/]", highlight=False)


def _loc(r: dict[str, Any]) -> str:
    return f"{r['path']}:{r['start']}" + (f"-{r['end']}" if r.get("end", r["start"]) != r["start"] else "")


def symbols_view(r: dict[str, Any]) -> None:
    how = {"exact": "", "id": "", "line": "", "fuzzy": " (no exact match: closest names)"}.get(r["match"], "")
    t = Table(title=f"Definitions of {r['query']}{how}", title_justify="left")
    for col in ("#", "symbol", "kind", "where", "signature"):
        t.add_column(col, justify="right" if col == "#" else "left", overflow="fold")
    for i, d in enumerate(r["definitions"], 1):
        sig = d["signature"] + (f"  [dim]— {d['doc']}[/]" if d["doc"] else "")
        t.add_row(str(i), d["qualified"], d["kind"], _loc(d), sig)
    if not r["definitions"]:
        out.print(f"no symbol named {r['query']!r}", markup=False)
    else:
        out.print(t)
    _stale_line(r)


def calls_view(r: dict[str, Any]) -> None:
    from rich.tree import Tree

    label = "callers" if "callers" in r else "callees"
    arrow = "←" if label == "callers" else "→"
    targets = r["targets"]
    head = ", ".join(f"{t['qualified']} ({_loc(t)})" for t in targets[:3]) + (" …" if len(targets) > 3 else "")
    tree = Tree(f"[bold]{head}[/] [dim]{label}, depth {r['depth']}, confidence ≥ {r['min_confidence']:g}"
                + (", fuzzy match" if r["match"] == "fuzzy" else "") + "[/]")
    branches: dict[str, Any] = {t["id"]: tree for t in targets}
    for level in r["levels"]:
        nxt: dict[str, Any] = {}
        for e in level:
            parent = branches.get(e["via"], tree)
            lines = ",".join(str(x) for x in e["lines"][:6]) + ("…" if len(e["lines"]) > 6 else "")
            how = e["resolution"] + (f" of {e['candidates']}" if e["resolution"] == "ambiguous" else "")
            text = (f"{arrow} [cyan]{e['qualified']}[/]  {e['path']}:{lines}  "
                    f"[dim]{e['kind']} κ={e['confidence']:.2f} {how}[/]")
            node = parent.add(text + (" [dim](repeat)[/]" if e["repeat"] else ""))
            if not e["repeat"]:
                nxt[e["id"]] = node
        branches.update(nxt)
    out.print(tree)
    cut = "; the query guard cut the walk" if r["guard_cut"] else ""
    more = f" (showing {r['shown']})" if r["shown"] < r["total"] else ""
    out.print(f"[dim]{r['total']} {label}{more} · build {r['build_id']}{cut}[/]")
    _stale_line(r)


def impact_view(r: dict[str, Any]) -> None:
    what = f"git diff {r['diff'] or 'HEAD'}" if r["diff"] is not None else ", ".join(r["targets"])
    out.print(f"[bold]Impact of {what}[/]: {len(r['changed'])} changed file(s), {r['seed_count']} changed "
              f"symbol(s)", highlight=False)
    if r["seeds"]:
        out.print("changed: " + ", ".join(f"{s['qualified']} ({_loc(s)})" for s in r["seeds"][:8])
                  + (" …" if r["seed_count"] > 8 else ""), markup=False, highlight=False)
    for title, rows, total in (("Tests to run", r["tests"], r["test_count"]),
                               ("Files reached", r["files"], r["file_count"])):
        t = Table(title=f"{title} ({len(rows)} of {total})", title_justify="left")
        for col in ("#", "path", "score", "dist", "why"):
            t.add_column(col, justify="right" if col in ("#", "score", "dist") else "left", overflow="fold")
        for i, f in enumerate(rows, 1):
            t.add_row(str(i), f["path"], f"{f['score']:.3f}", str(f["distance"]), "; ".join(f["reasons"][:2]))
        out.print(t)
    if r["symbols"]:
        t = Table(title=f"Symbols reached ({len(r['symbols'])} of {r['symbol_count']})", title_justify="left")
        for col in ("#", "symbol", "where", "score", "dist", "via"):
            t.add_column(col, justify="right" if col in ("#", "score", "dist") else "left", overflow="fold")
        for i, sym in enumerate(r["symbols"], 1):
            t.add_row(str(i), sym["qualified"], _loc(sym), f"{sym['score']:.3f}", str(sym["distance"]),
                      f"{sym['relation']} {sym['via'].split('#', 1)[-1]}")
        out.print(t)
    if r["hubs"]:
        out.print("hubs: " + ", ".join(f"{h['hub']} ({h['files']})" for h in r["hubs"]), markup=False, highlight=False)
    if r["guard_cut"]:
        out.print("[yellow]the query guard cut the walk: the lists are partial[/]")
    _stale_line(r)
