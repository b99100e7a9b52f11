"""The planes are folders, and data flows one way (read from the source, every module):

    core/     imports nothing of ORACL's other folders
    builder/  imports core/ and, for the orchestrator's last step, bundle/
    bundle/   imports core/
    read/     imports core/ only
    edit/     imports core/, read/ (the Memory it extends) and builder/ (the rebuild after an edit)
    face/     imports anything: it is where a person or an agent meets the planes

Every module of ``oracl/`` is checked by its folder; the crossings that remain against
the rule are listed in ``KNOWN`` with why, and the test fails when one is added *or*
removed (so the list only shrinks, and says so)."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "oracl"
PLANES = ("core", "builder", "bundle", "read", "edit", "face")
ALLOWED = {
    "core": {"core"},
    "builder": {"core", "builder", "bundle"},
    "bundle": {"core", "bundle"},
    "read": {"core", "read"},
    "edit": {"core", "read", "builder", "edit"},
    "face": set(PLANES),
}
# (importer, imported module) against the rule, each with the reason it is still there
KNOWN = {
}


def _module(path: Path) -> str:
    return ".".join(path.relative_to(PKG.parent).with_suffix("").parts)


def _plane(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 and parts[1] in PLANES else ""


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("oracl."):
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("oracl."))
    return out


def _modules() -> dict[str, set[str]]:
    return {_module(p): _imports(p) for p in PKG.rglob("*.py")}


def test_every_module_lives_in_a_plane_folder() -> None:
    loose = sorted(m for m in _modules() if not _plane(m) and m not in ("oracl.__init__", "oracl"))
    assert loose == [], "modules outside the plane folders"


def test_data_flows_one_way_between_the_planes() -> None:
    crossing = {(m, i) for m, imports in _modules().items() for i in imports
                if _plane(m) and _plane(i) and _plane(i) not in ALLOWED[_plane(m)]}
    assert crossing == set(KNOWN)


def test_the_rule_can_fail() -> None:
    """A read module importing the build plane is a crossing the check sees."""
    assert _plane("oracl.read.graph") == "read" and "builder" not in ALLOWED["read"]
    assert _plane("oracl.builder.pipeline.discover") == "builder"


def test_every_reader_opens_builds_through_the_snapshot() -> None:
    """Only the snapshot reads LATEST.json for a reader and opens the engine read-only."""
    for path in (PKG / "read").rglob("*.py"):
        if path.name in ("snapshot.py", "memory.py"):
            continue
        text = path.read_text("utf-8")
        assert "read_latest(" not in text and "Store.open(" not in text, path
