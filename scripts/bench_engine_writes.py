"""What the engine writes for the smallest updates a one-file rebuild makes in place.

    python scripts/bench_engine_writes.py WORKSPACE [--path REL]

Copies the latest bundle's ``graph.kuzu`` of WORKSPACE (built before) into a temporary
folder once per trial, opens the copy read-write through ``core.store.Store``, runs one
small update and a ``CHECKPOINT``, and prints the bytes this process sent to storage
(``/proc/self/io`` ``write_bytes``, Linux) and the seconds the update and checkpoint took.
The update touches the row of one file (``--path``, by default the first file, by path, with a link to another file): the
floor under any design that writes a one-file change into this engine's tables in place.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TRIALS: list[tuple[str, list[str]]] = [
    ("nothing (a CHECKPOINT alone)", []),
    ("Artifact: SET one INT64", ["MATCH (n:Artifact {path: $p}) SET n.line_count = n.line_count + 1"]),
    ("Artifact: SET one DOUBLE", ["MATCH (n:Artifact {path: $p}) SET n.association = n.association + 0.5"]),
    ("Artifact: SET the checksum (a 64-byte STRING)", ["MATCH (n:Artifact {path: $p}) SET n.checksum = 'x'"]),
    ("Artifact: SET the symbols (a STRING)", ["MATCH (n:Artifact {path: $p}) SET n.symbols = '[]'"]),
    ("Link: SET one DOUBLE of the file's out-edges", ["MATCH (:Artifact {path: $p})-[l:Link]->() SET l.confidence = 0.5"]),
    ("Content (full-text indexed): CREATE one row", ["CREATE (:Content {path: $p + '.new', text: 'one two three'})"]),
    ("Content (full-text indexed): DELETE one row", ["MATCH (n:Content {path: $p}) DELETE n"]),
    ("a one-line edit's minimum: Content row replaced, checksum and symbols set, the out-edges' lines set", [
        "MATCH (n:Content {path: $p}) DELETE n", "CREATE (:Content {path: $p, text: 'one two three'})",
        "MATCH (n:Artifact {path: $p}) SET n.checksum = 'x'", "MATCH (n:Artifact {path: $p}) SET n.symbols = '[]'",
        "MATCH (:Artifact {path: $p})-[l:Link]->() SET l.source_fragment = 'L1-2'"]),
]


def write_bytes() -> int:
    fields = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
    return int(fields["write_bytes"])


def trial(source: Path, folder: Path, statements: list[str], path: str) -> tuple[float, float]:
    from oracl.core.store import Store, close

    target = folder / "graph.kuzu"
    for stray in folder.iterdir():
        stray.unlink()
    shutil.copyfile(source, target)
    os.sync()
    store = Store.open(target, read_only=False, buffer_pool_bytes=1 << 30)
    try:
        before, t0 = write_bytes(), time.perf_counter()
        for statement in statements:
            store.execute(statement, {"p": path})
        store.execute("CHECKPOINT")
        seconds = time.perf_counter() - t0
        os.sync()
        return (write_bytes() - before) / 1e6, seconds
    finally:
        store.release()
        close(target)


def main() -> None:
    from oracl.core.store import Store
    from oracl.core.vault import Vault

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--path", default=None, help="the file whose rows are updated (relative to WORKSPACE)")
    args = ap.parse_args()
    vault = Vault(args.workspace)
    source = vault.bundle(vault.read_json(vault.latest)["build_id"]) / "graph.kuzu"
    path = args.path
    counts: dict[str, Any] = {}
    reader = Store.open(source, read_only=True)
    try:
        if path is None:
            path = reader.rows("MATCH (n:Artifact)-[:Link]->(:Artifact) RETURN DISTINCT n.path AS p ORDER BY p LIMIT 1")[0]["p"]
        for table in ("Artifact", "Content", "Symbol"):
            counts[table] = reader.rows(f"MATCH (n:{table}) RETURN count(*) AS c")[0]["c"]
    finally:
        reader.release()
    print(f"database {source} ({source.stat().st_size / 1e6:.0f} MB; "
          + ", ".join(f"{k} {v:,} rows" for k, v in counts.items()) + f"); the file: {path}")
    with tempfile.TemporaryDirectory(prefix="oracl-engine-") as tmp:
        for name, statements in TRIALS:
            mb, seconds = trial(source, Path(tmp), statements, path)
            print(f"{name:100s} {mb:7.2f} MB  {seconds:6.3f} s")


if __name__ == "__main__":
    main()
