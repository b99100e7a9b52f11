"""Golden Cypher from the compiler (no database) and hand-computed Eq. 11 scores."""

from __future__ import annotations

import math
from datetime import datetime

import orjson
import pytest

from oracl.core.derive import cypher_own
from oracl.read.query.compile import NODE_EXCLUDE, PREDICATES, compile_fast, compile_query
from oracl.read.query.parse import parse
from oracl.read.query.score import propagate_tests, score_rows


def test_general_path_golden() -> None:
    c = compile_query(parse("auth domain:core -legacy since:2026-01-01"), limit=10)
    assert c.template == "search_fts"
    assert c.cypher == (
        "UNWIND $fts_hits AS hit\n"
        "WITH hit.path AS hit_path, hit.score AS score WHERE true AND NOT regexp_matches(lower(hit_path), $exclude)\n"
        "MATCH (a:Artifact {path: hit_path})\n"
        "WHERE true AND a.domain IN $domains AND a.modified_at >= $since\n"
        "RETURN a.path AS path, a.text_n AS text_n, a.name AS name,\n"
        "       " + cypher_own("a") + " AS priority, a.domain AS domain, a.content_type AS content_type,\n"
        "       a.lifecycle AS lifecycle, a.format AS format, score AS bm25")
    assert c.params == {"q": "auth authentication login", "k": 200, "domains": ["core"],
                        "since": datetime(2026, 1, 1), "exclude": "(^|[^a-z0-9])(legacy)"}


def test_wildcard_and_fast_path_golden() -> None:
    c = compile_query(parse("type:report lifecycle:archived"), limit=7)
    assert c.template == "search_wildcard"
    assert "WHERE true AND a.content_types" not in c.cypher
    assert "AND a.content_type IN $content_types AND a.lifecycle IN $lifecycles" in c.cypher
    assert c.params == {"content_types": ["report"], "lifecycles": ["archived"], "limit": 7}
    f = compile_fast(parse("filename:auth.py -test"), limit=5)
    assert "WHERE a.name = $value AND NOT regexp_matches(lower(a.path), $exclude)" in f.cypher
    assert f.params == {"value": "auth.py", "limit": 5, "exclude": "(^|[^a-z0-9])(test)"}


@pytest.mark.parametrize("hostile", ['"}) DETACH DELETE n //', "'; MATCH (n) DELETE n; //", "CALL db.x()",
                                     "LOAD FROM 'x'", "\\'\\\"", "/*AND_FILTERS*/ OR true"])
def test_user_text_never_reaches_the_statement(hostile: str) -> None:
    for text in (hostile, f"domain:{hostile} x", f"file:{hostile}", f"x but not {hostile}"):
        try:
            pq = parse(text)
        except Exception:  # noqa: BLE001 – a QueryError is an acceptable answer
            continue
        c = compile_fast(pq) if pq.fast else compile_query(pq)
        statement = c.cypher
        for snippet in [*PREDICATES.values(), NODE_EXCLUDE]:
            statement = statement.replace(snippet, "")
        assert hostile not in statement and "DELETE" not in statement and "LOAD" not in statement


def row(path: str, name: str, symbols: list, bm25: float, priority: float = 0.5, fmt: str = "py",
        tags: dict | None = None) -> dict:
    return {"path": path, "id": path, "name": name, "symbols": orjson.dumps(symbols).decode(), "headings": "[]",
            "tags": orjson.dumps(tags or {"domain": "core"}).decode(), "priority": priority, "domain": "core",
            "content_type": "generic", "lifecycle": "active", "format": fmt, "checksum": "", "bm25": bm25}


def test_eq11_hand_computed() -> None:
    pq = parse("sign export")  # entity terms sign (5), export (5); synonym signature (2.5)
    rows = [row("core/sign.py", "sign.py", [["export_bundle", "function", 1, 9]], bm25=2.0),
            row("core/other.py", "other.py", [["helper", "function", 1, 2]], bm25=4.0)]
    a, b = score_rows(pq, rows)[0], score_rows(pq, rows)[1]
    # N = 2 candidates; "sign" and "export" each match 1 of them: idf = ln(1 + 2/2) / ln(3)
    idf = math.log(2) / math.log(3)
    # sign.py: sign→filename 5·idf·4, export→symbols 5·idf·2.5; m = 2 → A = 1.5
    lexical = 1.5 * (5 * idf * 4 + 5 * idf * 2.5)
    assert a.row["path"] == "core/sign.py" and a.lexical == pytest.approx(lexical)
    assert a.bm25 == 0.5 and b.bm25 == 1.0 and b.lexical == 0.0
    assert a.score == pytest.approx(1.0 + 0.5) and b.score == pytest.approx(0.0 + 1.0)
    assert [(t, f) for t, f, _ in a.matches] == [("export", "symbols"), ("sign", "filename")]


def test_persona_tests_prior_tag_bonus_and_ties() -> None:
    rows = [row("core/a.md", "a.md", [], 1.0, fmt="md", priority=0.2),
            row("core/b.md", "b.md", [], 1.0, fmt="md", priority=0.9),
            row("tests/test_c.py", "test_c.py", [], 1.0)]
    ranked = score_rows(parse("zzz"), rows, persona="writer")
    assert [s.row["path"] for s in ranked] == ["core/b.md", "core/a.md", "tests/test_c.py"]  # tie → priority
    # φ: writer md 1.3; the test file: writer py 0.8 × tests prior 0.4
    assert ranked[0].score == pytest.approx(1.3) and ranked[2].score == pytest.approx(0.32)
    tagged = score_rows(parse("core"), [row("x/y.py", "y.py", [], 0.0, tags={"domain": "core"})])[0]
    assert tagged.tag_bonus == 1.0


def test_prose_ranks_below_code_unless_docs_are_asked_for() -> None:
    rows = [row("docs/api.rst", "api.rst", [], 1.0, fmt="rst"), row("LICENSE", "LICENSE", [], 1.0, fmt=""),
            row("Makefile", "Makefile", [], 1.0, fmt=""), row("pkg/api.py", "api.py", [], 1.0)]
    scores = {s.row["path"]: s.score for s in score_rows(parse("zzz"), rows)}
    # bm25 1.0 / best 1.0 = 1.0 each; prose × 0.4 (a licence without a suffix too), code and build files × 1
    assert scores == pytest.approx({"docs/api.rst": 0.4, "LICENSE": 0.4, "Makefile": 1.0, "pkg/api.py": 1.0})
    asked = {s.row["path"]: s.persona for s in score_rows(parse("zzz documentation"), rows)}
    assert asked == {"docs/api.rst": 1.0, "LICENSE": 1.0, "Makefile": 1.0, "pkg/api.py": 1.0}
    writer = {s.row["path"]: s.persona for s in score_rows(parse("zzz"), rows[:1], persona="writer")}
    assert writer == {"docs/api.rst": 1.3}  # the writer persona reads docs: rst φ 1.3, no prose prior


def test_tests_vote_for_their_targets() -> None:
    ranked = score_rows(parse("zzz"), [row("tests/test_x.py", "test_x.py", [], 1.0)])
    s_test = ranked[0].score
    out = propagate_tests(ranked, [{"test": "tests/test_x.py", "target": "core/x.py", "w": 0.45},
                                   {"test": "tests/test_x.py", "target": "core/y.py", "w": 0.35}],
                          [row("core/x.py", "x.py", [], 0.0), row("core/y.py", "y.py", [], 0.0)])
    gains = {s.row["path"]: s.graph for s in out}
    assert gains["core/x.py"] == pytest.approx(0.5 * s_test * 0.45 / 0.8)
    assert gains["core/y.py"] == pytest.approx(0.5 * s_test * 0.35 / 0.8)


def test_definitions_and_glued_file_names() -> None:
    pq = parse("call recognize_log_derivative in sparse code")
    rows = [row("pkg/risch.py", "risch.py", [["recognize_log_derivative", "function", 1, 9]], bm25=1.0),
            row("pkg/sparsetools.py", "sparsetools.py", [], bm25=1.0),
            row("pkg/other.py", "other.py", [["log", "function", 1, 2]], bm25=1.0)]
    by_path = {s.row["path"]: s for s in score_rows(pq, rows)}
    risch = {(t, f) for t, f, _ in by_path["pkg/risch.py"].matches}
    assert ("recognize_log_derivative", "definition") in risch  # the identifier it defines: boost 6
    d = next(c for t, f, c in by_path["pkg/risch.py"].matches if f == "definition")
    idf = math.log(1 + 3 / 2) / math.log(4)  # one of three candidates defines it
    assert d == pytest.approx(5.0 * idf * 6.0)
    sparse = by_path["pkg/sparsetools.py"].matches
    assert [(t, f) for t, f, _ in sparse] == [("sparse", "filename")]
    idf_sparse = math.log(1 + 3 / 1) / math.log(4)  # no candidate has the token "sparse" itself
    assert sparse[0][2] == pytest.approx(5.0 * idf_sparse * 4.0 * 0.5)  # a glued name counts half



def test_a_dotted_name_matches_the_definition_of_its_last_part() -> None:
    """`client.resolve_redirects`: no field holds the dotted token, yet the file defining
    `resolve_redirects` matches it as a definition; a row whose tokens name no term gains
    nothing (each row is compared only with the terms its tokens or file name can match)."""
    pq = parse("why does client.resolve_redirects loop")
    rows = [row("pkg/sessions.py", "sessions.py", [["resolve_redirects", "function", 3, 40]], bm25=1.0),
            row("pkg/unrelated.py", "unrelated.py", [["parse", "function", 1, 2]], bm25=1.0)]
    by_path = {s.row["path"]: s for s in score_rows(pq, rows)}
    defs = [(t, c) for t, f, c in by_path["pkg/sessions.py"].matches if f == "definition"]
    idf = math.log(1 + 2 / 1) / math.log(3)  # neither candidate's tokens hold the dotted term itself
    assert defs == [("client.resolve_redirects", pytest.approx(5.0 * idf * 6.0))]
    assert by_path["pkg/unrelated.py"].matches == []


def test_code_in_a_docs_folder_ranks_with_the_docs() -> None:
    """`doc/conf.py`, a guide's example script: the prose prior (0.4) unless the query
    asks for documentation; the product file with the same matches keeps 1.0."""
    rows = [row("doc/conf.py", "conf.py", [["setup", "function", 1, 3]], bm25=1.0),
            row("src/app/conf.py", "conf.py", [["setup", "function", 1, 3]], bm25=1.0)]
    persona = {s.row["path"]: s.persona for s in score_rows(parse("setup conf"), rows)}
    assert persona == {"doc/conf.py": 0.4, "src/app/conf.py": 1.0}
    asked = {s.row["path"]: s.persona for s in score_rows(parse("setup conf in the docs"), rows)}
    assert asked == {"doc/conf.py": 1.0, "src/app/conf.py": 1.0}

def test_the_field_cache_is_touched_only_under_its_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Threads (MCP, the web view) share the cache: every read, reorder, insert and evict
    happens with the lock held, and the cache keeps its bound (LRU, the oldest goes)."""
    from collections import OrderedDict

    from oracl.read.query import score

    touched: list[str] = []

    class Guarded(OrderedDict):
        def get(self, *a):  # type: ignore[no-untyped-def, override]
            assert score._FIELD_LOCK.locked()
            touched.append("get")
            return super().get(*a)

        def move_to_end(self, *a):  # type: ignore[no-untyped-def, override]
            assert score._FIELD_LOCK.locked()
            touched.append("move")
            return super().move_to_end(*a)

        def __setitem__(self, k, v):  # type: ignore[no-untyped-def]
            assert score._FIELD_LOCK.locked()
            touched.append("set")
            return super().__setitem__(k, v)

        def popitem(self, last=True):  # type: ignore[no-untyped-def, override]
            assert score._FIELD_LOCK.locked()
            touched.append("pop")
            return super().popitem(last=last)

    monkeypatch.setattr(score, "_FIELD_CACHE", Guarded())
    monkeypatch.setattr(score, "FIELD_CACHE_SIZE", 1)

    def row(path: str) -> dict:
        return {"path": path, "checksum": "c", "name": path.rsplit("/", 1)[-1], "symbols": "[]",
                "headings": "[]", "tags": "{}"}

    first = score.fieldstems(row("pkg/a.py"))
    assert score.fieldstems(row("pkg/a.py")) is first
    score.fieldstems(row("pkg/b.py"))
    assert touched == ["get", "set", "get", "move", "get", "set", "pop"]
    assert list(score._FIELD_CACHE) == [("pkg/b.py", "c")]
