"""``oracl serve``: a local, read-only web view of the latest build, on Starlette (the
ASGI stack the MCP SDK already installs) and uvicorn.

* Every page and every API answer comes from ``oracl.face.pages`` through one ``Memory``,
  so the server follows LATEST as every other reader does.
* Only ``GET``/``HEAD``: no endpoint writes, none runs Cypher typed by anyone.
* Bound to 127.0.0.1; a request whose ``Host`` is not this server's own address
  (``127.0.0.1:PORT`` or ``localhost:PORT``) is refused with 421, so a web page on
  another site cannot read the memory through DNS rebinding.
* Pages load only the server's own scripts and styles (Content-Security-Policy
  ``default-src 'none'``); the stylesheet, Cytoscape.js and the script ship in the
  package: nothing is fetched from the network.
* Files holding key material are withheld, as over MCP (``share_sensitive`` lifts it).
* No access log: a search's text never lands in a log.

The JSON API (``/api/...``) is documented in ``docs/web.md``.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.staticfiles import StaticFiles

from oracl.core.config import load_config
from oracl.core.errors import OraclError, PortError, QueryError, UnsafePathError, WithheldError
from oracl.face import definitions_now, pages, webpage
from oracl.read.memory import Memory

STATIC = ("oracl.css", "oracl.js", "cytoscape.min.js")
HEADERS = {
    # the one inline style allowed is the rule Cytoscape.js 3.35.0 injects for its container
    # (its hash; a new vendored version that changes the rule shows as a console error)
    "Content-Security-Policy": ("default-src 'none'; script-src 'self'; "
                                "style-src 'self' 'sha256-pgvDUBa4IjFA2yuSJ2cqcyxmNYJMborsd0ORcRv9vw8='; "
                                "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; "
                                "frame-ancestors 'none'"),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
API = {
    "/api": "this index",
    "/api/build": "the build answered from and the tree's freshness",
    "/api/hubs": "every domain hub: members, mean priority, top member (the hub map)",
    "/api/hubs/{domain}?k=50": "a hub's members, best-ranked first",
    "/api/file/{path}": "a file: fields, tags, priority breakdown, edges, symbols, text, marked lines",
    "/api/graph/{path}?depth=1": "a file's neighbourhood graph to depth 1 or 2: nodes, edges, cut note",
    "/api/search?q=TEXT&k=10&persona=default": "oracl query TEXT --explain: results with their reasons",
    "/api/symbol/{name}": "a symbol's definitions, callers and callees",
    "/api/impact/{path}?depth=2": "what a change to the file reaches: symbols, files, tests, hubs",
    "/api/learn?status=pending": "the learning proposals (oracl learn review), pending first",
}


_MISSING = ("not in the latest build", "no domain", "no symbol", "is a folder")


def _status(exc: OraclError) -> int:
    """403 for a withheld file, 404 for a name the build does not hold, 400 for another
    bad request, 500 for a build that cannot be read."""
    if isinstance(exc, WithheldError):
        return 403
    if isinstance(exc, QueryError | UnsafePathError):
        return 404 if any(m in str(exc) for m in _MISSING) else 400
    return 500


def _int(request: Request, name: str, default: int) -> int:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise QueryError(f"{name} must be a whole number, not {raw[:20]!r}") from None


class HostCheck:
    """ASGI middleware: only requests naming this server (``Host``) get through, and every
    response carries the security headers."""

    def __init__(self, app: Any, hosts: Callable[[], set[str]]) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        async def secured(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = list(message.get("headers", [])) + [
                    (k.lower().encode(), v.encode()) for k, v in HEADERS.items()]
            await send(message)

        host = dict(scope["headers"]).get(b"host", b"").decode("latin-1").lower()
        if host not in self.hosts():  # refused, with the same headers as every other answer
            shown = host[:80].encode("unicode_escape").decode("ascii")
            response = PlainTextResponse(f"refused: Host '{shown}' is not this server's address\n", 421)
            await response(scope, receive, secured)
            return
        await self.app(scope, receive, secured)


def create_app(memory: Memory, hosts: set[str]) -> Starlette:
    """The web application over ``memory``; ``hosts``: the ``Host`` values it answers."""

    def answer(request: Request, fn: Callable[[], dict[str, Any]], html: Callable[[dict[str, Any]], str] | None
               ) -> Response:
        try:
            data = fn()
        except OraclError as exc:
            status = _status(exc)
            if html is None:
                return Response(orjson.dumps({"error": str(exc), "status": status}), status,
                                media_type="application/json")
            return HTMLResponse(webpage.error_page({"build": pages.build(memory)}, status, str(exc)), status)
        if html is None:
            return Response(orjson.dumps(data, default=str), media_type="application/json")
        return HTMLResponse(html(data))

    def page(fn: Callable[[Request], dict[str, Any]], html: Callable[[dict[str, Any]], str] | None) -> Callable:
        def endpoint(request: Request) -> Response:
            return answer(request, lambda: fn(request), html)
        return endpoint

    views: list[tuple[str, Callable[[Request], dict[str, Any]], Callable[[dict[str, Any]], str]]] = [
        ("/hubs", lambda r: pages.hubs(memory), webpage.hubs_page),
        ("/hubs/{domain}", lambda r: pages.hub(memory, r.path_params["domain"], _int(r, "k", pages.HUB_MEMBERS)),
         webpage.hub_page),
        ("/file/{path:path}", lambda r: pages.file(memory, r.path_params["path"],
                                                   r.query_params.get("from") == "search"), webpage.file_page),
        ("/graph/{path:path}", lambda r: pages.neighbourhood(memory, r.path_params["path"], _int(r, "depth", 1)),
         webpage.graph_page),
        ("/search", lambda r: pages.search(memory, r.query_params.get("q", ""), _int(r, "k", pages.SEARCH_RESULTS),
                                           r.query_params.get("persona", "default")), webpage.search_page),
        ("/symbol/{name:path}", lambda r: pages.symbol(memory, r.path_params["name"]), webpage.symbol_page),
        ("/impact/{path:path}", lambda r: pages.impact(memory, r.path_params["path"], _int(r, "depth", 2)),
         webpage.impact_page),
        ("/learn", lambda r: pages.learn(memory, r.query_params.get("status")), webpage.learn_page),
    ]
    routes = [Route("/", page(views[0][1], views[0][2]), methods=["GET", "HEAD"]),
              Route("/hub/{domain}", page(views[1][1], views[1][2]), methods=["GET", "HEAD"])]
    for url, fn, html in views[2:]:
        routes.append(Route(url, page(fn, html), methods=["GET", "HEAD"]))
    for url, fn, _ in views:
        routes.append(Route("/api" + url, page(fn, None), methods=["GET", "HEAD"]))
    routes.append(Route("/api/build", page(lambda r: {"schema": pages.API_SCHEMA,
                                                     "build": pages.build(memory)},
                                           None), methods=["GET", "HEAD"]))
    routes.append(Route("/api", lambda r: Response(orjson.dumps({"schema": pages.API_SCHEMA, "endpoints": API}),
                                                   media_type="application/json"), methods=["GET", "HEAD"]))
    static = StaticFiles(directory=str(webpage.ASSETS))

    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            return PlainTextResponse("not found\n", 404)
        return await static.get_response(name, request.scope)

    routes.append(Route("/static/{name}", asset, methods=["GET", "HEAD"]))
    app = Starlette(routes=routes)
    return HostCheck(app, lambda: hosts)  # type: ignore[return-value]


WORKSPACE_API = {
    "/api": "this index",
    "/api/workspace": "the members (each one's build or why it does not answer), the packages they provide, the links",
    "/api/search?q=TEXT&k=10": "oracl query TEXT --workspace: results of every member merged by rank",
    "/api/impact?member=NAME&target=PATH&hops=3": "oracl impact --workspace: per repository, entries, tests, files",
    "/api/callers?name=NAME": "oracl callers --workspace: callers in the members and across their dependents",
}


def create_workspace_app(path: Path, hosts: set[str]) -> Starlette:
    """The web application over a workspace file (``oracl serve --workspace FILE``): the
    same guards as one repository's (GET only, this machine's Host, the headers), every
    page loading and verifying the file again, files holding key material withheld."""
    def page(fn: Callable[[Request], dict[str, Any]], html: Callable[[dict[str, Any]], str] | None) -> Callable:
        def endpoint(request: Request) -> Response:
            try:
                data = fn(request)
            except OraclError as exc:
                status = _status(exc) if isinstance(exc, QueryError | WithheldError) else 400
                if html is None:
                    return Response(orjson.dumps({"error": str(exc), "status": status}), status,
                                    media_type="application/json")
                return HTMLResponse(webpage.ws_error_page(status, str(exc)), status)
            if html is None:
                return Response(orjson.dumps(data, default=str), media_type="application/json")
            return HTMLResponse(html(data))
        return endpoint

    views: list[tuple[str, Callable[[Request], dict[str, Any]], Callable[[dict[str, Any]], str]]] = [
        ("/workspace", lambda r: pages.ws_home(path), webpage.ws_home_page),
        ("/search", lambda r: pages.ws_search(path, r.query_params.get("q", ""), _int(r, "k", pages.SEARCH_RESULTS)),
         webpage.ws_search_page),
        ("/impact", lambda r: pages.ws_impact(path, r.query_params.get("member", ""), r.query_params.get("target", ""),
                                              _int(r, "hops", 3)), webpage.ws_impact_page),
        ("/callers", lambda r: pages.ws_callers(path, r.query_params.get("name", "")), webpage.ws_callers_page),
    ]
    routes = [Route("/", page(views[0][1], views[0][2]), methods=["GET", "HEAD"])]
    for url, fn, html in views:
        routes.append(Route(url, page(fn, html), methods=["GET", "HEAD"]))
        routes.append(Route("/api" + url, page(fn, None), methods=["GET", "HEAD"]))
    routes.append(Route("/api", lambda r: Response(orjson.dumps({"schema": pages.WORKSPACE_SCHEMA,
                                                                 "endpoints": WORKSPACE_API}),
                                                   media_type="application/json"), methods=["GET", "HEAD"]))
    static = StaticFiles(directory=str(webpage.ASSETS))

    async def asset(request: Request) -> Response:
        if request.path_params["name"] != "oracl.css":
            return PlainTextResponse("not found\n", 404)
        return await static.get_response("oracl.css", request.scope)

    routes.append(Route("/static/{name}", asset, methods=["GET", "HEAD"]))
    return HostCheck(Starlette(routes=routes), lambda: hosts)  # type: ignore[return-value]


def allowed_hosts(port: int) -> set[str]:
    """The ``Host`` values a browser sends to this server.

    >>> sorted(allowed_hosts(8765))
    ['127.0.0.1:8765', 'localhost:8765']
    """
    return {f"127.0.0.1:{port}", f"localhost:{port}"} | ({"127.0.0.1", "localhost"} if port == 80 else set())


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1 (``port`` 0: one the system picks)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        raise PortError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror} (choose another with --port, or --port 0 for a free one)") from None
    sock.listen(128)
    return sock


def serve_workspace(path: Path, port: int, announce: Callable[[str], None]) -> None:
    """Serve a workspace file's members on 127.0.0.1:``port`` until interrupted."""
    import uvicorn

    from oracl.core.members import WorkspaceFile

    path = Path(path).resolve()
    WorkspaceFile.load(path)  # a file that does not verify refuses to serve
    sock = bind(port)
    actual = sock.getsockname()[1]
    config = uvicorn.Config(create_workspace_app(path, allowed_hosts(actual)), log_level="warning",
                            access_log=False, lifespan="off")
    announce(f"http://127.0.0.1:{actual}/")
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()


def serve(root: Path, port: int, announce: Callable[[str], None]) -> None:
    """Serve the latest build of ``root`` on 127.0.0.1:``port`` until interrupted;
    ``announce`` gets the address once the socket listens."""
    import uvicorn

    share = load_config(root, packages={}).share_sensitive
    memory = Memory.open(root, withhold_sensitive=not share, reread=definitions_now)
    pages.build(memory, wait=0.0)  # the first tree walk starts now, not on a page
    sock = bind(port)
    actual = sock.getsockname()[1]
    app = create_app(memory, allowed_hosts(actual))
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    announce(f"http://127.0.0.1:{actual}/")
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        memory.close()
