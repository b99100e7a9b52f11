"""``oracl cypher``: a read-only Cypher console over the latest bundle.

A statement runs only when the engine's own grammar reads it as a read query
(``oracl.face.readonly``: one statement, read clauses, a fixed list of read-only functions);
anything else gets one line naming the reason. Behind that gate each statement runs in a
child that opens the bundle read-only and can then open no file, bind no port and grow no
file, under limits of time, memory and output (``oracl.face.sandbox``): a crash or a runaway
query costs that child, and the console goes on. Interactive mode has line
editing and a persistent history (``readline``; ``ORACL_CYPHER_HISTORY`` or
``~/.oracl_cypher_history``), statements that span lines until a ``;``, and the commands
``:schema``, ``:help`` and ``:quit``.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

import orjson

from oracl.core.errors import OraclError, QueryError
from oracl.core.vault import DB_FILE
from oracl.face.readonly import check
from oracl.face.sandbox import run_statement
from oracl.read.snapshot import Snapshot

HELP = """Statements end with ';' and may span lines. Examples:
  MATCH (a:Artifact) RETURN a.path, a.association ORDER BY a.association DESC LIMIT 5;
  MATCH (a:Artifact {path: 'README.md'})-[l:Link]->(b) RETURN b.path, l.relation;
  CALL QUERY_FTS_INDEX('History', 'history_fts', 'signing', top := 25) WITH node, score
    WHERE node.live RETURN node.path, score ORDER BY score DESC LIMIT 5;
  (commit subjects; rows an update superseded stay in the index with live false: keep live
  ones. The files' own text is searched by `oracl query`, not in the database)
Commands: :schema (tables and their columns), :help, :quit (or Ctrl-D)."""


def parse_params(items: list[str]) -> dict[str, Any]:
    """``k=v`` pairs; ``v`` is JSON when it parses (numbers, lists, true), else a string."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z_]\w*", key):
            raise QueryError(f"--param expects name=value, not {item[:40]!r}")
        try:
            out[key] = orjson.loads(value)
        except orjson.JSONDecodeError:
            out[key] = value
    return out


def run_one(snap: Snapshot, statement: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run one read statement on the snapshot's build: ``oracl.face.readonly.check`` decides
    what is a read, and ``oracl.face.sandbox`` runs it in a child that can read nothing but the
    bundle's database; returns columns and rows."""
    text = check(statement)
    return run_statement(snap.bundle / DB_FILE, text, params or {})


def schema(snap: Snapshot) -> dict[str, Any]:
    tables = run_one(snap, "CALL show_tables() RETURN *")
    out: dict[str, Any] = {"columns": ["table", "type", "columns"], "rows": []}
    name_i = tables["columns"].index("name")
    type_i = tables["columns"].index("type")
    for row in tables["rows"]:
        name = row[name_i]
        if not re.fullmatch(r"\w+", str(name)):
            continue
        info = run_one(snap, f"CALL table_info('{name}') RETURN *")
        ni = info["columns"].index("name")
        ti = info["columns"].index("type")
        cols = ", ".join(f"{r[ni]} {r[ti]}" for r in info["rows"])
        out["rows"].append([name, row[type_i], cols])
    return out


def _history_file() -> Path:
    return Path(os.environ.get("ORACL_CYPHER_HISTORY") or Path.home() / ".oracl_cypher_history")


def interactive(snap: Snapshot) -> None:
    """The read–eval–print loop over one build."""
    from oracl.face import render

    try:
        import readline
    except ImportError:  # pragma: no cover - every Linux Python has it
        readline = None  # type: ignore[assignment]
    hist = _history_file()
    if readline is not None:
        try:
            readline.read_history_file(hist)
        except OSError:
            pass
        readline.set_history_length(2000)
    render.console_banner(snap.build_id)
    buffer: list[str] = []
    try:
        while True:
            try:
                line = input("....> " if buffer else "oracl> ")
            except EOFError:
                break
            except KeyboardInterrupt:
                buffer = []
                print()
                continue
            stripped = line.strip()
            if not buffer and stripped.startswith(":"):
                cmd = stripped.lower()
                if cmd in (":quit", ":q", ":exit"):
                    break
                if cmd == ":help":
                    render.console_text(HELP)
                elif cmd == ":schema":
                    render.rows_view(schema(snap))
                else:
                    render.error_line(f"unknown command {stripped[:30]}; try :help")
                continue
            if not stripped and not buffer:
                continue
            buffer.append(line)
            if not stripped.endswith(";"):
                continue
            text = "\n".join(buffer)
            buffer = []
            try:
                render.rows_view(run_one(snap, text))
            except OraclError as exc:
                render.error_line(str(exc))
    finally:
        if readline is not None:
            try:
                hist.parent.mkdir(parents=True, exist_ok=True)
                readline.write_history_file(hist)
            except OSError:
                pass
    sys.stdout.flush()
