"""The Phase 2 producer and the six Phase 3 edge providers (design §5).

Each provider is a pure function ``(FileFacts, IndexView) -> Iterator[Edge]`` over the
candidates Phase 1 scanned; edges name artifacts by path (the export maps paths to node
ids). An unresolvable Markdown link yields an edge with an empty target, which the merge
drops and counts as dangling.

| provider         | relation   | κ                       |
|------------------|------------|-------------------------|
| python_imports   | imports    | 1.0                     |
| markdown_links   | references | 0.95                    |
| config_refs      | configures | 0.8                     |
| test_targets     | tests      | 0.9 (import) / 0.7 (name) |
| path_mentions    | mentions   | 0.6                     |
| comment_refs     | references | 0.5                     |
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import NamedTuple

from oracl.extractors.resolve import IndexView, fragment, is_test_path, nearest
from oracl.pipeline.tags import is_placeholder
from oracl.records import Edge, FileFacts

PHASE2 = "phase2_repo_edges"
PHASE3 = "phase3_static_edges"
OVERLAY = "overlay"

KAPPA = {
    "python_imports": 1.0, "markdown_links": 0.95, "config_refs": 0.8, "test_import": 0.9,
    "test_name": 0.7, "path_mentions": 0.6, "comment_refs": 0.5,
}


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


def resolved_imports(f: FileFacts, idx: IndexView) -> list[ResolvedImport]:
    """Each import of a Python file resolved to an indexed module (and imported symbol).
    Memoised on the index: Phase 2, Phase 3 and the test-target provider all ask."""
    hit = idx.memo.get(("imports", f.path))
    if hit is None:
        hit = idx.memo[("imports", f.path)] = list(_resolve_imports(f, idx))
    return hit


def _resolve_imports(f: FileFacts, idx: IndexView) -> Iterator[ResolvedImport]:
    for mod, names, level, start, end in f.imports:
        absolute = idx.relative_module(mod, level, f.path) if level else mod
        if not absolute:
            continue
        hits: list[ResolvedImport] = []
        base = idx.module(absolute, f.path)
        for name in names:
            sub = idx.module(f"{absolute}.{name}", f.path)
            if sub:
                hits.append(ResolvedImport(sub, "", start, end))
            elif base:
                rng = idx.symbol_range(base, name)
                hits.append(ResolvedImport(base, fragment(*rng) if rng else "", start, end))
        if not names and base:
            hits.append(ResolvedImport(base, "", start, end))
        seen: set[tuple[str, str]] = set()
        for h in hits:
            if (h.target, h.target_fragment) not in seen:
                seen.add((h.target, h.target_fragment))
                yield h


def python_imports(f: FileFacts, idx: IndexView, producer: str = PHASE3) -> Iterator[Edge]:
    for h in resolved_imports(f, idx):
        yield Edge(f.path, h.target, "imports", KAPPA["python_imports"], fragment(h.start, h.end),
                   h.target_fragment, producer, "python_imports")


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
    if not is_test_path(f.path):
        return
    for h in resolved_imports(f, idx):
        if not is_test_path(h.target):
            yield Edge(f.path, h.target, "tests", KAPPA["test_import"], fragment(h.start, h.end),
                       "", producer, "test_targets")
    name = f.path.rsplit("/", 1)[-1]
    if name.endswith(".py"):
        stem = name[:-3]
        subject = stem[5:] if stem.startswith("test_") else stem[:-5] if stem.endswith("_test") else ""
        if subject:
            cands = [p for p in idx.basenames.get(subject + ".py", []) if not is_test_path(p)]
            if cands:
                yield Edge(f.path, nearest(cands, f.path), "tests", KAPPA["test_name"], "", "",
                           producer, "test_targets")


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
    ("markdown_links", markdown_links),
    ("config_refs", config_refs),
    ("test_targets", test_targets),
    ("path_mentions", path_mentions),
    ("comment_refs", comment_refs),
)


def phase2_edges(facts: list[FileFacts], idx: IndexView) -> list[Edge]:
    """Phase 2: imports through the module map and Markdown links over the Phase 1 index."""
    out: list[Edge] = []
    for f in facts:
        out.extend(python_imports(f, idx, PHASE2))
        out.extend(markdown_links(f, idx, PHASE2))
    return out


def phase3_edges(facts: list[FileFacts], idx: IndexView,
                 providers: tuple[tuple[str, Provider], ...] = PROVIDERS) -> list[Edge]:
    """Phase 3: every registered provider over every file."""
    out: list[Edge] = []
    for f in facts:
        for _, provider in providers:
            out.extend(provider(f, idx, PHASE3))
    return out
