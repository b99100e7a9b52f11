from __future__ import annotations

from pathlib import Path

import pytest

from oracl.builder.pipeline.tags import content_type_of, is_placeholder, path_tags
from oracl.core.config import Config

from .conftest import write_tree

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


MONOREPO = {
    "package.json": '{"private": true, "workspaces": {"packages": ["apps/*"]}}',
    "pnpm-workspace.yaml": "packages:\n  - 'packages/*'\n  - \"!packages/scratch\"\n  - ../outside/*\n",
    "packages/zod/package.json": "{}",
    "packages/zod/src/v4/core/schemas.ts": "export {}\n",
    "packages/zod/src/index.ts": "export {}\n",
    "packages/scratch/package.json": "{}",
    "packages/notes/README.md": "no package.json: not a package\n",
    "apps/web/package.json": "{}",
    "apps/web/pages/a.tsx": "x\n",
    "Cargo.toml": '[workspace]\nmembers = ["crates/*"]\nexclude = ["crates/old"]\n',
    "crates/web/Cargo.toml": "[package]\n",
    "crates/web/src/lib.rs": "fn f() {}\n",
    "crates/old/Cargo.toml": "[package]\n",
    "go.work": "go 1.22\n\nuse (\n\t./svc/api\n\t// ./svc/dead\n)\nuse ./tools/gen\n",
    "svc/api/go.mod": "module a\n",
    "tools/gen/go.mod": "module g\n",
    "pom.xml": ('<project xmlns="http://maven.apache.org/POM/4.0.0"><modules><module>java/core</module>'
                "</modules></project>"),
    "java/core/pom.xml": "<project><modules><module>inner</module></modules></project>",
    "java/core/inner/pom.xml": "<project/>",
    "settings.gradle": "include ':kt:app', 'kt:lib'\n",
    "kt/app/build.gradle": "",
    "kt/lib/build.gradle": "",
    "pyproject.toml": '[tool.uv.workspace]\nmembers = ["py/*"]\n',
    "py/one/pyproject.toml": "",
    "src/alpha/__init__.py": "",
    "src/beta/__init__.py": "",
    "README.md": "top\n",
}


def test_workspace_packages_from_every_package_manager(tmp_path: Path) -> None:
    """Each manifest's packages, less its exclusions (`!`, Cargo's ``exclude``, a go.work
    comment), only folders holding the package's own manifest, nothing outside the root
    (``../outside/*``) or through a symbolic link; two folders named ``web`` are named by
    their paths."""
    from oracl.core.config import load_config
    from oracl.core.packages import workspace_packages

    root = write_tree(tmp_path / "mono", MONOREPO)
    (tmp_path / "outside" / "evil").mkdir(parents=True)
    (tmp_path / "outside" / "evil" / "package.json").write_text("{}")
    (root / "packages" / "linked").symlink_to(tmp_path / "outside" / "evil")
    got = workspace_packages(root)
    assert got == {"apps/web": "apps-web", "crates/web": "crates-web", "java/core": "core",
                   "java/core/inner": "inner", "kt/app": "app", "kt/lib": "lib", "packages/zod": "zod",
                   "py/one": "one", "src/alpha": "alpha", "src/beta": "beta", "svc/api": "api",
                   "tools/gen": "gen"}
    assert load_config(root).packages == got
    assert load_config(root, packages={}).packages == {}  # what only reads a setting asks for
    (root / ".oracl.toml").write_text('packages = { "packages/zod" = "schemas" }\n')
    assert load_config(root).packages == {"packages/zod": "schemas"}  # set: nothing is read


def test_a_workspace_package_is_a_domain_and_its_first_folder_a_component() -> None:
    cfg = Config(packages={"packages/zod": "zod", "packages/zod/plugins/x": "x", "apps/web": "apps-web"})
    rows = [(p, path_tags(p, cfg)["domain"], path_tags(p, cfg).get("component"))
            for p in ("packages/zod/src/v4/core/schemas.ts", "packages/zod/src/index.ts", "packages/zod/package.json",
                      "packages/zod/plugins/x/a.ts", "apps/web/pages/a.tsx", "packages/other/a.ts", "README.md",
                      "src/app.py")]
    assert rows == [("packages/zod/src/v4/core/schemas.ts", "zod", "v4"),  # under its src
                    ("packages/zod/src/index.ts", "zod", "src"),
                    ("packages/zod/package.json", "zod", None),
                    ("packages/zod/plugins/x/a.ts", "x", None),  # the innermost package
                    ("apps/web/pages/a.tsx", "apps-web", "pages"),
                    ("packages/other/a.ts", "packages", "other"),  # not a package: the first segment
                    ("README.md", "root", None),
                    ("src/app.py", "core", None)]


def test_the_memo_of_folders_and_names_never_serves_another_path_or_config() -> None:
    """Tags are worked out once per folder and per name (``path_tags``' memo): a glob
    still classifies each path of a folder by itself, a name's tags follow it to any
    folder, and another Config object is never served the first one's folders."""
    cfg = Config(domain_map={"svc": "services"}, classification_globs={"svc/api/*_key.py": "sensitive"})
    assert [path_tags(p, cfg)["classification"] for p in ("svc/api/a.py", "svc/api/signing_key.py", "svc/api/b.py")] \
        == ["internal", "sensitive", "internal"]
    assert path_tags("svc/api/README.md", cfg)["content_type"] == "instruction"
    assert path_tags("svc/api/README.md", Config(domain_map={}))["domain"] == "svc"  # a new Config: its own domains
    assert path_tags("svc/api/a.py", cfg)["domain"] == "services"
    assert path_tags("docs/public/a.md", Config())["classification"] == "public"
    assert path_tags("docs/publicity/a.md", Config())["classification"] == "internal"
    from oracl.builder.pipeline import tags

    held = tags._memo_for(cfg)  # (what a thread building with ``cfg`` holds while another asks)
    path_tags("svc/other/b.py", Config())
    assert held[0] is cfg and "svc/other" not in held[1]  # the other Config's folders went to its own memo
    first = path_tags("x/y/z.py", CFG)
    first["domain"] = "changed by a caller"
    assert path_tags("x/y/z.py", CFG)["domain"] == "x"  # each call's dict is its own


def test_a_lazy_record_is_make_records_and_makes_its_tags_only_when_read() -> None:
    """A reused file's record (``lazy_record``): its path, id, checksum and size are there
    at once; its tags are made when first read, and then the record equals ``make_record``'s
    both ways round (pickled too). ``record_domain`` reads the folder's domain without making
    them, except where the file's own tags or a learned tag could set it."""
    import pickle

    from oracl.builder.pipeline.annotate import lazy_record, make_record, record_domain
    from oracl.core.records import FileFacts

    cfg = Config()
    f = FileFacts("services/billing/README_guide.md", "id-1", "c0ffee", 12, 1_700_000_000_000_000_000,
                  1_700_000_000_000_000_000, "ok", language="markdown")
    made = make_record(f, cfg)
    lazy = lazy_record(f, cfg)
    assert (lazy.path, lazy.artifact_id, lazy.checksum, lazy.size_bytes) == (f.path, "id-1", "c0ffee", 12)
    assert record_domain(lazy) == "services"
    with pytest.raises(AttributeError):
        object.__getattribute__(lazy, "tags")  # (not made by the domain)
    assert lazy == made and made == lazy
    assert lazy.tags == made.tags and lazy.tags["content_type"] == "instruction"
    assert pickle.loads(pickle.dumps(lazy_record(f, cfg))) == made
    assert record_domain(pickle.loads(pickle.dumps(lazy_record(f, cfg)))) == "services"  # (from its tags)
    learned = lazy_record(f, cfg, {"domain": "payments"})
    assert record_domain(learned) == "payments" == make_record(f, cfg, {"domain": "payments"}).tags["domain"]
