"""Symbol questions over one build (a ``Snapshot``): where is it defined, who calls it,
what does it call, and what does a change reach.

>>> with Snapshot.open(Path(".")) as snap:                                # doctest: +SKIP
...     callers(snap, "load_private_key")["callers"][0]["qualified"]

A name is looked up exactly (short or qualified, case-insensitive; ``a.b.Cls.meth`` is
tried without its leading parts; ``path#qualified`` is a symbol id; ``path:LINE`` is the
innermost symbol at that line), and only then fuzzily (names containing it). Every answer
carries the build id, the definitions it started from and the staleness of their files.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import subprocess
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from oracl.core.children import git
from oracl.core.errors import QueryError, UnsafePathError, in_range
from oracl.core.locate import candidates
from oracl.core.paths import is_test_path, is_test_to_run
from oracl.read.graph import staleness, summary
from oracl.read.snapshot import MemoKey, Snapshot

if TYPE_CHECKING:
    from oracl.core.records import Definition, Reread

MAX_DEPTH = 5
CONSTRUCTORS = frozenset({"__init__", "constructor", "__new__"})
MAX_K = 500
IMPACT_DECAY = 0.7          # a symbol one more call away counts this much less
FILE_STEP = 0.5             # a file importing a changed file: half the changed file's score
FUZZY_CANDIDATES = 200
NAME_MATCH = 0.9            # a test file named after a changed definition
COVERAGE = 1.0              # a test whose recorded coverage runs a changed line (× the event's decay weight)
PACKAGE_NAME_MATCH = 0.6    # a test in the changed file's package named after it, reached by no edge
CRATE_TESTS = 0.35          # a Rust crate's integration tests (they run its binary: no call reaches them)
CRATE_STEP = 0.7            # … of a crate depending on the changed one, per manifest step
COCHANGE_STEP = 0.5         # a test that has changed together with the changed file: κ × this
MANIFESTS = frozenset({"Cargo.toml", "package.json", "pom.xml", "build.gradle", "build.gradle.kts", "go.mod",
                       "pyproject.toml", "setup.py"})
MAX_CRATE_STEPS = 3
_TEST_AFFIX = re.compile(r"^(?:test_|tests_)|(?:_test|_tests|_spec|\.test|\.spec|test|tests|spec)$")
_KIND_ORDER = {"class": 0, "interface": 0, "struct": 0, "trait": 0, "function": 1, "async_function": 1,
               "method": 2, "module": 4}
_LOCATOR = re.compile(r"^(?P<path>[^#\s]+?):(?P<line>\d+)$")
_HEADERS = (".h", ".hh", ".hpp", ".hxx", ".h++")
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


ONE_BY_ONE = 24  # up to this many keys, one indexed probe each (≈ 0.2–1 ms) beats one IN scan (≈ 11 ms at 50k files)
# the Symbol table is several times the Artifact table: its IN scan took ≈ 100 ms at 50k files
# co-change partners: a probe is a path's Link edges filtered by relation, 2.2–3.5 ms each
# where one IN over 10 paths took 9–10 ms at 20k files and 6–8 ms on sympy (2k files)
ONE_BY_ONE_OF = {"symbol_rows": 200, "cochange_partners": 4}
_PLURAL = {"symbol_names": "keys", "symbols_in_files": "paths", "files_dependents": "paths",
           "artifact_domains": "paths", "artifact_rows": "paths", "cochange_partners": "paths",
           "manifest_dependents": "paths"}


def named_each(snap: Snapshot, name: str, values: list[str], **params: Any) -> list[dict[str, Any]]:
    """A named query over a list of keys: ``<name>_one`` per key (Kùzu uses its primary-key
    index for ``=`` but scans the table for ``IN``) while the list is short, else one
    ``<name>`` over the list."""
    values = list(dict.fromkeys(values))
    if not values:
        return []
    plural = _PLURAL.get(name, "ids")
    if len(values) <= ONE_BY_ONE_OF.get(name, ONE_BY_ONE):
        return [r for v in values for r in snap.named(f"{name}_one", {plural[:-1]: v, **params})]
    return snap.named(name, {plural: values, **params})


_HAS_NAME_DELTA: MemoKey[bool] = MemoKey("has SymbolNameDelta")


def _name_delta(snap: Snapshot, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    """The SymbolNameDelta rows a named query finds; none in a database made before the
    table was (its SymbolName was always made whole)."""
    if not snap.memo.once(_HAS_NAME_DELTA, lambda: any(
            r["name"] == "SymbolNameDelta" for r in snap.store.rows("CALL show_tables() RETURN name"))):
        return []
    return snap.named(name, params)


def with_delta(base: Mapping[str, list[str]], delta: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """key → symbol ids as a full build's SymbolName holds them (sorted): ``base``,
    SymbolName's lists, with ``delta``'s rows over them — of each (key, id), the row of the
    largest ``seq`` says whether the key finds the id; a key that finds none is left out."""
    latest: dict[tuple[str, str], tuple[int, bool]] = {}
    for r in delta:
        at = (r["key"], r["id"])
        held = latest.get(at)
        if held is None or r["seq"] > held[0]:
            latest[at] = (r["seq"], bool(r["alive"]))
    out = {k: list(v) for k, v in base.items()}
    moved: dict[str, list[tuple[str, bool]]] = defaultdict(list)
    for (key, i), (_, alive) in latest.items():
        moved[key].append((i, alive))
    for key, changes in moved.items():
        ids = set(out.get(key, ()))
        for i, alive in changes:
            if alive:
                ids.add(i)
            else:
                ids.discard(i)
        if ids:
            out[key] = sorted(ids)
        else:
            out.pop(key, None)
    return out


def symbol_ids(snap: Snapshot, keys: Iterable[str]) -> dict[str, list[str]]:
    """key (a lower-cased name or qualified name) → the ids of the symbols it names, in id
    order: what SymbolName holds, with what selective rebuilds changed since
    (SymbolNameDelta: ``with_delta``)."""
    keys = list(dict.fromkeys(keys))
    if not keys:
        return {}
    base = {r["key"]: r["ids"] for r in named_each(snap, "symbol_names", keys)}
    return with_delta(base, _name_delta(snap, "symbol_name_delta", {"keys": keys}))


def names_like(snap: Snapshot, part: str, k: int) -> list[tuple[str, list[str]]]:
    """The first ``k`` names containing ``part`` (lower-cased), shortest first then in
    order, with their symbol ids (``symbol_ids``' rule): a key the changes emptied is left
    out, one they made is in."""
    delta = _name_delta(snap, "symbol_name_delta_like", {"part": part})
    moved = {r["key"] for r in delta}
    # (each key the changes touched can leave SymbolName's first k: that many more are read)
    base = {r["key"]: r["ids"] for r in snap.named("symbol_names_like", {"part": part, "k": k + len(moved)})}
    found = with_delta(base, delta)
    return [(key, found[key]) for key in sorted(found, key=lambda x: (len(x), x))[:k]]


def _rows(snap: Snapshot, ids: list[str]) -> list[dict[str, Any]]:
    return named_each(snap, "symbol_rows", ids)


def _rank(rows: list[dict[str, Any]], exact_qualified: set[str]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: (r["qualified"].lower() not in exact_qualified, is_test_path(r["path"]),
                                       not r["exported"], _KIND_ORDER.get(r["kind"], 3), r["path"], r["start"]))


def lookup(snap: Snapshot, text: str, *, kind: str | None = None, language: str | None = None,
           fuzzy: bool = True, k: int = 20) -> tuple[list[dict[str, Any]], str]:
    """The definitions ``text`` names, best first, and how they were found (``id``,
    ``exact``, ``line``, ``fuzzy`` or ``none``)."""
    name = text.strip()
    if len(name) >= 2 and name[0] == name[-1] and name[0] in "`'\"":
        name = name[1:-1].strip()  # `send`, 'Session.send' – but an id may end in a quote: C."~validate"
    name = name.removesuffix("()")
    if not name:
        raise QueryError("name a symbol: a function, a method, a class (Session.send, wsgi_app)")
    if len(name) > 300:
        raise QueryError("a symbol name is at most 300 characters")
    how = "exact"
    rows: list[dict[str, Any]] = []
    if "#" in name:
        rows, how = _rows(snap, [name]), "id"
    elif _LOCATOR.match(name):
        m = _LOCATOR.match(name)
        assert m is not None
        line = int(m.group("line"))
        inside = [r for r in named_each(snap, "symbols_in_files", [m.group("path").removeprefix("./")])
                  if r["start"] <= line <= r["end"]]
        inside.sort(key=lambda r: (r["end"] - r["start"], r["kind"] == "module"))
        rows, how = _rows(snap, [inside[0]["id"]]) if inside else [], "line"
    else:
        key = name.lower().replace("::", ".").replace("->", ".").replace("#", ".")
        parts = key.split(".")
        keys = [".".join(parts[i:]) for i in range(len(parts))]  # flask.app.Flask.wsgi_app → … → wsgi_app
        found = symbol_ids(snap, keys)
        for candidate in keys:  # the longest suffix that names something
            if candidate in found:
                rows = _rows(snap, list(found[candidate])[:FUZZY_CANDIDATES])
                if candidate != keys[-1]:
                    rows = [r for r in rows if r["qualified"].lower().endswith(candidate)
                            or r["name"].lower() == candidate] or rows
                break
        if not rows and fuzzy:
            how = "fuzzy"
            rows = _fuzzy(snap, parts[-1])
    rows = [r for r in rows if (kind is None or r["kind"] == kind) and (language is None or r["language"] == language)]
    if not rows:
        return [], "none"
    exact = {name.lower().replace("::", ".")}
    return _rank(rows, exact)[:k], how


def _fuzzy(snap: Snapshot, part: str) -> list[dict[str, Any]]:
    """Names containing ``part``, then (for a typo) the names closest to it among those
    sharing its first three letters."""
    hits = names_like(snap, part, FUZZY_CANDIDATES) if len(part) >= 3 else []
    if not hits and len(part) >= 4:
        pool = names_like(snap, part[:3], 5000)
        close = set(difflib.get_close_matches(part, [key for key, _ in pool], n=10, cutoff=0.75))
        hits = [(key, ids) for key, ids in pool if key in close]
    ids = list(dict.fromkeys(i for _, held in hits for i in held))[:FUZZY_CANDIDATES]
    return _rows(snap, ids)


MAX_TARGETS = 50  # an ambiguous name answers for this many of its definitions at most


def _one_definition(rows: list[dict[str, Any]]) -> bool:
    """Whether ``rows`` are one definition: one qualified name in one file, or a C/C++
    function declared in headers and defined in one source file."""
    if len({r["qualified"] for r in rows}) > 1:
        return False
    sources = {r["path"] for r in rows if not r["path"].endswith(_HEADERS)}
    return len(sources) <= 1


def _targets(snap: Snapshot, text: str, kind: str | None = None) -> tuple[list[dict[str, Any]], str]:
    """The definitions an answer starts from, and how they were found. A name with several
    definitions (``send`` of five classes, ``main`` of two commands) answers for all of
    them as ``ambiguous``; a fuzzy hit for the closest name only."""
    rows, how = lookup(snap, text, kind=kind, fuzzy=True, k=MAX_TARGETS)
    if not rows:
        raise QueryError(f"no symbol named {text.strip()[:80]!r} in build {snap.build_id} "
                         "(`oracl symbols NAME` lists the definitions ORACL knows)")
    if how == "fuzzy":
        return rows[:1], how  # a fuzzy hit answers for the best match only, and says so
    if how == "exact" and not _one_definition(rows):
        return rows, "ambiguous"
    best = rows[0]["qualified"]
    return [r for r in rows if r["qualified"] == best], how


def ambiguity(name: str, rows: list[dict[str, Any]]) -> str:
    """The line that says an answer is for every definition of an ambiguous name."""
    shown = ", ".join(f"{r['qualified']} ({r['path']}:{r['start']})" for r in rows[:5])
    return (f"{name.strip()[:80]!r} names {len(rows)}{'+' if len(rows) >= MAX_TARGETS else ''} definitions; "
            f"answering for all of them: {shown}{' …' if len(rows) > 5 else ''} "
            "(name one as Class.method, path#qualified or path:LINE)")


def _staleness_of(snap: Snapshot, rows: list[dict[str, Any]]) -> str:
    """Whether the files the answer's definitions live in changed since the build."""
    checks = {r["path"]: r["checksum"] for r in named_each(snap, "artifact_domains", sorted({r["path"] for r in rows}))}
    return summary(staleness(snap, sorted(checks.items())))


def _public(r: dict[str, Any]) -> dict[str, Any]:
    return {k: r[k] for k in ("id", "name", "qualified", "kind", "path", "start", "end") if k in r}


def symbols(snap: Snapshot, name: str, *, kind: str | None = None, language: str | None = None,
            k: int = 20) -> dict[str, Any]:
    """The definitions of ``name``: exact first, fuzzy when nothing matches exactly."""
    in_range("-k", k, 1, MAX_K)
    rows, how = lookup(snap, name, kind=kind, language=language, k=k)
    if how == "exact" and not _one_definition(rows):
        how = "ambiguous"
    return {"build_id": snap.build_id, "query": name, "match": how, "definitions": rows,
            "notices": list(snap.notices), "staleness": _staleness_of(snap, rows)}


def _walk(snap: Snapshot, start: list[str], query: str, key: str, depth: int, min_confidence: float,
          guard: int) -> tuple[list[list[dict[str, Any]]], bool]:
    """Breadth-first over call edges (``symbol_callers`` or ``symbol_callees``); a symbol
    already shown is listed again as a repeat but not expanded twice."""
    seen = set(start)
    frontier = list(start)
    levels: list[list[dict[str, Any]]] = []
    cut = False
    for _ in range(depth):
        rows = named_each(snap, query, frontier, min_confidence=min_confidence)
        if len(rows) > guard:
            rows, cut = rows[:guard], True
        nxt = []
        for r in rows:
            r["via"] = r.pop(key)
            r["lines"] = orjson.loads(r["lines"] or "[]")  # (Calls.lines holds the text of the list)
            r["repeat"] = r["id"] in seen
            if not r["repeat"]:
                seen.add(r["id"])
                nxt.append(r["id"])
        levels.append(rows)
        frontier = nxt
        if not frontier or cut:
            break
    return levels, cut


DEFAULT_CONFIDENCE = 0.7   # callers/callees leave out guesses by name unless asked (measured: docs/evaluation.md)


def callers(snap: Snapshot, name: str, *, depth: int = 1, min_confidence: float = DEFAULT_CONFIDENCE, k: int = 100) -> dict[str, Any]:
    """Who calls ``name``: to ``depth`` levels, each call edge with its confidence, how it
    was resolved, its candidate count and the call sites' lines."""
    return _calls(snap, name, "symbol_callers", "target", "callers", depth, min_confidence, k)


def callees(snap: Snapshot, name: str, *, depth: int = 1, min_confidence: float = DEFAULT_CONFIDENCE, k: int = 100) -> dict[str, Any]:
    """What ``name`` calls (the definitions ORACL resolved; library calls are not listed)."""
    return _calls(snap, name, "symbol_callees", "source", "callees", depth, min_confidence, k)


def _calls(snap: Snapshot, name: str, query: str, key: str, label: str, depth: int, min_confidence: float,
           k: int) -> dict[str, Any]:
    in_range("--depth", depth, 1, MAX_DEPTH)
    in_range("--min-confidence", min_confidence, 0, 1)
    in_range("-k", k, 1, MAX_K)
    targets, how = _targets(snap, name)
    start = [t["id"] for t in targets]
    if query == "symbol_callers":  # `new X()` / `X()` call a constructor through its class
        start += [f"{t['path']}#{t['qualified'].rsplit('.', 1)[0]}" for t in targets
                  if t["name"] in CONSTRUCTORS and "." in t["qualified"]]
    levels, cut = _walk(snap, start, query, key, depth, min_confidence, snap.params.query_guard)
    shown = [lvl[:k] for lvl in levels]
    total = sum(len(lvl) for lvl in levels)
    notices = list(snap.notices) + ([ambiguity(name, targets)] if how == "ambiguous" else [])
    return {"build_id": snap.build_id, "query": name, "match": how, "targets": targets, "depth": depth,
            "min_confidence": min_confidence, label: shown[0] if shown else [], "levels": shown,
            "total": total, "shown": sum(len(lvl) for lvl in shown), "guard_cut": cut,
            "notices": notices, "staleness": _staleness_of(snap, targets)}


# ---- impact ------------------------------------------------------------------------------

Hunk = tuple[int, int, int, int]  # old start, old count, new start, new count (git's -U0 numbers)


def diff_hunks(root: str, rev: str = "HEAD") -> dict[str, list[Hunk]]:
    """The working tree against ``rev``, relative to ``root``: each changed file and its
    hunks; a deleted or untracked file has none (it changed whole)."""
    if not re.fullmatch(r"[\w./~^@{}\-]{1,100}", rev) or rev.startswith("-"):
        raise QueryError(f"{rev[:40]!r} is not a revision (HEAD, main, HEAD~3, a commit id)")
    try:
        out = git(root, "diff", "--no-color", "--no-ext-diff", "--no-textconv", "--unified=0", "--no-renames",
                  "--relative", rev, "--", ".", ":(exclude).oracl", text=True, errors="replace")
        untracked = git(root, "ls-files", "--others", "--exclude-standard", "--", ".", ":(exclude).oracl",
                        text=True, errors="replace")
    except (OSError, subprocess.SubprocessError) as exc:
        raise QueryError(f"git diff failed: {exc}") from None
    if out.returncode != 0:
        first = (out.stderr.strip().splitlines() or ["not a git repository"])[0]
        raise QueryError(f"git diff {rev} failed: {first[:200]}")
    hunks: dict[str, list[Hunk]] = defaultdict(list)
    current = None
    for line in out.stdout.splitlines():
        if line.startswith("+++ "):
            target = line[4:]
            current = target[2:] if target.startswith("b/") else None
            if current is not None:
                hunks.setdefault(current, [])
        elif line.startswith("@@") and current is not None:
            m = _HUNK.match(line)
            if m:
                hunks[current].append((int(m.group(1)), int(m.group(2) or 1), int(m.group(3)), int(m.group(4) or 1)))
        elif line.startswith("diff --git"):
            current = None
            parts = line.split(" b/", 1)
            if len(parts) == 2:  # a deleted file has no +++ b/ line: keep it, whole
                hunks.setdefault(parts[1], [])
    for path in untracked.stdout.splitlines():
        hunks.setdefault(path, [])
    return dict(hunks)


def _side(start: int, count: int) -> tuple[float, float]:
    """The lines a hunk's side covers; an empty side (lines only added, or only removed,
    there) is the gap after line ``start``: the half-line ``start + 0.5``, which overlaps
    exactly the definitions holding both ``start`` and ``start + 1``."""
    return (start, start + count - 1) if count else (start + 0.5, start + 0.5)


def _innermost(defs: list[Definition], spans: list[tuple[float, float]]) -> list[Definition]:
    """The definitions (not modules) holding a span that hold no other such definition
    holding one (a class is kept beside its changed methods): the build's symbols and a
    file's definitions as it is now are placed by this one rule."""
    hit = [d for d in defs if d[1] != "module" and any(a <= d[3] and d[2] <= b for a, b in spans)]
    return [d for d in hit if not any(o is not d and d[2] <= o[2] and o[3] <= d[3] and (o[2], o[3]) != (d[2], d[3])
                                      and o[1] not in ("class", "interface", "struct") for o in hit)]


def place_hunks(snap: Snapshot, hunks: dict[str, list[Hunk]], rev: str, reread: Reread | None = None) -> tuple[
        dict[str, list[tuple[float, float]]], dict[str, str], list[str]]:
    """Each changed file's hunks as line spans of the build, how they were placed, and the
    definitions changed that the build does not have. Placed ``as is`` when the build
    holds the file as it is now (the diff's new side), ``base`` when it holds it as
    ``rev`` does (the diff's old side), ``re-read`` otherwise: the file is parsed as it is
    now (``reread``), the definitions holding the new side's lines are found, and their
    namesakes in the build are the spans; ``whole`` when none of that can be done.
    Without this a build older than the working tree lays new line numbers over old
    ranges and names the wrong definitions."""
    built = {r["path"]: r["checksum"] for r in named_each(snap, "artifact_domains", sorted(hunks))}
    spans: dict[str, list[tuple[float, float]]] = {}
    how: dict[str, str] = {}
    unbuilt: list[str] = []
    for path, hs in hunks.items():
        if path not in built or not hs:
            spans[path], how[path] = [], "whole"
            continue
        checksum = built[path]
        try:
            now = snap.workspace.sha256(path)
        except (OSError, UnsafePathError):
            now = ""
        if now == checksum:
            spans[path], how[path] = [_side(n, c) for _, _, n, c in hs], "as is"
            continue
        try:
            base = git(str(snap.root), "cat-file", "blob", f"{rev}:./{path}")
        except (OSError, subprocess.SubprocessError):
            base = None
        if base is not None and base.returncode == 0 and hashlib.sha256(base.stdout).hexdigest() == checksum:
            spans[path], how[path] = [_side(o, c) for o, c, _, _ in hs], "base"
            continue
        defs = reread(str(snap.root), path) if reread is not None and now else None
        if defs is None:
            spans[path], how[path] = [], "whole"
            continue
        held = _innermost(defs, [_side(n, c) for _, _, n, c in hs])
        # a namesake's first line: it, and what holds it, which the innermost rule then drops
        old = {r["qualified"]: r["start"] for r in named_each(snap, "symbols_in_files", [path]) if r["kind"] != "module"}
        spans[path] = [(old[d[0]], old[d[0]]) for d in held if d[0] in old] or [(0.5, 0.5)]  # 0.5: the module only
        unbuilt += [f"{d[0]} ({path}:{d[2]})" for d in held if d[0] not in old]
        how[path] = "re-read"
    return spans, how, unbuilt


def _test_subjects(path: str) -> set[str]:
    """The names a test file is named after (a changed definition's or a changed file's name
    ranks it): ``test/res.send.js`` → res.send, res, send;
    ``tests/test_sessions.py`` → sessions; ``CartTest.java`` → cart."""
    stem = path.rsplit("/", 1)[-1].lower()
    stem = stem.rsplit(".", 1)[0] if "." in stem else stem
    core = _TEST_AFFIX.sub("", stem)
    core = _TEST_AFFIX.sub("", core)
    return {core, *re.split(r"[._-]+", core)} - {""}


def _package_tests(snap: Snapshot, sources: list[str], names: set[str]) -> list[tuple[str, float, str]]:
    """Tests a change asks for that no call or import edge reaches, as (path, evidence,
    reason): in each changed file's package (the nearest folder holding a manifest, else the
    root), the tests named after the file or a changed type or function (Surefire's
    ``FooTest`` for ``Foo``, jest's ``foo.test.ts``); a Rust crate's integration tests
    (``tests/``) and those of the crates whose ``Cargo.toml`` depends on it (ripgrep's
    ``tests/regression.rs`` runs the ``rg`` binary, built from every crate); and the
    tests that have changed together with the file (co-change, weak)."""
    paths = [r["path"] for r in snap.cached("artifact_paths")]
    manifests = {p.rpartition("/")[0] for p in paths if p.rpartition("/")[2] in MANIFESTS}
    cargo = {p.rpartition("/")[0] for p in paths if p.rpartition("/")[2] == "Cargo.toml"}
    tests = [p for p in paths if is_test_to_run(p)]
    by_subject: dict[str, list[str]] = defaultdict(list)  # a word a test is named after → those tests
    for t in tests:
        for word in _test_subjects(t):
            by_subject[word].append(t)
    out: list[tuple[str, float, str]] = []

    def package(path: str, among: set[str]) -> str | None:
        d = path.rpartition("/")[0]
        while True:
            if d in among:
                return d
            if not d:
                return None
            d = d.rpartition("/")[0]

    def under(d: str) -> list[str]:
        return tests if not d else [t for t in tests if t.startswith(d + "/")]

    for src in sources:
        home = package(src, manifests) or ""
        stem = src.rsplit("/", 1)[-1].split(".", 1)[0].lower()
        own = (names | {stem}) if len(stem) >= 3 else names
        first: dict[str, str] = {}  # test → the first name (in order) it is named after
        for name in sorted(own):
            for t in by_subject.get(name, ()):
                if (not home or t.startswith(home + "/")) and t not in first:
                    first[t] = name
        out.extend((t, PACKAGE_NAME_MATCH, f"named after {name} (same package)") for t, name in sorted(first.items()))
        crate = package(src, cargo) if src.endswith(".rs") else None
        if crate is None:
            continue
        manifest = f"{crate}/Cargo.toml".lstrip("/")
        seen, frontier, step = {manifest: 0}, [manifest], 0
        while frontier and step < MAX_CRATE_STEPS:  # the crates depending on it, through their manifests
            step += 1
            nxt = [r["source"] for r in named_each(snap, "manifest_dependents", frontier)
                   if r["source"].endswith("Cargo.toml") and r["source"] not in seen]
            for m in nxt:
                seen[m] = step
            frontier = sorted(set(nxt))
        for m, hops in seen.items():
            d = m.rpartition("/")[0]
            for t in under(f"{d}/tests".lstrip("/")):
                out.append((t, CRATE_TESTS * CRATE_STEP ** hops, f"integration test of {m}"))
    for r in named_each(snap, "cochange_partners", sources):
        if is_test_to_run(r["target"]):
            out.append((r["target"], float(r["k"]) * COCHANGE_STEP, f"changes with {r['source']}"))
    return out


def _overlaps(lines: str, spans: list[tuple[float, float]]) -> int:
    """How many of the lines ``"2-3,5"`` fall in ``spans`` (every line when no span is
    given: the whole file changed)."""
    count = 0
    for part in lines.split(","):
        a, _, b = part.partition("-")
        if not a.isdigit() or (b and not b.isdigit()):
            continue
        lo, hi = int(a), int(b or a)
        if not spans:
            count += hi - lo + 1
            continue
        for s0, s1 in spans:
            count += max(0, min(hi, int(s1)) - max(lo, int(s0)) + 1)
    return count


def coverage_tests(snap: Snapshot, changed: dict[str, list[tuple[float, float]]]) -> dict[str, tuple[float, str, list[str]]]:
    """test file → (score, reason, test ids) for the tests whose recorded coverage (phase 6,
    ``oracl ingest`` of coverage.py JSON with test contexts) runs a changed line: score
    ``COVERAGE`` × the best event's decay weight, the reason naming the changed file, how
    many of its changed lines the file's tests run and how many tests do."""
    events = snap.events_on(changed)
    found: dict[str, dict[str, Any]] = {}
    for path, spans in changed.items():
        for e in events.get(path, []):
            arts = e.get("artifacts") or {}
            test_file = arts.get("test_path")
            if e.get("kind") != "coverage" or not test_file:
                continue
            hit = _overlaps(arts.get("lines", ""), spans)
            if not hit:
                continue
            cur = found.setdefault(test_file, {"score": 0.0, "lines": 0, "ids": set(), "files": set(), "stale": False})
            cur["score"] = max(cur["score"], COVERAGE * float(e.get("weight", 1.0)))
            cur["lines"] = max(cur["lines"], hit)
            cur["ids"].add(arts.get("test", test_file))
            cur["files"].add(path)
            cur["stale"] |= bool(e.get("stale"))
    out = {}
    for test_file, c in found.items():
        where = sorted(c["files"])[0] + (f" and {len(c['files']) - 1} more" if len(c["files"]) > 1 else "")
        stale = ", recorded before the file changed" if c["stale"] else ""
        out[test_file] = (c["score"], f"covers {c['lines']} changed line(s) of {where} ({len(c['ids'])} test(s), "
                                      f"coverage{stale})", sorted(c["ids"]))
    return out


def impact(snap: Snapshot, targets: list[str] | None = None, *, diff: str | None = None, depth: int = 3,
           k: int = 20, min_confidence: float = 0.3,
           changed_lines: dict[str, list[tuple[int, int]]] | None = None,
           cwd: Path | None = None, reread: Reread | None = None) -> dict[str, Any]:
    """What a change reaches: the symbols that call, extend or name the changed ones
    (to ``depth``), the files holding them and the files importing the changed files, the
    test files that reach any of them (what to run), and the hubs touched. Each target is
    a file, a symbol, or ``path:LINE``; ``diff`` takes the working tree against a revision;
    ``changed_lines`` gives line ranges per file directly (the definitions they overlap change).

    A symbol reached at distance d scores Π κ × 0.7^d along its best path; a file scores
    the noisy-or of its evidence, 1 − Π (1 − s), over the symbols it holds and its
    ``imports``/``tests`` edges to reached files (each w × 0.5): a test that calls forty
    changed methods ranks above one that calls one."""
    in_range("--depth", depth, 1, MAX_DEPTH)
    in_range("-k", k, 1, MAX_K)
    in_range("--min-confidence", min_confidence, 0, 1)
    targets = list(targets or [])
    if not targets and diff is None and not changed_lines:
        raise QueryError("name what changes: a file, a symbol, or --diff [REV]")
    guard = snap.params.query_guard
    seeds: dict[str, float] = {}        # symbol id → score
    changed_files: dict[str, float] = {}
    notices = list(snap.notices)
    seed_rows: list[dict[str, Any]] = []
    spans: dict[str, list[tuple[float, float]]] = {}
    placed: dict[str, str] = {}
    if diff is not None:
        hunks = diff_hunks(str(snap.root), diff or "HEAD")
        if not hunks:
            notices.append(f"the working tree does not differ from {diff or 'HEAD'}")
        spans, placed, unbuilt = place_hunks(snap, hunks, diff or "HEAD", reread)
        moved = sorted(p for p, h in placed.items() if h in ("base", "re-read"))
        if moved:
            notices.append(f"the build is older than the working tree: {len(moved)} changed file(s) placed on the "
                           f"build's lines through {' and '.join(sorted({placed[p] for p in moved}))} "
                           "(base: the diff's old side; re-read: the definitions in the file now)")
        if unbuilt:
            notices.append(f"{len(unbuilt)} changed definition(s) are not in the build (rebuild to follow them): "
                           + ", ".join(unbuilt[:5]) + (" …" if len(unbuilt) > 5 else ""))
    for path, given in (changed_lines or {}).items():
        spans.setdefault(path, []).extend(given)
    for t in targets:
        cands = candidates(t, snap.root, cwd)
        known = {r["path"] for r in named_each(snap, "artifact_domains", cands)} if cands else set()
        files = [p for p in cands if p in known]
        if files:  # a file (absolute, or relative to the root or the current folder)
            spans.setdefault(files[0], [])
            continue
        rows, how = _targets(snap, t)
        if how == "ambiguous":
            notices.append(ambiguity(t, rows))
        for r in rows:
            seeds[r["id"]] = 1.0
            changed_files.setdefault(r["path"], 1.0)
            seed_rows.append(_public(r))
    if spans:
        known = {r["path"] for r in named_each(snap, "artifact_domains", sorted(spans))}
        missing = sorted(set(spans) - known)
        if missing:
            notices.append(f"{len(missing)} changed file(s) are not in the build: " + ", ".join(missing[:5])
                           + (" …" if len(missing) > 5 else ""))
        rows = named_each(snap, "symbols_in_files", sorted(known))
        by_file: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in rows:
            by_file[r["path"]].append(r)
        for path in sorted(known):
            changed_files[path] = 1.0
            ranges = spans[path]
            syms = by_file.get(path, [])
            if not ranges:  # the whole file: every symbol it defines
                hit = syms
            else:
                keep = {d[0] for d in _innermost([(s["id"], s["kind"], s["start"], s["end"]) for s in syms], ranges)}
                hit = [s for s in syms if s["id"] in keep]  # the innermost changed definitions
                if not hit:
                    hit = [s for s in syms if s["kind"] == "module"]
            for s in hit:
                seeds[s["id"]] = 1.0
                seed_rows.append(_public(s))
    # reverse traversal over calls, inheritance and signature references
    reached: dict[str, dict[str, Any]] = {sid: {"score": 1.0, "distance": 0, "via": "", "relation": "changed"}
                                          for sid in seeds}
    frontier = list(seeds)
    cut = False
    for dist in range(1, depth + 1):
        if not frontier:
            break
        rows = [r for rel in ("calls", "inherits", "references")
                for r in named_each(snap, f"symbol_dependents_{rel}", frontier)]
        if len(rows) > guard:
            rows, cut = rows[:guard], True
        nxt = []
        for r in rows:
            if r["confidence"] < min_confidence:
                continue
            score = reached[r["target"]]["score"] * r["confidence"] * IMPACT_DECAY
            cur = reached.get(r["id"])
            if cur is None:
                reached[r["id"]] = {"score": score, "distance": dist, "via": r["target"], "relation": r["relation"],
                                    "path": r["path"]}
                nxt.append(r["id"])
            elif cur["distance"] > 0 and score > cur["score"]:
                cur.update(score=score, via=r["target"], relation=r["relation"])
        frontier = nxt
        if cut:
            break
    info = {r["id"]: r for r in _rows(snap, list(reached)[: guard])}
    hit_files: dict[str, dict[str, Any]] = {}

    miss: dict[str, float] = {}  # path → Π (1 − evidence): a file's score is the noisy-or of its evidence

    def touch(path: str, score: float, distance: int, reason: str) -> None:
        cur = hit_files.get(path)
        miss[path] = miss.get(path, 1.0) * (1.0 - min(score, 1.0))
        if cur is None:
            hit_files[path] = {"path": path, "score": score, "distance": distance, "reasons": [reason]}
        else:
            cur["score"] = 1.0 - miss[path]
            cur["distance"] = min(cur["distance"], distance)
            if reason not in cur["reasons"] and len(cur["reasons"]) < 5:
                cur["reasons"].append(reason)

    for path, score in changed_files.items():
        touch(path, score, 0, "changed")
    for sid, r in reached.items():
        row = info.get(sid)
        if row is None:
            continue
        if r["distance"]:
            via = info.get(r["via"], {}).get("qualified", r["via"])
            touch(row["path"], r["score"], r["distance"], f"{row['qualified']} {r['relation']} {via}")
    # files that import or test the changed files, and those reached (one step)
    base = {p: f["score"] for p, f in hit_files.items()}
    for e in named_each(snap, "files_dependents", sorted(base))[: guard]:
        score = base[e["target"]] * float(e["weight"]) * FILE_STEP
        touch(e["source"], score, hit_files[e["target"]]["distance"] + 1, f"{e['relation']} {e['target']}")
    # a test named after a changed definition tests it (`res.send.js`, `test_sessions.py`, `CartTest.java`)
    named = {n for s in seed_rows if s["kind"] != "module" for n in (s["name"].lower(), s["qualified"].lower())
             if len(n) >= 3}
    named |= {stem for p in changed_files if not is_test_path(p)  # and after a changed file: command.go ← command_test.go
              for stem in [p.rsplit("/", 1)[-1].split(".", 1)[0].lower()] if len(stem) >= 3 and stem != "__init__"}
    for path in [p for p in hit_files if is_test_path(p)]:
        hit = sorted(named & _test_subjects(path))
        if hit:
            touch(path, NAME_MATCH, max(1, hit_files[path]["distance"]), f"named after {hit[0]}")
    sources = [p for p in changed_files if not is_test_path(p)]
    if sources:
        kinds = {n for s in seed_rows if s["kind"] not in ("module", "method")
                 for n in (s["name"].lower(), s["qualified"].lower()) if len(n) >= 3}
        for path, score, reason in _package_tests(snap, sources, kinds | (named - {s["name"].lower()
                                                                                for s in seed_rows})):
            touch(path, score, max(1, hit_files[path]["distance"] if path in hit_files else 1), reason)
    symbol_lines: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for row in seed_rows:  # a symbol named as the target: its own lines changed
        if row.get("start") and row.get("end"):
            symbol_lines[row["path"]].append((row["start"], row["end"]))
    covering = coverage_tests(snap, {p: spans.get(p) or symbol_lines.get(p, []) for p in changed_files})
    for path, (score, reason, ids) in covering.items():
        touch(path, score, 1, reason)
        f = hit_files[path]  # coverage is the evidence shown first: it says what runs the changed lines
        f["reasons"] = [reason, *(x for x in f["reasons"] if x != reason)][:5]
        f["covering"] = ids
    ranked = sorted(hit_files.values(), key=lambda f: (-("covering" in f), -f["score"], f["distance"], f["path"]))
    tests = [f for f in ranked if is_test_to_run(f["path"])]  # a changed test runs too; a fixture or helper does not
    code = [f for f in ranked if f not in tests]
    if not tests and changed_files:
        support = sum(1 for f in ranked if is_test_path(f["path"]))
        notices.append(f"no test file reaches this change: none of the {len(ranked)} file(s) reached is a test"
                       + (f" ({support} test fixture(s) or helper(s) are, listed with the files)" if support else "")
                       + "; nothing imports, calls or is named after what changed from a test")
    meta = {r["path"]: r for r in named_each(snap, "artifact_domains", [f["path"] for f in ranked[:guard]])}
    hubs: dict[str, int] = defaultdict(int)
    for f in ranked:
        d = meta.get(f["path"], {}).get("domain")
        if d:
            hubs[f"hub:domain:{d}"] += 1
    syms = sorted(({**_public(info[s]), "score": r["score"], "distance": r["distance"], "relation": r["relation"],
                    "via": r["via"]} for s, r in reached.items() if s in info and r["distance"] > 0),
                  key=lambda x: (-x["score"], x["distance"], x["id"]))
    checks = {p: meta[p]["checksum"] for p in changed_files if p in meta}
    return {"build_id": snap.build_id, "targets": targets, "diff": diff, "depth": depth,
            "min_confidence": min_confidence, "changed": sorted(changed_files), "seeds": seed_rows[:k],
            "seed_count": len(seed_rows), "symbols": syms[:k], "symbol_count": len(syms),
            "files": code[:k], "file_count": len(code), "tests": tests[:k], "test_count": len(tests),
            "hubs": [{"hub": h, "files": n} for h, n in sorted(hubs.items(), key=lambda kv: (-kv[1], kv[0]))],
            "placed": placed, "guard_cut": cut, "notices": notices,
            # the tests whose recorded coverage runs a changed line, by id: what to run first
            "covering_tests": sorted({i for ids in covering.values() for i in ids[2]}),
            "staleness": summary(staleness(snap, sorted(checks.items())))}
