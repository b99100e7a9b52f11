"""The web view (``oracl serve``) and ``oracl graph``: the JSON API in process (Starlette's
AppClient over a real build), the server as a real process, and the pages in a real
headless Chromium (Debian's package, which scripts/test.sh installs): the rendered DOM and
a screenshot that is not blank."""

from __future__ import annotations

import hashlib
import re
import shutil
import socket
import struct
import subprocess
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import orjson
import pytest

from oracl.builder.orchestrator import build
from oracl.face import pages, webpage
from oracl.face.serve import API, allowed_hosts, create_app
from oracl.read import graph
from oracl.read.memory import Memory

from .conftest import ORACL, SAMPLE, on_latest, run_cli, write_tree

PORT = 8765
BASE = f"http://127.0.0.1:{PORT}"
REPO = Path(__file__).resolve().parents[1]
KEY_BLOCK = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_tree(tmp_path_factory.mktemp("web") / "repo", {**SAMPLE, "deploy/id_ed25519": KEY_BLOCK})
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    return root


class AppClient:
    """Requests to the ASGI application in process (httpx's ASGI transport): nothing
    listens, the app sees what a browser at ``BASE`` would send."""

    def __init__(self, app: Any) -> None:
        self.app = app

    def request(self, method: str, url: str, headers: dict[str, str] | None = None) -> httpx.Response:
        async def send() -> httpx.Response:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app), base_url=BASE) as c:
                return await c.request(method, url, headers=headers)
        return anyio.run(send)

    def get(self, url: str, headers: dict[str, str] | None = None) -> httpx.Response:
        return self.request("GET", url, headers)


@pytest.fixture(scope="module")
def client(built: Path) -> Iterator[AppClient]:
    with Memory.open(built, withhold_sensitive=True) as mem:
        yield AppClient(create_app(mem, allowed_hosts(PORT)))


def api(client: AppClient, url: str, status: int = 200) -> dict[str, Any]:
    r = client.get(url)
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/json"
    return orjson.loads(r.content)


# -- the JSON API ----------------------------------------------------------------------------

def test_every_endpoint_is_documented_and_answers(client: AppClient) -> None:
    doc = (REPO / "docs" / "web.md").read_text("utf-8")
    index = api(client, "/api")
    assert index["endpoints"] == API
    for url in API:
        assert f"`GET {url.split('?')[0]}" in doc, url
    build_ = api(client, "/api/build")["build"]
    assert re.fullmatch(r"\d{8}T\d{6}\d+Z-\d+", build_["build_id"])
    assert set(build_) == {"build_id", "generated_at", "source_commit", "root", "freshness", "notices"}


def test_hub_map_is_every_hub_as_oracl_hub_lists_it(built: Path, client: AppClient) -> None:
    data = api(client, "/api/hubs")
    cli = orjson.loads(run_cli("hub", "-r", str(built), "--json").stdout)
    assert [h["hub"] for h in data["hubs"]] == [h["hub"] for h in cli["hubs"]]
    assert {h["hub"]: h["members"] for h in data["hubs"]} == {
        "hub:domain:core": 3, "hub:domain:root": 2, "hub:domain:docs": 1, "hub:domain:tests": 1,
        "hub:domain:deploy": 1}
    means = [h["mean_priority"] for h in data["hubs"]]
    assert data["priority_range"] == [min(means), max(means)]
    page = client.get("/").text
    for h in data["hubs"]:
        assert f'data-hub="{h["hub"]}"' in page and f'>{h["domain"]}</text>' in page
    assert data["build"]["build_id"] in page and 'id="freshness"' in page


def test_hub_members_page(client: AppClient) -> None:
    data = api(client, "/api/hubs/core?k=2")
    assert data["total"] == 3 and len(data["members"]) == 2
    assert data["members"][0]["path"] == "pkg/auth.py"  # the hub map's top member
    assert api(client, "/api/hubs/nowhere", 404)["error"].startswith("no domain 'nowhere' in the latest build")
    assert api(client, "/api/hubs/core?k=0", 400)["error"] == "k must be between 1 and 100"


def test_file_page_data(client: AppClient) -> None:
    data = api(client, "/api/file/pkg/auth.py")
    assert data["artifact"]["path"] == "pkg/auth.py" and data["hub"] == "hub:domain:core"
    assert data["artifact"]["tags"]["language"] == "python"
    buckets = data["priority"]["buckets"]
    assert len(buckets) == 12
    # hand-computed: security 0.30 × 0.55 + connectivity 0.10 × 0.4 + authority 0.10 × 0.4 + lifecycle
    # 0.08 + testing 0.07 + documentation 0.05 + freshness 0.05 + governance 0.04 × 0.3 + completeness 0.03
    assert sum(b["contribution"] for b in buckets) == pytest.approx(0.537)
    assert data["priority"]["weighted_sum"] == pytest.approx(0.537)
    assert data["text"]["lines"] == SAMPLE["pkg/auth.py"].splitlines()
    # line 3 is the import of util; lines 5-7 (sign) are what the test, the config and util's
    # comment point at
    assert data["marks"] == {"3": ["imports"], "5": ["configures", "imports", "references"],
                             "6": ["configures", "imports", "references"],
                             "7": ["configures", "imports", "references"]}
    assert [s["qualified"] for s in data["symbol_rows"]] == ["sign"]
    out = {(rel, e["target"]) for rel, sides in data["edges"].items() for e in sides["out"]}
    assert out == {("imports", "pkg/util.py")}
    page = client.get("/file/pkg/auth.py").text
    assert '<span id="L3" class="hit" title="imports">' in page
    # both sides' fragments are lines of this file: the import it makes (out) and sign (in)
    assert '<a href="#L3">L3-3</a>' in page and '<a href="#L5">L5-7</a>' in page
    assert page.count('<g class="bucket"') == 12
    assert api(client, "/api/file/pkg/nope.py", 404)["error"].startswith("'pkg/nope.py' is not in the latest build")
    assert api(client, "/api/file/pkg", 404)["error"].startswith("'pkg' is a folder")
    missing = client.get("/file/pkg/nope.py")
    assert missing.status_code == 404 and '<p class="error" id="error">&#x27;pkg/nope.py&#x27; is not' in missing.text


def test_neighbourhood_graph(built: Path, client: AppClient) -> None:
    g = api(client, "/api/graph/pkg/auth.py")
    assert [(n["id"], n["depth"], n["relation"]) for n in g["nodes"]] == [
        ("pkg/auth.py", 0, ""), ("pkg/util.py", 1, "imports"), ("tests/test_auth.py", 1, "imports"),
        ("hub:domain:core", 1, "belongs_to"), ("config.yaml", 1, "configures"), ("docs/guide.md", 1, "references")]
    assert {(e["source"], e["relation"], e["target"]) for e in g["edges"]} == {
        ("pkg/auth.py", "imports", "pkg/util.py"), ("tests/test_auth.py", "imports", "pkg/auth.py"),
        ("tests/test_auth.py", "tests", "pkg/auth.py"), ("pkg/auth.py", "belongs_to", "hub:domain:core"),
        ("config.yaml", "configures", "pkg/auth.py"), ("pkg/util.py", "mentions", "pkg/auth.py"),
        ("pkg/util.py", "references", "pkg/auth.py"), ("docs/guide.md", "references", "pkg/auth.py"),
        ("docs/guide.md", "mentions", "pkg/auth.py")}
    # edges, not drawn lines: two `tests` edges from the test file and two `references` edges
    # from util.py (parallel: one line each) make 9 edges for the 7 lines drawn in
    incoming = on_latest(lambda snap: len(snap.named("links_in", {"paths": ["pkg/auth.py"]})), built)
    assert g["degree"] == {"outgoing": 1, "incoming": incoming} and incoming == 9
    assert not g["cut"] and g["cut_note"] == ""
    deeper = api(client, "/api/graph/pkg/auth.py?depth=2")
    assert {n["id"] for n in g["nodes"]} <= {n["id"] for n in deeper["nodes"]}
    assert api(client, "/api/graph/pkg/auth.py?depth=3", 400)["error"] == "--depth must be 1 or 2"
    assert api(client, "/api/graph/pkg/auth.py?depth=x", 400)["error"] == "depth must be a whole number, not 'x'"


def test_a_node_past_the_query_guard_is_cut_and_says_so(tmp_path: Path) -> None:
    files = {"pkg/__init__.py": "", "pkg/core.py": "def shared(x):\n    return x\n"}
    files.update({f"pkg/m{i:02d}.py": "from pkg import core\n" for i in range(30)})
    root = write_tree(tmp_path / "star", files)
    build(root, buffer_pool_bytes=64 << 20, workers=1, query_neighbour_guard=20)
    with Memory.open(root) as mem:
        g = pages.neighbourhood(mem, "pkg/core.py", 1, k=5)
    files_drawn = [n["id"] for n in g["nodes"] if n["kind"] == "file" and n["depth"] == 1]
    assert len(files_drawn) == 5 and g["guard_cut"] and g["cut"]
    assert g["degree"] == {"outgoing": 0, "incoming": 30}
    assert g["cut_note"] == ("pkg/core.py has 30 edges (0 out, 30 in); the 5 files with the best-ranked edges "
                             "are drawn (5 edges); the query guard (20 edges a direction) applied")
    assert 'id="cut"' in webpage.graph_page(g)


def test_a_hub_like_neighbour_is_expanded_by_its_best_rows_only(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    files = {"pkg/__init__.py": "", "pkg/core.py": "def shared(x):\n    return x\n"}
    files.update({f"pkg/m{i:02d}.py": "from pkg import core\n" for i in range(40)})
    root = write_tree(tmp_path / "star", files)
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    with Memory.open(root) as mem:
        snap, _ = mem.snapshot()
        # core.py: 40 importers + its hub edge = 41 edges over 43 nodes - 1 → density 41/42
        assert snap.header["counts"]["nodes"] == 43
        assert snap.named("neighbours", {"path": "pkg/m07.py", "guard": 1, **graph.NO_SKIP})[0]["density"] == pytest.approx(41 / 42)
        whole = graph.neighbourhood(snap, "pkg/m07.py", 2)  # 41 ≤ FRONTIER_WIDE: read whole
        calls: list[tuple[str, dict[str, Any]]] = []
        named = snap.named
        monkeypatch.setattr(snap, "named", lambda name, params=None: calls.append((name, params)) or named(name, params))
        monkeypatch.setattr(graph, "FRONTIER_WIDE", 40)  # 41 > 40: core.py is read by its best rows
        bounded = graph.neighbourhood(snap, "pkg/m07.py", 2)
    assert ("neighbours", {"path": "pkg/core.py", "guard": 32, **graph.NO_SKIP}) in calls
    assert not any(name.startswith("frontier") for name, _ in calls)
    assert bounded == whole  # equal ranks: the best 32 rows by (rank, path) hold the 8 drawn
    drawn = {n["id"]: (n["depth"], n["more"]) for n in bounded["nodes"]}
    assert drawn == {"pkg/m07.py": (0, False), "pkg/core.py": (1, True), "hub:domain:pkg": (1, False),
                     **{f"pkg/m{i:02d}.py": (2, False) for i in (0, 1, 2, 3, 4, 5, 6, 8)}}
    assert bounded["cut_note"] == "a node with a dashed border has neighbours that are not drawn"


def test_search_is_oracl_query_with_its_reasons(built: Path, client: AppClient) -> None:
    data = api(client, "/api/search?q=sign+data&k=5")
    cli = orjson.loads(run_cli("query", "sign", "data", "-r", str(built), "-k", "5", "--json", "--explain").stdout)
    assert [r["path"] for r in data["results"]] == [r["path"] for r in cli["results"]]
    assert [r["why"] for r in data["results"]] == [e["why"] for e in cli["explain"]["results"]]
    assert data["results"][0]["path"] == "pkg/auth.py" and data["results"][0]["why"].startswith("A(m)=")
    assert data["explain"]["passes"] == cli["explain"]["passes"]
    page = client.get("/search?q=sign+data&k=5").text
    assert page.count("<tr><td>") == len(data["results"])
    assert api(client, "/api/search?q=")["results"] == []


def test_symbol_and_impact_pages(client: AppClient) -> None:
    sym = api(client, "/api/symbol/pkg/auth.py:5")
    assert [d["qualified"] for d in sym["definitions"]["definitions"]] == ["sign"]
    callers = [r["qualified"] for level in sym["callers"]["levels"] for r in level]
    assert callers == ["test_sign"]
    impact = api(client, "/api/impact/pkg/auth.py")
    assert [t["path"] for t in impact["tests"]] == ["tests/test_auth.py"]
    assert "test_sign" in client.get("/symbol/pkg/auth.py:5").text
    assert api(client, "/api/symbol/nothing_named_so", 404)["error"] == \
        "no symbol named 'nothing_named_so' in the latest build"


def test_the_server_follows_latest_as_every_reader_does(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", SAMPLE)
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    with Memory.open(root) as mem:
        c = AppClient(create_app(mem, allowed_hosts(PORT)))
        first = api(c, "/api/build")["build"]["build_id"]
        assert api(c, "/api/file/pkg/util.py")["text"]["lines"][0] == "def helper():"
        (root / "pkg" / "util.py").write_text("def helper2():\n    return 2\n")
        assert api(c, "/api/file/pkg/util.py")["text"]["warning"].startswith("pkg/util.py changed since build")
        build(root, buffer_pool_bytes=64 << 20, workers=1)
        second = api(c, "/api/build")["build"]
        assert second["build_id"] != first
        assert api(c, "/api/file/pkg/util.py")["build"]["build_id"] == second["build_id"]
        assert [s["qualified"] for s in api(c, "/api/file/pkg/util.py")["symbol_rows"]] == ["helper2"]


def test_the_server_only_reads_and_only_for_this_machine(client: AppClient) -> None:
    assert client.get("/", headers={"host": "evil.example:8765"}).status_code == 421
    assert client.get("/", headers={"host": "127.0.0.1:9999"}).status_code == 421
    assert client.get("/", headers={"host": "localhost:8765"}).status_code == 200
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        assert client.request(method, "/api/hubs").status_code == 405
    for url in ("/api/cypher", "/cypher", "/api/query"):
        assert client.get(url).status_code == 404
    r = client.get("/")
    assert r.headers["content-security-policy"].startswith("default-src 'none'; script-src 'self';")
    assert r.headers["x-frame-options"] == "DENY" and r.headers["x-content-type-options"] == "nosniff"
    assert client.get("/static/oracl.js").status_code == 200
    for url in ("/static/VENDOR.json", "/static/..%2Fpages.py", "/static/%2e%2e/serve.py"):
        assert client.get(url).status_code == 404
    assert client.get("/file/..%2F..%2Fetc%2Fpasswd").status_code == 404


def test_files_holding_key_material_are_withheld(client: AppClient) -> None:
    assert api(client, "/api/file/deploy/id_ed25519", 403)["error"].startswith("deploy/id_ed25519 is withheld")
    assert api(client, "/api/graph/deploy/id_ed25519", 403)["status"] == 403
    members = api(client, "/api/hubs/deploy")["members"]
    assert all(m["path"] != "deploy/id_ed25519" for m in members)
    assert "OPENSSH" not in client.get("/search?q=openssh+private+key").text


def test_vendored_cytoscape_is_the_registry_file() -> None:
    web = REPO / "oracl" / "face" / "web"
    manifest = orjson.loads((web / "VENDOR.json").read_bytes())["cytoscape.min.js"]
    assert hashlib.sha256((web / "cytoscape.min.js").read_bytes()).hexdigest() == manifest["sha256"]
    assert manifest["version"] in (REPO / "scripts" / "vendor_web.sh").read_text()


# -- the command line ------------------------------------------------------------------------

def test_graph_html_is_one_self_contained_file(built: Path, tmp_path: Path) -> None:
    out = tmp_path / "auth.html"
    r = run_cli("graph", "pkg/auth.py", "-r", str(built), "--html", str(out))
    assert r.returncode == 0, r.stderr
    assert r.stderr.startswith(f"wrote {out}: the neighbourhood of pkg/auth.py (depth 1, 6 nodes, 9 edges")
    text = out.read_text("utf-8")
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", text)  # nothing to fetch
    blob = re.search(r'<script type="application/json" id="graph-data">(.*?)</script>', text, re.S)
    assert blob is not None and len(orjson.loads(blob.group(1))["nodes"]) == 6
    plain = run_cli("graph", "pkg/auth.py", "-r", str(built))
    assert plain.stdout.splitlines()[0] == "edge\tpkg/auth.py\timports\tpkg/util.py\t1.00\t1.000\tL3-3"
    bad = run_cli("graph", "pkg/auth.py", "-r", str(built), "--html", str(tmp_path))
    assert bad.returncode == 8 and bad.stderr == f"Error: {tmp_path} is a directory; --html takes the file to write\n"


def test_serve_on_a_busy_port_is_one_line(built: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        r = run_cli("serve", str(built), "--port", str(port))
    assert r.returncode == 21
    assert r.stderr.startswith(f"Error: cannot listen on 127.0.0.1:{port}: Address already in use")


# -- a real browser ----------------------------------------------------------------------------

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars", "--enable-logging=stderr", "--v=0")


def chromium() -> str:
    found = shutil.which("chromium")
    assert found, "Debian's chromium is not installed: scripts/test.sh installs it (apt-get install chromium)"
    return found


def browse(url: str, tmp: Path, shot: Path | None = None) -> tuple[str, str]:
    """Chromium loads ``url``, runs its scripts, then gives the DOM (or a screenshot) and its
    console."""
    args = [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp / 'profile'}", "--window-size=1280,900",
            "--virtual-time-budget=8000"]
    args += [f"--screenshot={shot}"] if shot else ["--dump-dom"]
    r = subprocess.run([*args, url], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout, "\n".join(line for line in r.stderr.splitlines() if "CONSOLE" in line)


def png_pixels(path: Path, limit: int | None = None) -> tuple[int, int, list[bytes]]:
    """Width, height and the rows (the first ``limit``) of an 8-bit RGB or RGBA PNG (what
    Chromium writes), with the five scanline filters undone."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        size, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + size]
        if kind == b"IHDR":
            header = chunk
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + size
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and colour in (2, 6)
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(min(height, limit or height)):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows


def not_blank(path: Path) -> tuple[int, float]:
    """(distinct colours, share of pixels that are not the most common colour) in the top
    400 rows of a PNG (every 4th pixel of every 4th row: a page's bar and first content)."""
    width, height, rows = png_pixels(path, 400)
    bpp = len(rows[0]) // width
    counts: dict[bytes, int] = {}
    for r in rows[::4]:
        for i in range(0, len(r), bpp * 4):
            px = r[i:i + 3]
            counts[px] = counts.get(px, 0) + 1
    total = sum(counts.values())
    return len(counts), 1 - max(counts.values()) / total


def test_png_reader_on_a_hand_made_image(tmp_path: Path) -> None:
    # 2×2 RGB: red, green / blue, white; row 0 unfiltered, row 1 with the Up filter
    row0 = bytes([0, 255, 0, 0, 0, 255, 0])
    row1 = bytes([2, 1, 0, 255, 255, 0, 255])  # Up: blue − red, white − green, mod 256
    png = (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
           + _chunk(b"IDAT", zlib.compress(row0 + row1)) + _chunk(b"IEND", b""))
    (tmp_path / "t.png").write_bytes(png)
    _, _, rows = png_pixels(tmp_path / "t.png")
    assert rows == [bytes([255, 0, 0, 0, 255, 0]), bytes([0, 0, 255, 255, 255, 255])]
    assert not_blank(tmp_path / "t.png") == (1, 0.0)  # every 4th pixel of every 4th row: one pixel


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


@pytest.fixture(scope="module")
def server(built: Path) -> Iterator[str]:
    proc = subprocess.Popen([ORACL, "serve", str(built), "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline() if proc.stdout else ""
        m = re.search(r"at (http://127\.0\.0\.1:\d+/)$", first.strip())
        assert m, (first, proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
        yield m.group(1)
    finally:
        proc.terminate()
        proc.communicate(timeout=20)  # waits, and closes the pipes


def test_browser_draws_the_hub_map_a_file_and_a_search(server: str, client: AppClient, tmp_path: Path) -> None:
    hubs = api(client, "/api/hubs")["hubs"]
    dom, console = browse(server, tmp_path)
    names = re.findall(r'<a href="/hub/[^"]+" class="hub" data-hub="([^"]+)">', dom)
    assert names == [h["hub"] for h in hubs]
    assert re.search(r'<code id="build-id">\d{8}T', dom)

    nodes = len(api(client, "/api/graph/pkg/auth.py")["nodes"])
    dom, console = browse(server + "file/pkg/auth.py", tmp_path)
    m = re.search(r'<div class="graph[^"]*"[^>]*data-drawn="(\d+)"', dom)
    assert m, "the graph was not drawn: " + (re.search(r'data-error="([^"]*)"', dom) or [""])[0]
    assert int(m.group(1)) == nodes == 6
    assert "<canvas" in dom  # Cytoscape.js drew on its canvases
    assert "Content Security Policy" not in console and "Uncaught" not in console, console

    dom, console = browse(server + "search?q=sign+data", tmp_path)
    assert re.search(r'<tr><td>1</td><td><a class="path" href="/file/pkg/auth.py\?from=search">pkg/auth.py</a>', dom)
    assert '<span class="why">A(m)=' in dom

    for url, name in ((server, "hubs"), (server + "file/pkg/auth.py", "file"),
                      (server + "search?q=sign+data", "search")):
        shot = tmp_path / f"{name}.png"
        browse(url, tmp_path, shot)
        colours, share = not_blank(shot)
        assert colours >= 8 and share > 0.02, (name, colours, share)


def test_readme_shows_every_page_from_a_real_build() -> None:
    readme = (REPO / "README.md").read_text("utf-8")
    assert "$ oracl serve /tmp/sg/requests\nServing the latest build of /tmp/sg/requests" in readme
    for name in ("hubs", "file", "graph", "search", "hub", "symbol", "impact"):
        shot = REPO / "docs" / "images" / f"web-{name}.png"
        assert f"(docs/images/web-{name}.png)" in readme, name
        colours, share = not_blank(shot)
        assert colours >= 8 and share > 0.02, (name, colours, share)


def test_a_tile_too_small_for_its_name_leaves_it_to_the_tooltip() -> None:
    build_ = {"build_id": "b", "generated_at": "t", "root": "/r", "freshness": "fresh", "notices": []}
    hubs = [{"hub": "hub:domain:core", "domain": "core", "members": 500, "mean_priority": 0.5, "top_member": "a"},
            {"hub": "hub:domain:averyveryverylongname", "domain": "averyveryverylongname", "members": 1,
             "mean_priority": 0.1, "top_member": "b"}]
    page = webpage.hubs_page({"build": build_, "hubs": hubs, "priority_range": [0.1, 0.5], "notices": []})
    # 960 × 480 px: the second tile is 1/501 of the area, a strip 960/501 = 1.9 px wide
    assert ">core</text>" in page and ">averyveryverylongname</text>" not in page
    assert "<title>hub:domain:averyveryverylongname: 1 members" in page
    assert ">averyveryverylongname</a></td>" in page  # the table still names it


def test_a_result_opened_from_the_search_page_is_a_logged_follow_up(built: Path, client: AppClient) -> None:
    from oracl.core import telemetry

    page = client.get("/search?q=sign").text
    assert 'href="/file/pkg/auth.py?from=search"' in page
    assert client.get("/file/pkg/auth.py?from=search").status_code == 200
    rows = list(telemetry.lines(built / ".oracl", "usage.jsonl"))
    assert rows[-1]["action"] == "web" and rows[-1]["path"] == "pkg/auth.py"
    assert rows[-1]["query"] == "sign" and rows[-1]["rank"] == 1
    client.get("/file/pkg/util.py")  # opened directly, not from a search: not a follow-up
    assert list(telemetry.lines(built / ".oracl", "usage.jsonl"))[-1]["path"] == "pkg/auth.py"
    learn = api(client, "/api/learn")
    assert learn["page"] == "learn" and learn["proposals"] == []
    assert 'id="no-proposals"' in client.get("/learn").text
    assert api(client, "/api/learn?status=maybe", 400)["error"] == "--status must be one of pending, accepted, rejected"


# -- a workspace (oracl serve --workspace FILE) ------------------------------------------------

def test_a_workspace_served_to_a_real_browser(tmp_path: Path) -> None:
    from oracl.core.members import add
    from oracl.face.serve import WORKSPACE_API, create_workspace_app

    from .test_crossrepo import LIB_AUTH, SVC_A

    for name, files in (("lib-auth", {**LIB_AUTH, "src/libauth/id_ed25519": KEY_BLOCK}), ("svc-a", SVC_A)):
        build(write_tree(tmp_path / name, files), buffer_pool_bytes=64 << 20, workers=1)
    wsf = tmp_path / "ws.toml"
    add(wsf, [tmp_path / "lib-auth", tmp_path / "svc-a"])
    client = AppClient(create_workspace_app(wsf, allowed_hosts(PORT)))
    assert api(client, "/api")["endpoints"] == WORKSPACE_API
    doc = (REPO / "docs" / "web.md").read_text("utf-8")
    assert all(url.split("?")[0] in doc for url in WORKSPACE_API)
    home = api(client, "/api/workspace")
    assert [(x["consumer"], x["provider"]) for x in home["links"]] == [("svc-a", "lib-auth")]
    hit = api(client, "/api/impact?member=lib-auth&target=_digest")
    assert [s["repository"] for s in hit["repositories"]] == ["lib-auth", "svc-a"]
    found = api(client, "/api/search?q=private+key+ed25519")
    assert all(r["path"] != "src/libauth/id_ed25519" for r in found["results"])  # withheld, as for one repository
    assert api(client, "/api/impact?member=nope&target=x", 400)["error"].startswith("no member named 'nope'")
    assert client.request("POST", "/api/search?q=x").status_code == 405
    assert client.get("/api/workspace", headers={"host": "evil.example:8765"}).status_code == 421

    proc = subprocess.Popen([ORACL, "serve", "--workspace", str(wsf), "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline() if proc.stdout else ""
        m = re.search(r"at (http://127\.0\.0\.1:\d+/)$", first.strip())
        assert m, (first, proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
        url = m.group(1)
        dom, console = browse(url + "impact?member=lib-auth&target=_digest", tmp_path)
        assert re.findall(r'<h2 class="repository" data-repository="([^"]+)"', dom) == ["lib-auth", "svc-a"]
        assert "sign → src/libauth/tokens.py:8" in dom and "Uncaught" not in console, console
        dom, _ = browse(url, tmp_path)
        assert '<table class="links">' in dom and "lib-auth (python)" in dom
        shot = tmp_path / "workspace.png"
        browse(url + "callers?name=sign_token", tmp_path, shot)
        colours, share = not_blank(shot)
        assert colours >= 8 and share > 0.02, (colours, share)
    finally:
        proc.terminate()
        proc.communicate(timeout=20)
