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


@pytest.mark.parametrize(("text", "reason"), [
    # valid YAML the old line heuristic called malformed: brackets and quotes inside block
    # scalars and plain scalars, custom tags, several documents, a template
    ("run: |\n  echo [1\n  say \"hi\nnext: 2\n", ""),
    ("title: it's \"quoted\" here\nlist: [a, b]\n", ""),
    ("Resources:\n  Bucket: !Ref Name\n  Path: !Sub '${A}/x'\n", ""),
    ("---\na: 1\n---\nb: [2]\n...\n", ""),
    ("{{- if .Values.on }}\nkind: [\n{{- end }}\n", ""),  # Helm: not YAML until rendered
    # malformed: the parser's reason and line
    ("a: [1, 2\nb: 3\n", "YAML: did not find expected ',' or ']' on line 2"),
    ("a:\n\t- b\n", "YAML: found character that cannot start any token on line 2"),
    ('a: "open\nb: 1\n', "YAML: found unexpected end of stream on line 3"),
    ("a: 1\n b: 2\n", "YAML: mapping values are not allowed in this context on line 2"),
])
def test_yaml_is_checked_by_a_yaml_parser_with_its_reason(text: str, reason: str) -> None:
    assert scan.validate_structured(text, "yaml") == reason


def test_a_malformed_files_reason_is_on_its_record() -> None:
    """`show` says why a file is tagged malformed (`parse_reason`), and the reason takes
    no part in tag similarity."""
    from oracl.builder.pipeline.annotate import make_record
    from oracl.builder.pipeline.weigh import tagset
    from oracl.core.config import Config
    from oracl.core.records import FileFacts

    facts = FileFacts(path="ci.yml", artifact_id="a", checksum="c", size_bytes=1, mtime_ns=0, ctime_ns=0,
                      parse_status="malformed", error="YAML: did not find expected ',' or ']' on line 2")
    rec = make_record(facts, Config())
    assert rec.tags["parse_error"] == "malformed"
    assert rec.tags["parse_reason"] == "YAML: did not find expected ',' or ']' on line 2"
    assert not any(t.startswith("parse_reason=") for t in tagset(rec.tags))
