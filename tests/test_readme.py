"""The README's two commands stay true: the scripts exist, CI runs the test one, and the
CLI options the README names exist."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

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


def test_the_mcp_tools_the_readme_names_are_the_servers() -> None:
    """The README's count and list of MCP tools are the server's (it once said "eight"
    while the server had eleven), and `oracl mcp --help` says the same number."""
    import re

    pytest.importorskip("mcp")
    import asyncio

    from oracl.face.mcp_server import create_server

    tools = sorted(t.name for t in asyncio.run(create_server(ROOT).list_tools()))
    section = README[README.index("## Agents: `oracl mcp`"):README.index("Register it with an MCP client")]
    named = sorted(set(re.findall(r"`(oracl_[a-z_]+)`", section)))
    words = {"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13}
    count = re.search(r"\b(\w+)\s+read-only tools", section.replace("\n", " "))
    assert named == tools and count is not None and words[count.group(1).lower()] == len(tools)
    help_text = " ".join(run_cli("mcp", "--help", env={**os.environ, "COLUMNS": "200"}).stdout.split())
    assert f"{count.group(1).capitalize()} read-only tools" in help_text


def test_the_readme_says_what_the_test_command_installs() -> None:
    """scripts/test.sh installs a system browser when it is missing; the README says so."""
    script = (ROOT / "scripts" / "test.sh").read_text()
    assert "apt-get install" in script and "chromium" in script
    two = README[README.index("## Two commands"):README.index("What the first command prints")]
    assert "chromium" in two and "apt-get" in two


def test_the_readme_verify_transcript_matches_what_verify_does(tmp_path: Path) -> None:
    """The README shows `oracl verify` passing while the private key is exported (its
    public half checks the build) and failing with exit 12 only with no key at all."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORACL_") or k == "ORACL_HOME"}
    assert run_cli("keygen", "--out", str(tmp_path / "keys"), env=env).returncode == 0
    root = tmp_path / "demo"
    root.mkdir()
    (root / "a.py").write_text("def f():\n    return 1\n")
    signed = {**env, "ORACL_ED25519_PRIVATE_KEY": str(tmp_path / "keys" / "oracl_ed25519.pem")}
    assert run_cli("build", str(root), "-q", "--workers", "1", env=signed).returncode == 0
    assert run_cli("verify", str(root), env=signed).returncode == 0
    bare = run_cli("verify", str(root), env=env)
    line = ("Error: the bundle's manifest is Ed25519-signed but no public key was given "
            "(--public-key or ORACL_ED25519_PUBLIC_KEY)")
    assert (bare.returncode, bare.stderr.strip()) == (12, line)
    assert f"{line}\n12\n" in README and "oracl verify demo >/dev/null; echo $?" in README
