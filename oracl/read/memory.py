"""``oracl.Memory``: the Python API agents use.

>>> from oracl import Memory
>>> mem = Memory.open("path/to/repo")                       # doctest: +SKIP
>>> pack = mem.context("where is the export signed?", budget_tokens=2000)
>>> for item in pack.items:
...     print(item.path, item.why, item.lines)
>>> mem.query_knowledge_graph("path:oracl/core/sign.py")          # a node query
>>> mem.query_knowledge_graph("oracl/core/sign.py", mode="neighbors")

Every answer carries the build id and a staleness summary of the files it names (a
checksum of those files only), and every call answers from one build (a ``Snapshot``).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

import orjson

from oracl.core import telemetry
from oracl.core.errors import NoBuildError, OraclError, QueryError, WithheldError, in_range
from oracl.core.locate import candidates
from oracl.core.secrets import redact_typed
from oracl.core.vault import Repair, Vault
from oracl.read import graph
from oracl.read.learn import usage
from oracl.read.snapshot import MemoKey, Snapshot
from oracl.read.status import FRESHNESS, FRESHNESS_TTL, FreshnessCheck

if TYPE_CHECKING:
    from oracl.core.records import Reread

CHARS_PER_TOKEN = 4
MAX_BUDGET_TOKENS = 200_000  # a context pack's budget: more than any model's window
MAX_CONTEXT_FILES = 100
MAX_CONTEXT_LINES = 20_000  # a changed file is searched for its moved span this far
MAX_DEFINITION_LINES = 160  # a named symbol's definition is quoted up to this many lines
QUALIFIERS = ("path:", "file:", "filename:", "prefix:", "hub:", "domain:")


def estimate_tokens(text: str) -> int:
    """A conservative token estimate: one token per 4 characters, at least one."""
    return max(1, -(-len(text) // CHARS_PER_TOKEN))


@dataclass(slots=True)
class ContextItem:
    path: str
    score: float
    why: str                 # which fields matched, in words
    start: int               # quoted line range (1-based, inclusive)
    end: int
    lines: str               # the quoted fragment: the symbol or section that matched
    stale: str               # fresh | modified | deleted | unreadable
    tokens: int


@dataclass(slots=True)
class ContextPack:
    query: str
    build_id: str
    budget_tokens: int
    used_tokens: int
    items: list[ContextItem] = field(default_factory=list)
    staleness: str = ""
    truncated: bool = False
    freshness: str = ""      # the working tree against the build (``oracl status``'s verdict)

    @property
    def header(self) -> str:
        return f"# context for: {self.query[:200]} (build {self.build_id}; {self.staleness}; tree {self.freshness})"

    def to_json(self) -> dict[str, Any]:
        return {"query": self.query, "build_id": self.build_id, "budget_tokens": self.budget_tokens,
                "used_tokens": self.used_tokens, "truncated": self.truncated, "staleness": self.staleness,
                "freshness": self.freshness,
                "items": [{"path": i.path, "score": i.score, "why": i.why, "lines": f"L{i.start}-{i.end}",
                           "text": i.lines, "stale": i.stale, "tokens": i.tokens} for i in self.items]}

    def render(self) -> str:
        """The pack as text for a prompt: one fenced fragment per file, best first."""
        parts = [self.header]
        for i in self.items:
            parts.append(f"## {i.path} L{i.start}-{i.end} — {i.why}" + (f" [{i.stale}]" if i.stale != "fresh" else ""))
            parts.append(i.lines)
        return "\n".join(parts)


class Memory:
    """Read-only access to the latest build of one repository, through a ``Snapshot``.

    Every call answers from one build: the snapshot the Memory holds, replaced by a new
    one when a later build has landed (LATEST moved). When LATEST is missing or damaged the
    Memory keeps answering from the snapshot it holds and says so; without one it raises
    (a Memory repairs only when opened with a ``repair``, from the main thread: the CLI
    passes ``oracl.bundle.repair.repair_latest``).
    A Memory is a context manager; ``close`` releases the bundle."""

    def __init__(self, root: Path | str, snapshot: Snapshot | None = None, *, repair: Repair | None = None,
                 withhold_sensitive: bool = False, cwd: Path | None = None, reread: Reread | None = None,
                 session: str | None = None) -> None:
        self.root = Path(root)
        self.session = session  # the logs' session (design §9); None: the process's or the CLI's terminal
        self.reread = reread  # a changed file's definitions now (impact --diff on an older build)
        self.cwd = cwd  # paths are also read relative to this folder (the CLI's current one)
        self.repair = repair
        self.withhold = withhold_sensitive  # files holding key material never appear in an answer
        self._current = snapshot
        self._lock = threading.RLock()

    @classmethod
    def open(cls, root: str | Path, *, repair: Repair | None = None, withhold_sensitive: bool = False,
             cwd: Path | None = None, reread: Reread | None = None, session: str | None = None) -> Self:
        """A Memory on the latest build of ``root`` (VaultError or NoBuildError when there
        is none it can open). ``withhold_sensitive``: answers never name or quote a file
        that holds key material (the MCP server's default). ``cwd``: a file may also be
        named relative to this folder (besides absolute or relative to the root). ``reread``:
        the definitions of a file as it is now (``oracl.builder.pipeline.discover.
        definitions_now``), so that ``impact(diff=…)`` on a build older than the working
        tree still names the definition holding each changed line; without it such a file
        counts whole, and the answer says how each file was placed. ``session``: the id its
        searches and follow-ups are logged under (default: the process's, or the one the
        caller binds with ``oracl.core.telemetry.session``)."""
        return cls(root, Snapshot.open(Path(root), repair=repair), repair=repair,
                   withhold_sensitive=withhold_sensitive, cwd=cwd, reread=reread, session=session)

    def close(self) -> None:
        with self._lock:
            if self._current is not None:
                self._current.close()
                self._current = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def snapshot(self) -> tuple[Snapshot, list[str]]:
        """The snapshot to answer from now, and notices about it."""
        with self._lock:
            cur = self._current
            if cur is not None:
                try:
                    latest = Vault(self.root).read_latest()
                    if str(latest["build_id"]) == cur.build_id:
                        return cur, []
                except NoBuildError:
                    return cur, [f"LATEST.json is missing; answering from build {cur.build_id}"]
                except OraclError as exc:
                    return cur, [f"{str(exc).split(';')[0]}; answering from build {cur.build_id}"]
            try:
                new = Snapshot.open(self.root, repair=self.repair)
            except OraclError as exc:
                if cur is None:
                    raise
                return cur, [f"{str(exc).split(';')[0]}; answering from build {cur.build_id}"]
            if cur is not None:
                cur.close()
            self._current = new
            return new, []

    def _call(self, fn: Any, *args: Any, freshness: bool = False, used: str = "", **kwargs: Any) -> dict[str, Any]:
        with self._lock, telemetry.session(self.session):
            snap, notices = self.snapshot()
            check = FreshnessCheck(snap) if freshness else None
            if self.withhold and args and isinstance(args[0], str) and fn is not _search_json:
                _refuse_withheld(snap, args[0], self.cwd)
            out = fn(snap, *args, **kwargs)
            if self.withhold:
                out = _without(out, sensitive_paths(snap))
            if notices:
                out["notices"] = notices + list(out.get("notices", []))
            if check is not None:
                out["freshness"] = check.result()
            if used:  # a follow-up on a search's result: what was used (oracl/read/learn/usage.py)
                paths = [p for p in usage.used_paths(used, out) if p != WITHHELD]
                usage.record(snap.vault.dir, self.root, used, paths, snap.build_id)
            return out

    def used(self, action: str, paths: list[str]) -> int:
        """Log that ``paths`` were used after this session's latest search (``action``: one
        of ``oracl.read.learn.usage.ACTIONS``, e.g. ``"web"`` for a page opened from a
        search page); the number of lines written. The answers of ``show``, ``fragment``,
        ``trace``, ``related``, ``callers``, ``callees`` and ``impact`` log themselves."""
        with self._lock, telemetry.session(self.session):
            snap, _ = self.snapshot()
            return usage.record(snap.vault.dir, self.root, action, paths, snap.build_id)

    # -- primitives -----------------------------------------------------------------------
    def search(self, q: str, k: int = 10, persona: str = "default", explain: bool = False,
               freshness: bool = True) -> dict[str, Any]:
        """Ranked files for free text: the one entrance to search for the CLI, MCP, the web
        view and the API (schema ``oracl.search/1``). Each result carries its staleness
        (the file against the build); with ``explain``, the parse passes, the Cypher and
        each result's ``why``; with ``freshness``, the working tree's verdict (a tree walk
        beside the search). A Memory that withholds leaves out files holding key material."""
        return self._call(_search_json, q, k, persona, explain, freshness=freshness)

    def trace(self, path: str, direction: str = "out", depth: int = 2, relation: str | None = None,
              limit: int = graph.TRACE_LIMIT, cochange: bool = False) -> dict[str, Any]:
        """The dependency tree of ``path`` (at most ``limit`` branches; co-change edges only
        with ``cochange``)."""
        return self._call(graph.trace, path, direction, depth, relation, cwd=self.cwd, limit=limit, cochange=cochange,
                          used="trace")

    def related(self, path: str, k: int = 10, cochange: bool = False) -> dict[str, Any]:
        """The ``k`` files around ``path`` by association rank (co-change ones only with ``cochange``)."""
        return self._call(graph.related, path, k, cwd=self.cwd, cochange=cochange, used="related")

    def neighbourhood(self, path: str, depth: int = 1, k: int = graph.GRAPH_NEIGHBOURS) -> dict[str, Any]:
        """``path`` and its strongest neighbours to ``depth`` 1 or 2 as nodes and edges (the
        web view's and ``oracl graph``'s drawing)."""
        return self._call(graph.neighbourhood, path, depth, k, cwd=self.cwd)

    def read(self, fn: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """``fn(snapshot, *args, **kwargs)`` on the build this Memory answers from, with
        its notices and, when the Memory withholds, files holding key material left out:
        the one read path for a reader this class has no method for (the web view)."""
        return self._call(fn, *args, **kwargs)

    def build_info(self, wait: float = 0.02, ttl: float = FRESHNESS_TTL) -> dict[str, Any]:
        """The build answered from (id, time, commit, root) and the working tree's
        freshness. The tree walk is waited for at most ``wait`` seconds when there is no
        verdict yet, else 5 ms: a walk still running then gives the previous verdict with
        its age (a large tree's walk never holds up a page). A verdict younger than
        ``ttl`` seconds is reused without a walk."""
        with self._lock:
            snap, notices = self.snapshot()
            header = snap.header
            known = snap.memo.get(FRESHNESS) is not None
            fresh = FreshnessCheck(snap, ttl).result(min(wait, 0.005) if known else wait)
            return {"build_id": snap.build_id, "generated_at": header["generated_at"],
                    "source_commit": header.get("source_commit"), "root": str(self.root),
                    "freshness": fresh, "notices": notices + list(snap.notices)}

    def hub(self, domain: str | None = None, k: int = 20) -> dict[str, Any]:
        return self._call(graph.hub, domain, k)

    def show(self, path: str) -> dict[str, Any]:
        return self._call(graph.show, path, freshness=True, cwd=self.cwd, used="show")

    def fragment(self, locator: str, lines: str | None = None, context: int = 0) -> dict[str, Any]:
        return self._call(graph.fragment, locator, lines, context, cwd=self.cwd, used="fragment")

    def events(self, path: str | None = None, kind: str | None = None, decision: str | None = None,
               k: int = 50) -> dict[str, Any]:
        """The sensor events of the build (``oracl ingest``, phase 6), newest first; of one
        file, one kind (test, finding, coverage, note) or one decision (pass, fail, go, no-go)."""
        return self._call(graph.events, path, kind, decision, k, cwd=self.cwd)

    def symbols(self, name: str, kind: str | None = None, language: str | None = None, k: int = 20) -> dict[str, Any]:
        """Where ``name`` is defined (exact short or qualified name first, fuzzy after)."""
        from oracl.read import callgraph

        return self._call(callgraph.symbols, name, kind=kind, language=language, k=k)

    def callers(self, name: str, depth: int = 1, min_confidence: float = 0.7, k: int = 100) -> dict[str, Any]:
        """Who calls ``name``, to ``depth`` levels, with each call's confidence and lines."""
        from oracl.read import callgraph

        return self._call(callgraph.callers, name, depth=depth, min_confidence=min_confidence, k=k, used="callers")

    def callees(self, name: str, depth: int = 1, min_confidence: float = 0.7, k: int = 100) -> dict[str, Any]:
        """What ``name`` calls among the repository's own definitions."""
        from oracl.read import callgraph

        return self._call(callgraph.callees, name, depth=depth, min_confidence=min_confidence, k=k, used="callees")

    def impact(self, targets: list[str] | str | None = None, diff: str | None = None, depth: int = 3,
               k: int = 20, min_confidence: float = 0.3,
               changed_lines: dict[str, list[tuple[int, int]]] | None = None) -> dict[str, Any]:
        """What a change reaches: symbols, files, the tests to run and the hubs touched.
        ``targets``: files, symbols or ``path:LINE``; ``diff``: the working tree against a
        revision (``"HEAD"``); ``changed_lines``: line ranges per file (an applied edit's)."""
        from oracl.read import callgraph

        items = [targets] if isinstance(targets, str) else list(targets or [])
        return self._call(callgraph.impact, items, diff=diff, depth=depth, k=k, min_confidence=min_confidence,
                          changed_lines=changed_lines, freshness=True, cwd=self.cwd, reread=self.reread,
                          used="impact")

    def stats(self) -> dict[str, Any]:
        from oracl.read.stats import stats

        return self._call(stats)

    def freshness(self) -> str:
        """The working tree against the build (``oracl status``'s verdict)."""
        with self._lock:
            snap, _ = self.snapshot()
            return FreshnessCheck(snap).result()

    def query_knowledge_graph(self, q: str, k: int = 10, mode: str = "auto") -> dict[str, Any]:
        """``mode="auto"``: a node query when ``q`` carries a qualifier (``path:x``,
        ``file:x``, ``hub:core``), else a concept query (search). ``mode="neighbors"``: the
        neighbourhood of the file ``q`` names."""
        text = q.strip()
        if mode == "neighbors":
            return {"mode": "neighbors", **self.related(text.split(":", 1)[-1] if text.startswith(QUALIFIERS) else text, k)}
        if mode not in ("auto", "concept", "node"):
            raise QueryError("mode must be auto, concept, node or neighbors")
        low = text.lower()
        if mode == "node" or (mode == "auto" and low.startswith(QUALIFIERS) and " " not in text):
            kind, _, value = text.partition(":")
            if kind.lower() in ("hub", "domain"):
                return {"mode": "node", **self.hub(value, k)}
            if kind.lower() in ("path", "file"):
                return {"mode": "node", **self.show(value)}
            return {"mode": "node", **self.search(text, k)}
        return {"mode": "concept", **self.search(text, k)}

    # -- learning (design §9): proposals mined from use, decided in review ----------------
    def learn(self, auto: float | None = None, now: Any = None) -> dict[str, Any]:
        """Mine the follow-up log into proposals in the vault (never into the graph);
        ``auto``: accept the pending ones at or above that confidence unattended (off by
        default: a person reviews)."""
        from oracl.read.learn import review

        if auto is not None:
            in_range("--auto", auto, 0.0, 1.0)
        with self._lock:
            snap, _ = self.snapshot()
            return review.learn(self.root, snap, now, auto)

    def proposals(self, status: str | None = None, kind: str | None = None) -> dict[str, Any]:
        """The learning proposals, best first (``status``: pending, accepted, rejected;
        ``kind``: association, term, tag)."""
        from oracl.read.learn import review

        with self._lock:
            snap, _ = self.snapshot()
            return review.review(snap.vault.dir, status, kind)

    def decide(self, ids: list[str], decision: str, every: bool = False,
               min_confidence: float | None = None) -> dict[str, Any]:
        """Accept or reject proposals (by id, ``every`` pending one, or those at or above
        ``min_confidence``); the accepted ones are written to the learned files the next
        build merges."""
        from oracl.read.learn import review

        with self._lock:
            snap, _ = self.snapshot()
            return review.decide(self.root, snap, ids, decision, every=every, min_confidence=min_confidence)

    def learn_trust(self) -> dict[str, Any]:
        """Seal the learned files and the proposals as they stand, after a person has read
        them (a file that came with the tree, or one edited by hand, is ignored by the build
        and refused by a decision until then; design §11)."""
        from oracl.read.learn import review

        with self._lock:
            snap, _ = self.snapshot()
            return review.trust(snap.vault.dir)

    # -- the context pack -------------------------------------------------------------------
    def context(self, q: str, budget_tokens: int = 4000, k: int = 12) -> ContextPack:
        """An ordered context pack for an agent: for each of the best files, the symbol or
        section that matched (not the whole file), why it was chosen, and whether it
        changed since the build. Never exceeds ``budget_tokens`` (estimated at 4
        characters a token, headers included). The search and the rows it quotes come
        from one build."""
        in_range("budget_tokens", budget_tokens, 50, MAX_BUDGET_TOKENS)
        in_range("k", k, 1, MAX_CONTEXT_FILES)
        with self._lock, telemetry.session(self.session):
            snap, _ = self.snapshot()
            check = FreshnessCheck(snap)
            return _context(snap, q, budget_tokens, k, check,
                            sensitive_paths(snap) if self.withhold else frozenset())


def _search_json(snap: Snapshot, q: str, k: int, persona: str, explain: bool = False) -> dict[str, Any]:
    from oracl.read.query.run import search

    r = search(snap, q, limit=k, persona=persona, explain=explain)
    out = r.to_json(explain)
    stale = graph.staleness(snap, [(x["path"], x["checksum"]) for x in r.results])
    why = {e["path"]: e["why"] for e in out["explain"]["results"]} if explain else {}
    for x in out["results"]:
        x["stale"] = stale[x["path"]]
        if explain:
            x["why"] = why.get(x["path"], "")
    out["staleness"] = graph.summary(stale)
    return out


WITHHELD = "«withheld»"
_SENSITIVE: MemoKey[frozenset[str]] = MemoKey("sensitive")
_PATH_KEYS = ("path", "source", "target", "node", "parent")


def sensitive_paths(snap: Snapshot) -> frozenset[str]:
    """The build's files that hold key material (secret files, private key blocks)."""
    return snap.memo.once(_SENSITIVE, lambda: frozenset(r["path"] for r in snap.named("sensitive_paths")))


def _refuse_withheld(snap: Snapshot, locator: str, cwd: Path | None) -> None:
    hidden = sensitive_paths(snap)
    path = graph.split_locator(locator)[0] if "#" in locator else locator
    for rel in candidates(path, snap.root, cwd):
        if rel in hidden:
            raise WithheldError(f"{rel} is withheld: it holds key material (the vault owner can set "
                                "share_sensitive = true in [tool.oracl])")


def _without(value: Any, hidden: frozenset[str]) -> Any:
    """``value`` with every list entry that names a hidden file dropped, and any other
    mention of one replaced by a marker."""
    if not hidden:
        return value
    if isinstance(value, dict):
        return {k: (WITHHELD if isinstance(v, str) and v in hidden else _without(v, hidden))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_without(v, hidden) for v in value
                if not (isinstance(v, dict) and any(v.get(k) in hidden for k in _PATH_KEYS))
                and not (isinstance(v, str) and v in hidden)]
    return value


def _context(snap: Snapshot, q: str, budget_tokens: int, k: int, check: FreshnessCheck,
             hidden: frozenset[str] = frozenset(), log: bool = True) -> ContextPack:
    from oracl.read.query.run import search

    r = search(snap, q, limit=k, log=log)
    stale = graph.staleness(snap, [(x["path"], x["checksum"]) for x in r.results])
    terms = {t.stem for t in r.query.terms if t.weight_class != "stop"}
    pack = ContextPack(redact_typed(q[:2000]), r.build_id, budget_tokens, 0, staleness=graph.summary(stale),
                       freshness=check.result())
    pack.used_tokens = estimate_tokens(pack.header)
    for res in r.results:
        if res["path"] in hidden:
            continue
        row = snap.named("artifact_by_path", {"path": res["path"]})
        if not row or stale[res["path"]] not in ("fresh", "modified"):
            continue
        matched = ", ".join(res["matched_fields"]) or "content"
        for start, end, label, whole in _spans(res, row[0], terms):
            item = _quote(snap, res, stale[res["path"]], start, end, f"matched {matched}; {label}", whole,
                          budget_tokens - pack.used_tokens, bool(pack.items))
            if item is None:
                pack.truncated = True
                continue
            if item.end - item.start < end - start and not stale[res["path"]] == "modified":
                pack.truncated = True
            pack.items.append(item)
            pack.used_tokens += item.tokens
        if budget_tokens - pack.used_tokens < 20:
            pack.truncated = True
            break
    return pack


def _spans(res: dict[str, Any], row: dict[str, Any], terms: set[str]) -> list[tuple[int, int, str, bool]]:
    """(start, end, label, is a whole definition) of the lines to quote from one result:
    the definition of a symbol the query names; else the chunks that best match the
    query's words (the search's ``spans``: sorted, adjacent ones merged); else the symbol
    or section whose name shares most words with the query."""
    named = [d for d in res.get("defines", ()) if d["weight"] >= 1.0]
    if named or (res.get("defines") and not res.get("spans")):
        # the query names a symbol this file defines: quote its definition (a name a long
        # text merely mentions gives way to the lines that match the text best)
        d = (named or res["defines"])[0]
        return [(d["start"], min(d["end"], d["start"] + MAX_DEFINITION_LINES - 1), f"symbol {d['qualified']}",
                 d["end"] - d["start"] < MAX_DEFINITION_LINES)]
    if res.get("spans"):
        return [(x["start"], x["end"], x["label"], x["label"].startswith(("symbol", "section")))
                for x in res["spans"]]
    start, end, label = _best_span(row, terms)
    return [(start, end, label, label.startswith(("symbol", "section")))]


def _quote(snap: Snapshot, res: dict[str, Any], stale: str, start: int, end: int, why: str, whole: bool,
           remaining: int, have_items: bool) -> ContextItem | None:
    """One span of one file as a context item within ``remaining`` tokens: a whole
    definition that does not fit is left for a later, smaller one when the pack already
    has an item (a definition is never cut in half when the budget allows it); otherwise
    the span is trimmed to fit. None when nothing fits or the file cannot be read."""
    modified = stale == "modified"
    try:  # the span only – or, when the file moved on since the build, the file to find it in
        lines, _, _, _ = snap.workspace.read_lines(res["path"], 1 if modified else start,
                                                   MAX_CONTEXT_LINES if modified else end)
    except (OSError, OraclError):
        return None
    if not lines:
        return None
    if modified:  # lines moved since the build: find the span again
        start, end = _relocate(lines, why, start, end)
        end = min(end, len(lines))
        lines = lines[start - 1:end]
    else:
        end = start + len(lines) - 1
    room = remaining - estimate_tokens(f"## {res['path']} L{start}-{end} — {why}") - 1
    if room < 20:
        return None
    chosen = lines
    text = "\n".join(chosen)
    if estimate_tokens(text) > room and whole and have_items:
        return None
    while chosen and estimate_tokens(text) > room:  # trim the span to the budget
        chosen = chosen[: max(1, len(chosen) * 3 // 4)] if len(chosen) > 1 else []
        text = "\n".join(chosen)
    if not chosen:
        return None
    end = start + len(chosen) - 1
    tokens = estimate_tokens(f"## {res['path']} L{start}-{end} — {why}") + estimate_tokens(text) + 1
    return ContextItem(res["path"], res["score"], why, start, end, text, stale, tokens)


def _relocate(lines: list[str], why: str, start: int, end: int) -> tuple[int, int]:
    """The same symbol or section in the file as it is now (its def/class or heading
    line), keeping the span's length; unchanged when it cannot be found."""
    label = why.rsplit("; ", 1)[-1]
    kind, _, name = label.partition(" ")
    if kind not in ("symbol", "section") or not name:
        return start, end
    short = name.rsplit(".", 1)[-1]
    for i, line in enumerate(lines, 1):
        text = line.strip()
        hit = (kind == "symbol" and re.match(rf"(async\s+def|def|class)\s+{re.escape(short)}\b", text)) or (
            kind == "section" and text.startswith("#") and text.lstrip("#").strip() == name)
        if hit:
            return i, i + (end - start)
    return start, end


def _best_span(row: dict[str, Any], terms: set[str]) -> tuple[int, int, str]:
    """The symbol or heading section whose name shares most words with the query; else the
    head of the file."""
    from oracl.core.tokens import identifier_parts, stem

    best: tuple[int, int, int, str] | None = None
    for kind, items in (("symbol", orjson.loads(row["symbols"] or "[]")), ("section", orjson.loads(row["headings"] or "[]"))):
        for item in items:
            name = item[0]
            start, end = (item[2], item[3])
            words = {stem(p) for p in identifier_parts(name)} | {stem(name.lower())}
            hits = len(words & terms)
            if hits and (best is None or hits > best[0] or (hits == best[0] and end - start < best[2] - best[1])):
                best = (hits, start, end, f"{kind} {name}")
    if best is None:
        return 1, 40, "head of the file"
    hits, start, end, label = best
    return start, min(end, start + 120), label
