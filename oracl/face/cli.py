"""The only module that imports typer: parse flags, call one library function, render,
and map an OraclError to ``Error: <one sentence>`` on stderr with the class's exit code.

Every command names the repository the same way: ``-r/--root DIR`` (commands whose only
argument is the repository also take it as ``ROOT``); without one, the nearest folder
at or above the current one that holds a vault (``.oracl/``), as git finds ``.git``."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from oracl.core.errors import ConfigError, NoBuildError, OraclError, QueryError, VaultError
from oracl.core.vault import VAULT

app = typer.Typer(no_args_is_help=True, pretty_exceptions_enable=False, rich_markup_mode=None,
                  context_settings={"max_content_width": 80, "help_option_names": ["-h", "--help"]})

RootArg = Annotated[Path | None, typer.Argument(
    metavar="ROOT", show_default=False,
    help="The repository (the same as -r; default: the nearest folder at or above the current one "
         "that holds a build).")]
RootOpt = Annotated[Path | None, typer.Option(
    "--root", "-r", metavar="DIR", show_default=False,
    help="The repository (default: the nearest folder at or above the current one that holds a build).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead.")]
STALE_EXIT = 20  # `oracl status --check` on a stale build (not an error: nothing failed)


def _fail(exc: OraclError) -> None:
    from oracl.face.render import error_line

    error_line(str(exc))
    raise typer.Exit(exc.exit_code)


def _root(arg: Path | None = None, opt: Path | None = None, *, building: bool = False,
          words: tuple[list[str], str] | None = None) -> Path:
    """The repository a command works on: ROOT or -r (the same one if both), else the
    nearest folder at or above the current one that holds a vault (said on stderr when it
    is not the current folder); a build with neither starts one in the current folder.
    ``words``: what was typed where a name or text is expected, and what was expected —
    with no build here, a directory among them is refused with the command probably meant
    (rather than "no build")."""
    from oracl.core.locate import find_root

    if arg is not None and opt is not None and arg.resolve() != opt.resolve():
        _fail(ConfigError(f"two repositories named: ROOT {arg} and -r {opt}; give one"))
    given = arg if arg is not None else opt
    if given is not None:
        return given
    here = Path.cwd()
    found = find_root(here)
    if found is None:
        if building:
            return here
        if words is not None:
            _not_a_directory(words[0], here, words[1])
        _fail(NoBuildError(f"no build in {here} or any folder above it: run `oracl build DIR` first, "
                           "or name the repository with -r DIR"))
        raise AssertionError  # unreachable: _fail exits
    if found != here:
        from oracl.face.render import notice

        notice(f"using the build of {found} (the nearest above the current folder)")
    return found


def _not_a_directory(words: list[str], root: Path, what: str) -> None:
    """Refuse a directory outside the build typed where ``what`` is expected (``oracl
    query cookies /path/to/other-repo``), with the command that was probably meant."""
    from oracl.core.locate import directory_in_text

    here = Path.cwd()
    for word in words:
        folder = directory_in_text(word, root, here)
        if folder is not None:
            rest = [w for w in words if w != word]
            from typer._click.globals import get_current_context

            ctx = get_current_context(silent=True)
            name = ctx.info_name if ctx is not None else "query"
            _fail(QueryError(f"{folder!r} is a directory, not {what}: to ask the build of that repository, "
                             f"run `{' '.join(['oracl', str(name), *rest, '-r', folder])}`"))


def _repair(root: Path, problem: str) -> tuple[str, str]:
    """The repair the CLI's readers are handed: the bundle plane is imported only when a
    bundle is actually missing or damaged (a healthy query never loads the writer, the
    verifier or the signing library)."""
    from oracl.bundle.repair import repair_latest

    return repair_latest(root, problem)


WARM: dict[str, Any] = {}  # root → the open Memory of an answer helper (oracl.face.answer); empty otherwise


def _memory(root: Path) -> Any:
    """The CLI's one way into a build: a Memory on a snapshot of the latest build, which
    repairs a missing or damaged bundle from the verified export first (main thread);
    files may be named relative to the current folder. In an answer helper, its root's
    Memory stays open from one answer to the next."""
    from oracl.read.memory import Memory

    warm = WARM.get(os.path.realpath(root))
    if warm is not None:
        from contextlib import nullcontext

        warm.cwd = Path.cwd()
        return nullcontext(warm)
    from oracl.face import definitions_now

    return Memory.open(root, repair=_repair, cwd=Path.cwd(), reread=definitions_now)


def _print_json(obj: Any) -> None:
    import orjson

    from oracl.face.plain import json_text

    sys.stdout.write(json_text(orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()) + "\n")


def _version(value: bool) -> None:
    if value:  # (`oracl --version` alone is answered by oracl.face.launch before typer is imported)
        from oracl.face.launch import version_text

        sys.stdout.write(version_text() + "\n")
        raise typer.Exit(0)


@app.callback()
def main_options(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                         help="Print the version and exit.")] = False,
) -> None:
    """ORACL – a semantic memory for large working repositories.

    Every command finds the repository by itself: the nearest folder at or above the
    current one that holds a build (.oracl/), or the one named with -r DIR. On a terminal
    answers are tables fitted to its width; in a pipe they are tab-separated lines; --json
    prints JSON. Errors are one line on stderr with a distinct exit code."""


@app.command()
def build(
    root: RootArg = None,
    root_opt: RootOpt = None,
    alpha: Annotated[float | None, typer.Option(metavar="NUMBER", help="α: association-delta blend into priority [0.35].")] = None,
    beta: Annotated[float | None, typer.Option(metavar="NUMBER", help="β: 2-path blend into edge rank [0.5].")] = None,
    gamma: Annotated[float | None, typer.Option(metavar="NUMBER", help="γ: similarity floor of the direct term [0.2].")] = None,
    lam: Annotated[float | None, typer.Option("--lambda", metavar="NUMBER", help="λ: 2-path decay [0.6].")] = None,
    neighbour_cap: Annotated[int | None, typer.Option(metavar="N", help="Heaviest edges kept per node for association and 2-paths [250].")] = None,
    priority_cap: Annotated[float | None, typer.Option(metavar="NUMBER", help="Cap of the base priority P0 [2.0].")] = None,
    query_guard: Annotated[int | None, typer.Option(metavar="N", help="Neighbours a query may consider [5000].")] = None,
    skip_phase: Annotated[list[str] | None, typer.Option("--skip-phase", metavar="PHASE", help="Leave out a phase: phase2, phase3 or fts (repeatable).")] = None,
    two_layer: Annotated[bool, typer.Option("--two-layer", help="Event-sourced evidence partitions per producer (same edges).")] = False,
    jsonl: Annotated[bool, typer.Option("--jsonl", help="Also write the vault's JSON-lines files (index.jsonl, edges/*.jsonl).")] = False,
    no_gitignore: Annotated[bool, typer.Option("--no-gitignore", help="Index files .gitignore excludes.")] = False,
    workers: Annotated[int | None, typer.Option(metavar="N", help="Reader processes (default: one per core).")] = None,
    full: Annotated[bool, typer.Option("--full", help="Read every file again instead of reusing the unchanged ones.")] = False,
    executor_opt: Annotated[str, typer.Option("--executor", metavar="KIND", help="processes (forked readers), in-process, or ray[=ADDRESS]: the per-file work as tasks on a Ray cluster (pip install 'oracl[ray]').")] = "processes",
    as_json: Annotated[bool, typer.Option("--json", help="Print a machine-readable summary instead.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress display, and the summary in one line.")] = False,
) -> None:
    """Build the weighted graph of ROOT into ROOT/.oracl.

    Records, tags, edges, hubs, priorities, edge ranks, a Kùzu bundle with a full-text
    index, and the canonical export. Without ROOT: the repository whose build the current
    folder is in, else the current folder.

    Selective by default: files whose (path, size, mtime, ctime) did not change since the
    previous build are not read again, and the database is the older kept bundle's brought
    up to date in place (or a copy of the previous one's); the result equals a full build's.
    With nothing changed since the latest build (the files, the settings, git's HEAD, the
    learned data and events, the signing key) it says "up to date" and writes nothing.
    --full reads everything."""
    import contextlib

    from oracl.builder.orchestrator import build as run_build
    from oracl.core.vault import check_root
    from oracl.face import plain as lines

    overrides: dict[str, Any] = {"alpha": alpha, "beta": beta, "gamma": gamma, "lam": lam,
                 "neighbour_cap": neighbour_cap, "priority_cap": priority_cap,
                 "query_neighbour_guard": query_guard, "workers": workers,
                 "two_layer": True if two_layer else None, "gitignore": False if no_gitignore else None,
                 "jsonl": True if jsonl else None}
    root = _root(root, root_opt, building=True)
    try:
        check_root(root)
        t0 = time.perf_counter()
        # (no progress display and, in a pipe, no rich at all: ``face/plain.py``)
        if as_json or quiet:
            shown: Any = contextlib.nullcontext(lambda *_: None)
        else:
            from oracl.face.render import build_progress

            shown = build_progress(enabled=True)
        with shown as progress:
            report = run_build(root, skip=tuple(skip_phase or ()), progress=progress, full=full,
                               executor_kind=executor_opt, spare=_SPARED, **overrides)
    except OraclError as exc:
        _fail(exc)
    if as_json:
        _print_json(report.to_json())
    elif quiet and lines.plain():
        lines.line(*lines.build_fields(report.to_json(), time.perf_counter() - t0))
    elif quiet:
        from oracl.face.render import build_line

        build_line(report.to_json(), time.perf_counter() - t0)
    else:
        from oracl.face.render import build_summary

        build_summary(report.to_json())


@app.command()
def stats(
    root: RootArg = None,
    root_opt: RootOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Counts of the latest build and its domain hubs.

    Artifacts, edges by relation, μ, σ, symbols, and every domain hub with its members,
    mean priority and top member (the first of `oracl hub DOMAIN`)."""
    root = _root(root, root_opt)
    try:
        with _memory(root) as mem:
            result = mem.stats()
    except OraclError as exc:
        _fail(exc)
    from oracl.face.render import notice

    for line in result.get("notices", []):
        notice(line)
    if as_json:
        _print_json(result)
    else:
        from oracl.face.render import stats_view

        stats_view(result)


@app.command()
def query(
    text: Annotated[list[str], typer.Argument(metavar="TEXT", help="What you are looking for, in your own words (or - to read stdin).")],
    root: RootOpt = None,
    limit: Annotated[int, typer.Option("--limit", "-k", metavar="N", help="Results to show.")] = 10,
    persona: Annotated[str, typer.Option(metavar="NAME", help="default, developer, operator, writer or security.")] = "default",
    explain: Annotated[bool, typer.Option("--explain", help="Show each parse pass, the Cypher and its parameters, and why each result scored.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON (schema oracl.search/1).")] = False,
    workspace: Annotated[Path | None, typer.Option("--workspace", metavar="FILE", help="Ask every member of this workspace file (oracl workspace add) and merge the answers by rank.")] = None,
) -> None:
    """Search the latest build for files.

    Filters (domain: type: ext: lifecycle: since:), negation (-term, "but not X"), fast
    lookups (file: filename: path: prefix:) and free text – two words, a commit message
    or a pasted bug report (its title, stack traces, quoted error messages and code count
    most) – ranked by field matches, BM25 over the content, the best chunk of each file,
    its history, the graph and priority."""
    if workspace is not None:
        _query_workspace(workspace, text, limit, persona, as_json)
        return
    root = _root(None, root, words=None if text == ["-"] else (text, "search text"))
    words = " ".join(text)
    if words.strip() == "-":
        words = sys.stdin.read()
    else:
        _not_a_directory(text, root, "search text")
    try:
        with _memory(root) as mem:  # the one entrance to search (MCP, the web view and the API use it too)
            result = mem.search(words, k=limit, persona=persona, explain=explain)
    except OraclError as exc:
        _fail(exc)
    from oracl.face.render import freshness_line, notice, query_view

    for line in result["notices"]:
        notice(line)
    if as_json:
        _print_json(result)
    else:
        query_view(result, explain)
        freshness_line(result["freshness"])


def _answer(root: Path | None, as_json: bool, view: str, ask: Any, args: tuple[list[str], str] | None = None) -> None:
    """One question to the latest build of ``root``: ``ask(memory)``, rendered by ``view``
    (or printed as JSON); an OraclError is one line and its exit code. ``args``: words
    typed where a name or a file is expected (refused when one is a directory outside the
    build), and what was expected."""
    root = _root(None, root, words=args)
    if args is not None:
        _not_a_directory(args[0], root, args[1])
    try:
        with _memory(root) as mem:
            result = ask(mem)
    except OraclError as exc:
        _fail(exc)
    _emit(result, as_json, view)


def _emit(result: dict[str, Any], as_json: bool, view: str) -> None:
    from oracl.face import render

    for line in result.get("notices", []):
        render.notice(line)
    if as_json:
        _print_json(result)
    else:
        getattr(render, view)(result)


@app.command()
def trace(
    path: Annotated[str, typer.Argument(metavar="PATH", help="A file of the build: relative to the root or the current folder, or absolute.")],
    root: RootOpt = None,
    direction: Annotated[str, typer.Option(metavar="out|in|both", help="out (what it uses), in (what uses it) or both.")] = "out",
    depth: Annotated[int, typer.Option(metavar="N", help="Levels to follow, 1 to 5.")] = 2,
    relation: Annotated[str | None, typer.Option(metavar="RELATION", help="Only this relation (imports, references, tests, co_change, …).")] = None,
    limit: Annotated[int, typer.Option("--limit", "-k", metavar="N", help="Branches to draw at most, the best-ranked of each level first.")] = 50,
    cochange: Annotated[bool, typer.Option("--cochange", help="Follow co-change edges too (files committed together); structural relations only by default.")] = False,
    as_json: JsonOpt = False,
    workspace: Annotated[Path | None, typer.Option("--workspace", metavar="FILE", help="Ask a member of this workspace file: name the file MEMBER:PATH.")] = None,
) -> None:
    """The dependency tree of PATH.

    Relation, weight, rank and line fragments on each branch; a file already drawn is
    marked (shown above) or (shown below), never expanded twice. At most --limit
    branches (50), and the last line says how many were found."""
    if workspace is not None:
        _member_answer(workspace, path, as_json, "trace_view",
                       lambda mem, p: mem.trace(p, direction, depth, relation, limit, cochange))
        return
    _answer(root, as_json, "trace_view", lambda mem: mem.trace(path, direction, depth, relation, limit, cochange),
            ([path], "a file"))


@app.command()
def related(
    path: Annotated[str, typer.Argument(metavar="PATH", help="A file of the build (relative to the root or the current folder, or absolute).")],
    root: RootOpt = None,
    k: Annotated[int, typer.Option("--limit", "-k", metavar="N", help="Neighbours to show.")] = 10,
    cochange: Annotated[bool, typer.Option("--cochange", help="Co-change neighbours too (files committed together); structural relations only by default.")] = False,
    as_json: JsonOpt = False,
    workspace: Annotated[Path | None, typer.Option("--workspace", metavar="FILE", help="Ask a member of this workspace file: name the file MEMBER:PATH.")] = None,
) -> None:
    """The files around PATH, by association rank.

    At most the build's --query-guard edges are considered (5,000 by default); the answer
    says when that guard cut."""
    if workspace is not None:
        _member_answer(workspace, path, as_json, "related_view", lambda mem, p: mem.related(p, k, cochange))
        return
    _answer(root, as_json, "related_view", lambda mem: mem.related(path, k, cochange), ([path], "a file"))


@app.command("graph")
def graph_cmd(
    path: Annotated[str, typer.Argument(metavar="PATH", help="A file of the build (relative to the root or the current folder, or absolute).")],
    root: RootOpt = None,
    depth: Annotated[int, typer.Option(metavar="N", help="1: the file and its neighbours; 2: theirs too.")] = 1,
    k: Annotated[int, typer.Option("-k", metavar="N", help="Neighbours drawn around the file.")] = 40,
    html: Annotated[Path | None, typer.Option("--html", metavar="OUT", help="Write one self-contained HTML file of the graph to OUT.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """The neighbourhood of PATH as a graph: nodes and weighted edges.

    The drawing of `oracl serve`'s graph page: the k neighbours with the best-ranked
    edges (both directions, and the file's hub) and, at depth 2, the strongest eight of
    them expanded. With --html OUT, one HTML file that draws it (Cytoscape.js, the
    stylesheet and the data inlined; no network), for a review or a README."""
    if html is None:
        _answer(root, as_json, "graph_view", lambda mem: mem.neighbourhood(path, depth, k), ([path], "a file"))
        return
    from oracl.face import pages
    from oracl.face.render import graph_written
    from oracl.face.webpage import standalone_graph

    root = _root(None, root)
    _not_a_directory([path], root, "a file")
    target = html.expanduser()
    if target.is_dir():
        _fail(QueryError(f"{target} is a directory; --html takes the file to write"))
    try:
        with _memory(root) as mem:
            data = pages.neighbourhood(mem, path, depth, k, wait=30.0)
    except OraclError as exc:
        _fail(exc)
    text = standalone_graph(data).encode("utf-8")
    tmp = target.with_name(f".{target.name}.tmp")
    try:
        tmp.write_bytes(text)
        tmp.replace(target)  # a reader never sees half a file
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        _fail(QueryError(f"cannot write {target}: {exc.strerror}"))
    if as_json:
        _print_json({"written": str(target), "bytes": len(text), "path": data["path"], "depth": depth,
                     "nodes": len(data["nodes"]), "edges": len(data["edges"]), "build_id": data["build"]["build_id"]})
    else:
        graph_written(str(target), data, len(text))


@app.command()
def serve(
    root: RootArg = None,
    root_opt: RootOpt = None,
    port: Annotated[int, typer.Option(metavar="N", help="Port on 127.0.0.1 (0: a free one).")] = 8765,
    workspace: Annotated[Path | None, typer.Option("--workspace", metavar="FILE", help="Serve every member of this workspace file instead of one ROOT: members and links, search, impact and callers across them.")] = None,
) -> None:
    """A local, read-only web view of ROOT's latest build.

    A hub map, file pages (tags, the priority breakdown, symbols, edges with their
    fragments, the text with those lines marked), neighbourhood graphs, search with its
    reasons, callers and callees, impact; and the JSON API behind every page (/api).
    Listens on 127.0.0.1 only and answers only requests addressed to it; no page or
    endpoint writes or runs Cypher. Needs the web stack: pip install 'oracl[web]'.
    With --workspace FILE: the members, the links between them, and search, impact and
    callers across them."""
    if not 0 <= port <= 65535:
        _fail(ConfigError(f"--port must be between 0 and 65535, not {port}"))
    try:
        from oracl.face.serve import serve as run_serve
        from oracl.face.serve import serve_workspace
    except ModuleNotFoundError as exc:
        _fail(ConfigError(f"the web view needs {exc.name}: pip install 'oracl[web]'"))
    if workspace is not None:
        if root is not None or root_opt is not None:
            _fail(ConfigError("--workspace serves its members: give no ROOT with it"))
        def say(url: str) -> None:
            sys.stdout.write(f"Serving the workspace {workspace} at {url}\nRead-only, this machine only; Ctrl-C stops.\n")
            sys.stdout.flush()

        try:
            serve_workspace(workspace, port, say)
        except OraclError as exc:
            _fail(exc)
        except KeyboardInterrupt:
            pass
        return
    root = _root(root, root_opt)
    from oracl.core.vault import Vault
    from oracl.face.render import serving

    def announce(url: str) -> None:
        serving(url, str(root), str(Vault(root).read_latest()["build_id"]))

    helper = _answer_helper(root)
    try:
        run_serve(root, port, announce)
    except OraclError as exc:
        _fail(exc)
    except KeyboardInterrupt:
        pass
    finally:
        _stop(helper)


@app.command()
def hub(
    domain: Annotated[str | None, typer.Argument(metavar="DOMAIN", help="A domain (core, docs, …); omit to list every hub.")] = None,
    root: RootOpt = None,
    k: Annotated[int, typer.Option("-k", metavar="N", help="Members to show.")] = 20,
    as_json: JsonOpt = False,
) -> None:
    """Domain hubs, or one hub's members ranked.

    Without DOMAIN: every hub with its members, mean priority and top member. With one:
    its members by the association rank of their hub edge."""
    _answer(root, as_json, "hub_view", lambda mem: mem.hub(domain, k), ([domain or ""], "a domain"))


@app.command()
def symbols(
    name: Annotated[str, typer.Argument(metavar="NAME", help="A name: wsgi_app, Flask.wsgi_app, flask.app.Flask.wsgi_app, path:LINE.")],
    root: RootOpt = None,
    kind: Annotated[str | None, typer.Option(metavar="KIND", help="Only this kind (function, method, class, struct, …).")] = None,
    language: Annotated[str | None, typer.Option(metavar="LANGUAGE", help="Only this language (python, go, typescript, …).")] = None,
    k: Annotated[int, typer.Option("-k", metavar="N", help="Definitions to show.")] = 20,
    as_json: JsonOpt = False,
    workspace: Annotated[Path | None, typer.Option("--workspace", metavar="FILE", help="Ask every member of this workspace file; each definition with its repository.")] = None,
) -> None:
    """Where NAME is defined.

    Exact short or qualified names first, the closest names when nothing matches
    exactly."""
    if workspace is not None:
        from oracl.core.errors import in_range
        from oracl.read.fanout import symbols_workspace

        def ask(ws: Any) -> dict[str, Any]:
            in_range("-k", k, 1, 1000)
            return symbols_workspace(ws, name, kind, language, k)

        _workspace_answer(workspace, as_json, "workspace_symbols_view", ask)
        return
    _answer(root, as_json, "symbols_view", lambda mem: mem.symbols(name, kind, language, k), ([name], "a name"))


ConfidenceOpt = Annotated[float, typer.Option("--min-confidence", metavar="NUMBER", help=(
    "Leave out call edges below this confidence: 0.7 leaves out guesses from a name alone "
    "(a unique method name 0.5, ambiguous 0.5/n); 0 shows every edge."))]


@app.command()
def callers(
    symbol: Annotated[str, typer.Argument(metavar="SYMBOL", help="A function, method or class (a name, qualified name or path:LINE).")],
    root: RootOpt = None,
    depth: Annotated[int, typer.Option(metavar="N", help="Levels of callers, 1 to 5.")] = 1,
    min_confidence: ConfidenceOpt = 0.7,
    k: Annotated[int, typer.Option("-k", metavar="N", help="Call edges to show per level.")] = 100,
    as_json: JsonOpt = False,
    workspace: Annotated[Path | None, typer.Option("--workspace", metavar="FILE", help="Ask every member of this workspace file: the callers in the members that define SYMBOL and in those whose manifests depend on them.")] = None,
) -> None:
    """Who calls SYMBOL.

    Each caller with the call sites' lines, the edge's confidence and how the name was
    resolved. With --workspace, also the call sites in other repositories that reach
    SYMBOL through a package their manifests depend on."""
    if workspace is not None:
        _calls_workspace("callers", workspace, symbol, depth, min_confidence, k, as_json)
        return
    _answer(root, as_json, "calls_view", lambda mem: mem.callers(symbol, depth, min_confidence, k),
            ([symbol], "a symbol"))


@app.command()
def callees(
    symbol: Annotated[str, typer.Argument(metavar="SYMBOL", help="A function, method or class.")],
    root: RootOpt = None,
    depth: Annotated[int, typer.Option(metavar="N", help="Levels of callees, 1 to 5.")] = 1,
    min_confidence: ConfidenceOpt = 0.7,
    k: Annotated[int, typer.Option("-k", metavar="N", help="Call edges to show per level.")] = 100,
    as_json: JsonOpt = False,
    workspace: Annotated[Path | None, typer.Option("--workspace", metavar="FILE", help="Ask every member of this workspace file: also the other members' definitions SYMBOL calls through the packages its manifests depend on.")] = None,
) -> None:
    """What SYMBOL calls.

    Only the repository's own definitions (library calls are not listed), each with the
    call sites' lines and the edge's confidence. With --workspace, also the definitions
    in other members it calls through a package its repository depends on."""
    if workspace is not None:
        _calls_workspace("callees", workspace, symbol, depth, min_confidence, k, as_json)
        return
    _answer(root, as_json, "calls_view", lambda mem: mem.callees(symbol, depth, min_confidence, k),
            ([symbol], "a symbol"))


@app.command()
def impact(
    targets: Annotated[list[str] | None, typer.Argument(metavar="TARGETS", help="Files, symbols or path:LINE that change; with "
                                                        "--diff, the revision to compare with (default HEAD).")] = None,
    root: RootOpt = None,
    diff: Annotated[bool, typer.Option("--diff", help="Take the working tree's changes against a revision "
                                       "(oracl impact --diff [REV]) instead of TARGETS.")] = False,
    depth: Annotated[int, typer.Option(metavar="N", help="Levels of callers and subtypes to follow, 1 to 5.")] = 3,
    k: Annotated[int, typer.Option("-k", metavar="N", help="Rows to show per list.")] = 20,
    as_json: JsonOpt = False,
    workspace: Annotated[Path | None, typer.Option("--workspace", metavar="FILE", help="Follow the change into the other members of this workspace file that depend on its repository's packages.")] = None,
    member: Annotated[str | None, typer.Option("--member", metavar="NAME", help="With --workspace: the member that changes (default: the one holding --root or the current folder).")] = None,
    hops: Annotated[int, typer.Option("--hops", metavar="N", help="With --workspace: repository boundaries to cross, 1 to 5.")] = 3,
) -> None:
    """What a change reaches, and the tests to run.

    The symbols and files that depend on TARGETS (or on the working tree's changes with
    --diff [REV]), ranked by weight and distance, the test files to run, and the hubs
    touched. With --workspace, the same in every member whose manifests depend on the
    changed repository's packages (and theirs, --hops deep)."""
    if diff and len(targets or []) > 1:
        _fail(ConfigError("--diff takes one revision (oracl impact --diff [REV]), not a list of targets"))
    rev = (targets or ["HEAD"])[0] if diff else None
    if workspace is not None:
        from oracl.read.crossrepo import impact_workspace, member_of

        def ask(ws: Any) -> dict[str, Any]:
            name = member or member_of(ws, root or Path.cwd())
            if not diff and not targets:
                raise QueryError("name what changes: a file, a symbol, or --diff [REV]")
            return impact_workspace(ws, name, [] if diff else list(targets or []), diff=rev, depth=depth,
                                    hops=hops, k=k, cwd=Path.cwd())

        _workspace_answer(workspace, as_json, "workspace_impact_view", ask)
        return
    _answer(root, as_json, "impact_view",
            lambda mem: mem.impact([] if diff else targets or [], diff=rev, depth=depth, k=k),
            ([] if diff else list(targets or []), "a file or a symbol"))


@app.command()
def show(
    path: Annotated[str, typer.Argument(metavar="PATH", help="A file of the build (relative to the root or the current folder, or absolute).")],
    root: RootOpt = None,
    as_json: JsonOpt = False,
    workspace: Annotated[Path | None, typer.Option("--workspace", metavar="FILE", help="Ask a member of this workspace file: name the file MEMBER:PATH.")] = None,
) -> None:
    """Everything the build holds about PATH.

    Every stored field, the tags, the edges by relation (one row per file and relation,
    with its line fragments), and the priority breakdown from which the priority can be
    recomputed by hand."""
    if workspace is not None:
        _member_answer(workspace, path, as_json, "show_view", lambda mem, p: mem.show(p))
        return
    _answer(root, as_json, "show_view", lambda mem: mem.show(path), ([path], "a file"))


@app.command()
def fragment(
    locator: Annotated[str, typer.Argument(metavar="LOCATOR", help="PATH#L40-60, or PATH with a range after it.")],
    lines: Annotated[str | None, typer.Argument(metavar="LINES", help="L40-60 (when not given after #).")] = None,
    root: RootOpt = None,
    context: Annotated[int, typer.Option(metavar="N", help="Extra lines around the range.")] = 0,
    as_json: JsonOpt = False,
    workspace: Annotated[Path | None, typer.Option("--workspace", metavar="FILE", help="Ask a member of this workspace file: name the file MEMBER:PATH.")] = None,
) -> None:
    """The quoted lines of a file (without a range, the first 2,000).

    On a terminal they are numbered and highlighted; in a pipe or a file they are written
    exactly as they are in the file. Warns (on stderr) when the file changed since the
    build, and refuses one that is no longer a regular file inside the root (exit code
    16)."""
    if workspace is not None:
        _member_answer(workspace, locator, as_json, "fragment_view", lambda mem, p: mem.fragment(p, lines, context))
        return
    _answer(root, as_json, "fragment_view", lambda mem: mem.fragment(locator, lines, context),
            ([locator.split("#")[0]], "a file"))


@app.command()
def ingest(
    inputs: Annotated[list[str] | None, typer.Argument(metavar="FILE...", help="Reports (or JSON lines of events); - reads stdin. With --note: the files the note is about.")] = None,
    note: Annotated[str | None, typer.Option("--note", metavar="TEXT", help="An operator's note on the files named.")] = None,
    root: RootOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Take what CI already knows into the memory: test results, findings, coverage.

    The format is detected from the content: JSON lines of GraduatedEvents (schema
    1.0), JUnit XML (pytest --junitxml, Surefire, gotestsum, jest-junit), SARIF 2.1.0
    (ruff, semgrep, CodeQL), coverage.py JSON (with --cov-context=test: which test
    runs which lines), LCOV, Cobertura. Paths are mapped to the latest build's files
    (absolute ones from another machine by their longest suffix); others are counted
    and skipped. Events keep names only (never a message's text), secrets redacted,
    in .oracl/events/events.jsonl; the same report twice adds nothing."""
    from oracl.builder.sensors.ingest import ingest as run_ingest
    from oracl.face.render import ingest_view

    root = _root(None, root)
    names = list(inputs or [])
    if note is None and not names:
        _fail(ConfigError("name the reports to ingest (FILE… or - for stdin), or --note TEXT PATH…"))
    reports: list[tuple[str, bytes | Path]] = []
    if note is None:
        for name in names:
            if name != "-" and not Path(name).is_file():
                _fail(ConfigError(f"cannot read {name}: not a file"))
            reports.append((name, sys.stdin.buffer.read() if name == "-" else Path(name)))
    try:
        result = run_ingest(root, reports, (note, names) if note is not None else None)
    except OraclError as exc:
        _fail(exc)
    if as_json:
        _print_json(result)
    else:
        ingest_view(result)


@app.command()
def apply(
    mutation: Annotated[str, typer.Argument(metavar="FILE", help="The mutation (@@FILE/@@REPLACE/@@WITH/@@END blocks); - reads stdin.")],
    root: RootOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Gate it and show the diff and its impact; write nothing.")] = False,
    allow: Annotated[list[str] | None, typer.Option("--allow", metavar="KIND", help="Let it touch held-back files of this kind: archived, generated, vendored, lockfile, minified (repeatable).")] = None,
    confirm: Annotated[bool, typer.Option("--confirm", help="Edit files more files name than [tool.oracl] agent_confirm_backrefs.")] = False,
    no_build: Annotated[bool, typer.Option("--no-build", help="Write the files but do not rebuild (the memory is stale until the next build).")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Apply an agent's mutation through the memory's gates: all of it or nothing.

    A mutation is blocks of plain text (docs/design.md §5e has the exact rules):
    @@FILE PATH [sha256:HEX], then @@REPLACE / exact text / @@WITH / new text / @@END
    (several pairs may follow); @@CREATE PATH / text / @@END; @@DELETE PATH. Every
    gate runs before a byte is written: inside-root, not-vault, regular-file, policy,
    withheld, held-back, unchanged-since, encoding, match, bounds, no-secret, syntax,
    hub; a refusal names each gate (exit 27). Files are written to a temporary file
    and renamed, the previous bytes kept for `oracl undo`; then the memory rebuilds
    what changed and the answer gives the diff, the gates passed, the new build id and
    the impact of the change (the tests to run first)."""
    from oracl.face.render import apply_view

    root = _root(None, root)
    try:
        data = sys.stdin.buffer.read() if mutation == "-" else Path(mutation).read_bytes()
    except OSError as exc:
        _fail(ConfigError(f"cannot read {mutation}: {exc.strerror}"))
    from oracl.core.errors import EditRefusedError
    from oracl.edit.memory import Memory as EditMemory

    try:
        with EditMemory.open(root, repair=_repair, cwd=Path.cwd()) as mem:
            # written here; rebuilt below once the Memory has let go of the database, with the
            # build's forked readers (a Memory's process may not fork while it holds an engine)
            result = mem.apply(data, dry_run=dry_run, allow=tuple(allow or ()), confirm=confirm, build=False)
        if not dry_run and not no_build:
            from oracl.builder.orchestrator import build as run_build

            result["build_id"] = run_build(root, executor_kind="processes").build_id
            with EditMemory.open(root, repair=_repair, cwd=Path.cwd()) as mem:
                result["impact"] = mem.impact_of(result["changed_lines"])
    except EditRefusedError as exc:
        if as_json:
            _print_json({"refused": True, "message": str(exc), "verdicts": exc.verdicts})
        else:
            from oracl.face.render import refusal_view

            refusal_view(exc.verdicts)
        _fail(exc)
    except OraclError as exc:
        _fail(exc)
    if as_json:
        _print_json(result)
    else:
        apply_view(result)


@app.command()
def undo(
    edit: Annotated[str | None, typer.Argument(metavar="[EDIT]", help="The mutation to undo (default: the latest applied).")] = None,
    root: RootOpt = None,
    list_edits: Annotated[bool, typer.Option("--list", help="List the journal of mutations instead.")] = False,
    no_build: Annotated[bool, typer.Option("--no-build", help="Restore the files but do not rebuild.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Put back the files of the latest mutation `oracl apply` wrote (or EDIT).

    Refused (exit 28) when a file changed since the mutation wrote it: nothing is
    undone then. A mutation a killed process left half-written is rolled back by the
    next apply or undo before anything else."""
    from oracl.edit.memory import Memory as EditMemory

    root = _root(None, root)
    try:
        with EditMemory.open(root, repair=_repair, cwd=Path.cwd()) as mem:
            result: Any = {"edits": mem.edits()} if list_edits else mem.undo(edit, build=not no_build)
    except OraclError as exc:
        _fail(exc)
    if as_json:
        _print_json(result)
    elif list_edits:
        for e in result["edits"]:
            sys.stdout.write(f"{e['id']}\t{e['label']}\t{e['state']}\t{', '.join(e['files'])}\n")
    else:
        sys.stdout.write(f"undone {result['undone']}: {', '.join(result['files'])}"
                         + (f" (build {result['build_id']})" if result.get("build_id") else "") + "\n")


def _workspace_answer(path: Path, as_json: bool, view: str, ask: Any) -> None:
    """The workspace readers' one way in: the file loaded and verified, ``ask(file)``, its
    notices, then JSON or ``render.<view>`` (the members' fan-out: ``oracl.read.fanout``)."""
    from oracl.core.members import WorkspaceFile
    from oracl.face import render

    try:
        result = ask(WorkspaceFile.load(path))
    except OraclError as exc:
        _fail(exc)
    for line in result["notices"]:
        render.notice(line)
    if as_json:
        _print_json(result)
    else:
        getattr(render, view)(result)


def _member_answer(path: Path, target: str, as_json: bool, view: str, ask: Any) -> None:
    """A one-repository reader on one member of a workspace: ``target`` is MEMBER:REST, the
    member's build verified, then ``ask(memory, REST)`` as ``_answer`` does, with ``repository``."""
    from oracl.core.members import WorkspaceFile
    from oracl.read.fanout import member_target

    try:
        member, rest = member_target(WorkspaceFile.load(path), target)
        with _memory(Path(member.root)) as mem:
            result = {**ask(mem, rest), "repository": member.name}
    except OraclError as exc:
        _fail(exc)
    _emit(result, as_json, view)


def _calls_workspace(label: str, path: Path, symbol: str, depth: int, min_confidence: float, k: int,
                     as_json: bool) -> None:
    """``oracl callers|callees SYMBOL --workspace FILE`` (one level: the crossing is the point)."""
    from oracl.read import crossrepo

    if depth != 1:
        _fail(ConfigError(f"--workspace lists one level of {label} (--depth 1)"))
    fn = crossrepo.callers_workspace if label == "callers" else crossrepo.callees_workspace
    _workspace_answer(path, as_json, "workspace_callers_view",
                      lambda ws: fn(ws, symbol, min_confidence=min_confidence, k=k))


def _query_workspace(path: Path, text: list[str], limit: int, persona: str, as_json: bool) -> None:
    from oracl.core.errors import in_range
    from oracl.read.fanout import search_workspace

    words = sys.stdin.read() if text == ["-"] else " ".join(text)

    def ask(ws: Any) -> dict[str, Any]:
        in_range("--limit", limit, 1, 1000)
        return search_workspace(ws, words, k=limit, persona=persona)

    _workspace_answer(path, as_json, "workspace_query_view", ask)


workspace_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                            context_settings={"max_content_width": 80, "help_option_names": ["-h", "--help"]},
                            help="Many repositories as one memory: the members of a signed workspace file.")
app.add_typer(workspace_app, name="workspace")
WorkspaceOpt = Annotated[Path, typer.Option("--workspace", metavar="FILE", help="The workspace file [oracl-workspace.toml].")]


@workspace_app.command("add")
def workspace_add(
    paths: Annotated[list[Path], typer.Argument(metavar="PATH...", help="Repositories holding a build (.oracl/).")],
    workspace: WorkspaceOpt = Path("oracl-workspace.toml"),
    name: Annotated[str | None, typer.Option("--name", metavar="NAME", help="The member's name (one PATH; default: its folder's).")] = None,
    public_key: Annotated[Path | None, typer.Option("--public-key", metavar="FILE", help="Its builds' manifests must be signed with this Ed25519 key.")] = None,
) -> None:
    """Add repositories to the workspace file (made when missing), signed again."""
    from oracl.core.members import add

    try:
        ws = add(workspace, paths, name, public_key)
    except OraclError as exc:
        _fail(exc)
    sys.stdout.write(f"{workspace}: {len(ws.members)} member(s), signed {ws.signature.split(':', 1)[0]}\n")


@workspace_app.command("remove")
def workspace_remove(names: Annotated[list[str], typer.Argument(metavar="NAME...")],
                     workspace: WorkspaceOpt = Path("oracl-workspace.toml")) -> None:
    """Remove members by name, signed again."""
    from oracl.core.members import remove

    try:
        ws = remove(workspace, names)
    except OraclError as exc:
        _fail(exc)
    sys.stdout.write(f"{workspace}: {len(ws.members)} member(s)\n")


@workspace_app.command("list")
def workspace_list(workspace: WorkspaceOpt = Path("oracl-workspace.toml"), as_json: JsonOpt = False) -> None:
    """The members, whether each has a build, and how the file is signed."""
    from oracl.core.members import WorkspaceFile
    from oracl.core.sign import VerifyKeys
    from oracl.core.vault import Vault

    try:
        ws = WorkspaceFile.load(workspace)
        checked = ws.verify(VerifyKeys.from_env())
    except OraclError as exc:
        _fail(exc)
    rows = []
    for m in ws.members:
        try:
            build_id = str(Vault(Path(m.root)).read_latest()["build_id"])
        except (OraclError, OSError, KeyError) as exc:
            build_id = f"no build ({str(exc).split(';')[0][:80]})"
        rows.append({**m.to_json(), "build_id": build_id})
    if as_json:
        _print_json({"workspace": str(workspace), "checked": checked, "members": rows})
        return
    sys.stdout.write(f"{workspace}: {checked}\n")
    for r in rows:
        sys.stdout.write(f"{r['name']}\t{r['root']}\t{r['build_id']}" + (f"\tkey {r['public_key']}" if r["public_key"] else "") + "\n")


@workspace_app.command("links")
def workspace_links(workspace: WorkspaceOpt = Path("oracl-workspace.toml"), as_json: JsonOpt = False) -> None:
    """The edges between members: which member's manifest depends on a package another provides."""
    from oracl.read.crossrepo import links_workspace

    _workspace_answer(workspace, as_json, "workspace_links_view", links_workspace)


learn_app = typer.Typer(no_args_is_help=False, rich_markup_mode=None,
                        context_settings={"max_content_width": 80, "help_option_names": ["-h", "--help"]})
app.add_typer(learn_app, name="learn")


@learn_app.callback(invoke_without_command=True)
def learn(
    ctx: typer.Context,
    root: RootOpt = None,
    auto: Annotated[float | None, typer.Option("--auto", metavar="κ", help="Accept the pending proposals at or above this confidence unattended (off by default: read the risk in README).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Mine what was used after searches into proposals (review them before they count).

    Reads .oracl/logs/usage.jsonl (the files followed up after a search: show, fragment,
    trace, related, callers, callees, impact, a page opened from the web view's search)
    and proposes learned associations (files used together), learned query terms (a
    word people typed before using a file whose text lacks it) and domain corrections,
    each with its confidence κ, support, PMI and example queries. Proposals wait in
    .oracl/learn/proposals.json: only `oracl learn accept` writes them to the learned
    files the next build merges.

    Subcommands: review (list), accept, reject, trust."""
    if ctx.invoked_subcommand is not None:
        return
    _answer(root, as_json, "learn_view", lambda mem: mem.learn(auto))


@learn_app.command("review")
def learn_review(
    root: RootOpt = None,
    status: Annotated[str | None, typer.Option(metavar="STATUS", help="pending, accepted or rejected.")] = None,
    kind: Annotated[str | None, typer.Option(metavar="KIND", help="association, term or tag.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """The proposals, pending first, each with its id, evidence and an example query."""
    _answer(root, as_json, "proposals_view", lambda mem: mem.proposals(status, kind))


ProposalIds = Annotated[list[str] | None, typer.Argument(metavar="ID...", help="Proposal ids (oracl learn review).")]
EveryPending = Annotated[bool, typer.Option("--all", help="Every pending proposal.")]
MinConfidence = Annotated[float | None, typer.Option("--min-confidence", metavar="κ",
                                                    help="The pending proposals at or above this confidence.")]


def _decide(decision: str, ids: list[str] | None, every: bool, min_confidence: float | None,
            root: Path | None, as_json: bool) -> None:
    if not ids and not every and min_confidence is None:
        _fail(ConfigError(f"name the proposals to mark {decision}: IDs, --all or --min-confidence κ"))
    _answer(root, as_json, "decided_view", lambda mem: mem.decide(list(ids or []), decision, every, min_confidence))


def _decision_command(decision: str, doc: str) -> Any:
    def command(ids: ProposalIds = None, every: EveryPending = False, min_confidence: MinConfidence = None,
                root: RootOpt = None, as_json: JsonOpt = False) -> None:
        _decide(decision, ids, every, min_confidence, root, as_json)

    command.__doc__ = doc
    return command


learn_app.command("accept")(_decision_command("accepted", """Accept proposals: they are written to the learned files the next build merges
    (a proposal naming a file the build no longer holds, or one holding key material, is
    refused with the gate's name)."""))
learn_app.command("reject")(_decision_command("rejected", """Reject proposals (an accepted one leaves the learned files; a later mining keeps
    the decision)."""))


@learn_app.command("trust")
def learn_trust(root: RootOpt = None, as_json: JsonOpt = False) -> None:
    """Take the learned files and the proposals as they stand as yours: read them first. A
    file your oracl did not write (it came with the repository, or you edited it by hand)
    is ignored by the build and refused by accept/reject until you do."""
    _answer(root, as_json, "trusted_view", lambda mem: mem.learn_trust())


@app.command()
def cypher(
    statement: Annotated[str | None, typer.Argument(metavar="STATEMENT", help="One statement to run; omit for the interactive console.")] = None,
    root: RootOpt = None,
    param: Annotated[list[str] | None, typer.Option("--param", metavar="K=V", help="k=v parameter (repeatable; v parsed as JSON when it can be).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """A read-only Cypher console over the latest bundle.

    Line editing and history; statements end with ';'; :schema, :help, :quit. Only read
    queries run, as the engine's own grammar reads them (MATCH, WITH, UNWIND, RETURN, CALL
    of read-only functions); anything else is refused (exit 18). Each statement runs in
    a sandboxed child that can read the bundle and nothing else; a crash or a runaway
    costs that child (exit 22)."""
    from oracl.face import console

    root = _root(None, root)
    try:
        with _memory(root) as mem:
            snap, _ = mem.snapshot()
            if statement is None:
                console.interactive(snap)
                return
            result = console.run_one(snap, statement, console.parse_params(param or []))
    except OraclError as exc:
        _fail(exc)
    if as_json:
        _print_json(result)
    else:
        from oracl.face.render import rows_view

        rows_view(result)


@app.command()
def status(
    root: RootArg = None,
    root_opt: RootOpt = None,
    check: Annotated[bool, typer.Option("--check", help=(
        "Exit with code 20 when the build is stale (files added, modified or deleted since), "
        "0 when it is fresh: for scripts and git hooks."))] = False,
    as_json: JsonOpt = False,
    workspace: Annotated[Path | None, typer.Option("--workspace", metavar="FILE", help="Every member of this workspace file: its build and verdict (--check: code 20 when any is stale).")] = None,
) -> None:
    """How far the working tree moved since the latest build.

    The build and its commit, HEAD now, the files added, modified and deleted since, the
    full-text rows in-place updates superseded (their count still moves BM25 until the
    index is made again), and a one-line verdict. With --workspace, one line per member."""
    from oracl.read.status import status as run

    if workspace is not None:
        from oracl.core.members import WorkspaceFile
        from oracl.read.fanout import status_workspace

        if root is not None or root_opt is not None:
            _fail(ConfigError("--workspace reports its members: give no ROOT with it"))
        try:
            ws_result = status_workspace(WorkspaceFile.load(workspace))
        except OraclError as exc:
            _fail(exc)
        _emit(ws_result, as_json, "workspace_status_view")
        if check and not ws_result["fresh"]:
            raise typer.Exit(STALE_EXIT)
        return

    root = _root(root, root_opt)
    try:
        result = run(root, repair=_repair)
    except OraclError as exc:
        _fail(exc)
    _emit(result, as_json, "status_view")
    if check and not result["fresh"]:
        raise typer.Exit(STALE_EXIT)


@app.command()
def repair(
    root: RootArg = None,
    root_opt: RootOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Rebuild the latest bundle from the verified export.

    For a vault whose LATEST.json or bundle is missing or damaged (the readers do this by
    themselves; a long-lived MCP server never does). Waits for no build: fails when one is
    running."""
    from oracl.bundle.repair import rebuild_bundle
    from oracl.core.vault import check_root
    from oracl.face.render import plain_line

    root = _root(root, root_opt)
    try:
        check_root(root)
        build_id, source = rebuild_bundle(root)
    except OraclError as exc:
        _fail(exc)
    if as_json:
        _print_json({"build_id": build_id, "source": str(source)})
    else:
        plain_line(f"rebuilt bundle {build_id} from {source}")


@app.command()
def watch(
    root: RootArg = None,
    root_opt: RootOpt = None,
    settle: Annotated[float, typer.Option(metavar="SECONDS", help="Seconds without a change before a rebuild starts.")] = 1.0,
    interval: Annotated[float, typer.Option(metavar="SECONDS", help="Seconds between two looks at the tree when polling.")] = 1.0,
    max_builds: Annotated[int, typer.Option(metavar="N", help="Stop after this many rebuilds (0: run until Ctrl-C).")] = 0,
    poll: Annotated[bool, typer.Option("--poll", help="Look at the tree every --interval seconds instead of waiting for file events.")] = False,
) -> None:
    """Rebuild ROOT whenever its files change, once the changes settle.

    One line per rebuild (selective, so its cost follows the change). Builds first if ROOT
    is stale. Waits on the platform's file events (polls where there are none, and says
    so on the first line)."""
    from oracl.core.vault import check_root
    from oracl.face.render import plain_line
    from oracl.face.watch import watch as run

    if settle < 0 or interval <= 0 or max_builds < 0:
        _fail(ConfigError("--settle must be ≥ 0, --interval > 0 and --max-builds ≥ 0"))
    root = _root(root, root_opt, building=True)
    helper = None
    try:
        check_root(root)
        helper = _answer_helper(root)
        run(root, emit=plain_line, settle=settle, interval=interval, max_builds=max_builds,
            executor_kind="processes", poll=poll)
    except KeyboardInterrupt:
        plain_line("stopped")
    except OraclError as exc:
        _fail(exc)
    finally:
        _stop(helper)


def _answer_helper(root: Path) -> Any:
    """The process that answers this root's read-only commands warm while a watch or a
    serve runs (``oracl.face.answer``; ``ORACL_WARM=0`` turns it off)."""
    from oracl.face.answer import start_helper

    return start_helper(root)


def _stop(helper: Any) -> None:
    if helper is not None:
        helper.terminate()
        try:
            helper.wait(timeout=5)
        except Exception:  # noqa: BLE001 – it dies with this process anyway (PR_SET_PDEATHSIG)
            helper.kill()


@app.command()
def mcp(root: RootArg = None, root_opt: RootOpt = None,
        allow_edits: Annotated[bool, typer.Option("--allow-edits", help="Also serve oracl_agent_run: an agent's mutations, through the gates (off: read-only).")] = False,
        http: Annotated[bool, typer.Option("--http", help="Serve over streamable HTTP (many clients) instead of stdio.")] = False,
        host: Annotated[str, typer.Option("--host", metavar="HOST", help="With --http: the address to bind [127.0.0.1]; anything but loopback needs --token-file.")] = "127.0.0.1",
        port: Annotated[int, typer.Option("--port", metavar="PORT", help="With --http: the port [8765].")] = 8765,
        token_file: Annotated[Path | None, typer.Option("--token-file", metavar="FILE", help="With --http: clients send 'Authorization: Bearer' and the token in FILE's first line (a file only you can read); without it a new token is made, kept in ~/.config/oracl/mcp-http-PORT.token and printed.")] = None,
        max_waiting: Annotated[int, typer.Option("--max-waiting", metavar="N", help="With --http: requests that may wait beyond the 8 answered at once; more get 503 [1024].")] = 1024,
        workspace: Annotated[Path | None, typer.Option("--workspace", metavar="FILE", help="Serve every member of this workspace file instead of one ROOT (agent context, search, symbols, callers, impact, links across them; show and fragment of a member's file; read-only).")] = None) -> None:
    """Serve ROOT's graph to agents over the Model Context Protocol (stdio).

    Twelve read-only tools (agent context, search, trace, related, hub, fragment, show,
    symbols, callers, impact, stats, events). Files holding key material are withheld
    unless share_sensitive = true. With --allow-edits, also oracl_agent_run (apply a
    @@FILE/@@REPLACE/@@WITH/@@END mutation through every gate, then rebuild) and the
    edit_loop prompt; without it the server never writes a file. With --http, the same
    tools over streamable HTTP for many clients (at most 8 answered at once, --max-waiting
    more queued, the rest 503), each with a bearer token, on loopback too (--token-file,
    or a new one printed on start); a bind beyond loopback needs --token-file. With
    --workspace FILE, eight tools over every member instead (agent context, search,
    symbols, callers, impact, links; show and fragment of one member's file), each row
    with its repository."""
    from oracl.face.mcp_server import serve, serve_http

    if workspace is not None:
        if allow_edits or root is not None or root_opt is not None:
            _fail(ConfigError("--workspace serves the members read-only: give neither ROOT nor --allow-edits"))
    else:
        root = _root(root, root_opt)
    try:
        if http:
            from oracl.core.errors import in_range

            in_range("--port", port, 0, 65535)
            in_range("--max-waiting", max_waiting, 0, 1_000_000)
            serve_http(root, host, port, token_file, allow_edits, queue=max_waiting, workspace=workspace)
        else:
            serve(root, allow_edits, workspace=workspace)
    except OraclError as exc:
        _fail(exc)


@app.command()
def keygen(
    out: Annotated[Path, typer.Option("--out", metavar="DIR", help="Folder for the key pair.")] = Path("~/.config/oracl"),
    as_json: JsonOpt = False,
) -> None:
    """Write an Ed25519 key pair for signing exports.

    oracl_ed25519.pem (private, mode 0600) and oracl_ed25519.pub. Keep the private key out
    of the repository and the vault."""
    from oracl.core.sign import keygen as run_keygen
    from oracl.face.render import keygen_done

    try:
        priv, pub = run_keygen(out.expanduser())
    except OraclError as exc:
        _fail(exc)
    if as_json:
        _print_json({"private_key": str(priv), "public_key": str(pub)})
    else:
        keygen_done(priv, pub)


@app.command()
def verify(
    root: RootArg = None,
    root_opt: RootOpt = None,
    public_key: Annotated[Path | None, typer.Option("--public-key", metavar="FILE", help="Ed25519 public key (PEM or base64); default ORACL_ED25519_PUBLIC_KEY.")] = None,
    require_signature: Annotated[bool, typer.Option("--require-signature", help="Fail when the export is unsigned.")] = False,
    as_json: JsonOpt = False,
    workspace: Annotated[Path | None, typer.Option("--workspace", metavar="FILE", help="Every member of this workspace file, each with the public key it names (then signed it must be); exits with the first failing member's code.")] = None,
) -> None:
    """Check the latest build and fail closed.

    The bundle against its manifest, the export against its digest and signature, and the
    Kùzu bundle against the export (counts and every artifact checksum). Exit codes: 11
    digest, 12 bad signature, 13 missing signature, 14 bundle mismatch, 15
    LATEST/manifest."""
    from oracl.bundle.verify import verify as run_verify
    from oracl.face.render import verified

    if workspace is not None:
        from oracl.core.members import WorkspaceFile

        if root is not None or root_opt is not None or public_key is not None:
            _fail(ConfigError("--workspace verifies its members with the keys it names: give no ROOT or --public-key"))
        try:
            ws = WorkspaceFile.load(workspace)
        except OraclError as exc:
            _fail(exc)
        rows: list[dict[str, Any]] = []
        for m in ws.members:
            try:
                checks = run_verify(Path(m.root), public_key_file=Path(m.public_key) if m.public_key else None,
                                    require_signature=require_signature or m.public_key is not None)
                rows.append({"name": m.name, "root": m.root, "verified": True, "checks": checks})
            except OraclError as exc:
                rows.append({"name": m.name, "root": m.root, "verified": False,
                             "error": str(exc).split("\n")[0][:300], "exit_code": exc.exit_code})
        failed = [r for r in rows if not r["verified"]]
        if as_json:
            _print_json({"workspace": str(workspace), "verified": not failed, "members": rows})
        else:
            for r in rows:
                sys.stdout.write(f"{r['name']}\t" + ("verified\t" + f"{len(r['checks'])} checks" if r["verified"]
                                                     else f"FAILED\t{r['error']}") + "\n")
        if failed:
            raise typer.Exit(failed[0]["exit_code"])
        return

    root = _root(root, root_opt)
    try:
        checked = run_verify(root, public_key_file=public_key, require_signature=require_signature)
    except OraclError as exc:
        _fail(exc)
    if as_json:
        _print_json({"verified": True, "checks": checked})
    else:
        verified(checked)


@app.command("export")
def export_cmd(
    root: RootArg = None,
    root_opt: RootOpt = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", metavar="FILE", help="Write the export to FILE (atomically) instead of stdout.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Write the latest build's canonical export (weighted_graph_index.json).

    A build keeps its export as parts under a signed index (.oracl/export.idx); this
    assembles the canonical JSON from them, the index checked against the root that
    LATEST.json records and every part against its digest before any byte is written: to
    stdout, or with -o to FILE, written beside it and renamed into place. A mismatch writes
    nothing and exits 11, as `oracl verify` does. With -o, says what was written (--json:
    build_id, root, sha256 of the bytes, bytes, path, signature)."""
    from oracl.face import render
    from oracl.read.export import export_to
    from oracl.read.snapshot import Snapshot

    root = _root(root, root_opt)
    if output is None and as_json:
        _fail(ConfigError("--json describes a file written with -o; without -o the export itself is the output"))
    try:
        with Snapshot.open(root, repair=_repair) as snap:
            for line in snap.notices:
                render.notice(line)
            done = export_to(snap, output, None if output is not None else sys.stdout.buffer)
    except OraclError as exc:
        _fail(exc)
    if output is None:
        return
    if as_json:
        _print_json(done.to_json())
    else:
        render.plain_line(f"wrote {done.path}: {done.bytes:,} bytes, sha256 {done.sha256}, root {done.root[:16]}…, "
                          f"build {done.build_id}"
                          + (f", signature {done.signature}" if done.signature else ", unsigned"))


@app.command()
def health(
    root: RootArg = None,
    root_opt: RootOpt = None,
    threshold: Annotated[float | None, typer.Option(metavar="FRACTION", help="Flag a build whose artifact, hub or edge count moved by more than this fraction [health_threshold of [tool.oracl], 0.2].")] = None,
    last: Annotated[int, typer.Option(metavar="N", help="Builds to show.")] = 20,
    as_json: JsonOpt = False,
) -> None:
    """The trend of graph health over builds.

    Counts, μ, σ, orphans, dropped references, parse errors, build seconds and bundle
    size; flags large moves between builds."""
    from oracl.bundle.provenance import health_trend, read_health
    from oracl.core.vault import Vault

    if last < 1 or (threshold is not None and not 0 <= threshold <= 100):
        _fail(ConfigError("--last must be at least 1 and --threshold between 0 and 100"))
    root = _root(root, root_opt)
    if threshold is None:
        from oracl.core.config import load_config

        try:
            threshold = load_config(root, packages={}).health_threshold
        except OraclError as exc:
            _fail(exc)
    assert threshold is not None
    rows = health_trend(read_health(Vault(root)), threshold)[-last:]
    if as_json:
        _print_json(rows)
        return
    from oracl.face.render import health_view

    health_view(rows, threshold)


def command() -> Any:
    """The click command of the CLI, its arguments shown the way click shows them
    (``TEXT...``, ``[ROOT]``) and without a type after their name."""
    group = typer.main.get_command(app)
    for cmd in getattr(group, "commands", {}).values():
        for param in cmd.params:
            if param.param_type_name == "argument":
                name = param.metavar or (param.name or "").upper()
                shown = name + ("..." if param.nargs != 1 else "")
                shown = shown if param.required else f"[{shown}]"
                param.make_metavar = lambda ctx=None, usage=False, shown=shown: shown
    return group


REFERENCE_HEAD = """# CLI reference

Generated from the commands' own `--help` (80 columns) by
`python scripts/cli_reference.py`; `tests/test_cli_ergonomics.py` fails when this file
and the code disagree. What each answer looks like: [README](../README.md).

Every command finds the repository by itself (the nearest folder at or above the current
one that holds `.oracl/`, said on stderr when it is not the current folder), or takes it
as `-r DIR` (commands whose only argument is the repository also take it as `ROOT`). A
file is named relative to the root, relative to the current folder, or absolutely.

On a terminal answers are tables fitted to its width (a path is never broken: the least
useful columns go first); in a pipe or a file they are tab-separated lines, one record
a line, with notes and the tree's freshness on stderr; `--json` prints JSON.
`TTY_COMPATIBLE=1` asks for the terminal form in a pipe, `=0` for the plain form on a
terminal.

## Shell completion

```bash
oracl --install-completion                  # the current shell (bash, zsh, fish, PowerShell), installed
eval "$(_ORACL_COMPLETE=source_bash oracl)" # or for this session only (source_zsh, source_fish)
```

`oracl --show-completion` prints the script for the shell it detects.

Commands and options complete; in bash an argument with nothing of its own to offer
falls back to file names.
"""


def reference() -> str:
    """docs/cli.md: every command's ``--help`` at 80 columns, under ``REFERENCE_HEAD``."""
    group = command()
    ctx = group.make_context("oracl", [], resilient_parsing=True, terminal_width=80, max_content_width=80)
    parts = [REFERENCE_HEAD, f"## oracl\n\n```text\n{group.get_help(ctx).rstrip()}\n```\n"]
    for name, cmd in group.commands.items():
        sub = cmd.make_context(name, [], parent=ctx, resilient_parsing=True, terminal_width=80,
                               max_content_width=80)
        parts.append(f"## oracl {name}\n\n```text\n{cmd.get_help(sub).rstrip()}\n```\n")
    return "\n".join(parts)


def negations_as_text(cmd: Any, args: list[str]) -> list[str]:
    """``oracl query cookies -jar -k 5`` as ``query cookies -k 5 -- -jar``: a word that
    starts with one ``-`` and is not one of the command's options is a negation (search
    text), so it goes after ``--`` where the parser takes it as text; an unknown ``--x``
    stays an error.

    >>> import typer
    >>> negations_as_text(typer.main.get_command(app).commands["query"], ["sign", "-jar", "-k", "5", "-", "--x"])
    ['sign', '-k', '5', '-', '--x', '--', '-jar']
    """
    takes_value: set[str] = set()
    flags: set[str] = set()
    for p in cmd.params:
        if p.param_type_name == "option":
            (flags if p.is_flag else takes_value).update(p.opts + p.secondary_opts)
    flags.update(("-h", "--help"))
    kept: list[str] = []
    text: list[str] = []
    i = 0
    while i < len(args):
        tok = args[i]
        if tok == "--":
            text += args[i + 1:]
            break
        name = tok.split("=", 1)[0]
        if tok in takes_value:
            kept += args[i:i + 2]
            i += 2
            continue
        if tok in flags or (name in takes_value and "=" in tok) or any(
                tok.startswith(o) and len(o) == 2 and tok[2:].isdigit() for o in takes_value):
            kept.append(tok)
        elif tok.startswith("-") and not tok.startswith("--") and len(tok) > 1:
            text.append(tok)
        else:
            kept.append(tok)
        i += 1
    return kept + (["--", *text] if text else [])


def run(args: list[str], session: str | None = None) -> int:
    """``oracl ARGS``: the exit code. A usage error (an unknown option, a missing argument)
    is one line too: ``Error: <what> (oracl CMD -h for help)``, exit code 2. Searches and
    follow-ups are logged under ``session`` (an answer helper passes its client's), else
    this terminal's (``oracl.face.answer.terminal_session``)."""
    from oracl.core import telemetry
    from oracl.face.answer import terminal_session

    with telemetry.session(session or terminal_session()):
        return _run(args)


def _run(args: list[str]) -> int:
    from typer._click.exceptions import ClickException, NoArgsIsHelpError

    group = command()
    if args and args[0] == "query":
        args = ["query", *negations_as_text(group.commands["query"], args[1:])]
    try:
        code = group.main(args=args, prog_name="oracl", standalone_mode=False)
        sys.stdout.flush()
    except NoArgsIsHelpError as exc:
        exc.show()
        code = exc.exit_code
    except ClickException as exc:
        from oracl.face.render import error_line

        where = getattr(getattr(exc, "ctx", None), "command_path", "oracl")
        error_line(f"{exc.format_message().rstrip('.')} ({where} -h for help)")
        code = exc.exit_code
    except OSError as exc:
        line = _unwritable_vault(exc)
        if line is None:
            raise
        from oracl.face.render import error_line

        error_line(line)
        code = VaultError.exit_code
    return code if isinstance(code, int) else 0


def _unwritable_vault(exc: OSError) -> str | None:
    """One line for a vault that cannot be written (a read-only mount, another user's
    folder); None for any other OSError, which stays a bug with its traceback."""
    import errno

    where = str(exc.filename or "")
    if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM) or f"/{VAULT}" not in where:
        return None
    why = "is on a read-only file system" if exc.errno == errno.EROFS else "cannot be written by you"
    return f"the vault {where.split('/' + VAULT)[0]}/{VAULT} {why} ({where}); readers still answer from it"


# (the console script's: what a build made, left to the end of the process rather than freed)
_SPARED: list[Any] | None = None


def main() -> None:
    """The ``oracl`` console script. After a build it leaves by ``os._exit`` once its output
    is flushed: the interpreter would otherwise free the build's millions of objects one
    by one (``build(spare=…)``), and there is nothing else to finish."""
    global _SPARED
    _SPARED = []
    try:
        code = run(sys.argv[1:])
    except BrokenPipeError:
        code = _reader_left()
    except SystemExit as exc:  # the parser turns a closed pipe into exit 1: undo that
        if not isinstance(exc.__context__, BrokenPipeError):
            raise
        code = _reader_left()
    if _SPARED:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except OSError:  # (a reader that left: as _reader_left, not an error)
            pass
        os._exit(code if isinstance(code, int) else 1)
    sys.exit(code)


def _reader_left() -> int:
    """``oracl hub | head -n 1``: the reader took what it wanted and closed the pipe. Not
    an error (exit 0, as rg does), so ``set -o pipefail`` scripts keep going; stdout goes
    to /dev/null so that the interpreter's last flush stays quiet."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 0


if __name__ == "__main__":
    main()
