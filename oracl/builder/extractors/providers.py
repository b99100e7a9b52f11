"""The Phase 2 producer and the six Phase 3 edge providers (design §5).

Each provider is a pure function ``(FileFacts, IndexView) -> Iterator[Edge]`` over the
candidates Phase 1 scanned; edges name artifacts by path (the export maps paths to node
ids). An unresolvable Markdown link yields an edge with an empty target, which the merge
drops and counts as dangling.

| provider         | relation   | κ                       |
|------------------|------------|-------------------------|
| python_imports   | imports    | 1.0                     |
| code_imports     | imports    | 1.0 (a file) / 0.8 (a package's files) |
| markdown_links   | references | 0.95                    |
| doc_refs         | references / imports (templates) / configures / depends_on | 0.9 / 0.8 (code objects) |
| config_refs      | configures | 0.8                     |
| test_targets     | tests      | 0.9 (import) / 0.7 (name) / 0.6 (calls) |
| path_mentions    | mentions   | 0.6                     |
| comment_refs     | references | 0.5                     |

Every language but Python resolves its imports through ``ecosystems`` (one resolver per
ecosystem); Python through the module map of ``IndexView``.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import NamedTuple

from oracl.builder.extractors.ecosystems import HELD_BACK, JVM, Ecosystems, came_or_went_reads
from oracl.builder.extractors.resolve import (
    IndexView,
    fragment,
    heading_slug,
    lookups_of,
    modules_moved,
    nearest,
    subject_names,
)
from oracl.builder.pipeline.edge_lists import EdgeLists
from oracl.builder.pipeline.tags import is_placeholder
from oracl.core.paths import is_test_path
from oracl.core.records import Edge, FileFacts

PHASE2 = "phase2_repo_edges"
PHASE3 = "phase3_static_edges"
OVERLAY = "overlay"

KAPPA = {
    "python_imports": 1.0, "code_imports": 1.0, "code_package": 0.8, "markdown_links": 0.95,
    "doc_refs": 0.9, "doc_module": 0.8, "build_refs": 0.85, "config_refs": 0.8, "test_import": 0.9,
    "test_name": 0.7, "test_calls": 0.6, "path_mentions": 0.6, "comment_refs": 0.5,
}
# languages that call each other's code directly (a test calls only into its own family)
FAMILY = {"typescript": "js", "tsx": "js", "javascript": "js", "c": "c", "cpp": "c", "java": "jvm",
          "kotlin": "jvm", "scala": "jvm"}
FOLDER_PAGES = ("README.md", "readme.md", "README.rst", "README", "index.md", "index.rst", "index.html",
                "index.js", "index.ts", "__init__.py", "mod.rs", "lib.rs")
TEST_CALL_TARGETS = 10      # files a test file is linked to by the symbols it calls
TEST_CALL_MIN_NAME = 4      # shorter callee names are too common to say anything
TEST_CALL_MAX_DEFS = 2      # a callee defined in more files than this is ambiguous


def _eco(idx: IndexView) -> Ecosystems:
    """The import resolvers' indexes over this build's facts, built on first use, whose
    tables record in ``idx`` what each lookup reads (the paths, folders, file names, JVM
    packages and namespaces looked up; what every manifest holds; which folders there are),
    for the file whose edges are being made: a file coming or going then moves the edges
    of the files that looked up what it changes (``came_or_went_reads``), not of every file
    that imports through them (at 50k polyglot files, a Python file added made the edges of
    14,165 files again: 1.8 s)."""
    hit = idx.memo.get(("ecosystems", ""))
    if hit is None:
        hit = idx.memo[("ecosystems", "")] = [Ecosystems.build(idx.facts, idx.read)]
    return hit[0]


ecosystems_of = _eco


def _dir_files(idx: IndexView) -> dict[str, list[str]]:
    """Each directory's files in path order (``Ecosystems.dir_files``), made from the paths
    alone when the resolvers' indexes are not built yet: building those reads every file's
    manifest, which decodes the facts a rebuild left as bytes (0.5 s at 20k files for one
    test file's targets). The caller records what it reads."""
    eco = idx.memo.get(("ecosystems", ""))
    if eco is not None:
        return eco[0].dir_files
    hit = idx.memo.get(("dir_files", ""))
    if hit is None:
        files: dict[str, list[str]] = {}
        for path in sorted(idx.facts):
            files.setdefault(path.rsplit("/", 1)[0] if "/" in path else "", []).append(path)
        hit = idx.memo[("dir_files", "")] = [files]
    return hit[0]


def _placeholder(idx: IndexView, path: str) -> bool:
    return is_placeholder(path.rsplit("/", 1)[-1])


def _ref_relation(idx: IndexView, target: str) -> str:
    """A reference to a placeholder artifact is discounted to ``references_placeholder``."""
    return "references_placeholder" if _placeholder(idx, target) else "references"


class ResolvedImport(NamedTuple):
    target: str
    target_fragment: str
    start: int
    end: int
    package: bool = False  # one of several files a package-level import names


def resolved_imports(f: FileFacts, idx: IndexView) -> list[ResolvedImport]:
    """Each import of a Python file resolved to an indexed module (and imported symbol).
    Memoised on the index: Phase 2, Phase 3 and the test-target provider all ask."""
    hit = idx.memo.get(("imports", f.path))
    if hit is None:
        hit = idx.memo[("imports", f.path)] = list(_resolve_imports(f, idx))
    return hit


def _resolve_imports(f: FileFacts, idx: IndexView) -> Iterator[ResolvedImport]:
    if f.language != "python" and not f.path.endswith(".py"):
        yield from _resolve_code_imports(f, idx)
        return
    for imp in f.imports:
        start, end = imp[3], imp[4]
        absolute, base, subs = idx.python_import(imp, f.path)
        if not absolute:
            continue
        hits: list[ResolvedImport] = []
        for name, sub in subs:
            if sub:
                hits.append(ResolvedImport(sub, "", start, end))
            elif base:
                rng = idx.symbol_range(base, name)
                hits.append(ResolvedImport(base, fragment(*rng) if rng else "", start, end))
        if not subs and base:
            hits.append(ResolvedImport(base, "", start, end))
        seen: set[tuple[str, str]] = set()
        for h in hits:
            if (h.target, h.target_fragment) not in seen:
                seen.add((h.target, h.target_fragment))
                yield h


def _resolve_code_imports(f: FileFacts, idx: IndexView) -> Iterator[ResolvedImport]:
    seen: set[tuple[str, str]] = set()
    for imp in f.imports:
        targets = _eco(idx).resolve(f, imp)
        for target in targets:
            name = imp[1][0] if imp[1] else (re.split(r"::|\.", imp[0])[-1] if f.language == "rust" else "")
            rng = idx.symbol_range(target, name) if name else None
            frag = fragment(*rng) if rng else ""
            if (target, frag) not in seen:
                seen.add((target, frag))
                # a package-wide import (several files) is marked by a fragment-less, lower κ
                yield ResolvedImport(target, frag, imp[3], imp[4], len(targets) > 1)


def python_imports(f: FileFacts, idx: IndexView, producer: str = PHASE3) -> Iterator[Edge]:
    if f.language != "python" and not f.path.endswith(".py"):
        return
    for h in resolved_imports(f, idx):
        yield Edge(f.path, h.target, "imports", KAPPA["python_imports"], fragment(h.start, h.end),
                   h.target_fragment, producer, "python_imports")


def code_imports(f: FileFacts, idx: IndexView, producer: str = PHASE3) -> Iterator[Edge]:
    """Imports, includes and requires of every other language, resolved per ecosystem."""
    if f.language == "python" or f.path.endswith(".py") or not f.imports:
        return
    for h in resolved_imports(f, idx):
        kappa = KAPPA["code_package"] if h.package else KAPPA["code_imports"]
        yield Edge(f.path, h.target, "imports", kappa, fragment(h.start, h.end), h.target_fragment,
                   producer, "code_imports")


_REF_RELATION = {"doc": "references", "ref": "references", "include": "references", "template": "imports",
                 "configures": "configures", "depends_on": "depends_on"}


def doc_refs(f: FileFacts, idx: IndexView, producer: str = PHASE3) -> Iterator[Edge]:
    """reStructuredText, AsciiDoc, HTML and template references, and what build and deploy
    files name (design §5b)."""
    seen: set[tuple[str, str, str]] = set()
    for kind, target, line in f.refs:
        if kind == "module":
            hit = _module_or_path(target, f, idx)
            hits = [hit] if hit else []
            relation, kappa = "references", KAPPA["doc_module"]
        else:
            hits = [(t, "") for t in _eco(idx).resolve_ref(f, kind, target)]
            relation = _REF_RELATION.get(kind, "references")
            kappa = KAPPA["build_refs"] if kind in ("configures", "depends_on") else KAPPA["doc_refs"]
        for t, frag in hits:
            if t == f.path or (t, frag, relation) in seen:
                continue
            seen.add((t, frag, relation))
            if relation == "references":
                relation_ = _ref_relation(idx, t)
            else:
                relation_ = relation
            yield Edge(f.path, t, relation_, kappa, fragment(line, line), frag, producer, "doc_refs")


def markdown_links(f: FileFacts, idx: IndexView, producer: str = PHASE3) -> Iterator[Edge]:
    if producer != PHASE3:  # Phase 2 resolves the same links: reuse Phase 3's work
        for e in _markdown_links(f, idx):
            yield Edge(e.source, e.target, e.relation, e.confidence, e.source_fragment,
                       e.target_fragment, producer, e.provider)
        return
    yield from _markdown_links(f, idx)


def _markdown_links(f: FileFacts, idx: IndexView) -> list[Edge]:
    hit = idx.memo.get(("links", f.path))
    if hit is None:
        hit = idx.memo[("links", f.path)] = list(_resolve_links(f, idx))
    return hit


def _resolve_links(f: FileFacts, idx: IndexView, producer: str = PHASE3) -> Iterator[Edge]:
    for link, line in f.md_links:
        target = idx.path(link, f.path)
        if target is None and "." not in link.rsplit("/", 1)[-1].split("#", 1)[0]:
            # a link to a folder: its README or index page (`[auth](./auth)`)
            base = link.split("#", 1)[0].rstrip("/")
            target = next((t for t in (idx.path(f"{base}/{n}", f.path) for n in FOLDER_PAGES) if t), None)
        if target is None:
            if not link.startswith(("mailto:", "//")):
                yield Edge(f.path, "", "references", KAPPA["markdown_links"], fragment(line, line),
                           "", producer, "markdown_links")
            continue
        rng = idx.anchor_range(target, link)
        yield Edge(f.path, target, _ref_relation(idx, target), KAPPA["markdown_links"],
                   fragment(line, line), fragment(*rng) if rng else "", producer, "markdown_links")


def _module_or_path(value: str, f: FileFacts, idx: IndexView) -> tuple[str, str] | None:
    """A config or comment token as (target path, target fragment), or None."""
    target = idx.path(value, f.path) if ("/" in value or "." in value) else None
    if target:
        return target, ""
    mod, _, attr = value.partition(":")
    if "." in mod and mod.replace(".", "").replace("_", "").isalnum():
        hit = idx.module(mod, f.path)
        if hit is None and not attr and "." in mod:
            # `pkg.module.func` – the last part may be a symbol of the module
            head, _, tail = mod.rpartition(".")
            hit = idx.module(head, f.path)
            attr = tail if hit else ""
        if hit:
            rng = idx.symbol_range(hit, attr) if attr else None
            return hit, fragment(*rng) if rng else ""
    return None


def config_refs(f: FileFacts, idx: IndexView, producer: str = PHASE3) -> Iterator[Edge]:
    for value, line in f.config_values:
        hit = _module_or_path(value, f, idx)
        if hit:
            yield Edge(f.path, hit[0], "configures", KAPPA["config_refs"], fragment(line, line),
                       hit[1], producer, "config_refs")


def test_targets(f: FileFacts, idx: IndexView, producer: str = PHASE3) -> Iterator[Edge]:
    """A test file → what it tests: the files it imports (0.9), the file its name says it
    tests (0.7: ``test_x.py``, ``x_test.go``, ``x.spec.ts``, ``FooTest.java`` …), and the files
    defining the functions it calls when the name says nothing (0.6, design §5b)."""
    if not is_test_path(f.path):
        return
    linked: set[str] = set()
    for h in resolved_imports(f, idx):
        if not is_test_path(h.target) and h.target not in linked:
            linked.add(h.target)
            yield Edge(f.path, h.target, "tests", KAPPA["test_import"], fragment(h.start, h.end),
                       "", producer, "test_targets")
    named = ""
    for subject in subject_names(f.path.rsplit("/", 1)[-1]):
        idx.read("name", subject)
        cands = [p for p in idx.basenames.get(subject, []) if not is_test_path(p)]
        if cands:
            named = nearest(cands, f.path)
            break
    if named:  # beside an import edge to the same file too: the name is its own evidence
        linked.add(named)
        yield Edge(f.path, named, "tests", KAPPA["test_name"], "", "", producer, "test_targets")
    for target, line in _called_files(f, idx, linked):
        linked.add(target)
        yield Edge(f.path, target, "tests", KAPPA["test_calls"], fragment(line, line), "", producer,
                   "test_targets")
    for target, line in _named_subjects(f, idx, linked):
        yield Edge(f.path, target, "tests", KAPPA["test_calls"], fragment(line, line), "", producer,
                   "test_targets")


_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
TEST_NAME_MIN = 2  # test functions naming a module before it counts as that module's test


def _named_subjects(f: FileFacts, idx: IndexView, linked: set[str]) -> list[tuple[str, int]]:
    """Modules the test *functions* name (``test_session_path``, ``TestSessionPath``): the
    first word after "test", matched to a module's file stem (``session`` → ``sessions.py``)
    among the packages the test imports and its own directory, when at least
    ``TEST_NAME_MIN`` test functions name it."""
    names = [(n.rsplit(".", 1)[-1], line) for n, line in f.test_markers if n[:1].isalpha()]
    if not names:
        return []
    dirs = {h.target.rsplit("/", 1)[0] for h in resolved_imports(f, idx) if "/" in h.target}
    dirs.add(f.path.rsplit("/", 1)[0] if "/" in f.path else "")
    family = FAMILY.get(f.language, f.language)
    stems: dict[str, str] = {}
    for d in sorted(dirs):
        for stem, p in _dir_stems(idx, d, family).items():
            stems.setdefault(stem, p)
    hits: dict[str, list[int]] = {}
    for name, line in names:
        words = [w.lower() for w in _WORD.findall(name)]
        if not words or words[0] != "test" or len(words) < 2:
            continue
        word = words[1]
        for key in (word, word + "s", word.removesuffix("s"), "_".join(words[1:3])):
            target = stems.get(key)
            if target and target not in linked and target != f.path:
                hits.setdefault(target, []).append(line)
                break
    return sorted(((t, lines[0]) for t, lines in hits.items() if len(lines) >= TEST_NAME_MIN),
                  key=lambda x: x[0])


def _dir_stems(idx: IndexView, d: str, family: str) -> dict[str, str]:
    """The non-test files of directory ``d`` in ``family`` by lower-cased stem (the first
    in the directory's order wins), memoised on the index: every test file of a directory
    asks for the same ones."""
    key = ("stems", f"{family}\x00{d}")
    idx.read("dir", d)
    hit = idx.memo.get(key)
    if hit is None:
        stems: dict[str, str] = {}
        for p in _dir_files(idx).get(d, []):
            other = idx.facts[p]
            if is_test_path(p) or FAMILY.get(other.language, other.language) != family:
                continue
            stems.setdefault(p.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower(), p)
        hit = idx.memo[key] = [stems]
    return hit[0]


_DEFS = ("defs", "")  # (the index's memo entry: ``defs_for_test_calls``)


def _def_names(f: FileFacts) -> set[str]:
    """The names a file defines that a test's call can point at (``_called_files``)."""
    shorts = (name.rsplit(".", 1)[-1] for name, *_ in f.symbols)
    return {s for s in shorts if len(s) >= TEST_CALL_MIN_NAME and not s.startswith("__")}


def defs_for_test_calls(idx: IndexView) -> dict[str, list[str]]:
    """Each name a non-test file defines → those files, in the index's order (sorted by
    path: the walk's), made once per index."""
    defs = idx.memo.get(_DEFS)
    if defs is None:
        table: dict[str, list[str]] = {}
        for path, facts in idx.facts.items():
            if is_test_path(path):
                continue
            for name, _kind, _, _ in facts.symbols:
                short = name.rsplit(".", 1)[-1]
                if len(short) >= TEST_CALL_MIN_NAME and not short.startswith("__"):
                    paths = table.setdefault(short, [])
                    if not paths or paths[-1] != path:
                        paths.append(path)
        defs = idx.memo[_DEFS] = [table]
    return defs[0]


def carry_test_call_defs(kept: IndexView, index: IndexView, changed: Iterable[str]) -> None:
    """A long-lived builder's index made from the one it kept (``IndexView.again``: the
    same files, ``changed`` read again) takes the kept one's ``defs_for_test_calls`` with the
    changed files' names moved, where it was made (a pass over every file's symbols: 20–30
    ms of a save that changed a test on sympy). The lists that change are copied, the
    others shared; each stays in the files' order."""
    defs = kept.memo.get(_DEFS)
    if defs is None:
        return
    table = dict(defs[0])
    for p in sorted(changed):
        old, new = kept.facts.get(p), index.facts.get(p)
        test = is_test_path(p)
        was = _def_names(old) if old is not None and not test else set()
        now = _def_names(new) if new is not None and not test else set()
        for short in was - now:
            left = [q for q in table.get(short, ()) if q != p]
            if left:
                table[short] = left
            else:
                table.pop(short, None)
        for short in now - was:
            paths = list(table.get(short, ()))
            at = bisect.bisect_left(paths, p)
            if at == len(paths) or paths[at] != p:
                paths.insert(at, p)
            table[short] = paths
    index.memo[_DEFS] = [table]


def _called_files(f: FileFacts, idx: IndexView, linked: set[str]) -> list[tuple[str, int]]:
    """Files defining the functions and types a test calls, where the callee's name is
    specific: defined in at most ``TEST_CALL_MAX_DEFS`` non-test files of the packages the
    test imports or its own directory (its own directory first – a Go or Java package),
    and not the test's own."""
    if not f.calls:
        return []
    table = defs_for_test_calls(idx)
    own = {n.rsplit(".", 1)[-1] for n, *_ in f.symbols}
    family = FAMILY.get(f.language, f.language)
    # only the packages the test imports (and below them) and its own directory
    scopes = {h.target.rsplit("/", 1)[0] if "/" in h.target else "" for h in resolved_imports(f, idx)}
    scopes.add(f.path.rsplit("/", 1)[0] if "/" in f.path else "")

    def in_scope(p: str) -> bool:
        return "" in scopes or any(p.startswith(s + "/") for s in scopes)
    here = f.path.rsplit("/", 1)[0] if "/" in f.path else ""
    hits: dict[str, tuple[int, int]] = {}
    picked: dict[str, list[str]] = {}  # (each name's files worked out once: a test calls a name many times)
    for callee, line in f.calls:
        name = callee.rsplit(".", 1)[-1]
        if name in own:
            continue
        pick = picked.get(name)
        if pick is None:
            idx.read("defines", name)
            found = table.get(name)
            paths = [p for p in found if FAMILY.get(idx.facts[p].language, idx.facts[p].language) == family
                     and in_scope(p)] if found else []
            local = [p for p in paths if (p.rsplit("/", 1)[0] if "/" in p else "") == here]
            pick = picked[name] = local if local else paths
        if not pick or len(pick) > TEST_CALL_MAX_DEFS:
            continue
        for p in pick:
            if p not in linked:
                count, first = hits.get(p, (0, line))
                hits[p] = (count + 1, min(first, line))
    ranked = sorted(hits.items(), key=lambda kv: (-kv[1][0], kv[0]))[:TEST_CALL_TARGETS]
    return [(p, first) for p, (_, first) in ranked]


def path_mentions(f: FileFacts, idx: IndexView, producer: str = PHASE3) -> Iterator[Edge]:
    for token, line in f.mentions:
        target = idx.path(token, f.path, basename_fallback=True)
        if target and target != f.path:
            yield Edge(f.path, target, "mentions", KAPPA["path_mentions"], fragment(line, line), "",
                       producer, "path_mentions")


def comment_refs(f: FileFacts, idx: IndexView, producer: str = PHASE3) -> Iterator[Edge]:
    for token, line in f.comment_refs:
        hit = _module_or_path(token, f, idx)
        if hit and hit[0] != f.path:
            yield Edge(f.path, hit[0], _ref_relation(idx, hit[0]), KAPPA["comment_refs"],
                       fragment(line, line), hit[1], producer, "comment_refs")


Provider = Callable[[FileFacts, IndexView, str], Iterator[Edge]]
PROVIDERS: tuple[tuple[str, Provider], ...] = (
    ("python_imports", python_imports),
    ("code_imports", code_imports),
    ("markdown_links", markdown_links),
    ("doc_refs", doc_refs),
    ("config_refs", config_refs),
    ("test_targets", test_targets),
    ("path_mentions", path_mentions),
    ("comment_refs", comment_refs),
)


def phase2_of(f: FileFacts, idx: IndexView) -> list[Edge]:
    """Phase 2 of one file: its imports through the module map and its Markdown links."""
    return [*python_imports(f, idx, PHASE2), *code_imports(f, idx, PHASE2), *markdown_links(f, idx, PHASE2)]


def phase3_of(f: FileFacts, idx: IndexView, providers: tuple[tuple[str, Provider], ...] = PROVIDERS) -> list[Edge]:
    """Phase 3 of one file: every registered provider over it."""
    out: list[Edge] = []
    for _, provider in providers:
        out.extend(provider(f, idx, PHASE3))
    return out


def phase2_edges(facts: list[FileFacts], idx: IndexView) -> list[Edge]:
    """Phase 2: imports through the module map and Markdown links over the Phase 1 index."""
    out: list[Edge] = []
    for f in facts:
        out.extend(phase2_of(f, idx))
    return out


def phase3_edges(facts: list[FileFacts], idx: IndexView,
                 providers: tuple[tuple[str, Provider], ...] = PROVIDERS) -> list[Edge]:
    """Phase 3: every registered provider over every file."""
    out: list[Edge] = []
    for f in facts:
        out.extend(phase3_of(f, idx, providers))
    return out


def edge_interface(f: FileFacts) -> tuple[object, ...]:
    """What the providers read of ``f`` while resolving *another* file's edges, but the
    lines: its language and whether it is held back, its manifest and namespaces, its
    symbols' names and kinds (imports, test calls, JVM classes) and its headings' anchors.
    Two versions of a file with the same interface give every other file the same edges
    but for the fragments of the edges that point into it (a symbol's or a heading's lines):
    the files with an edge to it are the only others whose edges can move."""
    return (f.path, f.language, f.parse_status if f.parse_status in HELD_BACK else "", f.manifest, f.namespaces,
            tuple((s[0], s[1]) for s in f.symbols), tuple(d[0] for d in f.symbol_details),
            tuple(heading_slug(h[0]) for h in f.headings))


def _defined(f: FileFacts) -> set[str]:
    """The names ``_called_files``' table finds ``f`` by (none for a test file)."""
    if is_test_path(f.path):
        return set()
    out = set()
    for name, *_ in f.symbols:
        short = name.rsplit(".", 1)[-1]
        if len(short) >= TEST_CALL_MIN_NAME and not short.startswith("__"):
            out.add(short)
    return out


def edges_to_make(facts: list[FileFacts], previous: dict[str, FileFacts],
                  sources_into: Callable[[set[str]], set[str]], changed: set[str],
                  reading: Callable[[set[str]], set[str]] | None = None,
                  known: tuple[Mapping[str, FileFacts], list[str]] | None = None,
                  called: dict[str, tuple[FileFacts, frozenset[str]]] | None = None,
                  tests: Iterable[str] | None = None) -> set[str] | None:
    """The files whose Phase 2 and Phase 3 edges must be made again after ``changed``
    files changed, the others' kept from the build whose files were ``previous``
    (``sources_into``: the files with an edge of either phase into one of the files it is
    given, but those: ``sources_into`` below, or the edge shards' ``Kept``): the changed
    files, the files with an edge into one of them (only when its lines that such an edge
    points at moved: its symbols or headings; an edit that keeps them, say in a function's
    body or a comment after its last symbol, gives every other file the same edges), and —
    when a changed file's symbols or headings moved (a function added, renamed or
    removed) — the test files that call a name it defines or
    defined (``_called_files``' table: the only provider that reads another file's symbols
    but through an edge into it, its lines). None when keeping any would not give a full
    pass's edges: a changed file's language, held-back status, manifest or namespaces
    moved, or its symbols did in a JVM language (a class is found by its package and name:
    ``Ecosystems.jvm``), or a file was added or removed and there is no ``reading``.

    ``reading`` (the edge shards' ``Kept.reading``): the files that, while their edges were
    made, looked up one of the keys it is given (``IndexView.read``). A file added or
    removed can change only the answers to the lookups of its path, its file name, its
    module names, its folder's files, the short names it defines (``resolve.lookups_of``)
    and, in the other languages' resolvers, its JVM keys or namespaces, what the manifests
    hold, which folders there are and a walk of every file (``came_or_went_reads``), so the
    files that made one of those are made again too, with the files added and removed; an
    ``__init__.py`` added or removed also moves the names of the modules under it
    (``resolve.modules_moved``): the files that looked one of those up too. ``called``:
    each test file's called names,
    kept by a long-lived builder (``_called_names``); ``tests`` (with ``known``): the test
    files' paths, kept by it while no file comes or goes (else every file is asked, or,
    with ``reading`` and no ``tests``, the files that looked a moved name up: the lookups
    ``_called_files`` records, ``defines\0name``)."""
    names: set[str] = set()  # the names whose defining files moved
    again: set[str] = set()
    # (``known``: the facts by path and the files gone, when the caller has them: a file
    # added is one of ``changed``, so no pass over every file finds what came or went)
    came_or_went = bool(known[1]) or any(p not in previous for p in changed) if known is not None else \
        len(facts) != len(previous) or any(f.path not in previous for f in facts)
    if came_or_went:
        if reading is None:
            return None
        present = dict(known[0]) if known is not None else {f.path: f for f in facts}
        added = sorted(p for p in changed if p not in previous) if known is not None else \
            [p for p in present if p not in previous]
        gone = list(known[1]) if known is not None else [p for p in previous if p not in present]
        keys: set[str] = set()
        before_dirs = now_dirs = None
        for p in (*added, *gone):
            f = present[p] if p in present else previous[p]
            folder = p.rsplit("/", 1)[0] if "/" in p else ""
            if before_dirs is None or now_dirs is None:  # (which folders there are: once, when a file came or went)
                before_dirs = {q.rsplit("/", 1)[0] if "/" in q else "" for q in previous}
                now_dirs = {q.rsplit("/", 1)[0] if "/" in q else "" for q in present}
            keys |= came_or_went_reads(p, f, (folder in before_dirs) != (folder in now_dirs))
            if p.rsplit("/", 1)[-1] == "__init__.py":  # (a package's: the names it moves of the modules under it)
                for moved in modules_moved(p, previous, present).values():
                    keys.update(f"module\x00{m}" for m in moved)
        for p in added:
            keys |= lookups_of(p, present)
            keys.update(f"defines\x00{n}" for n in _defined(present[p]))
        for p in gone:
            keys |= lookups_of(p, previous)
            keys.update(f"defines\x00{n}" for n in _defined(previous[p]))
        again.update(added, gone, reading(keys), sources_into(set(gone)))
        changed = {p for p in changed if p in previous}
    pointed = set()  # (the changed files whose lines another file's edge into it may point at moved)
    for f in (known[0][p] for p in sorted(changed) if p in known[0]) if known is not None else facts:
        if f.path not in changed:
            continue
        old = previous[f.path]
        now, was = edge_interface(f), edge_interface(old)
        if now == was:
            if f.symbols != old.symbols or f.headings != old.headings:
                pointed.add(f.path)
            continue
        pointed.add(f.path)
        if now[:5] != was[:5] or f.language in JVM or old.language in JVM:
            return None
        names |= _defined(f) ^ _defined(old)
    again |= changed | (sources_into(pointed) if pointed else set())
    if names and reading is not None and tests is None:
        # (a cold build: the files that looked one of the names up while their edges were made,
        # ``_called_files``' lookups, from the shards' records; asking every test file's calls
        # took 0.09-0.12 s of a define at sympy's 2,000 files)
        again.update(reading({f"defines\x00{n}" for n in names}))
    elif names:
        pool = (known[0][p] for p in tests if p in known[0]) if tests is not None and known is not None else facts
        again.update(f.path for f in pool if f.path not in again and is_test_path(f.path) and f.calls
                     and not names.isdisjoint(_called_names(f, called)))
    return again


def _called_names(f: FileFacts, held: dict[str, tuple[FileFacts, frozenset[str]]] | None) -> frozenset[str]:
    """The last parts of the names ``f`` calls; ``held`` (a long-lived builder's): each
    file's, kept with the very facts object they were made of (a define asked every test
    file's calls again: ~11 ms at 20k files)."""
    got = held.get(f.path) if held is not None else None
    if got is None or got[0] is not f:
        got = (f, frozenset(callee.rsplit(".", 1)[-1] for callee, _ in f.calls))
        if held is not None:
            held[f.path] = got
    return got[1]


def sources_into(by_file: tuple[Mapping[str, list[Edge]], ...]) -> Callable[[set[str]], set[str]]:
    """What finds, in each file's edges of each phase (``by_file``), the files with an edge
    into one of the files it is given (but those)."""
    def into(changed: set[str]) -> set[str]:
        return {source for lists in by_file for source, edges in lists.items()
                if source not in changed and any(e.target in changed for e in edges)}
    return into


def edges_per_file(facts: list[FileFacts], idx: IndexView, make: Callable[[FileFacts, IndexView], list[Edge]],
                   kept: Mapping[str, list[Edge]] | None = None, again: set[str] | None = None,
                   reads: dict[str, set[str]] | None = None) -> Mapping[str, list[Edge]]:
    """Each file's edges of one phase (``make``: ``phase2_of`` or ``phase3_of``), in file
    order; with ``kept``, those of the files not in ``again`` are the kept lists (of the
    files there are: a kept file that is gone has none). ``reads``: each file made gets the
    lookups its making recorded (``IndexView.read``) added to its set."""
    def made(f: FileFacts) -> list[Edge]:
        if reads is None:
            return make(f, idx)
        idx.reads = reads.setdefault(f.path, set())
        try:
            return make(f, idx)
        finally:
            idx.reads = None

    if kept is None or again is None:
        return {f.path: made(f) for f in facts}
    if isinstance(kept, EdgeLists):  # (the latest's rows: the others' lists are made only when read)
        return kept.with_made({f.path: made(f) for f in facts if f.path in again}, {f.path for f in facts})
    by_path = idx.facts
    if isinstance(kept, dict) and len(kept) == len(by_path) == len(facts) and list(kept) == list(by_path):
        # (the same files in the same order, compared in C: the kept lists copied, those
        # made again put in place, not a dict made again a file at a time: 10 ms a save at 20k)
        out = dict(kept)
        for p in sorted(again):
            if p in by_path:
                out[p] = made(by_path[p])
        return out
    return {f.path: made(f) if f.path in again else kept[f.path] for f in facts}
