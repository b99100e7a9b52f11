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

from pathlib import Path
from typing import Any

import orjson

from oracl.errors import NoBuildError, OraclError

DEFAULT_MAX_CHARS = 20_000
MAX_CHARS = 100_000
_LIST_KEYS = ("results", "items", "neighbours", "members", "hubs", "levels", "lines", "rows")


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
            key, value = max(lists, key=lambda kv: len(orjson.dumps(kv[1], default=str)))
            obj[key] = value[: len(value) // 2]
        else:
            strings = [(k, v) for k, v in obj.items() if isinstance(v, str) and len(v) > 200]
            nested = [(k, v) for k, v in obj.items() if isinstance(v, list | dict)]
            if strings:
                key, value = max(strings, key=lambda kv: len(kv[1]))
                obj[key] = value[: len(value) // 2] + " …"
            elif nested:
                key, value = max(nested, key=lambda kv: len(orjson.dumps(kv[1], default=str)))
                obj[key] = orjson.dumps(value, default=str).decode()[: max_chars // 2] + " …"
            else:
                break
        obj["truncated"] = True
    return obj


def _answer(fn: Any, max_chars: int, mem: Any) -> str:
    """Run one primitive; a missing build or a bad argument is an answer, not a crash.
    A successful answer carries the tree's freshness (``oracl status``'s verdict)."""
    try:
        result = fn()
        if isinstance(result, dict) and "freshness" not in result:
            result["freshness"] = mem.freshness()
    except NoBuildError as exc:
        result = {"error": str(exc), "hint": "run `oracl build ROOT` in a shell, then call the tool again"}
    except OraclError as exc:
        result = {"error": str(exc)}
    return orjson.dumps(bound(result, max_chars), default=str, option=orjson.OPT_SORT_KEYS).decode()


def create_server(root: Path) -> Any:
    """The FastMCP server with ORACL's eight read-only tools."""
    from mcp.server.fastmcp import FastMCP

    from oracl.memory import Memory

    root = Path(root).resolve()
    mem = Memory(root)
    server = FastMCP("oracl", log_level="WARNING", instructions=(
        "ORACL is a semantic memory of the repository at " + str(root) + ". Start with "
        "oracl_agent_context for a question in plain words; use oracl_search for ranked files, "
        "oracl_show / oracl_fragment to read one file's facts or lines, oracl_trace / oracl_related / "
        "oracl_hub to walk the graph. Every answer says its build and whether files changed since."))

    @server.tool()
    def oracl_agent_context(query: str, budget_tokens: int = 4000, max_chars: int = DEFAULT_MAX_CHARS) -> str:
        """Assemble a context pack for a question or task in plain words (a bug report, a
        commit message, "where is X done"). Returns the best files in order, each with the
        exact lines that matched (the symbol or section, not the whole file), why it was
        chosen, and whether it changed since the build, never exceeding budget_tokens
        (estimated at 4 characters a token). Use this first; follow up with oracl_fragment
        for more lines of one file."""
        return _answer(lambda: mem.context(query, budget_tokens=max(50, min(budget_tokens, 32000))).to_json(),
                       max_chars, mem)

    @server.tool()
    def oracl_search(query: str, k: int = 10, max_chars: int = DEFAULT_MAX_CHARS) -> str:
        """Rank the repository's files for free text. Understands filters (domain:core,
        type:report, ext:py, lifecycle:active, since:2026-01-31), negation (-word, "but not
        X"), and exact lookups (file:PATH, filename:NAME, prefix:DIR/). Returns path, score,
        domain, content type, priority, matched fields and staleness per file."""
        return _answer(lambda: mem.search(query, k=max(1, min(k, 100))), max_chars, mem)

    @server.tool()
    def oracl_trace(path: str, direction: str = "out", depth: int = 2, relation: str | None = None,
                    max_chars: int = DEFAULT_MAX_CHARS) -> str:
        """Follow a file's dependencies: direction "out" (what it imports, links, configures),
        "in" (what uses or tests it) or "both", depth 1 to 5, optionally one relation
        (imports, references, configures, tests, mentions). Each edge has its relation,
        weight and the line range of the reference."""
        return _answer(lambda: mem.trace(path, direction, depth, relation), max_chars, mem)

    @server.tool()
    def oracl_related(path: str, k: int = 10, max_chars: int = DEFAULT_MAX_CHARS) -> str:
        """The files most strongly associated with one file (both directions), ordered by
        the graph's association rank, with the relations that connect them."""
        return _answer(lambda: mem.related(path, max(1, min(k, 200))), max_chars, mem)

    @server.tool()
    def oracl_hub(domain: str | None = None, k: int = 20, max_chars: int = DEFAULT_MAX_CHARS) -> str:
        """Without a domain: every domain hub (core, docs, tests, …) with its size, mean
        priority and top file. With a domain: its member files, ranked."""
        return _answer(lambda: mem.hub(domain, max(1, min(k, 500))), max_chars, mem)

    @server.tool()
    def oracl_fragment(locator: str, lines: str | None = None, max_chars: int = DEFAULT_MAX_CHARS) -> str:
        """Quote lines of a file: locator "path/to/file.py#L40-60" (or the path, with lines
        "L40-60"). Warns when the file changed since the build; a range outside the file is
        an error."""
        return _answer(lambda: mem.fragment(locator, lines), max_chars, mem)

    @server.tool()
    def oracl_show(path: str, max_chars: int = DEFAULT_MAX_CHARS) -> str:
        """Everything the graph knows about one file: its record and tags, its symbols and
        headings, its edges by relation, and its priority breakdown."""
        return _answer(lambda: mem.show(path), max_chars, mem)

    @server.tool()
    def oracl_stats(max_chars: int = DEFAULT_MAX_CHARS) -> str:
        """The latest build: its id and commit, counts of files, hubs and edges by relation,
        and parse coverage. Tells how to build when there is no build yet."""
        return _answer(mem.stats, max_chars, mem)

    return server


def serve(root: Path) -> None:
    """Run the server on stdio until the client closes it."""
    try:
        server = create_server(root)
    except ModuleNotFoundError as exc:
        from oracl.errors import ConfigError

        raise ConfigError(f"`oracl mcp` needs the mcp SDK ({exc.name} is missing): pip install 'oracl[mcp]'") from None
    server.run("stdio")
