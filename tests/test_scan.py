from __future__ import annotations

import pytest

from oracl.builder.extractors import scan
from oracl.core.tokens import term_bag


def test_markdown_headings_and_sections() -> None:
    text = "# Title\nintro\n## A\na\n```\n# not a heading\n```\n## B\nb\n# Next\n"
    assert scan.markdown_headings(text) == (("Title", 1, 1, 9), ("A", 2, 3, 7), ("B", 2, 8, 9),
                                            ("Next", 1, 10, 10))


def test_markdown_links_skip_urls_and_anchors() -> None:
    text = ("see [a](docs/a.md) and [web](https://x.org/b.md)\n"
            "![img](img/p.md \"title\") [self](#top) [mail](mailto:a@b.c)\n[ref]: ../c.md\n")
    assert scan.markdown_links(text) == (("docs/a.md", 1), ("img/p.md", 2), ("../c.md", 3))


@pytest.mark.parametrize(("text", "expected"), [
    ("see docs/a.md and http://x.com/b.md", (("docs/a.md", 1),)),
    ("../c/d.py\nREADME.md x.pyc user@host.py", (("../c/d.py", 1), ("README.md", 2))),
    ("os.path.join and self.value", ()),
    ("run scripts/deploy.sh, then notes.txt.", (("scripts/deploy.sh", 1), ("notes.txt", 1))),
])
def test_path_mentions(text: str, expected: tuple) -> None:
    assert scan.path_mentions(text) == expected


def test_comment_references_only_in_comments() -> None:
    text = 'x = "pkg/a.py"  # see pkg/b.py and pkg.mod\n# "quoted # not" core.x\n'
    assert scan.comment_references(text, "py") == (("pkg.mod", 1), ("pkg/b.py", 1), ("core.x", 2))
    assert scan.comment_references(text, "md") == ()


@pytest.mark.parametrize(("fmt", "text", "expected"), [
    ("yaml", "entry: pkg.auth:sign\npath: docs/guide.md\nurl: https://x.org/a.py\n",
     (("pkg.auth:sign", 1), ("docs/guide.md", 2))),
    ("json", '{"module": "a.b", "n": 1, "p": ["x/y.py"]}\n', (("a.b", 1), ("x/y.py", 1))),
    ("toml", '[tool]\ntarget = "core.mod"\n', (("core.mod", 2),)),
    ("ini", "[main]\nhandler = core.mod\n; comment.py\n", (("core.mod", 2),)),
    ("md", "path: x/y.py\n", ()),
])
def test_config_values(fmt: str, text: str, expected: tuple) -> None:
    assert scan.config_values(text, fmt) == expected


@pytest.mark.parametrize(("fmt", "text", "ok"), [
    ("json", '{"a": 1}', True), ("json", '{"a": ', False),
    ("jsonl", '{"a": 1}\n{"b": 2}\n', True), ("jsonl", '{"a": 1}\n{oops\n', False),
    ("toml", 'a = "x"\n', True), ("toml", "a = = 1\n", False),
    ("ini", "[s]\na = 1\n", True), ("ini", "no section line\n", False),
    ("yaml", "a:\n  - b\n", True), ("yaml", "a:\n\t- b\n", False), ("yaml", 'a: "open\n', False),
    ("yaml", "a: [1, 2\n", False),
])
def test_validate_structured(fmt: str, text: str, ok: bool) -> None:
    assert (scan.validate_structured(text, fmt) == "") is ok


def test_security_signals_names_only() -> None:
    assert scan.security_signals("db_password: ${DB_PASSWORD}\n") == (True, False)
    assert scan.security_signals("api_key = sk-live-1234\n") == (True, True)
    assert scan.security_signals("nothing here\n") == (False, False)


def test_term_bag_keeps_identifiers_parts_and_capped_frequency() -> None:
    text = "def parseHTTPResponse_v2(x): self.foo_bar + FooBar + HTTP 404 x ü_ä x x"
    assert term_bag(text) == (
        "parsehttpresponse_v2 parse http response v 2 x foo_bar foo bar foobar 404 ü_ä ü ä")
    # tf capped at 3: x appears 4 times, foo twice (foo_bar, FooBar); code keywords dropped
    assert term_bag(text, tf_cap=3).split().count("x") == 3
    assert term_bag(text, tf_cap=3).split().count("foo") == 2
    assert "def" not in term_bag(text, tf_cap=3).split()
    assert term_bag(b"caf\xc3\xa9 CONST_NAME") == "café const_name const name"
