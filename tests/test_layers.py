"""The two planes import nothing of each other's internals (read from the source)."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "oracl"
# the build plane: its orchestration, its children, its state
BUILD = {"oracl.builder", "oracl.executor", "oracl.incremental", "oracl.tables", "oracl.pipeline.merge",
         "oracl.pipeline.weigh", "oracl.pipeline.duoranker", "oracl.extractors.providers"}
# the read plane: everything a reader goes through
READ = {"oracl.snapshot", "oracl.memory", "oracl.graph", "oracl.query.run", "oracl.query.score",
        "oracl.query.parse", "oracl.query.compile", "oracl.status", "oracl.stats", "oracl.console",
        "oracl.mcp_server"}


def _module(path: Path) -> str:
    return ".".join(path.relative_to(PKG.parent).with_suffix("").parts)


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m.startswith("oracl")}


def test_the_planes_import_nothing_of_each_others_internals() -> None:
    modules = {_module(p): _imports(p) for p in PKG.rglob("*.py")}
    assert READ <= set(modules) and BUILD <= set(modules)
    crossing = {(m, i) for m in BUILD for i in modules[m] if i in READ}
    crossing |= {(m, i) for m in READ for i in modules[m] if i in BUILD}
    assert crossing == set()


def test_every_reader_opens_builds_through_the_snapshot() -> None:
    """Only the snapshot reads LATEST.json for a reader and opens the engine read-only."""
    for m in READ - {"oracl.snapshot", "oracl.memory"}:
        text = (PKG.parent / (m.replace(".", "/") + ".py")).read_text("utf-8")
        assert "read_latest(" not in text and "Store.open(" not in text, m
