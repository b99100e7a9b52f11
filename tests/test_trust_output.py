"""Every output escapes what could make a name read differently (design §11): control
characters and the bidirectional controls (U+202E in a file name) are written as
``\\xNN`` / ``\\uNNNN`` in tables, pipes, notes, errors, JSON and web pages; and every web
answer, the 421 refusal included, carries the security headers."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx
import orjson
import pytest

from .conftest import run_cli, run_tty, write_tree

EVIL = "pkg/report\u202etxt.py"  # shows as "pkg/reportyp.txt" when printed raw


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from oracl.builder.orchestrator import build

    root = write_tree(tmp_path_factory.mktemp("bidi") / "repo", {
        EVIL: "def quarterly_report():\n    return 1\n", "pkg/__init__.py": "",
        "pkg/use.py": "from pkg import util\n", "pkg/util.py": "def helper():\n    return 2\n"})
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    return root


def test_a_bidi_name_is_escaped_in_a_pipe_a_table_and_json(repo: Path) -> None:
    piped = run_cli("query", "quarterly report", "-r", str(repo))
    assert piped.returncode == 0 and "pkg/report\\u202etxt.py" in piped.stdout and "\u202e" not in piped.stdout
    code, screen = run_tty("query", "quarterly report", "-r", str(repo), cols=120)
    assert code == 0 and "\u202e" not in screen and "report\\u202etxt.py" in screen
    js = run_cli("query", "quarterly report", "-r", str(repo), "--json")
    assert "\u202e" not in js.stdout and "\\u202e" in js.stdout
    assert orjson.loads(js.stdout)["results"][0]["path"] == EVIL  # the JSON value is the real name
    missing = run_cli("show", "pkg/nope\u202e.py", "-r", str(repo))
    assert missing.returncode == 8 and "\u202e" not in missing.stderr and "\\u202e" in missing.stderr


def test_a_bidi_name_is_escaped_in_web_pages_and_421_has_the_headers(repo: Path) -> None:
    from oracl.face.serve import HEADERS, allowed_hosts, create_app
    from oracl.read.memory import Memory

    async def get(app, url: str, host: str | bytes) -> httpx.Response:  # type: ignore[no-untyped-def]
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8765") as c:
            return await c.get(url, headers={"host": host})

    with Memory.open(repo) as mem:
        app = create_app(mem, allowed_hosts(8765))
        page = anyio.run(get, app, "/search?q=quarterly+report", "127.0.0.1:8765")
        assert page.status_code == 200 and "\u202e" not in page.text and "report\\u202etxt.py" in page.text
        refused = anyio.run(get, app, "/", "evil\u202e.example:8765".encode())
    assert refused.status_code == 421 and refused.text.isascii()
    for name, value in HEADERS.items():
        assert refused.headers[name] == value, name
