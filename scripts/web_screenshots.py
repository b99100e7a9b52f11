"""Screenshots of the web view's pages, as the README shows them.

    python scripts/web_screenshots.py ROOT OUT_DIR --file PATH --query TEXT [--symbol NAME]

ROOT is a built tree (the README's come from a psf/requests clone, commit 1f6589ec:
``--file src/requests/sessions.py --query "redirect strips the authorization header"
--symbol src/requests/sessions.py:557``). The script starts ``oracl serve ROOT --port 0``,
has Debian's headless Chromium load each page (its scripts run, the graph is drawn) and
writes ``web-hubs.png``, ``web-hub.png``, ``web-file.png``, ``web-graph.png``,
``web-search.png``, ``web-symbol.png`` and ``web-impact.png`` into OUT_DIR.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path
from urllib.parse import quote, urlencode

import orjson

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars")


def shoot(url: str, out: Path, height: int) -> None:
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([shutil.which("chromium") or "chromium", *FLAGS, f"--user-data-dir={profile}",
                        f"--window-size=1280,{height}", "--virtual-time-budget=8000", f"--screenshot={out}", url],
                       check=True, capture_output=True, timeout=120)
    print(f"{out} ← {url}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--file", required=True)
    ap.add_argument("--query", required=True)
    ap.add_argument("--symbol")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    oracl = str(Path(sys.executable).with_name("oracl"))
    server = subprocess.Popen([oracl, "serve", str(args.root), "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        first = server.stdout.readline() if server.stdout else ""
        m = re.search(r"at (http://127\.0\.0\.1:\d+/)", first)
        if not m:
            sys.exit(f"oracl serve did not start: {first!r}")
        base = m.group(1)
        with urllib.request.urlopen(base + "api/hubs") as r:  # our own server, on loopback
            domain = orjson.loads(r.read())["hubs"][0]["domain"]
        f = quote(args.file)
        pages = [("hubs", "", 760), ("hub", f"hub/{quote(domain)}?k=12", 700), ("file", f"file/{f}", 1500),
                 ("graph", f"graph/{f}", 1000), ("search", "search?" + urlencode({"q": args.query}), 820),
                 ("impact", f"impact/{f}", 900)]
        if args.symbol:
            pages.append(("symbol", f"symbol/{quote(args.symbol)}", 820))
        for name, url, height in pages:
            shoot(base + url, args.out / f"web-{name}.png", height)
    finally:
        server.terminate()
        server.communicate(timeout=20)


if __name__ == "__main__":
    main()
