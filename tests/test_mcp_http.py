"""`oracl mcp --http`: the same tools over the SDK's streamable HTTP transport, for many
clients (issue 35): a real server process, real HTTP clients."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
import pytest

pytest.importorskip("mcp")
import httpx  # noqa: E402

from oracl.builder.orchestrator import build  # noqa: E402

from .conftest import ORACL, SAMPLE, run_cli, write_tree  # noqa: E402
from .test_mcp import TOOLS  # noqa: E402

TOKEN = "a-test-token-for-the-http-server"
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream",
           "authorization": f"Bearer {TOKEN}"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(root: Path | None, *args: str, token: bool = True) -> Iterator[str]:
    """A server on a free port; ``token``: with --token-file of ``TOKEN`` (unless ``args``
    give one), else the server makes its own."""
    port = _free_port()
    if token and "--token-file" not in args:
        tf = Path(os.environ["ORACL_HOME"]) / f"test-token-{port}"
        fd = os.open(tf, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.write(fd, TOKEN.encode() + b"\n")
        os.close(fd)
        args = (*args, "--token-file", str(tf))
    proc = subprocess.Popen([ORACL, "mcp", *([str(root)] if root else []), "--http", "--port", str(port), *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        if proc.stderr:
            proc.stderr.close()


def rpc(method: str, params: dict | None = None, rid: int = 1) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}})


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_tree(tmp_path_factory.mktemp("http") / "repo", SAMPLE)
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    return root


def test_the_tools_over_http_and_through_the_sdk_client(repo: Path) -> None:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    with serving(repo) as url:
        r = httpx.post(url, content=rpc("tools/list"), headers=HEADERS, timeout=30)
        assert r.status_code == 200 and sorted(t["name"] for t in r.json()["result"]["tools"]) == TOOLS

        async def call() -> dict:
            client = httpx.AsyncClient(headers={"authorization": HEADERS["authorization"]}, timeout=60)
            async with client, streamable_http_client(url, http_client=client) as (read, write, _), \
                    ClientSession(read, write) as s:
                await s.initialize()
                res = await s.call_tool("oracl_search", {"query": "hashlib sign", "k": 3})
                return orjson.loads(res.content[0].text)

        answer = asyncio.run(asyncio.wait_for(call(), timeout=60))
        assert answer["results"][0]["path"] == "pkg/auth.py"


def test_a_token_is_required_when_set_and_beyond_loopback(repo: Path, tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("s3cret-token-of-some-length\n")
    token.chmod(0o600)
    with serving(repo, "--token-file", str(token)) as url:
        assert httpx.post(url, content=rpc("tools/list"), headers=HEADERS, timeout=30).status_code == 401
        bad = {**HEADERS, "authorization": "Bearer s3cret-token-of-some-lengtX"}
        assert httpx.post(url, content=rpc("tools/list"), headers=bad, timeout=30).status_code == 401
        good = {**HEADERS, "authorization": "Bearer s3cret-token-of-some-length"}
        assert httpx.post(url, content=rpc("tools/list"), headers=good, timeout=30).status_code == 200
    r = run_cli("mcp", str(repo), "--http", "--host", "0.0.0.0", "--port", str(_free_port()))
    assert (r.returncode, r.stderr.strip()) == (
        2, "Error: binding to 0.0.0.0 serves the repository beyond this machine: give --token-file FILE")
    (tmp_path / "short").write_text("abc\n")
    (tmp_path / "short").chmod(0o600)
    r = run_cli("mcp", str(repo), "--http", "--token-file", str(tmp_path / "short"), "--port", str(_free_port()))
    assert r.returncode == 2 and "at least 16 characters" in r.stderr
    token.chmod(0o644)  # another user of the machine could read it
    r = run_cli("mcp", str(repo), "--http", "--token-file", str(token), "--port", str(_free_port()))
    assert (r.returncode, r.stderr.strip()) == (
        2, f"Error: {token}: the token file must be yours and readable by you only (chmod 600)")


def test_loopback_needs_a_token_too_and_idle_streams_never_starve_the_answers(repo: Path) -> None:
    """Issue 48: without --token-file, loopback was open to every local user (uid 65534
    wrote a file through oracl_agent_run), and eight idle GET streams took every slot."""
    port_before = set((Path(os.environ["ORACL_HOME"])).glob("mcp-http-*.token"))
    with serving(repo, token=False) as url:
        port = url.rsplit(":", 1)[1].split("/")[0]
        kept = Path(os.environ["ORACL_HOME"]) / f"mcp-http-{port}.token"
        assert kept not in port_before and kept.stat().st_mode & 0o777 == 0o600
        token = kept.read_text().strip()
        plain = {k: v for k, v in HEADERS.items() if k != "authorization"}
        assert httpx.post(url, content=rpc("tools/list"), headers=plain, timeout=30).status_code == 401
        auth = {**plain, "authorization": f"Bearer {token}"}

        async def starve() -> list[int]:
            async with httpx.AsyncClient(timeout=30) as client:
                streams = [client.get(url, headers={**auth, "accept": "text/event-stream"}) for _ in range(20)]
                got = await asyncio.gather(*streams)
                calls = [client.post(url, content=rpc("tools/call", {"name": "oracl_search", "arguments": {
                    "query": "sign", "k": 1}}, rid=i), headers=auth) for i in range(8)]
                return [r.status_code for r in got] + [r.status_code for r in await asyncio.gather(*calls)]

        codes = asyncio.run(asyncio.wait_for(starve(), timeout=60))
        assert codes == [405] * 20 + [200] * 8


async def _burst(url: str, n: int) -> Counter[int]:
    limits = httpx.Limits(max_connections=n, max_keepalive_connections=0)
    async with httpx.AsyncClient(limits=limits, timeout=120) as client:
        async def one(i: int) -> int:
            call = rpc("tools/call", {"name": "oracl_search", "arguments": {"query": "sign data", "k": 2}}, rid=i)
            r = await client.post(url, content=call, headers=HEADERS)
            if r.status_code == 200:
                body = r.json()
                assert body["id"] == i and not body["result"].get("isError"), body
            return r.status_code
        return Counter(await asyncio.gather(*(one(i) for i in range(n))))


def test_500_concurrent_requests_are_all_answered_or_turned_away_at_once(repo: Path) -> None:
    with serving(repo) as url:
        assert asyncio.run(_burst(url, 500)) == Counter({200: 500})
    with serving(repo, "--max-waiting", "20") as url:
        got = asyncio.run(_burst(url, 500))
    assert set(got) == {200, 503} and got[200] >= 28, got  # the 8 answered and 20 waiting at least


def test_a_workspace_over_http_withholds_key_material(tmp_path: Path) -> None:
    from oracl.core.members import add

    from .test_crossrepo import LIB_AUTH, SVC_A

    key = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"
    for name, files in (("lib-auth", {**LIB_AUTH, "src/libauth/signing_key.pem": key}), ("svc-a", SVC_A)):
        write_tree(tmp_path / name, files)
        build(tmp_path / name, buffer_pool_bytes=64 << 20, workers=1)
    add(tmp_path / "ws.toml", [tmp_path / "lib-auth", tmp_path / "svc-a"])
    refused = run_cli("mcp", str(tmp_path / "svc-a"), "--workspace", str(tmp_path / "ws.toml"))
    assert refused.returncode == 2 and "give neither ROOT nor --allow-edits" in refused.stderr

    def call(url: str, tool: str, args: dict) -> dict:
        r = httpx.post(url, content=rpc("tools/call", {"name": tool, "arguments": args}), headers=HEADERS, timeout=60)
        assert r.status_code == 200
        return orjson.loads(r.json()["result"]["content"][0]["text"])

    with serving(None, "--workspace", str(tmp_path / "ws.toml")) as url:
        r = httpx.post(url, content=rpc("tools/list"), headers=HEADERS, timeout=30)
        assert sorted(t["name"] for t in r.json()["result"]["tools"]) == [
            "oracl_agent_context", "oracl_callers", "oracl_fragment", "oracl_impact", "oracl_links", "oracl_search",
            "oracl_show", "oracl_symbols"]
        pack = call(url, "oracl_agent_context", {"query": "sign token for the login user private key",
                                                 "budget_tokens": 400})
        assert pack["used_tokens"] <= 400 and {i["repository"] for i in pack["items"]} == {"lib-auth", "svc-a"}
        assert all(i["path"] != "src/libauth/signing_key.pem" for i in pack["items"])
        quoted = call(url, "oracl_fragment", {"member": "svc-a", "locator": "svc_a/api.py#L5-6"})
        assert quoted["repository"] == "svc-a" and quoted["lines"] == ["def login(user):", "    return sign(user)"]
        hidden = call(url, "oracl_show", {"member": "lib-auth", "path": "src/libauth/signing_key.pem"})
        assert "withheld" in hidden["error"]
        hit = call(url, "oracl_impact", {"member": "lib-auth", "targets": ["_digest"]})
        assert [s["repository"] for s in hit["repositories"]] == ["lib-auth", "svc-a"]
        found = call(url, "oracl_search", {"query": "signing key private", "k": 10})
        assert found["results"] and all(x["path"] != "src/libauth/signing_key.pem" for x in found["results"])
        assert call(url, "oracl_links", {})["links"][0]["consumer"] == "svc-a"
        bad = httpx.post(url, content=rpc("tools/call", {"name": "oracl_impact", "arguments": {"member": "nope",
                                                                                               "targets": ["x"]}}),
                         headers=HEADERS, timeout=60).json()["result"]
        assert bad["isError"] and "no member named 'nope'" in bad["content"][0]["text"]
