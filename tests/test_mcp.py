"""`oracl mcp` as a real subprocess, driven by the SDK's stdio client."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

pytest.importorskip("mcp")
from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from oracl.builder.orchestrator import build  # noqa: E402
from oracl.face.mcp_server import bound  # noqa: E402

from .conftest import ORACL, SAMPLE, write_tree  # noqa: E402

TOOLS = ["oracl_agent_context", "oracl_callers", "oracl_events", "oracl_fragment", "oracl_hub", "oracl_impact",
         "oracl_related", "oracl_search", "oracl_show", "oracl_stats", "oracl_symbols", "oracl_trace"]


async def _session(root: Path, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[str], list[dict[str, Any]]]:
    params = StdioServerParameters(command=ORACL, args=["mcp", str(root)], env={"ORACL_HOME": os.environ["ORACL_HOME"]})
    async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        tools = sorted(t.name for t in (await s.list_tools()).tools)
        answers = []
        for name, args in calls:
            res = await s.call_tool(name, args)
            answers.append(orjson.loads(res.content[0].text))
        return tools, answers


def run(root: Path, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[str], list[dict[str, Any]]]:
    return asyncio.run(asyncio.wait_for(_session(root, calls), timeout=120))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = write_tree(tmp_path / "repo", SAMPLE)
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    return root


def test_every_tool_answers_on_a_built_graph(repo: Path) -> None:
    tools, a = run(repo, [
        ("oracl_agent_context", {"query": "where is data signed", "budget_tokens": 300}),
        ("oracl_search", {"query": "hashlib sign", "k": 3}),
        ("oracl_trace", {"path": "pkg/auth.py", "direction": "both", "depth": 2}),
        ("oracl_related", {"path": "pkg/auth.py", "k": 3}),
        ("oracl_hub", {}),
        ("oracl_hub", {"domain": "core"}),
        ("oracl_fragment", {"locator": "pkg/auth.py#L5-7"}),
        ("oracl_show", {"path": "pkg/auth.py"}),
        ("oracl_stats", {}),
        ("oracl_symbols", {"name": "sign"}),
        ("oracl_callers", {"name": "pkg.auth.sign"}),
        ("oracl_callers", {"name": "test_sign", "callees": True}),
        ("oracl_impact", {"targets": ["pkg/auth.py"]}),
        ("oracl_show", {"path": "missing.py"}),
    ])
    assert tools == TOOLS
    ctx, search, trace, related, hubs, core, frag, show, stats, symbols, callers, callees, impact, missing = a
    assert [d["id"] for d in symbols["definitions"]] == ["pkg/auth.py#sign"]
    assert [(c["id"], c["lines"]) for c in callers["callers"]] == [("tests/test_auth.py#test_sign", [4])]
    assert [c["id"] for c in callees["callees"]] == ["pkg/auth.py#sign"]
    assert [t["path"] for t in impact["tests"]] == ["tests/test_auth.py"]
    build_id = stats["build_id"]
    assert all(x.get("build_id") == build_id for x in a[:-1])
    # every answer says whether the working tree still matches the build (the first check
    # of the server process; later ones within its 5 s TTL say how old the check is)
    assert all(x["freshness"].startswith("fresh: the build matches the working tree") for x in a[:-1])
    assert ctx["items"][0]["path"] == "pkg/auth.py" and ctx["used_tokens"] <= 300
    assert search["results"][0]["path"] == "pkg/auth.py" and search["results"][0]["stale"] == "fresh"
    assert search["staleness"].startswith("fresh")
    assert {e["node"] for e in trace["levels"][0]} >= {"pkg/util.py", "tests/test_auth.py"}
    assert len(related["neighbours"]) == 3 and related["staleness"].startswith("fresh")
    assert {h["hub"] for h in hubs["hubs"]} >= {"hub:domain:core"} and core["hub"] == "hub:domain:core"
    assert frag["lines"][0] == "def sign(data):" and frag["stale"] is False
    assert show["priority"]["final"] == show["artifact"]["priority"]
    assert stats["artifacts"] == 7
    assert missing == {"error": "'missing.py' is not in the latest build (run `oracl query` to find a file by its words)",
                       "truncated": False}


def test_answers_are_bounded_and_say_so(repo: Path) -> None:
    _, (small,) = run(repo, [("oracl_trace", {"path": "pkg/auth.py", "direction": "both", "depth": 5,
                                               "max_chars": 1000})])
    assert small["truncated"] is True and len(orjson.dumps(small)) <= 1100
    big = {"results": list(range(5000)), "build_id": "b"}
    out = bound(big, 2000)
    assert out["truncated"] and len(orjson.dumps(out)) <= 2000 and out["build_id"] == "b"
    assert bound({"a": 1}, 2000) == {"a": 1, "truncated": False}


def test_without_a_build_the_tools_say_how_to_make_one(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "empty", {"a.py": "x = 1\n"})
    tools, (stats, search) = run(root, [("oracl_stats", {}), ("oracl_search", {"query": "x"})])
    assert tools == TOOLS
    assert stats["error"].startswith("no build in") and "oracl build" in stats["hint"]
    assert search["error"].startswith("no build in")
    assert not (root / ".oracl" / "mirror").exists()  # nothing was built inside the handshake


def test_two_servers_and_a_build_share_one_vault(repo: Path) -> None:
    async def scenario() -> tuple[dict, dict, dict, dict, str]:
        params = StdioServerParameters(command=ORACL, args=["mcp", str(repo)], env={"ORACL_HOME": os.environ["ORACL_HOME"]})
        async with stdio_client(params) as (r1, w1), ClientSession(r1, w1) as s1, \
                stdio_client(params) as (r2, w2), ClientSession(r2, w2) as s2:
            await s1.initialize()
            await s2.initialize()
            before1 = orjson.loads((await s1.call_tool("oracl_stats", {})).content[0].text)
            before2 = orjson.loads((await s2.call_tool("oracl_search", {"query": "hashlib"})).content[0].text)
            (repo / "pkg" / "new.py").write_text("import hashlib\n")
            proc = await asyncio.create_subprocess_exec(ORACL, "build", str(repo), "-q", "--workers", "1",
                                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            during = []
            while proc.returncode is None:  # both servers keep answering while the build runs
                during.append(orjson.loads((await s1.call_tool("oracl_search", {"query": "hashlib"})).content[0].text))
                during.append(orjson.loads((await s2.call_tool("oracl_stats", {})).content[0].text))
                try:
                    await asyncio.wait_for(proc.wait(), timeout=0.05)
                except TimeoutError:
                    pass
            _, err = await proc.communicate()
            after1 = orjson.loads((await s1.call_tool("oracl_stats", {})).content[0].text)
            after2 = orjson.loads((await s2.call_tool("oracl_stats", {})).content[0].text)
            assert all("error" not in d for d in during), during
            return before1, before2, after1, after2, err.decode()

    before1, before2, after1, after2, err = asyncio.run(asyncio.wait_for(scenario(), timeout=180))
    assert err == "" and before1["artifacts"] == 7 and before2["results"]
    assert after1["build_id"] == after2["build_id"] != before1["build_id"]
    assert after1["artifacts"] == after2["artifacts"] == 8


def _raw_session(root: Path, lines: list[str], answers: int) -> list[dict[str, Any]]:
    """Write raw lines to `oracl mcp` and read ``answers`` JSON lines back (stdin stays
    open until they arrive: closing it ends the session)."""
    import select

    proc = subprocess.Popen([ORACL, "mcp", str(root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write("".join(line + "\n" for line in lines).encode())
        proc.stdin.flush()
        out: list[dict[str, Any]] = []
        buf = b""
        fd = proc.stdout.fileno()
        while len(out) < answers:
            ready, _, _ = select.select([fd], [], [], 60)
            assert ready, f"no answer after {out}"
            chunk = os.read(fd, 65536)
            assert chunk, f"the server closed its output after {out}: {proc.stderr.read() if proc.stderr else ''}"
            buf += chunk
            *done, buf = buf.split(b"\n")
            out += [orjson.loads(x) for x in done if x.strip()]
        return out
    finally:
        proc.kill()
        proc.communicate()  # reaps it and closes its pipes


INIT = ('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
        '"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}')


def test_malformed_json_rpc_gets_json_rpc_errors_and_tool_errors_set_is_error(repo: Path) -> None:
    answers = _raw_session(repo, [
        INIT,
        "this is not json",
        '{"id": 7, "foo": 1}',
        "[1, 2]",
        '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"oracl_show","arguments":{"path":"nope.py"}}}',
        '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"oracl_stats","arguments":{}}}',
    ], 6)
    by_id: dict[Any, list[dict[str, Any]]] = {}
    for a in answers:
        by_id.setdefault(a.get("id"), []).append(a)
    assert by_id[1][0]["result"]["serverInfo"]["name"] == "oracl"
    assert [a["error"]["code"] for a in by_id[None]] == [-32700, -32600]
    assert by_id[7] == [{"jsonrpc": "2.0", "id": 7, "error": {"code": -32600,
                                                              "message": "Invalid Request: not a JSON-RPC 2.0 message"}}]
    missing = by_id[2][0]["result"]
    assert missing["isError"] is True and orjson.loads(missing["content"][0]["text"])["error"].startswith("'nope.py'")
    stats = by_id[3][0]["result"]
    assert stats["isError"] is False and orjson.loads(stats["content"][0]["text"])["artifacts"] == 7


def test_mcp_refuses_a_root_that_does_not_exist(tmp_path: Path) -> None:
    r = subprocess.run([ORACL, "mcp", str(tmp_path / "nope")], capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert (r.returncode, r.stderr.strip()) == (3, f"Error: root '{tmp_path / 'nope'}' does not exist")


def test_a_piped_session_gets_every_answer_and_ends_cleanly_with_bounds_checked(repo: Path) -> None:
    """A client that writes its requests and closes stdin (``printf … | oracl mcp``) gets an
    answer to each, the server exits 0 with nothing on stderr (it used to end every
    session with a traceback: the transport closed the process's stdout), serverInfo names
    ORACL's version, and an argument out of bounds is a tool error naming the bound."""
    from oracl.core.version import __version__

    calls = [('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":%s}}'
              % (i, name, orjson.dumps(args).decode()))
             for i, (name, args) in enumerate([
                 ("oracl_search", {"query": "hashlib", "k": -3}),
                 ("oracl_related", {"path": "pkg/auth.py", "k": 100_000}),
                 ("oracl_fragment", {"locator": "pkg/auth.py", "max_chars": 5}),
                 ("oracl_callers", {"name": "sign", "min_confidence": 2}),
                 ("oracl_agent_context", {"query": "sign", "budget_tokens": 10}),
                 ("oracl_search", {"query": "sign", "k": 2})], start=2)]
    lines = [INIT, '{"jsonrpc":"2.0","method":"notifications/initialized"}', *calls]
    r = subprocess.run([ORACL, "mcp", str(repo)], input="".join(x + "\n" for x in lines), capture_output=True,
                       text=True, timeout=120)
    assert (r.returncode, r.stderr) == (0, "")
    by_id = {a["id"]: a for a in map(orjson.loads, r.stdout.splitlines())}
    assert sorted(by_id) == [1, 2, 3, 4, 5, 6, 7]
    assert by_id[1]["result"]["serverInfo"] == {"name": "oracl", "version": __version__}
    errors = {i: orjson.loads(by_id[i]["result"]["content"][0]["text"])["error"] for i in range(2, 7)}
    assert all(by_id[i]["result"]["isError"] for i in range(2, 7))
    assert errors == {2: "--limit must be between 1 and 1000, not -3",
                      3: "--limit must be between 1 and 500, not 100000",
                      4: "max_chars must be between 1000 and 100000, not 5",
                      5: "--min-confidence must be between 0 and 1, not 2.0",
                      6: "budget_tokens must be between 50 and 200000, not 10"}
    last = orjson.loads(by_id[7]["result"]["content"][0]["text"])
    assert by_id[7]["result"]["isError"] is False and len(last["results"]) == 2


async def _edit_session(root: Path, args: list[str], calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[str], list[str], list[Any]]:
    params = StdioServerParameters(command=ORACL, args=["mcp", str(root), *args], env={"ORACL_HOME": os.environ["ORACL_HOME"]})
    async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        tools = sorted(t.name for t in (await s.list_tools()).tools)
        prompts = sorted(p.name for p in (await s.list_prompts()).prompts) if args else []
        answers: list[Any] = []
        for name, a in calls:
            res = await s.call_tool(name, a)
            answers.append((res.isError, orjson.loads(res.content[0].text)))
        return tools, prompts, answers


def test_agent_run_exists_only_with_allow_edits_and_goes_through_the_gates(repo: Path) -> None:
    read_only, _, _ = asyncio.run(asyncio.wait_for(_edit_session(repo, [], []), timeout=120))
    assert read_only == TOOLS  # the default server keeps every read-only promise
    old = (repo / "pkg" / "util.py").read_text()
    good = "@@FILE pkg/util.py\n@@REPLACE\n    return 1\n@@WITH\n    return 2\n@@END\n"
    bad = "@@FILE ../../etc/passwd\n@@REPLACE\nroot\n@@WITH\nx\n@@END\n"
    tools, prompts, answers = asyncio.run(asyncio.wait_for(_edit_session(repo, ["--allow-edits"], [
        ("oracl_agent_run", {"mutation": good, "dry_run": True}), ("oracl_agent_run", {"mutation": bad}),
        ("oracl_agent_run", {"mutation": good})]), timeout=120))
    assert tools == sorted([*TOOLS, "oracl_agent_run"]) and prompts == ["edit_loop"]
    (e1, dry), (e2, refused), (e3, applied) = answers
    assert not e1 and dry["dry_run"] and dry["edit"] is None and "+    return 2" in dry["diff"]
    assert e2 and refused["refused"] and refused["verdicts"][0]["gate"] == "inside-root"
    assert not e3 and applied["edit"] and applied["build_id"] != dry["build_id"]
    assert (repo / "pkg" / "util.py").read_text() == old.replace("return 1", "return 2")
