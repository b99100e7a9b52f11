from __future__ import annotations

import pytest

from oracl.builder.pipeline.tags import content_type_of, is_placeholder, path_tags
from oracl.core.config import Config

CFG = Config(domain_map={"docs": "docs", "tests": "tests", "scripts": "ops", "mypkg": "core",
                         ".github": "ci"},
             classification_globs={"secrets/**": "sensitive", "docs/public/internal/*": "confidential"})


@pytest.mark.parametrize(("path", "expected"), [
    ("README.md", {"domain": "root", "lifecycle": "active", "classification": "internal",
                   "content_type": "instruction", "placeholder": False, "format": "md"}),
    ("mypkg/auth/sign.py", {"domain": "core", "component": "auth", "lifecycle": "active",
                            "classification": "internal", "content_type": "generic",
                            "placeholder": False, "format": "py"}),
    ("docs/public/guide.md", {"domain": "docs", "component": "public", "lifecycle": "active",
                              "classification": "public", "content_type": "instruction",
                              "placeholder": False, "format": "md"}),
    ("docs/legacy/old_report.txt", {"domain": "docs", "component": "legacy", "lifecycle": "archived",
                                    "classification": "internal", "content_type": "report",
                                    "placeholder": False, "format": "txt"}),
    ("Web App/drafts/bug_list.md", {"domain": "web-app", "component": "drafts", "lifecycle": "staging",
                                    "classification": "internal", "content_type": "issue",
                                    "placeholder": False, "format": "md"}),
    ("secrets/keys/config_template.yaml", {"domain": "secrets", "component": "keys",
                                           "lifecycle": "active", "classification": "sensitive",
                                           "content_type": "generic", "placeholder": True,
                                           "format": "yaml"}),
    ("docs/public/internal/x.md", {"domain": "docs", "component": "public", "lifecycle": "active",
                                   "classification": "confidential", "content_type": "generic",
                                   "placeholder": False, "format": "md"}),
    (".github/workflows/ci.yml", {"domain": "ci", "component": "workflows", "lifecycle": "active",
                                  "classification": "internal", "content_type": "generic",
                                  "placeholder": False, "format": "yml"}),
    ("scripts/.gitkeep", {"domain": "ops", "lifecycle": "active", "classification": "internal",
                          "content_type": "generic", "placeholder": True, "format": ""}),
])
def test_path_tags(path: str, expected: dict) -> None:
    assert path_tags(path, CFG) == expected


def test_same_path_same_tags() -> None:
    assert path_tags("a/b/c.py", CFG) == path_tags("a/b/c.py", CFG)


@pytest.mark.parametrize(("name", "expected"), [
    ("incident_2024.md", "issue"), ("RUNBOOK.md", "instruction"), ("howto-deploy.md", "instruction"),
    ("CONTRIBUTING.md", "instruction"), ("AGENTS.md", "instruction"), ("weekly_report.md", "report"),
    ("bugs.txt", "issue"), ("debugger.py", "generic"), ("tissue.py", "generic"), ("main.py", "generic"),
])
def test_content_type(name: str, expected: str) -> None:
    assert content_type_of(name) == expected


@pytest.mark.parametrize(("name", "expected"), [
    ("placeholder.md", True), ("stub_client.py", True), ("examples.py", True), ("sample-data.json", True),
    (".gitkeep", True), ("stubborn.py", False), ("templates_engine.py", True), ("main.py", False),
])
def test_placeholder(name: str, expected: bool) -> None:
    assert is_placeholder(name) is expected
