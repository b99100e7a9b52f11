"""Run a search against one build (a ``Snapshot``): parse → compile → execute (read-only)
→ score → post-filter exclusions → telemetry.

>>> with Snapshot.open(Path("repo")) as snap:                      # doctest: +SKIP
...     [r["path"] for r in search(snap, "where is the export signed").results]
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import orjson

from oracl.core import telemetry
from oracl.core.config import search_log_enabled
from oracl.core.errors import OraclError, QueryError, UnsafePathError, in_range
from oracl.core.paths import LANGUAGE_OF_SUFFIX, is_test_path, role
from oracl.core.secrets import MARKED, redact_tree, redact_typed
from oracl.core.vault import Vault
from oracl.core.workspace import TextLru
from oracl.read.callgraph import named_each
from oracl.read.query.chunks import Chunk, merge_spans, score_chunks
from oracl.read.query.compile import CANDIDATES_MIN, CompiledQuery, compile_fast, compile_query
from oracl.read.query.frames import Frame, java_path, parse_frames, resolve
from oracl.read.query.messages import literal_lines, message_fragments
from oracl.read.query.parse import Filters, ParsedQuery, SearchQueryBuilder, exclusion_pattern
from oracl.read.query.score import (
    COCHANGE_SOURCES,
    LEARNED_PARTNER,
    PERSONAS,
    Scored,
    identifier_terms,
    join,
    propagate_cochange,
    propagate_tests,
    score_rows,
)
from oracl.read.snapshot import MemoKey, Snapshot

RESULT_SCHEMA = "oracl.search/1"
MAX_LIMIT = 1000
GRAPH_TESTS = 20  # the best-scored tests whose `tests` edges vote for their targets


@dataclass(slots=True)
class SearchResult:
    query: ParsedQuery
    results: list[dict[str, Any]]
    compiled: list[CompiledQuery]
    build_id: str
    latency_ms: float
    query_class: str
    notices: list[str] = field(default_factory=list)
    explain: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self, explain: bool = False) -> dict[str, Any]:
        """The documented, stable ``--json`` schema (docs/query.md); with ``explain``, the
        parse passes, the Cypher with its parameters and each result's reasons (``why``:
        the line ``oracl query --explain`` prints)."""
        doc = {"schema": RESULT_SCHEMA, "build_id": self.build_id, "query": redact_tree(self.query.to_json()),
               "query_class": self.query_class, "latency_ms": round(self.latency_ms, 3),
               "results": self.results, "notices": self.notices}
        if explain:
            doc["explain"] = {"passes": [list(p) for p in self.query.passes],
                              "cypher": [{"template": c.template, "text": c.cypher,
                                          "params": {k: v if isinstance(v, str | int | float) else str(v)
                                                     for k, v in c.params.items()}}
                                         for c in self.compiled],
                              "results": [dict(e, why=why(e)) for e in self.explain]}
        return doc


def why(e: dict[str, Any]) -> str:
    """One result's score as a line: Eq. 11's amplification, sum and tag bonus, the BM25,
    the persona factor and the field matches that contributed most."""
    parts = ", ".join(f"{m['term']}→{m['field']} {m['contribution']:g}" for m in e["matches"][:12])
    return (f"A(m)={e['amplification']:g} × Σ + tag {e['tag_bonus']:g} = {e['lexical']:.3f}; "
            f"bm25 {e['bm25_normalised']:.3f}; φ {e['persona']:g}; {parts}")


TEXT_CANDIDATES = 40
TEXT_MAX_BYTES = 512 * 1024


TEXT_CACHE_BYTES = 64 << 20  # per snapshot: the texts of recent candidates, read once


class TextCache(TextLru):
    """The texts a snapshot has read, by path, up to ``limit`` characters, least recently
    used first out."""

    def __init__(self, limit: int = TEXT_CACHE_BYTES) -> None:
        super().__init__(limit)

    def paths(self) -> list[str]:
        return [str(k) for k in self.keys()]


_TEXTS: MemoKey[TextCache] = MemoKey("texts")
_HISTORY_INDEX: MemoKey[bool] = MemoKey("history_index")
_PATHS_BY_NAME: MemoKey[dict[str, list[str]]] = MemoKey("paths_by_name")
_FOLDERS: MemoKey[frozenset[str]] = MemoKey("folders")


def _texts(snap: Snapshot, rows: list[dict[str, Any]]) -> dict[str, str]:
    """The text of the best BM25 candidates, for chunk scores and verbatim identifier
    matches (bounded: the first candidates, the first 512 KiB of each; regular files
    inside the root only; secrets redacted). A snapshot keeps the texts it read, up to
    ``TEXT_CACHE_BYTES``, least recently used first out: an agent's questions come back to
    the same files."""
    out: dict[str, str] = {}
    best = sorted(rows, key=lambda r: (-(r["bm25"] or 0.0), r["path"]))[:TEXT_CANDIDATES]
    for r in best:
        text = _text(snap, r["path"])
        if text is not None:
            out[r["path"]] = text
    return out


def _text(snap: Snapshot, path: str) -> str | None:
    """One file's text through the snapshot's cache (the first 512 KiB, secrets redacted;
    None for a file that cannot be read as a regular file inside the root)."""
    cache = snap.memo.once(_TEXTS, TextCache)
    text = cache.get(path)
    if text is None:
        try:
            text = snap.workspace.read_text(path, TEXT_MAX_BYTES)
        except (OSError, UnsafePathError):
            return None
        cache.put(path, text)
    return text


def chunk_scores(pq: ParsedQuery, rows: list[dict[str, Any]], texts: dict[str, str]) -> dict[str, list[Chunk]]:
    """Each text's chunks scored against the query's weighted terms (oracl/read/query/chunks.py)."""
    terms = [(t.stem, t.weight) for t in pq.terms if t.weight_class != "stop"]
    by_path = {r["path"]: r for r in rows}
    structure: dict[str, list[Any]] = {}
    for path in texts:
        row = by_path[path]
        items = [list(x[:4]) for x in orjson.loads(row["symbols"] or "[]")]
        items += [[h[0], "heading", h[2], h[3]] for h in orjson.loads(row["headings"] or "[]")]
        structure[path] = items
    return score_chunks(terms, texts, structure)


def _domains(snap: Snapshot) -> tuple[str, ...]:
    return tuple(r["domain"] for r in snap.cached("domains"))


def _result(rank: int, s: Scored, provenance: str, defines: dict[str, list[dict[str, Any]]],
            frames: dict[str, list[Frame]]) -> dict[str, Any]:
    r = s.row
    out = {"rank": rank, "path": r["path"], "id": r["id"], "score": round(s.score, 6),
           "domain": r["domain"], "content_type": r["content_type"], "lifecycle": r["lifecycle"],
           "format": r["format"], "priority": round(r["priority"] or 0.0, 6),
           "matched_fields": s.matched_fields, "provenance": provenance, "checksum": r["checksum"]}
    if r["path"] in defines:
        out["defines"] = defines[r["path"]]
    lines = [{"line": f.line, "function": f.function} for f in frames.get(r["path"], ()) if f.line]
    if lines:
        out["frames"] = lines
    if s.spans:
        out["spans"] = [{"start": c.start, "end": c.end, "label": c.label} for c in s.spans]
    return out


# Names a query may give for a symbol: `quoted`, a traceback's "in NAME" (Python) or
# "at NAME (" (JavaScript, Java), and compound identifiers (snake_case, camelCase, dotted).
_QUOTED = re.compile(r"`([A-Za-z_$][\w$.:]{1,150})(?:\(\))?`")
_CODE_SPAN = re.compile(r"`([^`\n]{1,200})`")
# keywords and literals of the languages ORACL reads: never a symbol's name
CODE_WORDS = frozenset("""new return null none true false self this def fn func function var let const class
struct impl import from public private static final void int str string bool async await if else for while
in is not and or nil undefined""".split())
_FRAME = re.compile(r"(?:\bin ([A-Za-z_]\w*)\s*$|^\s*at ([\w$.<>]+) \()", re.M)
_WORDS = re.compile(r"[A-Za-z_][\w]*(?:(?:\.|::)[A-Za-z_]\w*)*")
MAX_SYMBOL_NAMES = 20
MAX_SYMBOL_FILES = 3      # a name defined in more files than this anchors none of them
ANCHOR = 1.0              # files defining the named symbols share this × the best score
LONG_QUERY_ANCHOR = 0.25  # the weight of an identifier a long text merely mentions


def symbol_names(text: str, long: bool = False) -> dict[str, float]:
    """The names in a query that may be symbols, most explicit first, with how strongly
    each points at its definition: 1 for a quoted name or a traceback frame, and for a
    compound identifier in a short query; ``LONG_QUERY_ANCHOR`` for one in a long text (a
    commit message names many identifiers it does not change)."""
    from oracl.read.query.score import _is_identifier

    out: dict[str, float] = {}

    def add(name: str, weight: float) -> None:
        name = name.strip(".:")
        if len(name) >= 3 and not name.lower().endswith((".py", ".js", ".ts", ".go", ".rs", ".java", ".md")) \
                and len(out) < MAX_SYMBOL_NAMES:
            out[name] = max(out.get(name, 0.0), weight)

    for m in _QUOTED.finditer(text):
        add(m.group(1), 1.0)
    for m in _CODE_SPAN.finditer(text):  # `new Gson()`, `x = parse(y)`: every name in quoted code
        for w in _WORDS.findall(m.group(1)):
            if w.lower() not in CODE_WORDS and not w.replace(".", "").isdigit():
                add(w, LONG_QUERY_ANCHOR if long else 1.0)
    for m in _FRAME.finditer(text):
        add(m.group(1) or m.group(2).rsplit(".", 1)[-1], 1.0)
    for w in _WORDS.findall(text):
        if _is_identifier(w) and not w.replace(".", "").isdigit():
            add(w, LONG_QUERY_ANCHOR if long else 1.0)
    return out


_IMPORT = re.compile(r"^[ \t>.]*import[ \t]+([\w.]+(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*[\w.]+(?:[ \t]+as[ \t]+\w+)?)*)",
                     re.M)
_FROM_IMPORT = re.compile(r"^[ \t>.]*from[ \t]+([\w.]+)[ \t]+import[ \t]+\(?([\w \t,]+)", re.M)
API_ANCHOR = 0.5  # a name the report's own code reaches through a module it imports


def _folders(snap: Snapshot) -> frozenset[str]:
    """Every folder name of the build's paths (once per snapshot)."""
    return snap.memo.once(_FOLDERS, lambda: frozenset(
        part for row in snap.cached("artifact_paths") for part in row["path"].split("/")[:-1]))


def api_names(text: str, folders: frozenset[str] | None = None) -> dict[str, str]:
    """The names a report's code reaches through the modules it imports, each with the
    module's top-level package: ``import xarray as xr`` … ``xr.where(…)`` → ``where`` in
    ``xarray``; ``xr.testing.assert_equal`` → ``assert_equal``; ``from sympy.physics.vector
    import ReferenceFrame`` → ``ReferenceFrame`` in ``sympy``.

    Given the build's ``folders``, only packages of the build count: ``unittest.TestCase``
    in a pytest report is the standard library's.

    >>> api_names("import xarray as xr\\nfrom sympy.physics.vector import ReferenceFrame, Vector\\nxr.where(c)")
    {'ReferenceFrame': 'sympy', 'Vector': 'sympy', 'where': 'xarray'}
    >>> api_names("import unittest, xarray as xr\\nunittest.TestCase\\nxr.where(c)", frozenset({"xarray"}))
    {'where': 'xarray'}
    """
    modules: dict[str, str] = {}
    for m in _IMPORT.finditer(text):
        for part in m.group(1).split(","):
            name, _, alias = part.strip().partition(" as ")
            name = name.strip()
            modules[alias.strip() or name.split(".")[0]] = name.split(".")[0]
    out: dict[str, str] = {}
    for m in _FROM_IMPORT.finditer(text):
        top = m.group(1).split(".")[0]
        for part in m.group(2).split(","):
            name = part.strip().split(" as ")[0].strip()
            if name and top and name != "*" and len(out) < MAX_SYMBOL_NAMES:
                out[name] = top
    for m in re.finditer(r"(?<![\w.])([A-Za-z_]\w*)((?:\.[A-Za-z_]\w*)+)", text):
        if m.group(1) in modules and len(out) < MAX_SYMBOL_NAMES:
            out.setdefault(m.group(2).lstrip(".").split(".")[-1], modules[m.group(1)])
    return dict(sorted((k, v) for k, v in out.items() if folders is None or v in folders))


def defined_in(snap: Snapshot, names: dict[str, float],
               api: dict[str, str] | None = None) -> dict[str, list[dict[str, Any]]]:
    """path → the named symbols it defines, for the names defined in at most
    ``MAX_SYMBOL_FILES`` files (tests and examples set aside when the name is also defined
    elsewhere). A build without a symbol graph answers nothing."""
    api = api or {}
    if not names and not api:
        return {}
    names = {**names, **dict.fromkeys(api, API_ANCHOR)}
    keys = {n.lower().replace("::", "."): n for n in names}
    try:
        from oracl.read.callgraph import named_each, symbol_ids

        found = symbol_ids(snap, sorted(keys))
    except OraclError:
        return {}
    ids = {i: key for key in sorted(found) for i in found[key]}  # (an id two keys find: the last key's)
    rows = named_each(snap, "symbol_rows", sorted(ids))
    by_name: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        if row["kind"] != "module":
            by_name.setdefault(ids[row["id"]], []).append(row)
    out: dict[str, list[dict[str, Any]]] = {}
    for key, defs in sorted(by_name.items()):
        # another project's copy (a vendored `jquery-3.5.1.js`, a `_build/` page) is never what a
        # question names; tests and examples only when nothing else defines the name
        defs = [d for d in defs if role(d["path"]) not in ("vendored", "generated")]
        top = api.get(keys[key])
        if top is not None:  # reached through a module: defined at the top level of that package's files
            defs = [d for d in defs if d["qualified"] == d["name"] and f"/{top}/" in f"/{d['path']}"]
        main = [d for d in defs if not is_test_path(d["path"]) and role(d["path"]) == "product"] or defs
        files = {d["path"] for d in main}
        if len(files) > MAX_SYMBOL_FILES:
            continue
        for d in sorted(main, key=lambda d: (d["path"], d["start"])):
            out.setdefault(d["path"], []).append({"name": keys[key], "qualified": d["qualified"],
                                                  "start": d["start"], "end": d["end"],
                                                  "weight": names[keys[key]]})
    return out


def with_candidates(snap: Snapshot, ranked: list[Scored], paths: Iterable[str], may_add: bool) -> dict[str, Scored]:
    """path → Scored of the candidates, the named ``paths`` that are not among them added
    (score 0, by indexed probes) when ``may_add`` (no filter is in force)."""
    have = {s.row["path"] for s in ranked}
    missing = sorted(p for p in paths if p not in have)
    return join(ranked, named_each(snap, "artifact_rows", missing) if missing and may_add else [])


def anchor(snap: Snapshot, ranked: list[Scored], defines: dict[str, list[dict[str, Any]]],
           may_add: bool) -> list[Scored]:
    """Files that define a symbol the query names move up: for each name it defines, a
    file gains ``ANCHOR`` × the best score × the name's weight ÷ the number of strongly
    named symbols, so one name puts its file first, several share the boost, and the
    identifiers a long text merely mentions count a quarter (added as candidates when the
    search did not find them and no filter is in force)."""
    if not defines:
        return ranked
    by_path = with_candidates(snap, ranked, defines, may_add)
    top = max((s.score for s in ranked), default=0.0) or 1.0
    # one name anchors its file above everything; a text naming many (a commit message, a
    # bug report) shares the boost among them: each is evidence, none overrides the rest
    weights = {d["name"]: d["weight"] for defs in defines.values() for d in defs}
    strong = max(1, sum(1 for w in weights.values() if w >= 1.0))
    for path, defs in defines.items():
        s = by_path.get(path)
        if s is None:
            continue
        names = sorted({d["name"] for d in defs})
        gains = [ANCHOR * top * weights[n] / strong for n in names]
        s.score += sum(gains)
        s.matches.extend((n, "definition", g) for n, g in zip(names, gains, strict=True))
    ranked.sort(key=lambda s: (-s.score, -(s.row["priority"] or 0.0), s.row["path"]))
    return ranked


def _has_cochange(snap: Snapshot) -> bool:
    """Whether the build has co-change edges (its header's counts say; a build outside git
    has none and its searches skip the lookup)."""
    counts = snap.header.get("counts", {}).get("edges_by_relation", {})
    return bool(counts.get("co_change"))


def history_scores(snap: Snapshot, pq: ParsedQuery, k: int) -> dict[str, float]:
    """path → the BM25 of its past commit subjects against the query (design §5c); empty
    for a build without history (no index to ask)."""
    if snap.memo.get(_HISTORY_INDEX) is False:
        return {}
    try:
        rows = snap.named("search_history", {"q": pq.fts_text, "k": int(k)})
    except OraclError:
        snap.memo.put(_HISTORY_INDEX, False)
        return {}
    return {r["path"]: float(r["score"]) for r in rows}


def admits(row: dict[str, Any], filters: Filters) -> bool:
    """Whether a row passes the query's filters (a ``since:`` filter admits no row that
    was not found by the filtered search itself: rows carry no time)."""
    if filters.since is not None:
        return False
    return all(not values or (row.get(key) or "") in values for key, attr, _ in FILTER_FIELDS
               for values in (getattr(filters, attr),))


FILTER_FIELDS = (("domain", "domains", "domain"), ("content_type", "content_types", "type"),
                 ("format", "formats", "ext"), ("lifecycle", "lifecycles", "lifecycle"))


def check_filter_values(snap: Snapshot, filters: Filters) -> None:
    """Raise QueryError for a filter value no file of the build has, listing the values
    that exist (``domain:nosuch`` → "the values of domain: are core, docs, tests")."""
    values: dict[str, set[str]] = {key: set() for key, _, _ in FILTER_FIELDS}
    for row in snap.cached("artifact_values"):
        for key in values:
            values[key].add(row[key] or "")
    for key, attr, directive in FILTER_FIELDS:
        unknown = [v for v in getattr(filters, attr) if v not in values[key]]
        if unknown:
            have = ", ".join(sorted(v for v in values[key] if v)[:30]) or "none"
            raise QueryError(f"{directive}:{unknown[0][:60]} matches no file of this build; "
                             f"the values of {directive}: are {have}")


FRAME_ANCHOR = 1.0  # the files a stack trace runs through share this × the best score


def frame_files(snap: Snapshot, text: str) -> dict[str, list[Frame]]:
    """build path → the frames of the query's stack traces and ``file:line`` mentions
    that name it (oracl/read/query/frames.py)."""
    frames = parse_frames(text)
    if not frames:
        return {}
    def by_name() -> dict[str, list[str]]:
        names: dict[str, list[str]] = {}
        for row in snap.cached("artifact_paths"):
            names.setdefault(row["path"].rsplit("/", 1)[-1], []).append(row["path"])
        return names

    names = snap.memo.once(_PATHS_BY_NAME, by_name)
    out: dict[str, list[Frame]] = {}
    for f in frames:
        path = resolve(java_path(f), names) or resolve(f.path, names)
        # a path mentioned without a line that lands on a built or copied file is the reporter's
        # own (`open docs/_build/index.html` is not the repository's test root's `_build/index.html`)
        if path is not None and (f.line or role(path) not in ("vendored", "generated")):
            out.setdefault(path, []).append(f)
    return out


def around(row: dict[str, Any], line: int, gain: float) -> Chunk:
    """The lines to quote for one line of a file: the smallest symbol holding it, else
    ten lines either side."""
    holding = [x for x in orjson.loads(row["symbols"] or "[]") if int(x[2]) <= line <= int(x[3])]
    if holding:
        x = min(holding, key=lambda x: int(x[3]) - int(x[2]))
        return Chunk(int(x[2]), int(x[3]), f"symbol {x[0]}", gain)
    return Chunk(max(1, line - 10), line + 10, "lines", gain)


def share(snap: Snapshot, ranked: list[Scored], evidence: dict[str, tuple[str, list[int]]], weight: float,
          field: str, may_add: bool, span_label: str = "") -> list[Scored]:
    """The files ``evidence`` names (path → the match's label and the lines it points at)
    move up: they share ``weight`` × the best score (joining as candidates when no filter is
    in force), and the lines to quote become the symbol around each line (at most three;
    a file named without a line keeps its chunks)."""
    if not evidence:
        return ranked
    by_path = with_candidates(snap, ranked, evidence, may_add)
    top = max((s.score for s in ranked), default=0.0) or 1.0
    gain = weight * top / len(evidence)
    for path, (label, lines) in evidence.items():
        s = by_path.get(path)
        if s is None:
            continue
        s.score += gain
        s.matches.append((label, field, gain))
        spans = [around(s.row, line, gain) for line in lines[:3]]
        if spans:
            s.spans = [Chunk(a, b, span_label or spans[0].label, gain)
                       for a, b in merge_spans((c.start, c.end) for c in spans)]
    ranked.sort(key=lambda s: (-s.score, -(s.row["priority"] or 0.0), s.row["path"]))
    return ranked


def frame_anchor(snap: Snapshot, ranked: list[Scored], frames: dict[str, list[Frame]], may_add: bool) -> list[Scored]:
    """The files a stack trace names share ``FRAME_ANCHOR`` × the best score, quoting the
    symbol around each frame's line."""
    evidence = {path: (f"{path.rsplit('/', 1)[-1]}:{fs[0].line}" if fs[0].line else path,
                       [f.line for f in fs if f.line > 0]) for path, fs in frames.items()}
    return share(snap, ranked, evidence, FRAME_ANCHOR, "frame", may_add)


MESSAGE_ANCHOR = 1.0   # the files writing the messages a report quotes share this × the best score
MESSAGE_PROBE = 60     # files the full-text index offers per message, read to find the literal
MESSAGE_FILES = 3      # a message more files write names none of them


def message_files(snap: Snapshot, text: str) -> dict[str, list[tuple[str, int]]]:
    """path → (fragment, line) of the program messages the query quotes that the file
    writes in a string literal (oracl/read/query/messages.py): code only, the product's
    before tests and examples, never a vendored or built copy; a fragment found in more than
    ``MESSAGE_FILES`` files names none."""
    out: dict[str, list[tuple[str, int]]] = {}
    for fragment in message_fragments(text):
        rows = snap.named("message_probe", {"q": fragment, "k": MESSAGE_PROBE})
        found: dict[str, list[tuple[int, bool]]] = {}
        for r in rows:
            path = r["path"]
            suffix = path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
            if suffix not in LANGUAGE_OF_SUFFIX or role(path) in ("vendored", "generated"):
                continue
            body = _text(snap, path)
            hits = literal_lines(fragment, body) if body is not None else []
            if hits:
                found[path] = hits
        main = {p: v for p, v in found.items() if not is_test_path(p) and role(p) == "product"} or found
        # a literal ending where the quoted message ends wrote it; one going on wrote a longer message
        exact = {p: [h for h in v if h[1]] for p, v in main.items() if any(h[1] for h in v)}
        chosen = exact or main
        if 0 < len(chosen) <= MESSAGE_FILES:
            for path, hits in chosen.items():
                out.setdefault(path, []).extend((fragment, n) for n, _ in hits[:3])
    return out


def message_anchor(snap: Snapshot, ranked: list[Scored], messages: dict[str, list[tuple[str, int]]],
                   may_add: bool) -> list[Scored]:
    """The files that write a quoted message share ``MESSAGE_ANCHOR`` × the best score,
    quoting the symbol around each message."""
    evidence = {path: (hits[0][0][:60], [line for _, line in hits]) for path, hits in messages.items()}
    return share(snap, ranked, evidence, MESSAGE_ANCHOR, "message", may_add, span_label="message")


EVENT_WORD = 0.5   # "failing", "flaky", "uncovered": the files the build's events say so share this × the best score


def _event_match(e: dict[str, Any], value: str) -> bool:
    return e.get("decision") == value if value in ("fail", "pass") else e.get("kind") == value


def event_filter(snap: Snapshot, pq: ParsedQuery, ranked: list[Scored]) -> list[Scored]:
    """``event:fail|pass|finding|note`` (phase 6): only files with such an event (with
    ``since:``, one at or after that date); a query of filters alone lists them by the
    summed weight of their events (the newest first)."""
    by_path = snap.events()
    since = pq.filters.since.strftime("%Y-%m-%dT%H:%M:%S") if pq.filters.since else ""
    weight = {p: sum(float(e.get("weight", 1.0)) for e in rows if any(_event_match(e, v) for v in pq.filters.events)
                     and str(e.get("timestamp_utc", ""))[:19] >= since)
              for p, rows in by_path.items()}
    weight = {p: w for p, w in weight.items() if w > 0}
    if not pq.wildcard:
        return [s for s in ranked if s.row["path"] in weight]
    others = replace(pq.filters, events=(), since=None)
    rows = [r for r in named_each(snap, "artifact_rows", sorted(weight)) if admits(r, others)]
    out = [Scored(r, weight[r["path"]], 0.0, 0.0, 1.0, 1.0, 0.0, [("event", "event", weight[r["path"]])])
           for r in rows]
    out.sort(key=lambda s: (-s.score, s.row["path"]))
    return out


def event_words(snap: Snapshot, pq: ParsedQuery, ranked: list[Scored]) -> list[Scored]:
    """The words "failing"/"failed"/"broken", "flaky" and "uncovered" read against the
    build's events (phase 6): files with a failed test, tests that both passed and failed,
    and code no recorded coverage runs (when there is coverage) share ``EVENT_WORD`` × the
    best score (only among the candidates: the words also search as text)."""
    words = {t.text for t in pq.terms if t.origin == "query"}
    asks = {k for k, ws in (("fail", {"failing", "failed", "broken"}), ("flaky", {"flaky"}),
                            ("uncovered", {"uncovered"})) if words & ws}
    by_path = snap.events() if asks else {}
    if not by_path:
        return ranked
    evidence: dict[str, tuple[str, list[int]]] = {}
    covered = {p for p, rows in by_path.items() if any(e.get("kind") == "coverage" for e in rows)}
    for s in ranked:
        path = s.row["path"]
        rows = by_path.get(path, [])
        decisions = {e.get("decision") for e in rows if e.get("kind") == "test"}
        if "fail" in asks and "fail" in decisions:
            evidence[path] = ("failing test", [])
        elif "flaky" in asks and {"fail", "pass"} <= decisions:
            evidence[path] = ("flaky test", [])
        elif "uncovered" in asks and covered and path not in covered and not is_test_path(path) \
                and role(path) == "product" and path.rsplit(".", 1)[-1] in LANGUAGE_OF_SUFFIX:
            evidence[path] = ("no recorded coverage", [])
    return share(snap, ranked, evidence, EVENT_WORD, "event", False)


LEARNED_TERM = 0.5  # a file people used after typing a word its text lacks gains this × the best score × κ


def learned_votes(snap: Snapshot, pq: ParsedQuery, ranked: list[Scored]) -> list[Scored]:
    """What the memory learned from use (design §9, "Learning"), accepted in review and
    merged by the build: a word of the query users typed before using a file whose text
    lacks it gives that file ``LEARNED_TERM`` × the best score × κ (its best such word);
    then the files people used together with the best candidates gain as co-change
    partners do (``LEARNED_PARTNER`` × the candidate's score × κ). Files join as
    candidates only when no filter is in force."""
    learned = snap.learned()
    if not learned.terms and not learned.partners:
        return ranked
    may_add = pq.filters.empty
    stems = {t.stem for t in pq.terms if t.weight_class != "stop" and t.origin == "query"}
    best: dict[str, tuple[float, str, int]] = {}
    for stem in sorted(stems & learned.terms.keys()):
        for path, kappa, sessions in learned.terms[stem]:
            if kappa > best.get(path, (0.0, "", 0))[0]:
                best[path] = (kappa, stem, sessions)
    if best:
        by_path = with_candidates(snap, ranked, best, may_add)
        top = max((s.score for s in ranked), default=0.0) or 1.0
        for path, (kappa, stem, sessions) in sorted(best.items()):
            s = by_path.get(path)
            if s is None:
                continue
            gain = LEARNED_TERM * top * kappa
            s.score += gain
            s.matches.append((f"{stem} (learned from {sessions} sessions)", "learned", gain))
        ranked = sorted(by_path.values(), key=lambda s: (-s.score, -(s.row["priority"] or 0.0), s.row["path"]))
    sources = [s.row["path"] for s in ranked[:COCHANGE_SOURCES] if s.score > 0]
    edges = [{"source": src, "target": other, "k": kappa} for src in sources
             for other, kappa, _ in learned.partners.get(src, [])]
    if edges:
        have = {s.row["path"] for s in ranked}
        missing = sorted({e["target"] for e in edges} - have)
        extra = named_each(snap, "artifact_rows", missing) if missing and may_add else []
        ranked = propagate_cochange(ranked, edges, extra, LEARNED_PARTNER, ("learned association", "learned"))
    return ranked


def _explain(s: Scored) -> dict[str, Any]:
    return {"path": s.row["path"], "lexical": round(s.lexical, 6), "amplification": s.amplification,
            "tag_bonus": s.tag_bonus, "bm25_normalised": round(s.bm25, 6), "persona": s.persona,
            "graph": round(s.graph, 6), "chunk": round(s.chunk, 6),
            "matches": [{"term": t, "field": f, "contribution": round(c, 6)} for t, f, c in s.matches]}


def search(snap: Snapshot, text: str, *, limit: int = 10, persona: str = "default", explain: bool = False,
           now: datetime | None = None, log: bool = True) -> SearchResult:
    """Search one build. Raises QueryError for a query it cannot answer."""
    if persona not in PERSONAS:
        raise QueryError(f"unknown persona {persona!r}: choose one of {', '.join(PERSONAS)}")
    in_range("--limit", limit, 1, MAX_LIMIT)
    t0, c0 = time.perf_counter(), time.process_time()
    notices: list[str] = list(snap.notices)
    echo = redact_typed(text)
    if echo != text:  # a secret typed into the query: searched without it, echoed as its marker only
        notices.append("the query held a secret value: it was searched for without it, and is shown and "
                       "logged as a marker")
        text = MARKED.sub(" ", echo)
        if not text.strip():
            pq0 = ParsedQuery(raw=echo, passes=(("secrets", "the whole query was a secret value"),))
            out = SearchResult(pq0, [], [], snap.build_id, (time.perf_counter() - t0) * 1000, "concept", notices)
            if log:
                _log(snap.vault, out, time.process_time() - c0)
            return out
    pq = SearchQueryBuilder(_domains(snap), now or datetime.now(UTC)).parse(text)
    if echo != text:
        pq = replace(pq, raw=echo)
    compiled: list[CompiledQuery] = []
    ranked: list[Scored] = []
    provenance = "fts"
    if pq.fast is not None:
        try:
            c = compile_fast(pq, limit)
            compiled.append(c)
            rows = snap.rows(c.cypher, c.params)
            ranked = [Scored(r, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, [(pq.fast[1], "path", 1.0)]) for r in rows]
            provenance = "mirror"
        except OraclError:
            ranked = []
        if not ranked:
            notices.append(f"{pq.fast[0]}:{pq.fast[1]} named no file; searched for its words instead")
            pq = SearchQueryBuilder(_domains(snap), now or datetime.now(UTC)).parse(
                text.replace(f"{pq.fast[0]}:", " ", 1))
            pq = replace(pq, fast=None)
    if pq.fast is None:
        c = compile_query(pq, limit)
        compiled.append(c)
        rows = snap.rows(c.cypher, c.params)
        history = {} if pq.wildcard else history_scores(snap, pq, c.params.get("k", CANDIDATES_MIN))
        missing = sorted(set(history) - {r["path"] for r in rows})
        if missing:  # files only their history matches join the candidates, through the filters
            rows += [r for r in named_each(snap, "artifact_rows", missing) if admits(r, pq.filters)]
        if not rows and not pq.filters.empty:
            check_filter_values(snap, pq.filters)
        texts = _texts(snap, rows)
        chunks = chunk_scores(pq, rows, texts)
        ranked = score_rows(pq, rows, persona, {p: t.lower() for p, t in texts.items()}
                            if identifier_terms(pq) else None, chunks, history)
        provenance = "graph" if pq.wildcard else "fts"
        tests = [s.row["path"] for s in ranked[:GRAPH_TESTS] if is_test_path(s.row["path"])]
        if tests and not pq.wildcard:
            edges = snap.named("tests_targets", {"paths": tests})
            have = {s.row["path"] for s in ranked}
            missing = sorted({e["target"] for e in edges} - have)
            # a filter is hard: the tests vote only for candidates that passed it
            extra = named_each(snap, "artifact_rows", missing) if missing and pq.filters.empty else []
            ranked = propagate_tests(ranked, edges, extra)
        sources = [s.row["path"] for s in ranked[:COCHANGE_SOURCES] if s.score > 0]
        if sources and not pq.wildcard and _has_cochange(snap):
            edges = named_each(snap, "cochange_partners", sources)
            have = {s.row["path"] for s in ranked}
            missing = sorted({e["target"] for e in edges} - have)
            extra = named_each(snap, "artifact_rows", missing) if missing and pq.filters.empty else []
            ranked = propagate_cochange(ranked, edges, extra)
        if not pq.wildcard:
            ranked = learned_votes(snap, pq, ranked)
    defines: dict[str, list[dict[str, Any]]] = {}
    frames: dict[str, list[Frame]] = {}
    if not pq.wildcard and provenance != "mirror":
        api = api_names(text)  # (the build's folders read only when the text imports something: 20k paths)
        if api:
            folders = _folders(snap)
            api = {k: v for k, v in api.items() if v in folders}
        defines = defined_in(snap, symbol_names(text, pq.long), api)
        ranked = anchor(snap, ranked, defines, may_add=pq.filters.empty)
        frames = frame_files(snap, text)
        ranked = frame_anchor(snap, ranked, frames, may_add=pq.filters.empty)
        ranked = message_anchor(snap, ranked, message_files(snap, text), may_add=pq.filters.empty)
    if not pq.wildcard and provenance != "mirror":
        ranked = event_words(snap, pq, ranked)
    if pq.filters.events:
        ranked = event_filter(snap, pq, ranked)
    pattern = exclusion_pattern(pq.exclusions)
    if pattern:  # the path-level post-filter, on every path (the fast path included)
        rx = re.compile(pattern)
        ranked = [s for s in ranked if not rx.search(s.row["path"].lower())]
    ranked = ranked[:limit]
    results = [_result(i + 1, s, provenance, defines, frames) for i, s in enumerate(ranked)]
    latency = (time.perf_counter() - t0) * 1000
    qclass = "fast_path" if provenance == "mirror" else "wildcard" if pq.wildcard else (
        "long" if pq.long else "concept")
    out = SearchResult(pq, results, compiled, snap.build_id, latency, qclass, notices,
                       [_explain(s) for s in ranked] if explain else [])
    if log:
        _log(snap.vault, out, time.process_time() - c0)
    return out


def _log(vault: Vault, r: SearchResult, cpu: float) -> None:
    if not search_log_enabled(vault.root):
        return
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    sid = telemetry.session_id()
    telemetry.append(vault.dir, "search_history.jsonl", {
        "timestamp": now, "session_id": sid, "query": r.query.raw[:2000], "parsed": r.query.to_json(),
        "returned_ids": [x["id"] for x in r.results], "returned_paths": [x["path"] for x in r.results],
        "result_count": len(r.results), "latency_ms": round(r.latency_ms, 3), "build_id": r.build_id})
    telemetry.append(vault.dir, "agent_metrics.jsonl", {
        "timestamp": now, "session_id": sid, "query_class": r.query_class,
        "latency_ms": round(r.latency_ms, 3), "result_count": len(r.results),
        "cpu_seconds": round(cpu, 6), "estimated_cost_usd": telemetry.estimated_cost(cpu)})
