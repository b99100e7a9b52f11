"""The only module that imports typer: parse flags, call one library function, render,
and map an OraclError to ``Error: <one sentence>`` on stderr with the class's exit code."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from oracl.errors import ConfigError, OraclError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="ORACL – a semantic memory for large working repositories.")

RootArg = Annotated[Path, typer.Argument(help="The folder to index (default: the current one).")]


def _fail(exc: OraclError) -> None:
    from oracl.render import error_line

    error_line(str(exc))
    raise typer.Exit(exc.exit_code)


def _memory(root: Path) -> Any:
    """The CLI's one way into a build: a Memory on a snapshot of the latest build, which
    repairs a missing or damaged bundle from the verified export first (main thread)."""
    from oracl.memory import Memory

    return Memory.open(root, repair=True)


def _print_json(obj: Any) -> None:
    import orjson

    sys.stdout.write(orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n")


@app.command()
def build(
    root: RootArg = Path("."),
    alpha: Annotated[float | None, typer.Option(help="α: association-delta blend into priority [0.35].")] = None,
    beta: Annotated[float | None, typer.Option(help="β: 2-path blend into edge rank [0.5].")] = None,
    gamma: Annotated[float | None, typer.Option(help="γ: similarity floor of the direct term [0.2].")] = None,
    lam: Annotated[float | None, typer.Option("--lambda", help="λ: 2-path decay [0.6].")] = None,
    neighbour_cap: Annotated[int | None, typer.Option(help="Heaviest edges kept per node for association and 2-paths [250].")] = None,
    priority_cap: Annotated[float | None, typer.Option(help="Cap of the base priority P0 [2.0].")] = None,
    query_guard: Annotated[int | None, typer.Option(help="Neighbours a query may consider [5000].")] = None,
    skip_phase: Annotated[list[str] | None, typer.Option("--skip-phase", help="Leave out a phase: phase2, phase3 or fts (repeatable).")] = None,
    two_layer: Annotated[bool, typer.Option("--two-layer", help="Event-sourced evidence partitions per producer (same edges).")] = False,
    no_gitignore: Annotated[bool, typer.Option("--no-gitignore", help="Index files .gitignore excludes.")] = False,
    workers: Annotated[int | None, typer.Option(help="Reader processes (default: one per core).")] = None,
    full: Annotated[bool, typer.Option("--full", help="Read every file again instead of reusing the unchanged ones.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print a machine-readable summary instead.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress display.")] = False,
) -> None:
    """Build the weighted graph of ROOT into ROOT/.oracl: records, tags, edges, hubs,
    priorities, edge ranks, a Kùzu bundle with a full-text index, and the canonical export.

    Selective by default: files whose (path, mtime, size) did not change since the previous
    build are not read again, and the bundle starts from a copy of the previous one; the
    result equals a full build's. --full reads everything."""
    from oracl.builder import build as run_build
    from oracl.render import build_progress, build_summary
    from oracl.vault import check_root

    overrides = {"alpha": alpha, "beta": beta, "gamma": gamma, "lam": lam,
                 "neighbour_cap": neighbour_cap, "priority_cap": priority_cap,
                 "query_neighbour_guard": query_guard, "workers": workers,
                 "two_layer": True if two_layer else None, "gitignore": False if no_gitignore else None}
    try:
        check_root(root)
        with build_progress(enabled=not (as_json or quiet)) as progress:
            report = run_build(root, skip=tuple(skip_phase or ()), progress=progress, full=full,
                               executor_kind="processes", **overrides)
    except OraclError as exc:
        _fail(exc)
    if as_json:
        _print_json(report.to_json())
    else:
        build_summary(report.to_json())


@app.command()
def stats(
    root: RootArg = Path("."),
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Counts of the latest build: artifacts, hubs with their members, edges by relation, μ, σ."""
    try:
        with _memory(root) as mem:
            result = mem.stats()
    except OraclError as exc:
        _fail(exc)
    from oracl.render import notice

    for line in result.get("notices", []):
        notice(line)
    if as_json:
        _print_json(result)
    else:
        from oracl.render import stats_view

        stats_view(result)


@app.command()
def query(
    text: Annotated[list[str], typer.Argument(help="What you are looking for, in your own words (or - to read stdin).")],
    root: Annotated[Path, typer.Option("--root", "-r", help="The indexed folder.")] = Path("."),
    limit: Annotated[int, typer.Option("--limit", "-k", help="Results to show.")] = 10,
    persona: Annotated[str, typer.Option(help="default, developer, operator, writer or security.")] = "default",
    explain: Annotated[bool, typer.Option("--explain", help="Show each parse pass, the Cypher and its parameters, and why each result scored.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON (schema oracl.search/1).")] = False,
) -> None:
    """Search the latest build: filters (domain: type: ext: lifecycle: since:), negation
    (-term, "but not X"), fast lookups (file: filename: path: prefix:) and free text, ranked
    by field matches, BM25 over the content, and priority."""
    from oracl.query.run import search
    from oracl.status import FreshnessCheck

    words = " ".join(text)
    if words.strip() == "-":
        words = sys.stdin.read()
    try:
        with _memory(root) as mem:
            snap, _ = mem.snapshot()
            check = FreshnessCheck(snap)  # the tree walk runs beside the search
            result = search(snap, words, limit=limit, persona=persona, explain=explain)
            fresh = check.result()
    except OraclError as exc:
        _fail(exc)
    from oracl.render import freshness_line, notice, query_view

    for line in result.notices:
        notice(line)
    if as_json:
        doc = result.to_json()
        if explain:
            doc["explain"] = {"passes": [list(p) for p in result.query.passes],
                              "cypher": [{"template": c.template, "text": c.cypher,
                                          "params": {k: str(v) for k, v in c.params.items()}}
                                         for c in result.compiled],
                              "results": result.explain}
        doc["freshness"] = fresh
        _print_json(doc)
    else:
        query_view(result, explain)
        freshness_line(fresh)


RootOpt = Annotated[Path, typer.Option("--root", "-r", help="The indexed folder.")]


def _answer(root: Path, as_json: bool, view: str, ask: Any) -> None:
    """One question to the latest build of ``root``: ``ask(memory)``, rendered by ``view``
    (or printed as JSON); an OraclError is one line and its exit code."""
    try:
        with _memory(root) as mem:
            result = ask(mem)
    except OraclError as exc:
        _fail(exc)
    _emit(result, as_json, view)


def _emit(result: dict[str, Any], as_json: bool, view: str) -> None:
    from oracl import render

    for line in result.get("notices", []):
        render.notice(line)
    if as_json:
        _print_json(result)
    else:
        getattr(render, view)(result)


@app.command()
def trace(
    path: Annotated[str, typer.Argument(help="A file of the graph (repo-relative path).")],
    root: RootOpt = Path("."),
    direction: Annotated[str, typer.Option(help="out (what it uses), in (what uses it) or both.")] = "out",
    depth: Annotated[int, typer.Option(help="Levels to follow, 1 to 5.")] = 2,
    relation: Annotated[str | None, typer.Option(help="Only this relation (imports, references, tests, …).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The dependency tree of PATH, with relation, weight and fragment on each branch."""
    _answer(root, as_json, "trace_view", lambda mem: mem.trace(path, direction, depth, relation))


@app.command()
def related(
    path: Annotated[str, typer.Argument(help="A file of the graph.")],
    root: RootOpt = Path("."),
    k: Annotated[int, typer.Option("-k", help="Neighbours to show.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """PATH's neighbourhood ordered by association rank (at most the build's --query-guard
    edges considered, 5,000 by default)."""
    _answer(root, as_json, "related_view", lambda mem: mem.related(path, k))


@app.command()
def hub(
    domain: Annotated[str | None, typer.Argument(help="A domain (core, docs, …); omit to list every hub.")] = None,
    root: RootOpt = Path("."),
    k: Annotated[int, typer.Option("-k", help="Members to show.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Domain hubs: every hub with its size, or one hub's members ranked."""
    _answer(root, as_json, "hub_view", lambda mem: mem.hub(domain, k))


@app.command()
def symbols(
    name: Annotated[str, typer.Argument(help="A name: wsgi_app, Flask.wsgi_app, flask.app.Flask.wsgi_app, path:LINE.")],
    root: RootOpt = Path("."),
    kind: Annotated[str | None, typer.Option(help="Only this kind (function, method, class, struct, …).")] = None,
    language: Annotated[str | None, typer.Option(help="Only this language (python, go, typescript, …).")] = None,
    k: Annotated[int, typer.Option("-k", help="Definitions to show.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Where NAME is defined: exact short or qualified names first, fuzzy when nothing
    matches exactly."""
    _answer(root, as_json, "symbols_view", lambda mem: mem.symbols(name, kind, language, k))


ConfidenceOpt = Annotated[float, typer.Option("--min-confidence", help=(
    "Leave out call edges below this confidence: 0.7 leaves out guesses from a name alone "
    "(a unique method name 0.5, ambiguous 0.5/n); 0 shows every edge."))]


@app.command()
def callers(
    symbol: Annotated[str, typer.Argument(help="A function, method or class (a name, qualified name or path:LINE).")],
    root: RootOpt = Path("."),
    depth: Annotated[int, typer.Option(help="Levels of callers, 1 to 5.")] = 1,
    min_confidence: ConfidenceOpt = 0.7,
    k: Annotated[int, typer.Option("-k", help="Call edges to show per level.")] = 100,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Who calls SYMBOL: each caller with the call sites' lines, the edge's confidence and
    how the name was resolved."""
    _answer(root, as_json, "calls_view", lambda mem: mem.callers(symbol, depth, min_confidence, k))


@app.command()
def callees(
    symbol: Annotated[str, typer.Argument(help="A function, method or class.")],
    root: RootOpt = Path("."),
    depth: Annotated[int, typer.Option(help="Levels of callees, 1 to 5.")] = 1,
    min_confidence: ConfidenceOpt = 0.7,
    k: Annotated[int, typer.Option("-k", help="Call edges to show per level.")] = 100,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """What SYMBOL calls among the repository's own definitions (library calls are not
    listed)."""
    _answer(root, as_json, "calls_view", lambda mem: mem.callees(symbol, depth, min_confidence, k))


@app.command()
def impact(
    targets: Annotated[list[str] | None, typer.Argument(help="Files, symbols or path:LINE that change; with "
                                                        "--diff, the revision to compare with (default HEAD).")] = None,
    root: RootOpt = Path("."),
    diff: Annotated[bool, typer.Option("--diff", help="Take the working tree's changes against a revision "
                                       "(oracl impact --diff [REV]) instead of TARGETS.")] = False,
    depth: Annotated[int, typer.Option(help="Levels of callers and subtypes to follow, 1 to 5.")] = 3,
    k: Annotated[int, typer.Option("-k", help="Rows to show per list.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """What a change reaches: the symbols and files that depend on TARGETS (or on the
    working tree's changes with --diff [REV]), ranked by weight and distance, the test
    files to run, and the hubs touched."""
    if diff and len(targets or []) > 1:
        _fail(ConfigError("--diff takes one revision (oracl impact --diff [REV]), not a list of targets"))
    rev = (targets or ["HEAD"])[0] if diff else None
    _answer(root, as_json, "impact_view",
            lambda mem: mem.impact([] if diff else targets or [], diff=rev, depth=depth, k=k))


@app.command()
def show(
    path: Annotated[str, typer.Argument(help="A file of the graph.")],
    root: RootOpt = Path("."),
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Every stored field of PATH, its tags, its edges by relation, and the priority
    breakdown from which its priority can be recomputed by hand."""
    _answer(root, as_json, "show_view", lambda mem: mem.show(path))  # with the tree's freshness


@app.command()
def fragment(
    locator: Annotated[str, typer.Argument(help="PATH#L40-60, or PATH with a range after it.")],
    lines: Annotated[str | None, typer.Argument(help="L40-60 (when not given after #).")] = None,
    root: RootOpt = Path("."),
    context: Annotated[int, typer.Option(help="Extra lines around the range.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The quoted lines, syntax-highlighted (without a range, the first 2,000); warns when
    the file changed since the build, and refuses one that is no longer a regular file
    inside the root (exit code 16)."""
    _answer(root, as_json, "fragment_view", lambda mem: mem.fragment(locator, lines, context))


@app.command()
def cypher(
    statement: Annotated[str | None, typer.Argument(help="One statement to run; omit for the interactive console.")] = None,
    root: RootOpt = Path("."),
    param: Annotated[list[str] | None, typer.Option("--param", help="k=v parameter (repeatable; v parsed as JSON when it can be).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print rows as JSON.")] = False,
) -> None:
    """A read-only Cypher console over the latest bundle: line editing and history,
    statements end with ';', :schema, :help, :quit. Only read queries run (MATCH, WITH,
    UNWIND, RETURN, CALL of read-only functions); anything else is refused (exit 18)."""
    from oracl import console

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
        from oracl.render import rows_view

        rows_view(result)


@app.command()
def status(
    root: RootArg = Path("."),
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """How far the working tree moved since the latest build: the build and its commit,
    HEAD now, the files added, modified and deleted since, and a one-line verdict."""
    from oracl.status import status as run

    try:
        result = run(root, repair=True)
    except OraclError as exc:
        _fail(exc)
    _emit(result, as_json, "status_view")


@app.command()
def repair(root: RootArg = Path(".")) -> None:
    """Rebuild the latest bundle from the verified export: for a vault whose LATEST.json
    or bundle is missing or damaged (the readers do this by themselves; a long-lived MCP
    server never does). Waits for no build: fails when one is running."""
    from oracl.render import plain_line
    from oracl.repair import rebuild_bundle
    from oracl.vault import check_root

    try:
        check_root(root)
        build_id, source = rebuild_bundle(root)
    except OraclError as exc:
        _fail(exc)
    plain_line(f"rebuilt bundle {build_id} from {source}")


@app.command()
def watch(
    root: RootArg = Path("."),
    settle: Annotated[float, typer.Option(help="Seconds without a change before a rebuild starts.")] = 1.0,
    interval: Annotated[float, typer.Option(help="Seconds between two looks at the tree.")] = 1.0,
    max_builds: Annotated[int, typer.Option(help="Stop after this many rebuilds (0: run until Ctrl-C).")] = 0,
) -> None:
    """Rebuild ROOT whenever its files change, once the changes settle: one line per
    rebuild (selective, so its cost follows the change). Builds first if ROOT is stale."""
    from oracl.render import plain_line
    from oracl.vault import check_root
    from oracl.watch import watch as run

    if settle < 0 or interval <= 0:
        _fail(ConfigError("--settle must be ≥ 0 and --interval > 0"))
    try:
        check_root(root)
        run(root, emit=plain_line, settle=settle, interval=interval, max_builds=max(0, max_builds),
            executor_kind="processes")
    except KeyboardInterrupt:
        plain_line("stopped")
    except OraclError as exc:
        _fail(exc)


@app.command()
def mcp(root: RootArg = Path(".")) -> None:
    """Serve ROOT's graph to agents over the Model Context Protocol (stdio): eight
    read-only tools (agent context, search, trace, related, hub, fragment, show, stats).
    Files holding key material are withheld unless share_sensitive = true."""
    from oracl.mcp_server import serve

    try:
        serve(root)
    except OraclError as exc:
        _fail(exc)


@app.command()
def keygen(
    out: Annotated[Path, typer.Option("--out", help="Folder for the key pair (default: ~/.config/oracl).")] = Path("~/.config/oracl"),
) -> None:
    """Write an Ed25519 key pair for signing exports: oracl_ed25519.pem (private, mode 0600)
    and oracl_ed25519.pub. Keep the private key out of the repository and the vault."""
    from oracl.render import keygen_done
    from oracl.sign import keygen as run_keygen

    try:
        priv, pub = run_keygen(out.expanduser())
    except OraclError as exc:
        _fail(exc)
    keygen_done(priv, pub)


@app.command()
def verify(
    root: RootArg = Path("."),
    public_key: Annotated[Path | None, typer.Option("--public-key", help="Ed25519 public key (PEM or base64); default ORACL_ED25519_PUBLIC_KEY.")] = None,
    require_signature: Annotated[bool, typer.Option("--require-signature", help="Fail when the export is unsigned.")] = False,
) -> None:
    """Check the latest build and fail closed: the bundle against its manifest, the export
    against its digest and signature, and the Kùzu bundle against the export (counts and
    every artifact checksum). Exit codes: 11 digest, 12 bad signature, 13 missing
    signature, 14 bundle mismatch, 15 LATEST/manifest."""
    from oracl.render import verified
    from oracl.verify import verify as run_verify

    try:
        checked = run_verify(root, public_key_file=public_key, require_signature=require_signature)
    except OraclError as exc:
        _fail(exc)
    verified(checked)


@app.command()
def health(
    root: RootArg = Path("."),
    threshold: Annotated[float | None, typer.Option(help="Flag a build whose artifact, hub or edge count moved by more than this fraction [health_threshold of [tool.oracl], 0.2].")] = None,
    last: Annotated[int, typer.Option(help="Builds to show.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """The trend of graph health over builds: counts, μ, σ, orphans, dropped references,
    parse errors, build seconds and bundle size; flags large moves between builds."""
    from oracl.provenance import health_trend, read_health
    from oracl.vault import Vault

    if threshold is None:
        from oracl.config import load_config

        try:
            threshold = load_config(root).health_threshold
        except OraclError as exc:
            _fail(exc)
    assert threshold is not None
    rows = health_trend(read_health(Vault(root)), threshold)[-last:]
    if as_json:
        _print_json(rows)
        return
    from oracl.render import health_view

    health_view(rows, threshold)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
