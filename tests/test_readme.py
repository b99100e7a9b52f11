"""The README's two commands stay true: the scripts exist, CI runs the test one, and the
CLI options the README names exist."""

from __future__ import annotations

import os
from pathlib import Path

from .conftest import run_cli

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_two_commands_and_ci() -> None:
    assert "bash scripts/demo.sh" in README and "bash scripts/test.sh" in README
    assert (ROOT / "scripts" / "demo.sh").is_file() and (ROOT / "scripts" / "test.sh").is_file()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "scripts/test.sh" in ci
    demo = (ROOT / "scripts" / "demo.sh").read_text()
    assert "oracl build" in demo and "oracl stats" in demo


def test_documented_build_options_exist() -> None:
    help_text = run_cli("build", "--help", env={**os.environ, "COLUMNS": "200"}).stdout
    for opt in ("--alpha", "--beta", "--gamma", "--lambda", "--neighbour-cap", "--priority-cap",
                "--query-guard", "--skip-phase", "--two-layer", "--no-gitignore", "--workers", "--full", "--json"):
        assert opt in README and opt in help_text, opt


def test_documented_docs_exist() -> None:
    for doc in ("docs/decisions.md", "docs/benchmarks.md"):
        assert doc in README and (ROOT / doc).is_file()


def test_nothing_points_outside_the_repository() -> None:
    """Users have only the repository: no file of it refers to a folder beside it."""
    needle = "../" + "shared"
    skip = {".venv", ".git", ".oracl", "__pycache__"}
    hits = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
            if p.is_file() and not skip & set(p.relative_to(ROOT).parts)
            and p.suffix in (".py", ".md", ".sh", ".toml", ".cypher", ".txt", "")
            and needle in p.read_text(encoding="utf-8", errors="replace")]
    assert hits == []
    assert "docs/design.md" in README and (ROOT / "docs" / "design.md").is_file()
