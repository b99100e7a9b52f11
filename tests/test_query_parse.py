"""The six passes of the SearchQueryBuilder, pass by pass."""

from __future__ import annotations

from datetime import datetime

import pytest

from oracl.core.errors import QueryError
from oracl.read.query.parse import exclusion_pattern, parse, singular, stem

NOW = datetime(2026, 11, 29, 12, 0, 0)


def texts(q) -> list[str]:  # type: ignore[no-untyped-def]
    return [t.text for t in q.terms]


def test_directives_filters_and_fast_path() -> None:
    q = parse('domain:core type:report ext:py,md lifecycle:active since:2026-01-31 hub:docs "x"', now=NOW)
    f = q.filters
    assert f.domains == ("core", "docs") and f.content_types == ("report",) and f.formats == ("py", "md")
    assert f.lifecycles == ("active",) and f.since == datetime(2026, 1, 31)
    assert parse("file:src/app.py").fast == ("file", "src/app.py")
    assert parse('path:"docs/a b.md"').fast == ("path", "docs/a b.md")
    assert parse("prefix:src/ auth").fast == ("prefix", "src/")
    assert parse("-path:legacy auth").exclusions == ("legacy",)
    with pytest.raises(QueryError, match="since: expects a date"):
        parse("since:yesterday x")


def test_tokenise_keeps_paths_and_splits_identifiers() -> None:
    q = parse("parseHTTPResponse in src/net/http_client.py")
    assert {"parsehttpresponse", "parse", "http", "response", "src/net/http_client.py", "client"} <= set(texts(q))
    weights = {t.text: t.weight for t in q.terms}
    assert weights["src/net/http_client.py"] == 5.0 and weights["parse"] == 3.0  # a part: 0.6 × 5


@pytest.mark.parametrize(("text", "excluded"), [
    ("signing code but not archived reports", ("archived",)),
    ("auth except legacy", ("legacy",)),
    ("deploy scripts excluding drafts", ("draft",)),
    ("export without snapshots", ("snapshot",)),
    ("auth -vendor NOT policies", ("vendor", "policy")),
])
def test_negation(text: str, excluded: tuple) -> None:
    assert parse(text).exclusions == excluded


def test_negation_in_a_long_query_is_prose() -> None:
    report = ("Traceback (most recent call last):\n  File \"src/flask/app.py\", line 1498, in wsgi_app\n"
              "KeyError: 'x' but not when debug is on, and -1 is returned without a session")
    q = parse(report)
    assert q.long and q.exclusions == ()
    weights = {t.text: (t.weight_class, t.weight) for t in q.terms}
    assert weights["src/flask/app.py"] == ("entity", 5.0) and weights["wsgi_app"] == ("entity", 5.0)
    assert weights["debug"] == ("type", 2.0)  # plain words of prose weigh less than identifiers


def test_a_long_querys_title_weighs_as_its_identifiers() -> None:
    """Issue 31: the first line of a report or a commit message is its title; its words
    are entity-class (5.0), the body's plain words type-class (2.0). A one-line query, a
    lead-in ending with a colon, template markup or a line of over 20 words is no title."""
    q = parse("Linkcheck fails on anchors\nThe builder reports every anchor of the page as broken.\n")
    weights = {t.text: (t.weight_class, t.weight) for t in q.terms}
    assert weights["linkcheck"] == ("entity", 5.0) and weights["anchors"] == ("entity", 5.0)
    assert weights["builder"] == ("type", 2.0) and weights["page"] == ("type", 2.0)
    for text in ("Traceback (most recent call last):\n  anchors", "### Describe the bug\nanchors",
                 " ".join(["anchors"] + ["word"] * 20) + "\nbody", " ".join(["anchors"] * 30)):
        q = parse(text)
        assert q.long and {t.text: t.weight_class for t in q.terms}["anchors"] == "type", text


def test_an_environment_dump_in_a_report_is_left_out() -> None:
    """Issue 31: `xr.show_versions()`, a pip list, a template's Environment list are the
    reporter's machine: their package names (zarr, netCDF4) are no terms. A configuration
    snippet of names and values that are not versions stays."""
    report = ("Merge loses attributes\nThe merge drops them.\n<details>\nINSTALLED VERSIONS\ncommit: None\n"
              "python: 3.9.13 | packaged by conda-forge\nOS: Linux\nmachine: x86_64\nzarr: 2.13.3\n"
              "netCDF4: 1.6.1\nh5py: None\n</details>\n- Sphinx version: 5.1.1\n- Python version: 3.10\n"
              "- OS: macOS\n[MAIN]\nignore-paths: src/gen\njobs: auto\nrecursive: yes\n")
    words = {t.text for t in parse(report).terms}
    assert not {"zarr", "netcdf4", "h5py", "machine", "sphinx", "macos"} & words
    assert {"merge", "attributes", "ignore-paths", "recursive", "jobs"} <= words
    assert "zarr" in {t.text for t in parse("Merge loses attributes\nzarr: 2.13.3 breaks it").terms}


def test_directives_in_a_long_query_are_prose() -> None:
    """A pasted report (sphinx's `:type:` fields, a traceback's `File:`) filters nothing and
    takes no fast path: a report holding ``type:`` followed by a quoted name raised "matches no file"."""
    report = ("The docstring says\n    :param x: the value\n    type:`` int ``\nand then\nfile:conf.py path:/tmp/x "
              "domain:nowhere -path:legacy")
    q = parse(report)
    assert q.long and q.fast is None and q.filters.empty and q.exclusions == ()
    assert dict(q.passes)["directives"] == "none (long query: prose)"
    words = {t.text for t in q.terms}
    assert {"nowhere", "legacy"} <= words and any("conf.py" in w for w in words)


def test_plain_words_are_hints_not_filters() -> None:
    q = parse("archived reports", domains=("core",))
    assert q.filters.empty and not q.wildcard and {"archived", "reports"} <= set(texts(q))
    assert q.hints.content_types == ("report",) and q.hints.lifecycles == ("archived",)
    q = parse("core python", domains=("core",))
    assert q.filters.empty and q.hints.domains == ("core",) and q.hints.formats == ("py",)
    # the examples: a plain word never filters
    for text in ("json provider custom encoder", "which python versions are supported", "markdown"):
        q = parse(text)
        assert q.filters.empty and not q.wildcard, text
    assert parse("json provider custom encoder").hints.formats == ("json", "jsonl")
    # a sentence: its "issues" and "json" are topics, not even hints
    assert parse("Fix mutability issues with headers input types").hints.empty
    assert parse("Make json doc strings consistent").hints.empty
    assert parse("docs: indent continuation line in Session.get").hints.empty
    # explicit filters still filter
    assert parse("ext:json provider").filters.formats == ("json",)


def test_temporal_expansion() -> None:
    assert parse("recent auth changes", now=NOW).filters.since == datetime(2026, 11, 15, 12)
    assert parse("auth last 3 days", now=NOW).filters.since == datetime(2026, 11, 26, 12)
    assert parse("auth today", now=NOW).filters.since == datetime(2026, 11, 29)
    assert parse("auth this week", now=NOW).filters.since == datetime(2026, 11, 22, 12)
    assert parse("auth since 2025-05-01", now=NOW).filters.since == datetime(2025, 5, 1)


def test_synonyms_and_weight_classes() -> None:
    q = parse("the auth config")
    w = {t.text: (t.weight_class, t.weight, t.origin) for t in q.terms}
    assert w["auth"] == ("entity", 5.0, "query")
    assert w["authentication"] == ("entity", 2.5, "synonym") and w["settings"] == ("entity", 2.5, "synonym")
    assert w["the"] == ("stop", 0.1, "query")


def test_empty_and_wildcard() -> None:
    with pytest.raises(QueryError, match="the query is empty"):
        parse("  the of  ")
    assert parse("domain:core").wildcard


def test_stemming_and_exclusion_pattern() -> None:
    assert [singular(w) for w in ("archives", "policies", "classes", "status")] == ["archive", "policy", "class", "status"]
    assert [stem(w) for w in ("signing", "streaming", "callbacks", "parsed", "running")] == [
        "sign", "stream", "callback", "pars", "run"]
    import re

    rx = re.compile(exclusion_pattern(("archived", "test")))
    assert [bool(rx.search(p)) for p in ("archive/x.md", "latest.py", "tests/a.py", "x/contest.py")] == [
        True, False, True, False]
    assert exclusion_pattern(()) == ""


def test_fts_text_is_a_bounded_bag() -> None:
    q = parse("x " * 30000)
    assert len(q.raw) == 20000 and q.fts_text == "x"


@pytest.mark.parametrize(("text", "kept", "dropped"), [
    ("docs: indent continuation line in Session.get", {"session.get", "indent"}, {"docs"}),
    ("polys: optimize sparse ground truncation", {"polys", "sparse"}, set()),
    ("fix(parser): handle tabs", {"parser", "tabs"}, {"fix"}),
    ("[tests] cover the cli", {"cli"}, {"tests"}),
])
def test_commit_prefixes_types_are_prose_scopes_are_code(text: str, kept: set, dropped: set) -> None:
    q = parse(text)
    words = {t.text for t in q.terms if t.origin == "query"}
    assert kept <= words and not (dropped & words) and q.filters.empty
