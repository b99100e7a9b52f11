"""``oracl mcp``: read-only memory for agents over the Model Context Protocol (stdio).

Built on the official ``mcp`` Python SDK (``pip install 'oracl[mcp]'``). The handshake
never touches the graph: the server's ``Memory`` opens a snapshot of the latest build on
the first tool call, and every call checks LATEST again, so a server keeps answering from
the previous build while ``oracl build`` runs and moves to the new one when LATEST flips.
When LATEST is deleted or damaged the server keeps answering from the build it holds and
says so; it never repairs a vault (``oracl repair`` does). Any number of servers may share
a vault: they only ever open bundles read-only.

Every tool answer is JSON with ``build_id``, ``staleness`` (whether the files it names
changed since the build) and ``truncated``; answers are bounded (``max_chars``, default
20,000, at most 100,000), trimming the longest lists first.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Any

import orjson

from oracl.core.errors import NoBuildError, OraclError, in_range
from oracl.core.vault import check_root
from oracl.core.version import __version__

try:  # the tools' return type (FastMCP reads the annotations); the SDK is an optional extra
    from mcp.types import CallToolResult
except ModuleNotFoundError:  # pragma: no cover - `oracl mcp` says how to install it
    CallToolResult = Any  # type: ignore[misc,assignment]

DEFAULT_MAX_CHARS = 20_000
MAX_CHARS = 100_000
_LIST_KEYS = ("results", "items", "neighbours", "members", "hubs", "levels", "lines", "rows", "definitions",
              "callers", "callees", "symbols", "files", "tests", "seeds")


def bound(obj: dict[str, Any], max_chars: int) -> dict[str, Any]:
    """Trim ``obj`` until its JSON fits ``max_chars``: halve the longest list, then cut
    long strings; ``truncated`` says whether anything was dropped."""
    max_chars = max(1000, min(MAX_CHARS, int(max_chars)))
    obj = dict(obj)
    obj.setdefault("truncated", False)

    def size() -> int:
        return len(orjson.dumps(obj, default=str))

    guard = 0
    while size() > max_chars and guard < 60:
        guard += 1
        lists = [(k, v) for k, v in obj.items() if isinstance(v, list) and len(v) > 1]
        if lists:
            longest, items = max(lists, key=lambda kv: len(orjson.dumps(kv[1], default=str)))
            obj[longest] = items[: len(items) // 2]
        else:
            strings = [(k, v) for k, v in obj.items() if isinstance(v, str) and len(v) > 200]
            nested = [(k, v) for k, v in obj.items() if isinstance(v, list | dict)]
            if strings:
                key, value = max(strings, key=lambda kv: len(kv[1]))
                obj[key] = value[: len(value) // 2] + " …"
            elif nested:
                biggest, inner = max(nested, key=lambda kv: len(orjson.dumps(kv[1], default=str)))
                obj[biggest] = orjson.dumps(inner, default=str).decode()[: max_chars // 2] + " …"
            else:
                break
        obj["truncated"] = True
    return obj


def _answer(fn: Any, max_chars: int, mem: Any = None) -> Any:
    """Run one primitive; a missing build or a bad argument is a tool error (``isError``
    true, the JSON ``{"error": …}`` as its text), not a crash. With ``mem``, a successful
    answer carries the tree's freshness (``oracl status``'s verdict)."""
    from mcp.types import TextContent

    error = False
    try:
        in_range("max_chars", max_chars, 1000, MAX_CHARS)
        result = fn()
        if mem is not None and isinstance(result, dict) and "freshness" not in result:
            result["freshness"] = mem.freshness()
    except NoBuildError as exc:
        result, error = {"error": str(exc), "hint": "run `oracl build ROOT` in a shell, then call the tool again"}, True
    except OraclError as exc:
        result, error = {"error": str(exc)}, True
    text = orjson.dumps(bound(result, max_chars), default=str, option=orjson.OPT_SORT_KEYS).decode()
    return CallToolResult(content=[TextContent(type="text", text=text)], isError=error)


def _server(name: str, instructions: str, http: bool) -> Any:
    """A FastMCP server named with ORACL's version; over HTTP stateless with JSON answers
    (one request, one answer: no session state to share between many clients)."""
    from mcp.server.fastmcp import FastMCP

    server = FastMCP(name, log_level="WARNING", instructions=instructions)
    server._mcp_server.version = __version__  # serverInfo names ORACL's version, not the SDK's
    if http:
        server.settings.stateless_http = True
        server.settings.json_response = True
    return server


def create_server(root: Path, allow_edits: bool = False, http: bool = False) -> Any:
    """The FastMCP server with ORACL's twelve read-only tools; with ``allow_edits`` also
    ``oracl_agent_run`` (an agent's mutation through the gates) and the ``edit_loop`` prompt."""
    from oracl.core.config import load_config
    from oracl.face import definitions_now
    from oracl.read.memory import Memory
    if allow_edits:
        from oracl.edit.memory import Memory  # the read Memory, plus apply

    check_root(Path(root))
    root = Path(root).resolve()
    share = load_config(root, packages={}).share_sensitive
    mem = Memory(root, withhold_sensitive=not share, reread=definitions_now)
    server = _server("oracl", (
        "ORACL is a semantic memory of the repository at " + str(root) + ". Start with "
        "oracl_agent_context for a question in plain words; use oracl_search for ranked files, "
        "oracl_show / oracl_fragment to read one file's facts or lines, oracl_trace / oracl_related / "
        "oracl_hub to walk the graph; oracl_symbols, oracl_callers and oracl_impact for definitions, call "
        "graphs and what a change reaches. Every answer says its build and whether files changed since."), http)

    @server.tool()
    def oracl_agent_context(query: str, budget_tokens: int = 4000, max_chars: int = DEFAULT_MAX_CHARS) -> CallToolResult:
        """Assemble a context pack for a question or task in plain words (a bug report, a
        commit message, "where is X done"). Returns the best files in order, each with the
        exact lines that matched (the symbol or section, not the whole file), why it was
        chosen, and whether it changed since the build, never exceeding budget_tokens
        (estimated at 4 characters a token). Use this first; follow up with oracl_fragment
        for more lines of one file."""
        return _answer(lambda: mem.context(query, budget_tokens=budget_tokens).to_json(),
                       max_chars, mem)

    @server.tool()
    def oracl_search(query: str, k: int = 10, max_chars: int = DEFAULT_MAX_CHARS) -> CallToolResult:
        """Rank the repository's files for free text. Understands filters (domain:core,
        type:report, ext:py, lifecycle:active, since:2026-01-31), negation (-word, "but not
        X"), and exact lookups (file:PATH, filename:NAME, prefix:DIR/). Returns path, score,
        domain, content type, priority, matched fields and staleness per file."""
        return _answer(lambda: mem.search(query, k=k), max_chars, mem)

    @server.tool()
    def oracl_trace(path: str, direction: str = "out", depth: int = 2, relation: str | None = None,
                    limit: int = 50, cochange: bool = False, max_chars: int = DEFAULT_MAX_CHARS) -> CallToolResult:
        """Follow a file's dependencies: direction "out" (what it imports, links, configures),
        "in" (what uses or tests it) or "both", depth 1 to 5, optionally one relation
        (imports, references, configures, tests, mentions). Each edge has its relation,
        weight and the line range of the reference. At most ``limit`` branches, best-ranked
        first ("total" counts those found); co-change edges only with cochange=true."""
        return _answer(lambda: mem.trace(path, direction, depth, relation, limit, cochange), max_chars, mem)

    @server.tool()
    def oracl_related(path: str, k: int = 10, cochange: bool = False,
                      max_chars: int = DEFAULT_MAX_CHARS) -> CallToolResult:
        """The files most strongly associated with one file (both directions), ordered by
        the graph's association rank, with the relations that connect them; files only
        committed together (co-change) with cochange=true."""
        return _answer(lambda: mem.related(path, k, cochange), max_chars, mem)

    @server.tool()
    def oracl_hub(domain: str | None = None, k: int = 20, max_chars: int = DEFAULT_MAX_CHARS) -> CallToolResult:
        """Without a domain: every domain hub (core, docs, tests, …) with its size, mean
        priority and top file. With a domain: its member files, ranked."""
        return _answer(lambda: mem.hub(domain, k), max_chars, mem)

    @server.tool()
    def oracl_fragment(locator: str, lines: str | None = None, max_chars: int = DEFAULT_MAX_CHARS) -> CallToolResult:
        """Quote lines of a file: locator "path/to/file.py#L40-60" (or the path, with lines
        "L40-60"). Warns when the file changed since the build; a range outside the file is
        an error."""
        return _answer(lambda: mem.fragment(locator, lines), max_chars, mem)

    @server.tool()
    def oracl_events(path: str | None = None, kind: str | None = None, decision: str | None = None, k: int = 50,
                     max_chars: int = DEFAULT_MAX_CHARS) -> CallToolResult:
        """What ran against the code, newest first (from CI reports ingested with `oracl
        ingest`): test results, linter and scanner findings, coverage, operators' notes.
        Filter by a file (path), a kind ("test", "finding", "coverage", "note") or a
        decision ("fail", "pass", "no-go", "go"). Each event names its file, lines, test or
        rule, its weight (it halves every 30 days) and whether the file changed since."""
        return _answer(lambda: mem.events(path, kind, decision, k), max_chars, mem)

    @server.tool()
    def oracl_show(path: str, max_chars: int = DEFAULT_MAX_CHARS) -> CallToolResult:
        """Everything the graph knows about one file: its record and tags, its symbols and
        headings, its edges by relation, and its priority breakdown."""
        return _answer(lambda: mem.show(path), max_chars, mem)

    @server.tool()
    def oracl_symbols(name: str, kind: str | None = None, language: str | None = None, k: int = 20,
                      max_chars: int = DEFAULT_MAX_CHARS) -> CallToolResult:
        """Where a function, method, class or type is defined: name it plainly ("wsgi_app"),
        qualified ("Flask.wsgi_app", "flask.app.Flask.wsgi_app") or as path:LINE. Exact
        matches first; a fuzzy match when nothing matches exactly (the answer's "match" says
        which; "ambiguous" when the name has several definitions). Each definition has its path, line range, kind, signature and first doc line."""
        return _answer(lambda: mem.symbols(name, kind, language, k), max_chars, mem)

    @server.tool()
    def oracl_callers(name: str, depth: int = 1, min_confidence: float = 0.7, callees: bool = False,
                      max_chars: int = DEFAULT_MAX_CHARS) -> CallToolResult:
        """Who calls a symbol (or, with callees=true, what it calls), depth 1 to 5. Each call
        edge has the caller's path and lines of the call sites, its confidence and how the
        name was resolved (same_scope, imported, typed, receiver, unique, ambiguous …);
        min_confidence 0.7 leaves out guesses (a unique method name, 0.5; ambiguous ones), 0 shows all.
        A name with several definitions answers for all of them: "match" is "ambiguous" and
        "targets" lists them (each edge's "via" says which it calls); name one as Class.method,
        path#qualified or path:LINE to narrow it."""
        fn = mem.callees if callees else mem.callers
        return _answer(lambda: fn(name, depth=depth, min_confidence=min_confidence), max_chars, mem)

    @server.tool()
    def oracl_impact(targets: list[str] | None = None, diff: str | None = None, depth: int = 3, k: int = 20,
                     max_chars: int = DEFAULT_MAX_CHARS) -> CallToolResult:
        """What a change reaches: give files or symbols as targets, or diff="HEAD" (the
        working tree against a revision). Returns the changed symbols, the symbols and files
        that depend on them ranked by weight and distance, the test files to run, and the
        domain hubs touched."""
        return _answer(lambda: mem.impact(targets or [], diff=diff, depth=depth, k=k),
                       max_chars, mem)

    @server.tool()
    def oracl_stats(max_chars: int = DEFAULT_MAX_CHARS) -> CallToolResult:
        """The latest build: its id and commit, counts of files, hubs and edges by relation,
        and parse coverage. Tells how to build when there is no build yet."""
        return _answer(mem.stats, max_chars, mem)

    if allow_edits:
        _edit_tools(server, mem)
    return server


def create_workspace_server(path: Path, http: bool = False) -> Any:
    """The FastMCP server of a workspace file: an agent's context pack, search, symbols,
    callers, impact and links across its members, show and fragment of one member's file
    (``oracl.read.fanout``, ``oracl.read.crossrepo``), read-only. The file is loaded and
    verified again at every call (a member added or a signature broken shows at once);
    files holding key material are always withheld."""
    from oracl.core.members import WorkspaceFile
    from oracl.read import crossrepo, fanout

    path = Path(path).resolve()
    WorkspaceFile.load(path)  # a file that does not verify refuses to serve
    server = _server("oracl-workspace", (
        "ORACL serves the repositories of the workspace " + str(path) + " as one memory. Every answer names "
        "each row's repository. Start with oracl_agent_context for a question in plain words; "
        "oracl_search ranks files across members; oracl_symbols finds definitions; "
        "oracl_callers and oracl_impact follow calls and changes across repositories through the packages "
        "their manifests depend on; oracl_links lists those dependencies."), http)

    def answer(fn: Any, max_chars: int) -> Any:
        return _answer(lambda: fn(WorkspaceFile.load(path)), max_chars)

    @server.tool()
    def oracl_agent_context(query: str, budget_tokens: int = 4000, max_chars: int = DEFAULT_MAX_CHARS
                            ) -> CallToolResult:
        """Assemble a context pack for a question or task in plain words across every member
        repository: the best files' matching lines (the symbol or section, not the whole
        file), each with its repository, why it was chosen and whether it changed since its
        build, never exceeding budget_tokens. Use this first; then oracl_fragment for more
        lines of one member's file."""
        return answer(lambda ws: fanout.context_workspace(ws, query, budget_tokens=budget_tokens), max_chars)

    @server.tool()
    def oracl_search(query: str, k: int = 10, max_chars: int = DEFAULT_MAX_CHARS) -> CallToolResult:
        """Rank files for free text in every member repository, merged by rank (each result
        names its repository; the same filters as one repository's search)."""
        return answer(lambda ws: fanout.search_workspace(ws, query, k=k, withhold=True), max_chars)

    @server.tool()
    def oracl_symbols(name: str, kind: str | None = None, language: str | None = None, k: int = 20,
                      max_chars: int = DEFAULT_MAX_CHARS) -> CallToolResult:
        """Where a function, method or class is defined in every member (exact definitions first)."""
        return answer(lambda ws: fanout.symbols_workspace(ws, name, kind, language, k, withhold=True), max_chars)

    @server.tool()
    def oracl_callers(name: str, min_confidence: float = 0.7, k: int = 100,
                      max_chars: int = DEFAULT_MAX_CHARS) -> CallToolResult:
        """Who calls a symbol: in the members that define it and, across repositories, in the
        members whose manifests depend on their packages (each call site with its lines)."""
        return answer(lambda ws: crossrepo.callers_workspace(ws, name, min_confidence=min_confidence, k=k,
                                                             withhold=True), max_chars)

    @server.tool()
    def oracl_impact(member: str, targets: list[str] | None = None, diff: str | None = None, depth: int = 3,
                     hops: int = 3, k: int = 20, max_chars: int = DEFAULT_MAX_CHARS) -> CallToolResult:
        """What a change in one member reaches there and in the members that depend on it:
        targets are files or symbols of that member, or diff="HEAD" (its working tree against a
        revision). Per repository: where it uses what changed, the tests to run, the files reached."""
        return answer(lambda ws: crossrepo.impact_workspace(ws, member, targets or [], diff=diff, depth=depth,
                                                            hops=hops, k=k, withhold=True), max_chars)

    def in_member(member: str, fn: Any) -> Any:
        """A one-repository primitive on one member (verified first), files holding key material withheld."""
        from oracl.read.memory import Memory

        def ask(ws: Any) -> Any:
            m, _ = fanout.member_target(ws, f"{member}:")
            with Memory.open(m.root, withhold_sensitive=True) as mem:
                return {**fn(mem), "repository": m.name}
        return ask

    @server.tool()
    def oracl_show(member: str, path: str, max_chars: int = DEFAULT_MAX_CHARS) -> CallToolResult:
        """Everything one member's build holds about one of its files (fields, tags, edges, priority)."""
        return answer(in_member(member, lambda mem: mem.show(path)), max_chars)

    @server.tool()
    def oracl_fragment(member: str, locator: str, lines: str | None = None,
                       max_chars: int = DEFAULT_MAX_CHARS) -> CallToolResult:
        """The quoted lines of one member's file: locator PATH#L40-60 (or lines="L40-60");
        says when the file changed since the build and gives its sha256."""
        return answer(in_member(member, lambda mem: mem.fragment(locator, lines)), max_chars)

    @server.tool()
    def oracl_links(max_chars: int = DEFAULT_MAX_CHARS) -> CallToolResult:
        """The dependencies between members: which member's manifest names a package another provides."""
        return answer(lambda ws: crossrepo.links_workspace(ws, withhold=True), max_chars)

    return server


EDIT_LOOP = """You are editing the repository through ORACL's gates. Task: {task}

1. Hydrate: call oracl_stats (the build and its freshness).
2. Context: call oracl_agent_context with the task; read what you need with oracl_fragment
   (each answer gives the file's sha256: keep it).
3. Reach: call oracl_impact on the symbols you will change (who calls them, which tests).
4. Propose: write ONE mutation in the contract, each file with the checksum you read:
   @@FILE path sha256:HEX / @@REPLACE / exact existing text / @@WITH / new text / @@END
   (@@CREATE path / text / @@END for a new file, @@DELETE path to remove one).
5. Gate: call oracl_agent_run with dry_run=true; read every refusal (the gate and why)
   and fix the mutation; never work around a gate.
6. Apply: call oracl_agent_run with dry_run=false. It writes all of it or nothing and
   rebuilds the memory.
7. Rebuild and reach: its answer has the new build id and the impact of the change.
8. Tests: run the tests it lists first (tests covering the changed lines come first).
9. If they fail, fix with another mutation; if the change was wrong, say so (a person
   runs `oracl undo`).
10. Report the diff, the gates passed and the test results."""


def _edit_tools(server: Any, mem: Any) -> None:
    """``oracl_agent_run`` and the ``edit_loop`` prompt (only under ``--allow-edits``)."""
    from oracl.core.errors import EditRefusedError

    @server.tool()
    def oracl_agent_run(mutation: str, dry_run: bool = False, allow: list[str] | None = None, confirm: bool = False,
                        max_chars: int = DEFAULT_MAX_CHARS) -> CallToolResult:
        """Apply a mutation to the repository through the memory's gates, all of it or none.
        The contract: "@@FILE path sha256:HEX" (the checksum you read), "@@REPLACE", the exact
        existing text (it must occur exactly once), "@@WITH", the new text, "@@END" (more
        REPLACE/WITH pairs may follow); "@@CREATE path" … "@@END"; "@@DELETE path". Gates:
        inside-root, not-vault, regular-file, policy, withheld, held-back, unchanged-since,
        encoding, match, bounds, no-secret, syntax, hub; a refusal names each gate and why.
        Returns the diff, the gates passed, the new build id and the impact of the change
        (tests to run first). dry_run=true checks and answers without writing. allow:
        held-back kinds to touch (archived, generated, vendored, lockfile, minified); confirm:
        edit a file many others name."""
        def run() -> Any:
            try:
                return mem.apply(mutation, dry_run=dry_run, allow=tuple(allow or ()), confirm=confirm)
            except EditRefusedError as exc:
                return {"refused": True, "error": str(exc), "verdicts": exc.verdicts}

        result = _answer(run, max_chars, mem)
        if '"refused":true' in result.content[0].text:
            result.isError = True
        return result

    @server.prompt()
    def edit_loop(task: str) -> str:
        """The ten steps of an edit through ORACL: hydrate, context, reach, propose, gate,
        apply, rebuild, impact, tests, report."""
        return EDIT_LOOP.format(task=task)


def serve(root: Path | None, allow_edits: bool = False, workspace: Path | None = None) -> None:
    """Run the server on stdio until the client closes it (RootError first when ``root``
    is not a directory); with ``workspace``, the workspace file's server instead."""
    if workspace is None:
        check_root(Path(root or "."))
    try:
        server = create_workspace_server(workspace) if workspace is not None else create_server(Path(root or "."),
                                                                                                allow_edits)
    except ModuleNotFoundError as exc:
        from oracl.core.errors import ConfigError

        raise ConfigError(f"`oracl mcp` needs the mcp SDK ({exc.name} is missing): pip install 'oracl[mcp]'") from None
    import anyio

    anyio.run(_run_stdio, server)


LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})
HTTP_LIMIT = 8        # requests answered at once (the answers share one Memory and two cores)
HTTP_QUEUE = 1024     # requests waiting beyond those; more are turned away at once (503)
BODY_SECONDS = 30.0   # a request's body arrives within this, or the request is answered 408


class Guard:
    """ASGI middleware in front of the MCP app: the bearer token (always; compared in
    constant time), POST only (a GET would hold an event stream, and an answer slot, open),
    then at most ``limit`` requests answered at once and ``queue`` waiting; a request beyond
    both is answered 503 with Retry-After, never queued without bound."""

    def __init__(self, app: Any, token: str, limit: int = HTTP_LIMIT, queue: int = HTTP_QUEUE) -> None:
        self.app, self.token, self.limit, self.queue = app, token, limit, queue
        self.waiting = 0
        self._sem: Any = None

    async def _refuse(self, send: Any, status: int, message: str, extra: list[tuple[bytes, bytes]]) -> None:
        body = orjson.dumps({"error": message})
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                *extra]})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        import asyncio
        import hmac

        given = dict(scope.get("headers") or []).get(b"authorization", b"")
        if self.token is None or not hmac.compare_digest(given, b"Bearer " + self.token.encode()):
            await self._refuse(send, 401, "a bearer token is required (Authorization: Bearer …)",
                               [(b"www-authenticate", b"Bearer")])
            return
        if scope.get("method") != "POST":  # stateless JSON answers: no stream to hold open
            await self._refuse(send, 405, "only POST is served (stateless, JSON answers)", [(b"allow", b"POST")])
            return
        if self._sem is None:
            self._sem = asyncio.Semaphore(self.limit)
        if self.waiting >= self.queue:
            await self._refuse(send, 503, "too many requests waiting; try again", [(b"retry-after", b"1")])
            return
        self.waiting += 1
        try:
            await self._sem.acquire()
        finally:
            self.waiting -= 1
        try:
            await self.app(scope, _body_within(receive, BODY_SECONDS), send)
        except TimeoutError:
            await self._refuse(send, 408, f"the request body did not arrive within {BODY_SECONDS:g} s", [])
        finally:
            self._sem.release()


def _body_within(receive: Any, seconds: float) -> Any:
    """``receive`` whose request body must arrive within ``seconds`` (a client that sends
    headers and then nothing never holds an answer slot for long); once the body is whole,
    waiting (for a disconnect) is not bounded."""
    import asyncio

    done = False

    async def bounded() -> Any:
        nonlocal done
        if done:
            return await receive()
        msg = await asyncio.wait_for(receive(), seconds)
        if msg.get("type") != "http.request" or not msg.get("more_body", False):
            done = True
        return msg

    return bounded


def user_token(port: int) -> tuple[str, Path]:
    """A new token for a server on ``port`` and the file it is kept in, readable by this
    user only (``$ORACL_HOME/mcp-http-PORT.token``)."""
    import secrets

    from oracl.core.seal import home

    folder = home()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = folder / f"mcp-http-{port}.token"
    token = secrets.token_urlsafe(32)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(token + "\n")
    os.replace(tmp, path)
    return token, path


def read_token(token_file: Path) -> str:
    """The first line of a token file only this user can read (ConfigError otherwise)."""
    from oracl.core.errors import ConfigError

    try:
        fd = os.open(token_file, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            raw = fh.read(4096)
    except OSError as exc:
        raise ConfigError(f"{token_file}: the token file cannot be read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o077 or st.st_uid != os.getuid():
        raise ConfigError(f"{token_file}: the token file must be yours and readable by you only (chmod 600)")
    try:
        token = raw.decode("utf-8").strip().splitlines()[0].strip()
    except (UnicodeDecodeError, IndexError):
        token = ""
    if len(token) < 16:
        raise ConfigError(f"{token_file}: the token file must hold a token of at least 16 characters")
    return token


def serve_http(root: Path | None, host: str = "127.0.0.1", port: int = 8765, token_file: Path | None = None,
               allow_edits: bool = False, limit: int = HTTP_LIMIT, queue: int = HTTP_QUEUE,
               workspace: Path | None = None) -> None:
    """The same tools over the MCP SDK's streamable HTTP transport (stateless, JSON answers),
    for many clients at once. Every request carries a bearer token, on loopback too (another
    user of this machine can reach loopback): ``token_file``'s first line (a file only this
    user can read), else a new token kept in ``$ORACL_HOME/mcp-http-PORT.token`` and printed
    on standard error. A bind beyond loopback needs ``token_file``."""
    from oracl.core.errors import ConfigError

    if workspace is None:
        check_root(Path(root or "."))
    if host not in LOOPBACK and token_file is None:
        raise ConfigError(f"binding to {host} serves the repository beyond this machine: give --token-file FILE")
    if token_file is not None:
        token = read_token(token_file)
    else:
        try:
            token, kept = user_token(port)
        except OSError as exc:
            raise ConfigError(f"cannot keep a token for the HTTP server in {exc.filename or 'ORACL_HOME'}: "
                              f"{exc.strerror or exc}; give --token-file FILE") from None
        print(f"oracl mcp: clients send 'Authorization: Bearer {token}' (kept in {kept}, mode 600)",
              file=sys.stderr, flush=True)
    try:
        server = (create_workspace_server(workspace, http=True) if workspace is not None
                  else create_server(Path(root or "."), allow_edits, http=True))
        import uvicorn
    except ModuleNotFoundError as exc:
        raise ConfigError(f"`oracl mcp --http` needs the mcp SDK ({exc.name} is missing): pip install 'oracl[mcp]'") from None
    if host not in LOOPBACK:  # the token is the guard; a Host header names whatever the clients dial
        from mcp.server.transport_security import TransportSecuritySettings

        server.settings.transport_security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    app = Guard(server.streamable_http_app(), token, limit, queue)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False, lifespan="on")
    uvicorn.Server(config).run()


PARSE_ERROR, INVALID_REQUEST = -32700, -32600


def protocol_error(line: str) -> dict[str, Any] | None:
    """The JSON-RPC error answer to one line of input that is not a JSON-RPC message
    (None when it is one): -32700 when it is not JSON, -32600 when it is JSON but not a
    request, a notification or a response; the request's id when it has a usable one."""
    from mcp.types import JSONRPCMessage
    from pydantic import ValidationError

    try:
        JSONRPCMessage.model_validate_json(line)
        return None
    except ValidationError:
        pass
    try:
        doc = orjson.loads(line)
    except orjson.JSONDecodeError:
        return {"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": "Parse error: not JSON"}}
    rid = doc.get("id") if isinstance(doc, dict) else None
    if isinstance(rid, bool) or not isinstance(rid, int | str):
        rid = None
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": INVALID_REQUEST,
                                                    "message": "Invalid Request: not a JSON-RPC 2.0 message"}}


async def _run_stdio(server: Any) -> None:
    """The SDK's stdio transport, except that a line that is not a JSON-RPC message is
    answered with a JSON-RPC error (the SDK only logs it) and never reaches the session,
    and that the end of input waits for the answers to the requests already read (a
    client that pipes its requests and closes stdin gets every answer). The process's own
    stdin and stdout stay open afterwards (the wrappers are detached, not closed)."""
    import sys
    from io import TextIOWrapper

    import anyio
    from mcp.shared.message import SessionMessage
    from mcp.types import JSONRPCMessage, JSONRPCRequest

    raw_in = TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    raw_out = TextIOWrapper(sys.stdout.buffer, encoding="utf-8")
    stdin, stdout = anyio.wrap_file(raw_in), anyio.wrap_file(raw_out)
    out_lock = anyio.Lock()
    read_send, read_recv = anyio.create_memory_object_stream(0)
    write_send, write_recv = anyio.create_memory_object_stream(0)
    pending: set[Any] = set()  # ids of requests read and not yet answered
    answered = anyio.Event()

    async def emit(text: str) -> None:
        async with out_lock:
            await stdout.write(text + "\n")
            await stdout.flush()

    async def reader() -> None:
        nonlocal answered
        async with read_send:
            async for line in stdin:
                if not line.strip():
                    continue
                problem = protocol_error(line)
                if problem is not None:
                    await emit(orjson.dumps(problem).decode())
                    continue
                message = JSONRPCMessage.model_validate_json(line)
                if isinstance(message.root, JSONRPCRequest):
                    pending.add(message.root.id)
                await read_send.send(SessionMessage(message))
            while pending:
                answered = anyio.Event()
                await answered.wait()

    async def writer() -> None:
        async with write_recv:
            async for message in write_recv:
                await emit(message.message.model_dump_json(by_alias=True, exclude_none=True))
                rid = getattr(message.message.root, "id", None)
                if rid in pending and not isinstance(message.message.root, JSONRPCRequest):
                    pending.discard(rid)
                    answered.set()

    low = server._mcp_server  # FastMCP's low-level server: run it on our streams
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(reader)
            tg.start_soon(writer)
            await low.run(read_recv, write_send, low.create_initialization_options())
            tg.cancel_scope.cancel()
    finally:
        raw_out.flush()
        raw_in.detach()
        raw_out.detach()
