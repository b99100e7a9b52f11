"""Eq. 11 of design §8, explainable, with two corrections (docs/decisions.md):

    lexical(a) = A(m) · Σ_t ω_t · idf_t · Σ_f b_f · match(t, f(a))  +  [q ⊆ tagstring(a)]
    score(a)   = (lexical(a) / max_c lexical(c) + b_body · bm25(a) / max_c bm25(c)) · φ(ext(a))

with b_f = filename stem 4.0, path 3.0, symbols 2.5, headings 2.0, tags 2.0; A(m) =
1 + 0.5·(m − 1) for m distinct matched query terms (a part or synonym counts for the word
it came from); b_body 1.0; ties by priority, then path.

As written, the lexical sum (ω 5 × b_f 4 = 20 per matched term) dwarfs a BM25 normalised
to [0, 1], so content relevance only broke ties, and every term counted the same however
common. So (1) lexical is normalised by the best candidate of the query, like BM25, and
(2) each term is weighted by its inverse frequency among the candidates,
idf_t = ln(1 + N / (1 + n_t)) / ln(1 + N), so a word every candidate matches counts little.
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import orjson

from oracl.core.paths import LANGUAGE_OF_SUFFIX, is_test_path, role
from oracl.core.tokens import stem, stems
from oracl.read.query.chunks import Chunk, best_spans
from oracl.read.query.parse import ParsedQuery

BOOSTS: dict[str, float] = {"filename": 4.0, "path": 3.0, "symbols": 2.5, "headings": 2.0, "tags": 2.0,
                            "text": 2.5,        # a quoted identifier found verbatim in the file
                            "definition": 6.0,  # a quoted identifier this file defines (a symbol's full name)
                            "co_change": 0.0,   # not a field: a share from a file it changes with
                            "frame": 0.0,       # not a field: a stack trace's frame names the file
                            "message": 0.0,     # not a field: the file writes a message the query quotes
                            "learned": 0.0,     # not a field: learned from use, accepted in review (design §9)
                            "event": 0.0}       # not a field: the build's sensor events say so (design §5d)
WEIGHT_ENTITY = 5.0
PREFIX_FACTOR = 0.5  # a term that only starts a glued file name counts half
B_BODY = 1.0
B_CHUNK = 1.0  # the best chunk's BM25 (oracl/read/query/chunks.py), normalised like the others
B_HISTORY = 0.5  # the BM25 of the file's past commit subjects (design §5c), normalised likewise
# A query that does not ask for tests ranks implementation above tests: test names restate
# the behaviour under test, so they out-match the code itself on almost every query.
TEST_PRIOR = 0.4
# Archived and draft copies are stale or unfinished by definition: below the live file
# unless the query asks for them (a lifecycle filter, or words like "archived", "legacy").
LIFECYCLE_PRIOR = {"archived": 0.7, "staging": 0.9}
LIFECYCLE_WORDS = frozenset({"archive", "archived", "legacy", "quarantine", "draft", "drafts", "old", "deprecated"})
# Prose (guides, API pages, changelogs, licences) restates what the code does in plain words,
# so it out-matches the code on a question about the code; below the code unless the query
# asks for documentation.
# (commit-bench Acc@5 with prose × 1.0 / 0.6 / 0.4 / 0.25: requests 0.72 / 0.75 / 0.77 / 0.77,
# flask 0.57 / 0.58 / 0.60 / 0.61, cobra 0.76 / – / 0.83 / 0.84, express 0.70 / – / 0.71 / 0.72;
# 0.4, the tests prior's value, is kept rather than chasing the last point)
PROSE_PRIOR = 0.4
PROSE_FORMATS = frozenset({"md", "markdown", "rst", "adoc", "asciidoc", "txt", "html", "htm"})
PROSE_NAMES = ("license", "licence", "copying", "authors", "notice", "changes", "changelog", "history",
               "contributing", "code_of_conduct", "code-of-conduct", "security", "readme")
DOC_WORDS = frozenset({"doc", "docs", "documentation", "document", "readme", "guide", "tutorial", "changelog",
                       "history", "license", "licence", "manual", "quickstart", "faq", "rst", "markdown"})
# A hint read from a plain word ("python" → format py, "reports" → content type report, a
# domain's name → that domain) is a soft preference: the files it describes gain this factor.
HINT = 1.3
# Examples, tutorials, fixtures and vendored copies restate the product's code: below it
# unless the query asks for them ("example", "tutorial", "fixture", "vendored" …).
ROLE_PRIOR = 0.5
ROLE_WORDS = {"example": frozenset({"example", "examples", "sample", "samples", "demo", "demos", "tutorial",
                                    "tutorials", "cookbook"}),
              "generated": frozenset({"generated", "_build"}),
              "fixture": frozenset({"fixture", "fixtures", "testdata", "snapshot", "snapshots"}),
              "vendored": frozenset({"vendor", "vendored", "third_party", "thirdparty", "external"})}
TEST_WORDS = frozenset({"test", "tests", "testing", "pytest", "unittest", "fixture", "fixtures", "conftest"})
# A long query is a report about behaviour (a bug report, a commit message): the code is what
# it is about. Its words name tests and docs in passing ("the docs say", "pytest fails"), so in
# a long query they do not lift the tests and prose priors; and a file that is neither code nor
# prose (configuration, CI and packaging metadata, an issue template, translation catalogues,
# images, notebooks, templates) ranks below the code unless the report names it (an anchor).
METADATA_PRIOR = 0.4
PERSONAS: dict[str, dict[str, float]] = {
    "default": {},
    "developer": {**dict.fromkeys(LANGUAGE_OF_SUFFIX, 1.2), "toml": 1.05, "cfg": 1.05, "ini": 1.05, "md": 0.9,
                  "rst": 0.9, "txt": 0.8, "jsonl": 0.8},
    "operator": {"sh": 1.3, "ps1": 1.3, "yaml": 1.25, "yml": 1.25, "toml": 1.15, "ini": 1.15, "cfg": 1.15,
                 "json": 1.1, "md": 1.05, "py": 0.9},
    "writer": {"md": 1.3, "rst": 1.3, "adoc": 1.3, "txt": 1.25, "py": 0.8, "json": 0.8, "jsonl": 0.7},
    "security": {"py": 1.1, "cfg": 1.2, "ini": 1.2, "yaml": 1.15, "yml": 1.15, "toml": 1.15, "json": 1.1,
                 "sh": 1.1, "ps1": 1.1},
}


_FIELD_CACHE: OrderedDict[tuple[str, str], dict[str, set[str]]] = OrderedDict()
FIELD_CACHE_SIZE = 20_000
_FIELD_LOCK = threading.Lock()  # the MCP server and the web view score from several threads


def fieldstems(row: dict[str, Any]) -> dict[str, set[str]]:
    """The stemmed tokens of each scored field of one candidate row (cached per path and
    checksum: a long-lived process scores the same files again and again)."""
    key = (row["path"], row.get("checksum") or "")
    with _FIELD_LOCK:
        hit = _FIELD_CACHE.get(key)
        if hit is not None:
            _FIELD_CACHE.move_to_end(key)
            return hit
    toks = _fieldstems(row)  # outside the lock: two threads may both compute one row, once
    with _FIELD_LOCK:
        _FIELD_CACHE[key] = toks
        if len(_FIELD_CACHE) > FIELD_CACHE_SIZE:
            _FIELD_CACHE.popitem(last=False)
    return toks


ALL = "_all"


def _fieldstems(row: dict[str, Any]) -> dict[str, set[str]]:
    name = row["name"] or ""
    stem_name = name.rsplit(".", 1)[0] if "." in name[1:] else name
    symbols = [s[0] for s in orjson.loads(row["symbols"] or "[]")]
    headings = [h[0] for h in orjson.loads(row["headings"] or "[]")]
    tags = orjson.loads(row["tags"] or "{}")
    tag_text = [str(v) for k, v in tags.items() if isinstance(v, str) and k != "format"]
    whole = {stem(stem_name.lower())}
    out = {"filename": stems([stem_name]) | whole,
           "path": stems(row["path"].split("/")[:-1]) | {stem(row["path"].lower())},
           "symbols": stems(symbols) | {stem(s.lower()) for s in symbols},
           "headings": stems(headings), "tags": stems(tag_text),
           "definition": {n.lower() for s in symbols for n in (s, s.rsplit(".", 1)[-1]) if _is_identifier(n)}}
    out[ALL] = set().union(*out.values())  # every field's tokens: one lookup for a term's idf
    return out


def is_prose(row: dict[str, Any]) -> bool:
    """A page of prose: Markdown, reStructuredText, AsciiDoc, plain text, HTML, or a
    licence, changelog or similar named file without a suffix."""
    if (row["format"] or "") in PROSE_FORMATS:
        return True
    name = (row["name"] or "").lower()
    return not row["format"] and name.startswith(PROSE_NAMES)


DOC_DIRS = frozenset({"doc", "docs", "documentation"})


def in_docs(path: str) -> bool:
    """A file of the documentation's folder (``doc/conf.py``, an example a guide includes,
    a Sphinx extension building the pages): part of the docs, whatever its format."""
    return any(p.lower() in DOC_DIRS for p in path.split("/")[:-1])


def _is_identifier(name: str) -> bool:
    """A compound identifier (snake_case, camelCase, dotted): specific enough that
    naming it in a query points at its definition."""
    core = name.strip("_")
    return "_" in core or "." in core or bool(re.search(r"[a-z][A-Z]", core))


@dataclass(slots=True)
class Scored:
    row: dict[str, Any]
    score: float
    lexical: float
    bm25: float
    persona: float
    amplification: float
    tag_bonus: float
    matches: list[tuple[str, str, float]] = field(default_factory=list)  # (term, field, ω·idf·b_f)
    graph: float = 0.0  # score handed over by the tests that test this file
    chunk: float = 0.0  # the best chunk's BM25, normalised by the best candidate's
    spans: list[Chunk] = field(default_factory=list)  # the lines to quote (chunks.best_spans)
    history: float = 0.0  # the BM25 of its commit subjects, normalised by the best candidate's

    @property
    def matched_fields(self) -> list[str]:
        fields = sorted({f for _, f, _ in self.matches}, key=list(BOOSTS).index)
        return fields + (["body"] if self.bm25 > 0 else []) + (["chunk"] if self.chunk > 0 else []) + (
            ["history"] if self.history > 0 else []) + (["tests→"] if self.graph > 0 else [])


def identifier_terms(pq: ParsedQuery) -> list[str]:
    """Identifiers the query quotes (``_encode_files``, ``Request.hooks``, ``parseURL``):
    checked verbatim in the candidates' text."""
    out = []
    for t in pq.terms:
        if t.origin == "query" and t.weight_class != "stop" and len(t.text) >= 5 and "/" not in t.text:
            raw = t.text
            if "_" in raw.strip("_") or "." in raw.strip("."):
                out.append(raw.split(".")[-1] if "." in raw else raw)
    return list(dict.fromkeys(x for x in out if len(x) >= 4))


def score_rows(pq: ParsedQuery, rows: list[dict[str, Any]], persona: str = "default",
               texts: dict[str, str] | None = None, chunks: dict[str, list[Chunk]] | None = None,
               history: dict[str, float] | None = None) -> list[Scored]:
    """Score candidate rows; returns them best first (score, then priority, then path).
    ``texts`` (path → file text, lower-cased) lets quoted identifiers match verbatim;
    ``chunks`` (path → its chunks, best first) adds each file's best chunk; ``history``
    (path → BM25 of its commit subjects) adds that."""
    phi = PERSONAS[persona]
    top_bm25 = max((float(r["bm25"] or 0.0) for r in rows), default=0.0)
    terms = [t for t in pq.terms if t.weight_class != "stop" or len(pq.terms) <= 3]
    roots = {t.parent or t.text for t in terms if t.origin == "query" and t.weight_class != "stop"}
    all_toks = [fieldstems(row) for row in rows]
    n = len(rows)
    # token → the terms it matches (by stem or surface form): a row is compared with the
    # terms its tokens name, not with every term (a pasted report has ~100 terms, and
    # thousands of candidates)
    by_key: dict[str, list[int]] = {}
    for i, t in enumerate(terms):
        by_key.setdefault(t.stem, []).append(i)
        if t.text != t.stem:
            by_key.setdefault(t.text, []).append(i)
    # a dotted term matches a definition by its last part; a long stem also starts a glued file name
    dotted = [i for i, t in enumerate(terms) if t.origin == "query" and "." in t.text]
    prefixable = {t.stem for t in terms if t.weight_class != "stop" and len(t.stem) >= 4}
    may_match: list[set[int]] = []  # per row: the indices of the terms it may match
    df = [0] * len(terms)            # per term: the rows whose tokens hold it
    for toks in all_toks:
        found = {i for key in (toks[ALL] if len(toks[ALL]) < len(by_key) else by_key.keys() & toks[ALL])
                 for i in by_key.get(key, ())}
        for i in found:
            df[i] += 1
        found.update(i for i in dotted if terms[i].text.rsplit(".", 1)[-1] in toks["definition"])
        if prefixable:
            found.update(i for tok in toks["filename"] for j in range(4, len(tok))
                         if tok[:j] in prefixable for i in by_key.get(tok[:j], ()))
        may_match.append(found)
    idf: dict[str, float] = {}
    for i, t in enumerate(terms):
        idf[t.text] = math.log(1 + n / (1 + df[i])) / math.log(1 + n) if n > 1 else 1.0
    idents = identifier_terms(pq) if texts is not None else []
    idf_ident = {}
    for ident in idents:
        n_t = sum(1 for r in rows if ident in (texts or {}).get(r["path"], ""))
        idf_ident[ident] = math.log(1 + n / (1 + n_t)) / math.log(1 + n) if n > 1 else 1.0
    out: list[Scored] = []
    for row, toks, candidates in zip(rows, all_toks, may_match, strict=True):
        matches: list[tuple[str, str, float]] = []
        matched_roots: set[str] = set()
        total = 0.0
        for t in (terms[i] for i in sorted(candidates)):
            hit = False
            for f, boost in BOOSTS.items():
                if f == "definition":
                    if t.origin == "query" and (t.text in toks[f] or t.text.rsplit(".", 1)[-1] in toks[f]):
                        contribution = t.weight * idf[t.text] * boost
                        matches.append((t.text, f, contribution))
                        total += contribution
                        hit = True
                    continue
                if f == "filename" and t.weight_class != "stop" and len(t.stem) >= 4 and not (
                        t.stem in toks[f] or t.text in toks[f]) and any(
                        tok.startswith(t.stem) for tok in toks[f] if len(tok) > len(t.stem)):
                    # "sparse" → sparsetools.py, "poly" → polytools.py: names glued without a separator
                    contribution = t.weight * idf[t.text] * boost * PREFIX_FACTOR
                    matches.append((t.text, "filename", contribution))
                    total += contribution
                    hit = True
                    continue
                if f in toks and (t.stem in toks[f] or t.text in toks[f]):
                    contribution = t.weight * idf[t.text] * boost
                    matches.append((t.text, f, contribution))
                    total += contribution
                    hit = True
            if hit and t.weight_class != "stop":
                matched_roots.add(t.parent or t.text)
        if texts is not None and row["path"] in texts:
            body = texts[row["path"]]
            for ident in idents:
                if ident in body:
                    contribution = WEIGHT_ENTITY * idf_ident[ident] * BOOSTS["text"]
                    matches.append((ident, "text", contribution))
                    total += contribution
                    matched_roots.add(ident)
        m = len(matched_roots)
        amp = 1 + 0.5 * (m - 1) if m else 1.0
        tag_bonus = 1.0 if roots and {stem(r) for r in roots} <= toks["tags"] else 0.0
        lexical = amp * total + tag_bonus
        bm25 = float(row["bm25"] or 0.0) / top_bm25 if top_bm25 > 0 else 0.0
        factor = phi.get(row["format"] or "", 1.0)
        best = (chunks or {}).get(row["path"])
        out.append(Scored(row, 0.0, lexical, bm25, factor, amp, tag_bonus, matches,
                          chunk=best[0].score if best else 0.0, spans=best_spans(best) if best else []))
    top_lexical = max((s.lexical for s in out), default=0.0)
    top_chunk = max((s.chunk for s in out), default=0.0)
    history = history or {}
    top_history = max(history.values(), default=0.0)
    for s in out:
        s.chunk = s.chunk / top_chunk if top_chunk > 0 else 0.0
        s.history = history.get(s.row["path"], 0.0) / top_history if top_history > 0 else 0.0
    said = () if pq.long else pq.terms  # a long query's words do not ask for tests or docs
    wants_tests = any(t.stem in TEST_WORDS or t.text in TEST_WORDS or t.text.startswith("test_")
                      for t in said) or "tests" in pq.filters.domains
    wants_old = bool(pq.filters.lifecycles) or any(t.text in LIFECYCLE_WORDS or t.stem in LIFECYCLE_WORDS
                                                   for t in pq.terms)
    wants_docs = any(t.stem in DOC_WORDS or t.text in DOC_WORDS for t in said) or bool(pq.filters.formats) \
        or any(d in ("docs", "doc") for d in pq.filters.domains) or persona == "writer"
    hints = pq.hints
    hint_fields = (("domain", hints.domains), ("content_type", hints.content_types), ("format", hints.formats),
                   ("lifecycle", hints.lifecycles))
    asked = {name for name, words in ROLE_WORDS.items()
             if any(t.text in words or t.stem in words for t in pq.terms)}
    for s in out:
        file_role = role(s.row["path"])
        if file_role != "product" and file_role not in asked:
            s.persona *= ROLE_PRIOR * (METADATA_PRIOR if pq.long and file_role in ("vendored", "generated") else 1.0)
        if any(values and (s.row.get(key) or "") in values for key, values in hint_fields):
            s.persona *= HINT
        if not wants_tests and is_test_path(s.row["path"]):
            s.persona *= TEST_PRIOR
        if not wants_docs and (is_prose(s.row) or in_docs(s.row["path"])):
            s.persona *= PROSE_PRIOR
        elif pq.long and not wants_docs and (s.row["format"] or "") not in LANGUAGE_OF_SUFFIX:
            s.persona *= METADATA_PRIOR
        if not wants_old:
            s.persona *= LIFECYCLE_PRIOR.get(s.row["lifecycle"] or "", 1.0)
        s.score = ((s.lexical / top_lexical if top_lexical > 0 else 0.0) + B_BODY * s.bm25
                   + B_CHUNK * s.chunk + B_HISTORY * s.history) * s.persona
    out.sort(key=lambda s: (-s.score, -(s.row["priority"] or 0.0), s.row["path"]))
    return out


def join(ranked: list[Scored], rows: list[dict[str, Any]]) -> dict[str, Scored]:
    """path → Scored of every candidate, after adding ``rows`` not among them yet as
    candidates of score 0 (a vote or an anchor then gives them their score)."""
    by_path = {s.row["path"]: s for s in ranked}
    for row in rows:
        if row["path"] not in by_path:
            s = Scored(row, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, [])
            ranked.append(s)
            by_path[row["path"]] = s
    return by_path


PROPAGATION = 0.5  # share of a test's score handed to the code it tests
COCHANGE = 0.3     # share of a file's score handed to the files it changes with (× κ)
COCHANGE_SOURCES = 10  # the best candidates whose co-change partners gain
LEARNED_PARTNER = 0.3  # the same share for the files people used together (learned associations, × κ)


def propagate_tests(ranked: list[Scored], edges: list[dict[str, Any]], extra_rows: list[dict[str, Any]]) -> list[Scored]:
    """The graph's vote: a test that matches the query points at the code it tests. Each
    test candidate hands ``PROPAGATION`` × its score to its `tests` targets, split by edge
    weight; targets outside the candidates join with that share alone. (Dividing by the
    target's tests in-degree, to damp a package ``__init__`` every test imports, lost 4
    points of Acc@5 on requests and 1 on flask: kept out.)"""
    by_path = join(ranked, extra_rows)
    out_w: dict[str, float] = {}
    for e in edges:
        out_w[e["test"]] = out_w.get(e["test"], 0.0) + float(e["w"])
    gains: dict[str, float] = {}
    for e in edges:
        src = by_path.get(e["test"])
        if src is None or e["target"] not in by_path or out_w[e["test"]] <= 0:
            continue
        gains[e["target"]] = gains.get(e["target"], 0.0) + PROPAGATION * src.score * float(e["w"]) / out_w[e["test"]]
    for path, gain in gains.items():
        s = by_path[path]
        s.score += gain
        s.graph = gain
    ranked.sort(key=lambda s: (-s.score, -(s.row["priority"] or 0.0), s.row["path"]))
    return ranked


def propagate_cochange(ranked: list[Scored], edges: list[dict[str, Any]], extra_rows: list[dict[str, Any]],
                       share: float = COCHANGE, label: tuple[str, str] = ("history", "co_change")) -> list[Scored]:
    """History's vote: each of the best candidates hands ``share`` (``COCHANGE``) × its
    score × κ to the files it changed together with (design §5c); partners outside the
    candidates join with that share alone. A file gains from its best partner only, so a
    file that changes with everything does not collect from all of them. The learned
    associations vote the same way (``LEARNED_PARTNER``, labelled ``learned``)."""
    by_path = join(ranked, extra_rows)
    gains: dict[str, float] = {}
    for e in edges:
        src, dst = by_path.get(e["source"]), by_path.get(e["target"])
        if src is None or dst is None:
            continue
        gains[e["target"]] = max(gains.get(e["target"], 0.0), share * src.score * float(e["k"]))
    for path, gain in gains.items():
        s = by_path[path]
        s.score += gain
        s.matches.append((label[0], label[1], round(gain, 6)))
    ranked.sort(key=lambda s: (-s.score, -(s.row["priority"] or 0.0), s.row["path"]))
    return ranked
