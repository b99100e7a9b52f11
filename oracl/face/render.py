"""The only module that imports rich: progress displays, tables and trees for a terminal,
and a plain, line-oriented form when stdout is not one.

Two forms of every answer:

* **a terminal** (``TTY_COMPATIBLE=1`` asks for this form in a pipe, ``=0`` refuses it):
  tables fitted to the width. A path is never broken or cut; when a table does not
  fit, its least useful columns go first (each column says how soon), and what is left
  wraps only in its text columns.
* **a pipe or a file**: one record per line, fields separated by a tab, nothing padded,
  wrapped, coloured or titled (like ``git`` and ``rg``), so ``cut``, ``awk`` and ``xargs``
  can take it; a view with several sections starts each line with the section's name.
  Notes, warnings and the tree's freshness go to stderr. A control character inside a
  field (a hostile file name) is written as ``\\xNN``.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from oracl.face.plain import build_fields, json_text, plain  # noqa: F401 – json_text: this module's name too
from oracl.face.plain import field as _field
from oracl.face.plain import line as _line

if TYPE_CHECKING:
    from rich.console import Console

# (rich is imported where a terminal is drawn, not with this module: a build or an answer
# written to a pipe is plain text and never loads it: 10-35 ms of a cold build's imports)

_TERMINAL_VARS = ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "TERM")
_consoles: dict[bool, tuple[tuple[Any, ...], Console]] = {}  # per side: what it was made for, it


def _console(stderr: bool) -> Console:
    """The console for the stream the process writes to now, made on first use and made
    again when the stream or a terminal variable changed (nothing is fixed at import: a
    caller that swaps ``sys.stdout`` or sets ``COLUMNS`` is drawn for what it set)."""
    stream = sys.stderr if stderr else sys.stdout
    key = (id(stream), tuple(os.environ.get(v) for v in _TERMINAL_VARS))
    made = _consoles.get(stderr)
    if made is None or made[0] != key:
        from rich.console import Console

        made = _consoles[stderr] = (key, Console(stderr=stderr))
    return made[1]


def _may_be_terminal(stream: Any) -> bool:
    """Whether rich could take ``stream`` for a terminal: it is one, or a variable forces
    it (else no console is made, and rich is not imported, to say it is not)."""
    try:
        if stream.isatty():
            return True
    except (AttributeError, ValueError):
        pass
    return any(os.environ.get(v) for v in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "FORCE_TERMINAL"))


def out() -> Console:
    return _console(False)


def err() -> Console:
    return _console(True)

_NUMBER = re.compile(r"-?[\d,.]+( s)?|[\d,]+ / [\d,]+|yes|no|skipped")




def _info(text: str) -> None:
    """A line about an answer, not part of it: stdout on a terminal, stderr in a pipe."""
    if plain():
        err().print(_field(text), markup=False, highlight=False, soft_wrap=True)
    else:
        out().print(_field(text), markup=False, highlight=False, style="dim")


@dataclass(frozen=True)
class Col:
    """A table column. ``kind``: ``path`` (never broken), ``num`` (never broken, right
    aligned) or ``text`` (wraps). ``drop``: 0 = always kept; at a narrow width the column
    with the highest ``drop`` goes first. ``piped``: False for a column only a reader at a
    terminal needs (the row number)."""

    name: str
    kind: str = "text"
    drop: int = 0
    style: str = ""
    right: bool = False
    piped: bool = True


def _row_number(drop: int = 3) -> Col:
    return Col("#", "num", drop, piped=False)


_OVERHEAD_PER_COLUMN = 3  # a border and one space of padding each side (rich's default box)


def fit_widths(cols: Sequence[Col], rows: Sequence[Sequence[str]], width: int,
               header: bool = True) -> tuple[list[int], list[int], int]:
    """(kept column indexes, their widths, the width to draw at) for a table of ``rows``
    in ``width`` cells: columns go by ``drop`` until the rest fit (a path or a number at
    its widest cell, an always-kept text column at up to 30 cells, another at up to 20),
    then the room left is shared among the columns wider than that. When even the kept
    columns do not fit, the width returned is wider than ``width`` (``table`` then
    writes records instead: a path is never broken).

    >>> fit_widths([Col("path", "path"), Col("n", "num", 1), Col("why", "text", 0)],
    ...            [["src/a.py", "12", "path, symbols"]], 33)
    ([0, 1, 2], [8, 2, 13], 33)
    >>> fit_widths([Col("path", "path"), Col("n", "num", 1), Col("why", "text", 0)],
    ...            [["src/a.py", "12", "path, symbols"]], 30)
    ([0, 2], [8, 13], 30)
    >>> fit_widths([Col("path", "path"), Col("why", "text")], [["src/a.py", "path, symbols"]], 20)
    ([0, 1], [8, 5], 20)
    >>> fit_widths([Col("path", "path"), Col("why", "text")], [["src/a/very/long/path.py", "x"]], 20)
    ([0, 1], [23, 3], 33)
    """
    from rich.cells import cell_len

    natural, least, hard = [], [], []
    for i, c in enumerate(cols):
        cells = [cell_len(str(r[i])) for r in rows]
        widest = max(cells, default=0)
        head_word = max((cell_len(w) for w in c.name.split()), default=1) if header else 1
        natural.append(max(widest, cell_len(c.name) if header else 1, 1))
        if c.kind == "text":
            least.append(max(min(widest, 12 if c.drop == 0 else 20), head_word, 1))
            hard.append(max(min(widest, 4), head_word, 1))
        else:
            least.append(max(widest, head_word, 1))
            hard.append(least[-1])
    kept = list(range(len(cols)))

    def need(idx: list[int], mins: list[int]) -> int:
        return sum(mins[i] for i in idx) + _OVERHEAD_PER_COLUMN * len(idx) + 1

    # an optional column stays only while the kept ones fit with the always-kept text
    # columns at their natural width (up to 30 cells): one line per row before extras
    want = [min(natural[i], 30) if c.kind == "text" and c.drop == 0 else least[i] for i, c in enumerate(cols)]
    while need(kept, want) > width:
        droppable = [i for i in kept if cols[i].drop > 0]
        if not droppable:
            break
        kept.remove(max(droppable, key=lambda i: (cols[i].drop, i)))
    widths = [least[i] for i in kept]
    excess = need(kept, least) - width
    while excess > 0:  # the last resort before drawing wider: text columns wrap more
        j = max(range(len(kept)), key=lambda j: widths[j] - hard[kept[j]])
        if widths[j] <= hard[kept[j]]:
            break
        widths[j] -= 1
        excess -= 1
    room = -excess
    short = [natural[i] - w for i, w in zip(kept, widths, strict=True)]
    if room > 0 and sum(short):
        if sum(short) <= room:
            widths = [natural[i] for i in kept]
        else:
            share = [s * room // sum(short) for s in short]
            spare = room - sum(share)
            for j in sorted(range(len(kept)), key=lambda j: -short[j]):
                if spare <= 0:
                    break
                if share[j] < short[j]:
                    share[j] += 1
                    spare -= 1
            widths = [w + s for w, s in zip(widths, share, strict=True)]
    return kept, widths, max(width, sum(widths) + _OVERHEAD_PER_COLUMN * len(kept) + 1)


def table(title: str, cols: Sequence[Col], rows: Sequence[Sequence[Any]], *, caption: str = "",
          section: str = "", header: bool = True) -> None:
    """Rows as a fitted table on a terminal, or as tab-separated lines (prefixed with
    ``section`` when given, without the columns that are not ``piped``) in a pipe, the
    caption then a note on stderr."""
    cells = [[_field(v) for v in r] for r in rows]
    if plain():
        piped = [i for i, c in enumerate(cols) if c.piped] if cols else None
        for r in cells:
            _line(*([section] if section else []), *(r if piped is None else (r[i] for i in piped)))
        if caption:
            notice(caption)
        return
    kept, widths, draw = fit_widths(cols, cells, out().width, header)
    if draw > out().width:  # a path wider than the table can hold: one record per row instead
        _records(title, cols, cells, caption)
        return
    from rich.table import Table
    from rich.text import Text

    t = Table(title=title or None, title_justify="left", show_header=header, caption=caption or None)
    for i, w in zip(kept, widths, strict=True):
        c = cols[i]
        t.add_column(c.name, width=w, no_wrap=c.kind == "path", overflow="fold",
                     justify="right" if c.kind == "num" or c.right else "left", style=c.style or None)
    for r in cells:
        t.add_row(*(Text(r[i]) for i in kept))
    out().print(t)


def _records(title: str, cols: Sequence[Col], cells: list[list[str]], caption: str) -> None:
    """Rows too wide for the terminal as records: the path(s) alone on a line (never cut;
    only a path longer than the terminal runs past its edge), every other field under it."""
    from rich.padding import Padding
    from rich.text import Text

    kept = range(len(cols))
    if title:
        out().print(Text(title, style="italic"))
    for r in cells:
        head = "  ".join(r[i] for i in kept if cols[i].kind == "path")
        out().print(Text(head, style="bold"), crop=False, soft_wrap=True)
        rest = " · ".join(f"{cols[i].name} {r[i]}" for i in kept if cols[i].kind != "path" and r[i])
        if rest:
            out().print(Padding(Text(rest), (0, 0, 0, 4)))
    if caption:
        out().print(Text(caption, style="dim"))


def kv(title: str, rows: dict[str, Any], *, section: str = "") -> None:
    """A two-column table of names and values (``name<TAB>value`` lines in a pipe)."""
    numeric = all(_NUMBER.fullmatch(_field(v)) for v in rows.values())
    table(title, [Col("name", "path"), Col("value", right=numeric)], [[k, v] for k, v in rows.items()],
          section=section, header=False)


@contextmanager
def build_progress(enabled: bool) -> Iterator[Any]:
    """A callback ``(phase, done, total)`` that drives one progress row per phase (on a
    terminal only: a log file gets no spinner frames)."""
    if not enabled or (not _may_be_terminal(sys.stderr) or not err().is_terminal):
        yield lambda *_: None
        return
    # no refresh thread (auto_refresh off): the build forks its helpers, and a fork with
    # another thread alive is refused; each update redraws instead
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    progress = Progress(SpinnerColumn(), TextColumn("{task.description:<9}"), BarColumn(),
                        MofNCompleteColumn(), TimeElapsedColumn(), console=err(), transient=False,
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


# ---- build and stats -------------------------------------------------------------------------

def build_line(r: dict[str, Any], secs: float) -> None:
    """``oracl build -q``: the build in one line (id, files indexed and read, edges, wall seconds);
    "up to date" instead of "built" when nothing changed since the build it names."""
    done = "up to date" if str(r["mode"]).startswith("up to date") else "built"
    if plain():
        _line(*build_fields(r, secs))
    else:
        out().print(f"{done} {r['root']} build {r['build_id']}: {r['files_indexed']} files "
                  f"({r['files_read']} read), {r['counts']['edges']} edges, {secs:.1f} s", markup=False,
                  highlight=False, soft_wrap=True)


def build_summary(r: dict[str, Any]) -> None:
    counts = r["counts"]
    current = str(r["mode"]).startswith("up to date")
    if plain():
        _line("up to date" if current else "built", r["root"], r["build_id"])
        _line("mode", r["mode"])
        if r.get("symbols_mode"):
            _line("symbols", r["symbols_mode"].removeprefix("symbols: "))
        if r.get("database_mode"):
            _line("database", r["database_mode"].removeprefix("database: "))
        if r.get("weigh_mode"):
            _line("weigh", r["weigh_mode"].removeprefix("weigh: "))
    else:
        out().print(f"[bold green]{'Up to date' if current else 'Built'}[/] {r['root']}  build [cyan]{r['build_id']}[/]")
        out().print(f"[dim]{r['mode']}[/]", highlight=False)
        if r.get("symbols_mode"):
            out().print(_field(r["symbols_mode"]), style="dim", markup=False, highlight=False)
        if r.get("database_mode"):
            out().print(_field(r["database_mode"]), style="dim", markup=False, highlight=False)
        if r.get("weigh_mode"):
            out().print(_field(r["weigh_mode"]), style="dim", markup=False, highlight=False)
    if r.get("untrusted"):
        err().print(f"Warning: ignored {', '.join(r['untrusted'])}: not written by your oracl (it came with the "
                    "tree, or was edited by hand); `oracl learn trust` takes it after you read it",
                    markup=False, highlight=False, soft_wrap=True)
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
    kv("Files", files, section="files")
    langs = list(r["languages"].items())
    kv("Files per language", dict(langs[:12]) | (
        {"other languages": sum(v for _, v in langs[12:])} if len(langs) > 12 else {}), section="language")
    graph = {"nodes": counts["nodes"], "artifacts": counts["nodes_by_kind"]["artifact"],
             "hubs": counts["nodes_by_kind"]["hub"], "edges": counts["edges"]}
    graph.update({f"edges: {k}": v for k, v in counts["edges_by_relation"].items()})
    graph.update({f"dropped: {k}": v for k, v in r["dropped_edges"].items()})
    graph.update({"μ (association mean)": f"{r['mu']:.4f}", "σ (association std)": f"{r['sigma']:.4f}",
                  "full-text index": "yes" if r["fts"] else "skipped"})
    kv("Graph", graph, section="graph")
    if counts.get("symbols"):
        kv("Symbols", _symbol_rows(counts["symbols"]), section="symbols")
    secs = {(k.replace("_background", " (beside the phases)")): f"{v:.2f} s" for k, v in r["seconds"].items()}
    secs["total (the phases)"] = f"{sum(v for k, v in r['seconds'].items() if not k.endswith('_background')):.2f} s"
    kv("Seconds per phase", secs, section="seconds")
    signed = ("no – the export is unsigned (set ORACL_ED25519_PRIVATE_KEY; `oracl keygen` makes a key)"
              if r["signature"] == "unsigned" else r["signature"])
    for name, value in (("export", f"{r['export_path']} (`oracl export -o FILE` writes the JSON)"),
                        ("root", r["export_root"]),
                        ("bundle", r["bundle_path"]), ("signed", signed)):
        if plain():
            _line(name, value)
        else:
            out().print(f"{name}  {value}", markup=False, highlight=False)


def _symbol_rows(sym: dict[str, Any]) -> dict[str, Any]:
    rows: dict[str, Any] = {"symbols": sym["symbols"]}
    rows.update({f"edges: {k}": v for k, v in sym["edges_by_relation"].items()})
    rows.update({"calls to nothing defined here": sym["calls_unresolved"],
                 "calls too ambiguous to link": sym["calls_too_ambiguous"]})
    return rows


_HUB_COLS = (Col("hub", "path"), Col("members", "num"), Col("mean priority", "num", 1),
             Col("top member", "path", 2))


def _hub_rows(hubs: list[dict[str, Any]]) -> list[list[str]]:
    return [[h["hub"], str(h["members"]), f"{h['mean_priority']:.3f}", h["top_member"] or ""] for h in hubs]


def stats_view(s: dict[str, Any], top: int = 15) -> None:
    commit = s.get("source_commit") or ""
    if plain():
        _line("build", s["build_id"], s["root"], s["generated_at"], commit)
    else:
        out().print(f"[bold]Build[/] [cyan]{s['build_id']}[/] of {s['root']} at {s['generated_at']}"
                  + (f" (commit {commit[:12]})" if commit else ""))
    summary = {"artifacts": s["artifacts"], "hubs": len(s["hubs"]), "edges": s["edges"]}
    summary.update({f"edges: {k}": v for k, v in s["edges_by_relation"].items()})
    summary.update({"μ": f"{s['mu']:.4f}", "σ": f"{s['sigma']:.4f}",
                    "parsed": f"{s['coverage']['parsed']} / {s['coverage']['indexed']}"})
    kv("Graph", summary, section="graph")
    if s.get("symbols"):
        kv("Symbols", _symbol_rows(s["symbols"]), section="symbols")
    hubs = s["hubs"] if plain() else s["hubs"][:top]
    more = len(s["hubs"]) - len(hubs)
    table("Domain hubs", _HUB_COLS, _hub_rows(hubs), section="hub",
          caption=f"{more} more hubs: oracl hub" if more else "")


def hub_view(r: dict[str, Any]) -> None:
    if "hubs" in r:
        table("Domain hubs (top member: the first of `oracl hub DOMAIN`)", _HUB_COLS, _hub_rows(r["hubs"]))
        return
    cut = f"only the {r['guard']} highest-ranked members were considered" if r.get("guard_cut") else ""
    table(f"{r['hub']}: top {len(r['members'])} of {r['total']} members",
          (_row_number(2), Col("member", "path"), Col("rank", "num"), Col("priority", "num", 1)),
          [[str(i), m["path"], f"{m['rank']:.3f}", f"{m['priority']:.3f}"] for i, m in enumerate(r["members"], 1)],
          caption=cut)


# ---- lines about an answer -------------------------------------------------------------------

def error_line(message: str) -> None:
    err().print(f"Error: {_field(message)}", markup=False, highlight=False, soft_wrap=True)


def notice(message: str) -> None:
    err().print(f"Note: {_field(message)}", markup=False, highlight=False, soft_wrap=True)


def plain_line(text: str) -> None:
    """One line, flushed at once (``oracl watch`` output read by other programs)."""
    if plain():
        sys.stdout.write(_field(text) + "\n")
        sys.stdout.flush()
        return
    out().print(text, markup=False, highlight=False, soft_wrap=True)
    out().file.flush()


def freshness_line(verdict: str) -> None:
    """The working tree against the build, as ``oracl status`` says it (in a pipe, only
    when it is not fresh)."""
    if verdict and not (plain() and verdict.startswith("fresh")):
        _info(f"tree: {verdict}")


def _stale_line(r: dict[str, Any]) -> None:
    if r.get("staleness") and not (plain() and r["staleness"].startswith("fresh")):
        _info(r["staleness"])
    freshness_line(r.get("freshness", ""))


def keygen_done(priv: Any, pub: Any) -> None:
    if plain():
        _line("private", priv)
        _line("public", pub)
        return
    out().print(f"private key  {priv}  (mode 0600; never commit it, never put it in the vault)", markup=False)
    out().print(f"public key   {pub}", markup=False)
    out().print("Sign every build:   export ORACL_ED25519_PRIVATE_KEY=" + str(priv), markup=False)
    out().print(f"Verify a build:     oracl verify ROOT --public-key {pub}", markup=False)


def verified(checked: list[str]) -> None:
    if plain():
        for line in checked:
            _line("ok", line)
        return
    out().print("[bold green]Verified[/]")
    for line in checked:
        out().print(f"  ✓ {line}", markup=False, highlight=False)


def health_view(rows: list[dict[str, Any]], threshold: float) -> None:
    if not rows:
        _info("No builds recorded yet.")
        return
    cols = (Col("build", "path"), Col("artifacts", "num"), Col("hubs", "num", 6), Col("edges", "num"),
            Col("μ", "num", 4), Col("σ", "num", 5), Col("orphans", "num", 8), Col("dangling", "num", 9),
            Col("parse errors", "num", 7), Col("seconds", "num", 3), Col("bundle MiB", "num", 10),
            Col("signed", "text", 2), Col("flag", "text", 0, style="bold red"))
    out_rows = []
    for r in rows:
        c = r["counts"]
        flag = ", ".join(f"{k} {v:+.0%}" for k, v in r["moved"].items())
        out_rows.append([r["build_id"] if plain() else r["build_id"][:15], str(c["artifacts"]), str(c["hubs"]),
                         str(c["edges"]), f"{r['mu']:.4f}", f"{r['sigma']:.4f}", str(r["orphans"]),
                         str(r["dropped"].get("dangling", 0)), str(r["parse_errors"]),
                         f"{sum(r['seconds'].values()):.1f}", f"{r['bundle_bytes'] / 2**20:.1f}",
                         r.get("signature", "unsigned"), f"⚑ {flag}" if flag else ""])
    table(f"Graph health (flag: a count moved more than {threshold:.0%})", cols, out_rows)


# ---- search ----------------------------------------------------------------------------------

_QUERY_COLS = (_row_number(), Col("path", "path"), Col("score", "num"), Col("domain", "text", 4),
               Col("type", "text", 5), Col("lifecycle", "text", 6), Col("priority", "num", 2),
               Col("matched", "text"))


def query_view(result: dict[str, Any], explain: bool) -> None:
    """A search answer (``Memory.search``, schema oracl.search/1) as a table; a result whose
    file changed since the build says so after its path."""
    if explain:
        _explain_head(result["explain"]["passes"], result["explain"]["cypher"])
    rows = [[str(r["rank"]), r["path"] + ("" if r.get("stale", "fresh") == "fresh" else f" ({r['stale']})"),
             f"{r['score']:.3f}", r["domain"], r["content_type"], r["lifecycle"],
             f"{r['priority']:.3f}", ", ".join(r["matched_fields"])] for r in result["results"]]
    table("" if plain() else f"{len(result['results'])} results · build {result['build_id']} · "
          f"{result['latency_ms']:.0f} ms", _QUERY_COLS, rows)
    if explain:
        for e in result["explain"]["results"]:
            if plain():
                _line("why", e["path"], e["why"])
            else:
                out().print(f"  {e['path']}: {e['why']}", markup=False, highlight=False)


def _explain_head(passes: Sequence[Sequence[str]], compiled: Sequence[dict[str, Any]]) -> None:
    """The parse passes and each Cypher template with its parameters (``--explain``)."""
    def params(c: dict[str, Any]) -> str:
        return ", ".join(f"{k}={v!r}" for k, v in sorted(c["params"].items()))

    if plain():
        for name, what in passes:
            _line("parse", name, what)
        for c in compiled:
            _line("cypher", c["template"], " ".join(c["text"].split()))
            _line("params", c["template"], params(c))
        return
    table("Parse", (Col("pass", "text"), Col("what", "text")), [list(p) for p in passes], header=False)
    for c in compiled:
        out().print(f"[bold]Cypher[/] ({c['template']})")
        out().print(c["text"], markup=False, highlight=False)
        out().print("params " + params(c), markup=False, highlight=False)


# ---- the graph around a file -----------------------------------------------------------------

def _walk(levels: list[list[dict[str, Any]]], roots: list[str], parent_key: str,
          node_key: str) -> list[tuple[int, dict[str, Any], str]]:
    """The edges of a breadth-first walk in the order a tree draws them (depth first):
    (depth, edge, mark), mark ``above``/``below`` on a repeat whose expanded place is
    drawn before/after it, else ``""``."""
    children: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for depth, level in enumerate(levels, 1):
        for e in level:
            children.setdefault(e[parent_key], []).append((depth, e))
    drawn: list[tuple[int, dict[str, Any], str]] = []
    expanded = set(roots)

    def visit(node: str) -> None:
        for depth, e in children.get(node, []):
            if e["repeat"]:
                drawn.append((depth, e, "above" if e[node_key] in expanded else "below"))
                continue
            expanded.add(e[node_key])
            drawn.append((depth, e, ""))
            visit(e[node_key])

    for root in roots:
        visit(root)
    return drawn


def _draw(head: str, drawn: list[tuple[int, dict[str, Any], str]], label: Any) -> None:
    """A rich tree of ``drawn`` (from ``_walk``) under ``head``."""
    from rich.tree import Tree

    tree = Tree(head)
    stack: list[Any] = [tree]
    for depth, e, mark in drawn:
        del stack[depth:]
        text = label(e) + {"above": " [dim](shown above)[/]", "below": " [dim](shown below)[/]", "": ""}[mark]
        stack.append(stack[depth - 1].add(text))
    out().print(tree)


def _trace_bounds(r: dict[str, Any]) -> str:
    """What a trace left out: branches past --limit, co-change edges not followed."""
    parts = []
    if r.get("total", 0) > r.get("shown", 0):
        parts.append(f"{r['shown']} of {r['total']} branches drawn (--limit N for more)")
    if r.get("cochange_left_out"):
        parts.append(f"{r['cochange_left_out']} co-change branch(es) left out (--cochange)")
    return " · ".join(parts)


def trace_view(r: dict[str, Any]) -> None:
    drawn = _walk(r["levels"], [r["root"]], "parent", "node")
    if plain():
        for depth, e, mark in drawn:
            _line(depth, e["parent"], "→" if e["direction"] == "out" else "←", e["node"], e["relation"],
                  f"{e['weight']:.2f}", f"{e['rank']:.3f}", " ".join(e.get("fragments") or []),
                  "repeat" if mark else "")
        if _trace_bounds(r):
            _info(_trace_bounds(r))
        _stale_line(r)
        return
    arrow = {"out": "→", "in": "←", "both": "↔"}[r["direction"]]

    def label(e: dict[str, Any]) -> str:
        sym = "→" if e["direction"] == "out" else "←"
        frag = " ".join(e.get("fragments") or [])
        return (f"{sym} [cyan]{_esc(e['node'])}[/]  [dim]{e['relation']} w={e['weight']:.2f} "
                f"rank={e['rank']:.3f}{' ' + _esc(frag) if frag else ''}[/]")

    _draw(f"[bold]{_esc(r['root'])}[/] ({arrow} depth {r['depth']}" + (f", {r['relation']}" if r["relation"] else "")
          + ")", drawn, label)
    bounds = _trace_bounds(r)
    _info(f"{r['nodes']} files · build {r['build_id']}" + (f" · {bounds}" if bounds else ""))
    _stale_line(r)


def _esc(text: str) -> str:
    from rich.markup import escape

    return escape(_field(text))


def related_view(r: dict[str, Any]) -> None:
    cols = (_row_number(), Col("neighbour", "path"), Col("rank", "num"), Col("relations", "text"),
            Col("dir", "text", 4), Col("fragment", "text", 2))
    rows = [[str(i), n["path"], f"{n['rank']:.3f}", ", ".join(n["relations"]), n["direction"], n["fragment"] or ""]
            for i, n in enumerate(r["neighbours"], 1)]
    cut = f"only the {r['guard']} highest-ranked edges were considered" if r["guard_cut"] else ""
    table(f"Related to {r['path']} (top {r['k']} by association rank)", cols, rows, caption=cut)
    _stale_line(r)


def graph_view(r: dict[str, Any]) -> None:
    """``oracl graph``: the edges of the drawing (source, relation, target, weight, rank,
    fragments), then the nodes with the depth they were reached at."""
    cols = (Col("source", "path"), Col("relation", "text"), Col("target", "path"), Col("weight", "num", 3),
            Col("rank", "num", 2), Col("fragments", "text", 1))
    rows = [[e["source"], e["relation"], e["target"], f"{e['weight']:.2f}", f"{e['rank']:.3f}",
             " ".join(e["fragments"])] for e in r["edges"]]
    table(f"Neighbourhood of {r['path']} (depth {r['depth']}: {len(r['nodes'])} nodes, {len(rows)} edges)",
          cols, rows, caption=r["cut_note"], section="edge")
    node_cols = (Col("depth", "num"), Col("node", "path"), Col("relation", "text"), Col("rank", "num", 2),
                 Col("priority", "num", 1))
    table("Nodes", node_cols, [[str(n["depth"]), n["id"], n["relation"] or "centre", f"{n['rank']:.3f}",
                                "" if n["priority"] is None else f"{n['priority']:.3f}"] for n in r["nodes"]],
          section="node")
    _stale_line(r)


def graph_written(path: str, r: dict[str, Any], size: int) -> None:
    _info(f"wrote {path}: the neighbourhood of {r['path']} (depth {r['depth']}, {len(r['nodes'])} nodes, "
          f"{len(r['edges'])} edges, {size:,} bytes, self-contained)")


def serving(url: str, root: str, build_id: str) -> None:
    """The address ``oracl serve`` listens on: stdout, flushed (a script may read it)."""
    sys.stdout.write(f"Serving the latest build of {root} ({build_id}) at {url}\n"
                     "Read-only, this machine only; Ctrl-C stops.\n")
    sys.stdout.flush()


def show_view(r: dict[str, Any]) -> None:
    a = r["artifact"]
    fields = {k: v for k, v in a.items() if k not in ("tags", "symbols", "headings")}
    fields["hub"] = r["hub"]
    fields["symbols"] = f"{len(a['symbols'])} (" + ", ".join(s[0] for s in a["symbols"][:8]) + (" …" if len(a["symbols"]) > 8 else "") + ")"
    fields["headings"] = len(a["headings"])
    history = a.get("history") or ""
    fields["history"] = (history[:200] + (" …" if len(history) > 200 else "")) or "none (no git history)"
    kv(a["path"], fields, section="field")
    kv("Tags", a["tags"], section="tag")
    rows: list[list[str]] = []
    for rel, sides in r["edges"].items():
        for side, edges in sides.items():
            shown = edges if plain() else edges[:15]
            for e in shown:
                other = e["target"] if side == "out" else e["source"]
                frag = " ".join(e.get("fragments") or [e["source_fragment"] if side == "out" else e["target_fragment"]])
                rows.append([rel, side, other, f"{e['weight']:.2f}", f"{e['rank']:.3f}", frag])
            if len(edges) > len(shown):
                rows.append([rel, side, f"… {len(edges) - len(shown)} more (oracl show --json)", "", "", ""])
    if plain():
        table("", (), rows, section="edge")
    else:  # the direction rides with the relation: "imports →" (this file imports it), "← imports"
        table("Edges by relation (→ from this file, ← to it)",
              (Col("relation"), Col("other file", "path"), Col("weight", "num", 2), Col("rank", "num"),
               Col("fragment", "text", 1)),
              [[f"{r[0]} →" if r[1] == "out" else f"← {r[0]}", *r[2:]] for r in rows])
    p = r["priority"]
    prows = [[b["bucket"], f"{b['weight']:.2f}", f"{b['signal']:.6f}", f"{b['contribution']:.6f}"] for b in p["buckets"]]
    prows += [["Σ w_b·c_b", "", "", f"{p['weighted_sum']:.6f}"], ["× m_cls", "", "", f"{p['m_cls']:.2f}"],
              [f"× m_sens ({p['sensitivity']}, risk {p['risk_score']})", "", "", f"{p['m_sens']:.2f}"],
              [f"= min(cap {p['cap']}, {p['uncapped']:.6f})  P0", "", "", f"{p['base']:.6f}"],
              [f"association {p['association']:.6f} → δ", "", "", f"{p['delta']:.6f}"],
              [f"final = {p['formula']}, m_role {p['m_role']:g} ({p['role']}), α {p['alpha']}", "", "",
               f"{p['final']:.6f}"]]
    table("Priority breakdown (design Eq. 2 and 6)",
          (Col("bucket"), Col("weight w_b", "num"), Col("signal c_b", "num"), Col("contribution", "num")),
          prows, section="priority")
    events = r.get("events") or {}
    if events.get("recent") or events.get("covered_by"):
        rows = [[e["timestamp_utc"], e["kind"], e["decision"], f"{e['weight']:.2f}" + (" stale" if e["stale"] else ""),
                 e["summary"]] for e in events["recent"]]
        rows += [["", "coverage", "", "", f"covered by {t}"] for t in events["covered_by"][:20]]
        table(f"Events ({events['count']}, newest first)", (Col("when"), Col("kind"), Col("decision"),
                                                             Col("weight", "num"), Col("summary", "text", 1)),
              rows, section="event")
    learned = r.get("learned") or []
    if learned:
        table("Learned from use (accepted in review)", (Col("kind"), Col("word or file", "path"), Col("κ", "num", 2),
                                                         Col("evidence", "text", 1)),
              [[x["kind"], x.get("term") or x.get("path", ""), f"{x['confidence']:.2f}",
                f"learned from {x['sessions']} sessions"] for x in learned], section="learned")
    _stale_line(r)


def _subject(p: dict[str, Any]) -> str:
    if p["kind"] == "association":
        return f"{p['source']} ↔ {p['target']}"
    if p["kind"] == "term":
        return f"{p['term']!r} → {p['path']}"
    return f"{p['path']}: {p['tag']}={p['value']}"


def ingest_view(r: dict[str, Any]) -> None:
    for x in r["reports"]:
        skipped = ", ".join(f"{v:,} {k}" for k, v in x["skipped"].items())
        out().print(f"{x['source']}: {x['format']}, {x['events']:,} events" + (f" (skipped: {skipped})" if skipped else ""),
                    markup=False, highlight=False, soft_wrap=True)
    out().print(f"{r['events']:,} events stored in {r['file']}", markup=False, highlight=False, soft_wrap=True)


def learn_view(r: dict[str, Any]) -> None:
    kinds = ", ".join(f"{k} {sum(v.values())} ({v['pending']} pending, {v['accepted']} accepted)"
                      for k, v in r["by_kind"].items())
    skipped = ", ".join(f"{v:,} {k}" for k, v in r["skipped"].items())
    out().print(f"{r['usage_rows']:,} follow-ups in {r['sessions']:,} sessions → {r['proposals']:,} proposals "
                f"({r['new']:,} new): {kinds}", markup=False, highlight=False, soft_wrap=True)
    if skipped:
        out().print(f"skipped: {skipped}", markup=False, highlight=False, soft_wrap=True)
    if r["auto_accepted"]:
        out().print(f"accepted unattended (--auto): {len(r['auto_accepted'])}", markup=False, highlight=False)
    out().print(f"review: oracl learn review; decide: oracl learn accept ID… | reject ID…  ({r['file']})",
                markup=False, highlight=False, soft_wrap=True)


def proposals_view(r: dict[str, Any]) -> None:
    rows = [[p["id"], p["status"], p["kind"], _subject(p), f"{p['confidence']:.4f}", str(p.get("support", 0)),
             "" if p.get("pmi") is None else f"{p['pmi']:.3f}", (p.get("examples") or [""])[0]]
            for p in r["proposals"]]
    table(f"{len(rows)} proposals (mined {r.get('mined_at') or 'never'}, {r.get('sessions', 0):,} sessions)",
          (Col("id"), Col("status"), Col("kind"), Col("what", "path"), Col("κ", "num"), Col("support", "num"),
           Col("PMI", "num"), Col("example query", "text", 1)), rows, section="proposal")


def decided_view(r: dict[str, Any]) -> None:
    out().print(f"{r['decision']}: {len(r['decided'])}; accepted in all: {r['accepted_total']} "
                f"(written to {', '.join(r['files'])}; the next build merges them)",
                markup=False, highlight=False, soft_wrap=True)
    for x in r["refused"]:
        err().print(f"refused {x['id']}: gate {x['gate']} ({x['path']})", markup=False, highlight=False)


def trusted_view(r: dict[str, Any]) -> None:
    out().print(f"sealed as yours: {', '.join(r['sealed'])}" if r["sealed"] else
                "nothing to seal: every learned file in the vault is already yours",
                markup=False, highlight=False, soft_wrap=True)


def fragment_view(r: dict[str, Any]) -> None:
    if r["warning"]:
        err().print(f"Warning: {r['warning']}", markup=False, highlight=False, soft_wrap=True)
    if plain():  # the lines as they are in the file: no numbers, padding or wrapping
        sys.stdout.write("".join(line + "\n" for line in r["lines"]))
        return
    from rich.syntax import Syntax

    from oracl.core.paths import LANGUAGE_OF_SUFFIX

    lexer = {"md": "markdown", "yaml": "yaml", "yml": "yaml", "json": "json", "toml": "toml", "ps1": "powershell",
             "ini": "ini", "cfg": "ini", "cypher": "cypher", "rst": "rst", "html": "html", "erb": "erb",
             "j2": "jinja", "jinja": "jinja", "xml": "xml", "sql": "sql", "css": "css"}.get(r["format"]) \
        or LANGUAGE_OF_SUFFIX.get(r["format"], "text")
    out().print(f"[bold]{_esc(r['path'])}[/] L{r['start']}-{r['end']}")
    out().print(Syntax("\n".join(r["lines"]), lexer, line_numbers=True, start_line=r["start"], word_wrap=True))


def rows_view(r: dict[str, Any]) -> None:
    rows = [["" if v is None else str(v) for v in row] for row in r["rows"]]
    if r.get("notice"):
        notice(r["notice"])
    if r.get("truncated"):
        notice(f"the answer was cut at {r['truncated']:,} rows (the console's limit)")
    if plain():
        _line(*r["columns"])
        for row in rows:
            _line(*row)
        return
    table("", [Col(str(c)) for c in r["columns"]], rows[:500])
    _info(f"{len(r['rows'])} row(s)" + (" (500 shown)" if len(r["rows"]) > 500 else ""))


def console_banner(build_id: str) -> None:
    out().print(f"ORACL Cypher console · build {build_id} · read-only · :help for help, :quit to leave")


def console_text(text: str) -> None:
    out().print(text, markup=False, highlight=False)


def status_view(r: dict[str, Any]) -> None:
    if plain():
        _line("build", r["build_id"], r["generated_at"])
        _line("commit", r.get("source_commit") or "", r.get("head") or "")
        for label in ("added", "modified", "deleted"):
            for path in r[label]:
                _line(label, path)
        _line("fresh" if r["fresh"] else "stale", r["verdict"])
        if r.get("coverage"):
            _line("coverage", r["coverage"])
        if r.get("full_text"):
            _line("full-text", r["full_text"])
        return
    out().print(f"build   {r['build_id']} at {r['generated_at']}")
    if r.get("source_commit") or r.get("head"):
        out().print(f"commit  built from {str(r['source_commit'])[:12]}, HEAD now {str(r['head'])[:12]}")
    for label in ("added", "modified", "deleted"):
        items = r[label]
        if items:
            out().print(f"{label:9}{len(items)}: " + ", ".join(items[:8]) + (" …" if len(items) > 8 else ""),
                      markup=False, highlight=False)
    if r.get("coverage"):
        out().print(f"events  {r['coverage']}", markup=False, highlight=False)
    if r.get("full_text"):
        out().print(f"search  {r['full_text']}", markup=False, highlight=False)
    style = "green" if r["fresh"] else "yellow"
    out().print(f"[{style}]{_esc(r['verdict'])}[/]", highlight=False)


# ---- symbols ---------------------------------------------------------------------------------

def _loc(r: dict[str, Any]) -> str:
    return f"{r['path']}:{r['start']}" + (f"-{r['end']}" if r.get("end", r["start"]) != r["start"] else "")


def symbols_view(r: dict[str, Any]) -> None:
    if not r["definitions"]:
        _info(f"no symbol named {r['query']!r}")
        _stale_line(r)
        return
    how = {"fuzzy": " (no exact match: closest names)",
           "ambiguous": f" ({len(r['definitions'])} definitions)"}.get(r["match"], "")
    rows = [[str(i), d["qualified"], d["kind"], _loc(d), d["signature"] + (f"  — {d['doc']}" if d["doc"] else "")]
            for i, d in enumerate(r["definitions"], 1)]
    table(f"Definitions of {r['query']}{how}", (_row_number(), Col("symbol", "path"), Col("kind", "text", 2),
                                                 Col("where", "path"), Col("signature", "text", 1)), rows)
    _stale_line(r)


def calls_view(r: dict[str, Any]) -> None:
    label = "callers" if "callers" in r else "callees"
    arrow = "←" if label == "callers" else "→"
    targets = r["targets"]
    drawn = _walk(r["levels"], [t["id"] for t in targets], "via", "id")

    def where(e: dict[str, Any]) -> str:
        return e["path"] + ":" + ",".join(str(x) for x in e["lines"][:6]) + ("…" if len(e["lines"]) > 6 else "")

    # an ambiguous name answers for several definitions: each first-level edge says which
    named = {t["id"]: t["qualified"] for t in targets} if r["match"] == "ambiguous" else {}
    whose = "calls" if label == "callers" else "called by"

    def how(e: dict[str, Any]) -> str:
        return (e["resolution"] + (f" of {e['candidates']}" if e["resolution"] == "ambiguous" else "")
                + (f" · {whose} {named[e['via']]}" if e.get("via") in named else ""))

    if plain():
        for depth, e, mark in drawn:
            _line(depth, e["qualified"], where(e), e["kind"], f"{e['confidence']:.2f}", how(e),
                  "repeat" if mark else "")
    else:
        head = ", ".join(f"{t['qualified']} ({_loc(t)})" for t in targets[:3]) + (" …" if len(targets) > 3 else "")
        _draw(f"[bold]{_esc(head)}[/] [dim]{label}, depth {r['depth']}, confidence ≥ {r['min_confidence']:g}"
              + (", fuzzy match" if r["match"] == "fuzzy" else "") + "[/]", drawn,
              lambda e: (f"{arrow} [cyan]{_esc(e['qualified'])}[/]  {_esc(where(e))}  "
                         f"[dim]{e['kind']} κ={e['confidence']:.2f} {how(e)}[/]"))
    cut = "; the query guard cut the walk" if r["guard_cut"] else ""
    more = f" (showing {r['shown']})" if r["shown"] < r["total"] else ""
    _info(f"{r['total']} {label}{more} · build {r['build_id']}{cut}")
    _stale_line(r)


def impact_view(r: dict[str, Any]) -> None:
    what = f"git diff {r['diff'] or 'HEAD'}" if r["diff"] is not None else ", ".join(r["targets"])
    _info(f"Impact of {what}: {len(r['changed'])} changed file(s), {r['seed_count']} changed symbol(s)")
    if plain():
        for s in r["seeds"]:
            _line("changed", s["qualified"], _loc(s))
    elif r["seeds"]:
        out().print("changed: " + ", ".join(f"{s['qualified']} ({_loc(s)})" for s in r["seeds"][:8])
                  + (" …" if r["seed_count"] > 8 else ""), markup=False, highlight=False)
    cols = (_row_number(), Col("path", "path"), Col("score", "num"), Col("dist", "num", 2), Col("why"))
    for title, section, rows, total in (("Tests to run", "test", r["tests"], r["test_count"]),
                                        ("Files reached", "file", r["files"], r["file_count"])):
        cells = [[str(i), f["path"], f"{f['score']:.3f}", str(f["distance"]), "; ".join(f["reasons"][:2])]
                 for i, f in enumerate(rows, 1)]
        table(f"{title} ({len(rows)} of {total})", cols, cells, section=section)
        if section == "test" and any("covering" in f for f in rows):  # the tests inside, from recorded coverage
            if plain():
                for f in rows:
                    for test_id in f.get("covering", []):
                        _line("covering", f["path"], test_id)
            else:
                n = sum(len(f.get("covering", [])) for f in rows)
                out().print(f"{n} test(s) cover the change (coverage; oracl impact --json lists them by id)",
                            markup=False, highlight=False)
    if r["symbols"]:
        cells = [[str(i), s["qualified"], _loc(s), f"{s['score']:.3f}", str(s["distance"]),
                  f"{s['relation']} {s['via'].split('#', 1)[-1]}"] for i, s in enumerate(r["symbols"], 1)]
        table(f"Symbols reached ({len(r['symbols'])} of {r['symbol_count']})",
              (_row_number(), Col("symbol", "path"), Col("where", "path", 1), Col("score", "num"),
               Col("dist", "num", 2), Col("via", "text")), cells, section="symbol")
    if plain():
        for h in r["hubs"]:
            _line("hub", h["hub"], h["files"])
    elif r["hubs"]:
        out().print("hubs: " + ", ".join(f"{h['hub']} ({h['files']})" for h in r["hubs"]), markup=False, highlight=False)
    if r["guard_cut"]:
        notice("the query guard cut the walk: the lists are partial")
    _stale_line(r)


def apply_view(r: dict[str, Any]) -> None:
    """What ``oracl apply`` did: the diff, the gates, the build and what to run."""
    o = out()
    o.print(r["diff"].rstrip("\n") or "(no change)", markup=False, highlight=False, soft_wrap=True)
    files = ", ".join(f"{f['path']} ({f['op']})" for f in r["files"])
    head = "would apply" if r["dry_run"] else f"applied {r['edit']}"
    o.print(f"{head}: {files}", markup=False, highlight=False, soft_wrap=True)
    o.print(f"gates passed: {', '.join(r['gates'])}", markup=False, highlight=False, soft_wrap=True)
    if not r["dry_run"]:
        o.print(f"build {r['build_id']}", markup=False, highlight=False)
    imp = r.get("impact") or {}
    if imp.get("error"):
        o.print(imp["error"], markup=False, highlight=False)
    tests = [t["path"] for t in imp.get("tests", [])][:10]
    files_reached = [f["path"] for f in imp.get("files", [])][:10]
    if files_reached:
        o.print("reaches: " + ", ".join(files_reached), markup=False, highlight=False, soft_wrap=True)
    if tests:
        o.print("tests to run: " + ", ".join(tests), markup=False, highlight=False, soft_wrap=True)


def refusal_view(verdicts: list[dict[str, Any]]) -> None:
    """Every refusal of ``oracl apply``, one line each (the error line follows on stderr)."""
    for v in verdicts:
        blocks = ",".join(str(b) for b in v.get("blocks") or [])
        _line("refused", v["gate"], v["path"], f"block {blocks}" if blocks else "", v["why"])


def workspace_query_view(r: dict[str, Any]) -> None:
    """``oracl query --workspace``: rank, repository, path, the member's rank and score."""
    for x in r["results"]:
        _line(x["rank"], x["repository"], x["path"], x.get("member_rank", ""), f"{float(x.get('score') or 0):.3f}")
    down = [m["name"] for m in r["members"] if not m["ok"]]
    if not r["results"]:
        _info("no member returned a result" + (f" ({len(down)} did not answer)" if down else ""))


def workspace_symbols_view(r: dict[str, Any]) -> None:
    """``oracl symbols --workspace``: repository, kind, qualified name, place, how its member matched."""
    for d in r["definitions"]:
        _line(d["repository"], d["kind"], d["qualified"], f"{d['path']}:{d['start']}-{d['end']}", d["match"])


def workspace_impact_view(r: dict[str, Any]) -> None:
    """``oracl impact --workspace``: per repository (the changed one first, then each one
    the change crosses into), its entries, tests and files."""
    what = f"git diff {r['diff'] or 'HEAD'}" if r["diff"] is not None else ", ".join(r["targets"])
    _info(f"Impact of {what} in {r['member']}: {r['reached_repositories']} other repositor"
          f"{'y' if r['reached_repositories'] == 1 else 'ies'} reached, {r['reached_files']} file(s) there")
    cols = (Col("repository", "path"), _row_number(), Col("path", "path"), Col("score", "num"), Col("dist", "num", 2),
            Col("why"))
    for sec in r["repositories"]:
        head = sec["repository"] + (f" (hop {sec['hop']}, through {sec['via']}: {', '.join(sec['packages'])})"
                                    if sec["hop"] else " (changed)")
        if sec["hop"]:
            table(f"{head}: where it uses what changed ({len(sec['entries'])} of {sec['entry_count']})",
                  (Col("repository", "path"), Col("path", "path"), Col("line", "num"), Col("conf", "num"),
                   Col("uses")),
                  [[sec["repository"], e["path"], str(e["line"]), f"{e['confidence']:.2f}",
                    f"{e['uses']} → {e['defined']}"] for e in sec["entries"]], section="entry")
        for title, section, rows, total in (("tests to run", "test", sec["tests"], sec["test_count"]),
                                            ("files reached", "file", sec["files"], sec["file_count"])):
            table(f"{head}: {title} ({len(rows)} of {total})", cols,
                  [[sec["repository"], str(i), f["path"], f"{f['score']:.3f}", str(f["distance"]),
                    "; ".join(f["reasons"][:2])] for i, f in enumerate(rows, 1)], section=section)


def workspace_callers_view(r: dict[str, Any]) -> None:
    """``oracl callers|callees --workspace``: repository, caller or callee, place, confidence,
    how (across: the package)."""
    label = "callers" if "callers" in r else "callees"
    defs = ", ".join(f"{d['qualified']} ({d['repository']}: {_loc(d)})" for d in r["definitions"][:3])
    _info(f"{r['total']} {label[:-1]}(s) of {defs}" + (" …" if len(r["definitions"]) > 3 else "")
          + f"; {r['across']} in other repositories")
    table(f"{label.capitalize()} of {r['query']}", (Col("repository", "path"), Col(label[:-1], "path"),
                                                     Col("where", "path"), Col("conf", "num"), Col("how")),
          [[c["repository"], c["qualified"], c["path"] + ":" + ",".join(str(x) for x in c["lines"][:6]),
            f"{c['confidence']:.2f}", (f"through {c['across']}: " + ", ".join(c["calls"][:3])) if c["across"]
            else c["resolution"]] for c in r[label]], section=label[:-1])


def workspace_status_view(r: dict[str, Any]) -> None:
    """``oracl status --workspace``: member, build, fresh or stale, the counts, the verdict."""
    for m in r["members"]:
        if m["ok"]:
            counts = f"+{m['added']} ~{m['modified']} -{m['deleted']}" if "added" in m else ""
            _line(m["name"], m["build_id"], "fresh" if m["fresh"] else "stale", counts, m["verdict"])
        else:
            _line(m["name"], "", "no answer", "", m["error"])


def workspace_links_view(r: dict[str, Any]) -> None:
    """``oracl workspace links``: consumer → provider, package, where the dependency is declared, files importing it."""
    table("Links between members", (Col("consumer", "path"), Col("provider", "path"), Col("package"),
                                    Col("declared", "path"), Col("files", "num")),
          [[x["consumer"], x["provider"], f"{x['package']} ({x['ecosystem']})", f"{x['manifest']}:{x['line']}",
            str(x["files"])] for x in r["links"]], section="link")
    if not r["links"]:
        _info(f"no member depends on a package another provides ({len(r['packages'])} package(s) provided)")
