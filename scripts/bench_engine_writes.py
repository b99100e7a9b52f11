"""What the engine writes for the smallest updates a one-file rebuild makes in place.

    python scripts/bench_engine_writes.py WORKSPACE [--path REL]

Copies the latest bundle's ``graph.kuzu`` of WORKSPACE (built before) into a temporary
folder once per trial, opens the copy read-write through ``core.store.Store``, runs one
small update and a ``CHECKPOINT``, and prints the bytes this process sent to storage
(``/proc/self/io`` ``write_bytes``, Linux) and the seconds the update and checkpoint took.
The update touches the row of one file (``--path``, by default the first file, by path, with a link to another file): the
floor under any design that writes a one-file change into this engine's tables in place.
The ``append-only`` trials first add a ``retired`` INT64 to Content, Artifact and Link
(not counted) and write the change as new rows and edges, the old ones retired: the
floor under a layout whose readers skip retired rows until a compaction.
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

# what an append-only layout would add to the schema (each row and edge retired by a number)
RETIRED = ["ALTER TABLE Content ADD retired INT64 DEFAULT 0", "ALTER TABLE Artifact ADD retired INT64 DEFAULT 0",
           "ALTER TABLE Link ADD retired INT64 DEFAULT 0"]
_LINK = ("relation: l.relation, confidence: l.confidence, relation_weight: l.relation_weight, rank_raw: l.rank_raw, "
         "source_fragment: l.source_fragment, target_fragment: l.target_fragment, producer: l.producer, "
         "provider: l.provider")
# a one-line edit written append-only: the file's Content and Artifact rows as new versions
# (a new key), its edges out and in made again on the new version, the old ones retired
APPEND_ONLY = [
    "MATCH (n:Content {path: $p}) SET n.retired = 1",
    "CREATE (:Content {path: $q, text: 'one two three'})",
    "MATCH (n:Artifact {path: $p}) SET n.retired = 1",
    "MATCH (n:Artifact {path: $p}) CREATE (:Artifact {path: $q, id: n.id, checksum: 'x', symbols: '[]', "
    "detail: n.detail, tags: n.tags, headings: n.headings, name: n.name, domain: n.domain, "
    "line_count: n.line_count, size_bytes: n.size_bytes})",
    # (retired before the new ones are made: a SET on a rel table's rows after a CREATE in
    # it, before a checkpoint, trips an assertion in Kùzu 0.11.3's csr_node_group.cpp)
    "MATCH (:Artifact {path: $p})-[l:Link]->() SET l.retired = 1",
    "MATCH (:Artifact {path: $p})<-[l:Link]-() SET l.retired = 1",
    f"MATCH (a:Artifact {{path: $p}})-[l:Link]->(b:Artifact), (m:Artifact {{path: $q}}) "
    f"CREATE (m)-[:Link {{{_LINK}}}]->(b)",
    f"MATCH (b:Artifact)-[l:Link]->(a:Artifact {{path: $p}}), (m:Artifact {{path: $q}}) "
    f"CREATE (b)-[:Link {{{_LINK}}}]->(m)",
    "MATCH (a:Artifact {path: $p})-[h:BelongsTo]->(u:Hub), (m:Artifact {path: $q}) "
    "CREATE (m)-[:BelongsTo {confidence: h.confidence, relation_weight: h.relation_weight, rank_raw: h.rank_raw}]->(u)",
    "MATCH (s:Symbol {path: $p}) SET s.start_line = s.start_line + 1, s.end_line = s.end_line + 1",
]

# the same, with what a file's bytes determine kept beside a stable Artifact row (whose
# edges then stay where they are): a state row per version, the old one retired
STATE = ["CREATE NODE TABLE ArtifactState(key STRING PRIMARY KEY, path STRING, checksum STRING, symbols STRING, "
         "headings STRING, detail STRING, line_count INT64, retired INT64)",
         "MATCH (n:Artifact) CREATE (:ArtifactState {key: n.path, path: n.path, checksum: n.checksum, "
         "symbols: n.symbols, headings: n.headings, detail: n.detail, line_count: n.line_count, retired: 0})"]
STATE_EDIT = [
    *APPEND_ONLY[:2],
    "MATCH (s:ArtifactState {key: $p}) SET s.retired = 1",
    "MATCH (s:ArtifactState {key: $p}) CREATE (:ArtifactState {key: $q, path: $p, checksum: 'x', symbols: '[]', "
    "headings: s.headings, detail: s.detail, line_count: s.line_count + 1, retired: 0})",
    APPEND_ONLY[-1],
]

TRIALS: list[tuple[str, list[str]]] = [
    ("nothing (a CHECKPOINT alone)", []),
    ("Artifact: SET one INT64", ["MATCH (n:Artifact {path: $p}) SET n.line_count = n.line_count + 1"]),
    ("Artifact: SET one DOUBLE", ["MATCH (n:Artifact {path: $p}) SET n.association = n.association + 0.5"]),
    ("Artifact: SET the checksum (a 64-byte STRING)", ["MATCH (n:Artifact {path: $p}) SET n.checksum = 'x'"]),
    ("Artifact: SET the symbols (a STRING)", ["MATCH (n:Artifact {path: $p}) SET n.symbols = '[]'"]),
    ("Link: SET one DOUBLE of the file's out-edges", ["MATCH (:Artifact {path: $p})-[l:Link]->() SET l.confidence = 0.5"]),
    ("Content (full-text indexed): CREATE one row", ["CREATE (:Content {path: $q, text: 'one two three'})"]),
    ("Content (full-text indexed): DELETE one row", ["MATCH (n:Content {path: $p}) DELETE n"]),
    ("a one-line edit's minimum: Content row replaced, checksum and symbols set, the out-edges' lines set", [
        "MATCH (n:Content {path: $p}) DELETE n", "CREATE (:Content {path: $p, text: 'one two three'})",
        "MATCH (n:Artifact {path: $p}) SET n.checksum = 'x'", "MATCH (n:Artifact {path: $p}) SET n.symbols = '[]'",
        "MATCH (:Artifact {path: $p})-[l:Link]->() SET l.source_fragment = 'L1-2'"]),
    ("Symbol: SET the file's symbols' lines (INT64)", [APPEND_ONLY[-1]]),
    ("Link: CREATE one edge", ["MATCH (a:Artifact {path: $p})-[l:Link]->(b:Artifact) WITH a, b, l LIMIT 1 "
                               f"CREATE (a)-[:Link {{{_LINK}}}]->(b)"]),
    ("append-only (a retired INT64 added first): Content row retired and one created", APPEND_ONLY[:2]),
    ("append-only: Artifact row retired and one created, its edges out and in made again, the old retired",
     APPEND_ONLY[2:9]),
    ("append-only: the one-line edit (the two above, and the symbols' lines set)", APPEND_ONLY),
    ("append-only, a file's state beside its stable Artifact row: Content and state rows retired and created, "
     "the symbols' lines set", STATE_EDIT),
]
SETUP = {name: RETIRED + (STATE if "state" in name else []) for name, _ in TRIALS if name.startswith("append-only")}


def write_bytes() -> int:
    fields = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
    return int(fields["write_bytes"])


def trial(source: Path, folder: Path, statements: list[str], path: str,
          setup: list[str] | None = None) -> tuple[float, float]:
    from oracl.core.store import Store, close

    target = folder / "graph.kuzu"
    for stray in folder.iterdir():
        stray.unlink()
    shutil.copyfile(source, target)
    os.sync()
    store = Store.open(target, read_only=False, buffer_pool_bytes=1 << 30)
    try:
        if setup:  # (not counted: the schema the trial's layout needs, checkpointed first)
            for statement in setup:
                store.execute(statement)
            store.execute("CHECKPOINT")
            os.sync()
        before, t0 = write_bytes(), time.perf_counter()
        for statement in statements:
            store.execute(statement, {k: v for k, v in (("p", path), ("q", path + "~2")) if f"${k}" in statement})
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
            mb, seconds = trial(source, Path(tmp), statements, path, SETUP.get(name))
            print(f"{name:100s} {mb:7.2f} MB  {seconds:6.3f} s")


if __name__ == "__main__":
    main()
