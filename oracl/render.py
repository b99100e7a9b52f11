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
    progress = Progress(SpinnerColumn(), TextColumn("{task.description:<9}"), BarColumn(),
                        MofNCompleteColumn(), TimeElapsedColumn(), console=err, transient=False)
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
        progress.update(tasks[phase], completed=done, total=total)

    with progress:
        yield update
        if last:
            t = progress.tasks[tasks[last[-1]]]
            progress.update(tasks[last[-1]], total=t.total or 1, completed=t.total or 1)


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
    files = {"seen": r["files_seen"], "indexed": r["files_indexed"]}
    files.update({f"skipped: {k}": v for k, v in r["skipped"].items()})
    files.update({f"not parsed: {k}": v for k, v in r["parse_status"].items() if k != "ok"})
    files.update({f"dirs excluded: {k}": v for k, v in r["excluded_dirs"].items()})
    out.print(_kv_table("Files", files))
    graph = {"nodes": counts["nodes"], "artifacts": counts["nodes_by_kind"]["artifact"],
             "hubs": counts["nodes_by_kind"]["hub"], "edges": counts["edges"]}
    graph.update({f"edges: {k}": v for k, v in counts["edges_by_relation"].items()})
    graph.update({f"dropped: {k}": v for k, v in r["dropped_edges"].items()})
    graph.update({"μ (association mean)": f"{r['mu']:.4f}", "σ (association std)": f"{r['sigma']:.4f}",
                  "full-text index": "yes" if r["fts"] else "skipped"})
    out.print(_kv_table("Graph", graph))
    secs = {k: f"{v:.2f} s" for k, v in r["seconds"].items()}
    secs["total"] = f"{sum(r['seconds'].values()):.2f} s"
    out.print(_kv_table("Seconds per phase", secs))
    out.print(f"export  {r['export_path']}\nsha256  {r['export_sha256']}\nbundle  {r['bundle_path']}")
    if r["signature"] == "unsigned":
        out.print("signed  no – the export is unsigned (set ORACL_ED25519_PRIVATE_KEY; `oracl keygen` makes a key)")
    else:
        out.print(f"signed  {r['signature']}")


def stats_view(s: dict[str, Any], top: int = 15) -> None:
    out.print(f"[bold]Build[/] [cyan]{s['build_id']}[/] of {s['root']} at {s['generated_at']}"
              + (f" (commit {s['source_commit'][:12]})" if s.get("source_commit") else ""))
    summary = {"artifacts": s["artifacts"], "hubs": len(s["hubs"]), "edges": s["edges"]}
    summary.update({f"edges: {k}": v for k, v in s["edges_by_relation"].items()})
    summary.update({"μ": f"{s['mu']:.4f}", "σ": f"{s['sigma']:.4f}",
                    "parsed": f"{s['coverage']['parsed']} / {s['coverage']['indexed']}"})
    out.print(_kv_table("Graph", summary))
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
