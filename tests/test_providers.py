from __future__ import annotations

from pathlib import Path

import pytest

from oracl.builder.extractors.providers import (
    PHASE2,
    PHASE3,
    PROVIDERS,
    comment_refs,
    config_refs,
    markdown_links,
    path_mentions,
    phase2_edges,
    python_imports,
)
from oracl.builder.extractors.providers import (
    test_targets as targets_of_tests,
)
from oracl.builder.extractors.resolve import IndexView
from oracl.builder.pipeline.discover import read_one
from oracl.core.config import Config
from oracl.core.records import Edge
from oracl.core.walk import walk

from .conftest import SAMPLE, write_tree


def index_of(root: Path) -> tuple[dict, IndexView]:
    cfg = Config()
    facts = {p: read_one(str(root), p, cfg)[0] for p in walk(root, cfg).files}
    return facts, IndexView.build(facts)


@pytest.fixture
def sample(tmp_path: Path) -> tuple[dict, IndexView]:
    return index_of(write_tree(tmp_path, {**SAMPLE, "docs/TEMPLATE.md": "x\n",
                                          "docs/more.md": "[t](TEMPLATE.md) [g](guide.md#usage)\n",
                                          "src/lib/__init__.py": "", "src/lib/core.py": "X = 1\n",
                                          "src/lib/rel.py": "from . import core\nfrom .core import X\n",
                                          "tests/core_test.py": "import lib.core\n"}))


def edges(provider, facts, idx, path):  # type: ignore[no-untyped-def]
    return sorted(provider(facts[path], idx, PHASE3), key=lambda e: e.key)


def test_registry_has_eight_providers() -> None:
    assert [name for name, _ in PROVIDERS] == ["python_imports", "code_imports", "markdown_links", "doc_refs",
                                               "config_refs", "test_targets", "path_mentions", "comment_refs"]


def test_python_imports_resolve_modules_and_symbols(sample) -> None:  # type: ignore[no-untyped-def]
    facts, idx = sample
    assert edges(python_imports, facts, idx, "pkg/auth.py") == [
        Edge("pkg/auth.py", "pkg/util.py", "imports", 1.0, "L3-3", "", PHASE3, "python_imports")]
    assert edges(python_imports, facts, idx, "tests/test_auth.py") == [
        Edge("tests/test_auth.py", "pkg/auth.py", "imports", 1.0, "L1-1", "L5-7", PHASE3, "python_imports")]


def test_relative_imports_and_src_layout(sample) -> None:  # type: ignore[no-untyped-def]
    facts, idx = sample
    assert [(e.target, e.source_fragment, e.target_fragment) for e in
            edges(python_imports, facts, idx, "src/lib/rel.py")] == [
        ("src/lib/core.py", "L1-1", ""), ("src/lib/core.py", "L2-2", "")]
    # `import lib.core` resolves through the qualified name under src/
    assert [e.target for e in edges(python_imports, facts, idx, "tests/core_test.py")] == ["src/lib/core.py"]


def test_markdown_links_with_anchor_placeholder_and_dangling(sample) -> None:  # type: ignore[no-untyped-def]
    facts, idx = sample
    got = edges(markdown_links, facts, idx, "docs/more.md")
    assert [(e.target, e.relation, e.confidence, e.source_fragment, e.target_fragment) for e in got] == [
        ("docs/TEMPLATE.md", "references_placeholder", 0.95, "L1-1", ""),
        ("docs/guide.md", "references", 0.95, "L1-1", "L3-4")]
    dangling = edges(markdown_links, facts, idx, "docs/guide.md")
    assert [(e.target, e.relation) for e in dangling] == [("", "references"), ("pkg/auth.py", "references")]


def test_markdown_link_to_a_folder_reaches_its_page(tmp_path: Path) -> None:
    facts, idx = index_of(write_tree(tmp_path, {
        "examples/README.md": "[auth](./auth) [cookies](cookies/) [none](./none)\n",
        "examples/auth/index.js": "module.exports = 1;\n", "examples/cookies/README.md": "# Cookies\n",
        "examples/cookies/index.js": "module.exports = 2;\n"}))
    got = edges(markdown_links, facts, idx, "examples/README.md")
    # README first, then an index; a folder with neither stays dangling
    assert [e.target for e in got] == ["", "examples/auth/index.js", "examples/cookies/README.md"]


def test_config_refs_modules_and_paths(sample) -> None:  # type: ignore[no-untyped-def]
    facts, idx = sample
    got = edges(config_refs, facts, idx, "config.yaml")
    assert [(e.target, e.relation, e.confidence, e.source_fragment, e.target_fragment) for e in got] == [
        ("pkg/auth.py", "configures", 0.8, "L1-1", "L5-7"), ("docs/guide.md", "configures", 0.8, "L2-2", "")]


def test_test_targets_by_import_and_name(sample) -> None:  # type: ignore[no-untyped-def]
    facts, idx = sample
    got = edges(targets_of_tests, facts, idx, "tests/test_auth.py")
    assert [(e.target, e.confidence, e.source_fragment) for e in got] == [
        ("pkg/auth.py", 0.7, ""), ("pkg/auth.py", 0.9, "L1-1")]
    assert [e.target for e in edges(targets_of_tests, facts, idx, "tests/core_test.py")] == [
        "src/lib/core.py", "src/lib/core.py"]
    assert edges(targets_of_tests, facts, idx, "pkg/util.py") == []


def test_path_mentions(sample) -> None:  # type: ignore[no-untyped-def]
    facts, idx = sample
    got = edges(path_mentions, facts, idx, "docs/guide.md")
    assert [(e.target, e.relation, e.confidence, e.source_fragment) for e in got] == [
        ("pkg/auth.py", "mentions", 0.6, "L2-2"), ("pkg/util.py", "mentions", 0.6, "L4-4")]


def test_comment_refs(sample) -> None:  # type: ignore[no-untyped-def]
    facts, idx = sample
    got = edges(comment_refs, facts, idx, "pkg/util.py")
    assert [(e.target, e.relation, e.confidence, e.target_fragment) for e in got] == [
        ("pkg/auth.py", "references", 0.5, ""), ("pkg/auth.py", "references", 0.5, "L5-7")]


def test_phase2_is_imports_and_links(sample) -> None:  # type: ignore[no-untyped-def]
    facts, idx = sample
    p2 = phase2_edges(list(facts.values()), idx)
    assert {e.provider for e in p2} == {"python_imports", "markdown_links"}
    assert all(e.producer == PHASE2 for e in p2)


def test_nearest_module_wins_on_ambiguity(tmp_path: Path) -> None:
    facts, idx = index_of(write_tree(tmp_path, {"a/utils.py": "", "b/utils.py": "", "b/main.py": "import utils\n"}))
    assert [e.target for e in edges(python_imports, facts, idx, "b/main.py")] == ["b/utils.py"]


def test_a_test_files_named_modules_are_found_from_the_paths_without_reading_every_manifest(tmp_path: Path) -> None:
    """``_named_subjects`` looks a directory's files up by path: a rebuild keeps the other
    files' manifests as undecoded bytes, and building the import resolvers' indexes to
    find one directory's stems decoded every file's (0.5 s at 20k files)."""
    from dataclasses import fields

    from oracl.core.records import FileFacts

    read: list[str] = []

    class Kept(FileFacts):  # (a rebuild's facts: reading the manifest is what costs)
        __slots__ = ()

        def __getattribute__(self, name: str):  # type: ignore[no-untyped-def]
            if name == "manifest":
                read.append(object.__getattribute__(self, "path"))
            return object.__getattribute__(self, name)

    facts, _ = index_of(write_tree(tmp_path, {
        "pkg/session.py": "def open_session():\n    return 1\n",
        "pkg/other.py": "X = 1\n",
        "pkg/test_session.py": "def test_session_opens():\n    assert True\n\n\ndef test_session_closes():\n    assert True\n"}))
    kept = {p: Kept(**{f.name: getattr(x, f.name) for f in fields(FileFacts)}) for p, x in facts.items()}
    idx = IndexView.build(kept)
    got = [(e.target, e.relation) for e in targets_of_tests(kept["pkg/test_session.py"], idx, PHASE3)]
    assert ("pkg/session.py", "tests") in got
    assert read == []


def test_a_kept_index_takes_the_names_tests_call_with_the_changed_files_moved(tmp_path: Path) -> None:
    """``carry_test_call_defs``: the index a long-lived builder makes from the one it kept
    (``IndexView.again``) has each name non-test files define → those files, in the files'
    order, exactly as an index made from scratch of the new facts has it, with only the
    changed files' names moved (a def added, one removed, one renamed; a test file's
    ignored), and the kept index's table left as it was."""
    from oracl.builder.extractors.providers import carry_test_call_defs, defs_for_test_calls

    tree = {"a/m.py": "def parse_value(x):\n    return x\n\ndef shared_name(x):\n    return x\n",
            "b/n.py": "def shared_name(x):\n    return x\n",
            "c/o.py": "def shared_name(x):\n    return x\n\ndef only_here(x):\n    return x\n",
            "tests/test_m.py": "def test_helper_name():\n    parse_value(1)\n"}
    root = write_tree(tmp_path / "r", tree)
    facts, kept = index_of(root)
    before = {k: list(v) for k, v in defs_for_test_calls(kept).items()}
    assert before["shared_name"] == ["a/m.py", "b/n.py", "c/o.py"] and "test_helper_name" not in before
    write_tree(root, {"b/n.py": "def parse_value(y):\n    return y\n",  # shared_name gone, parse_value came
                      "c/o.py": "def shared_name(x):\n    return x\n\ndef only_there(x):\n    return x\n",
                      "tests/test_m.py": "def test_other_name():\n    shared_name(1)\n"})
    changed = ["b/n.py", "c/o.py", "tests/test_m.py"]
    new_facts, whole = index_of(root)
    again = IndexView.again(kept, {**facts, **{p: new_facts[p] for p in changed}}, set(changed))
    carry_test_call_defs(kept, again, changed)
    assert defs_for_test_calls(again) == defs_for_test_calls(whole)
    assert defs_for_test_calls(again)["parse_value"] == ["a/m.py", "b/n.py"]
    assert defs_for_test_calls(again)["shared_name"] == ["a/m.py", "c/o.py"]
    assert "only_here" not in defs_for_test_calls(again) and defs_for_test_calls(again)["only_there"] == ["c/o.py"]
    assert defs_for_test_calls(kept) == before  # (the kept index's own table is not changed)
