"""The Phase 1 index as the edge providers see it: path, module and symbol lookups.

>>> idx = IndexView.build({"src/pkg/__init__.py": None, "src/pkg/a.py": None})  # doctest: +SKIP
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass, field
from urllib.parse import unquote

from oracl.core.records import FileFacts, ImportRef

_SLUG = re.compile(r"[^\w\- ]+")


def fragment(start: int, end: int) -> str:
    """A line-range locator ``L10-20`` (``L7-7`` for one line)."""
    return f"L{start}-{max(start, end)}"


def heading_slug(title: str) -> str:
    """GitHub-style anchor of a heading: lower case, punctuation dropped, spaces → ``-``."""
    return _SLUG.sub("", title.strip().lower()).replace(" ", "-")


def subject_names(name: str) -> list[str]:
    """The file names a test file's name says it tests (``x_test.go`` → ``x.go``,
    ``FooTest.java`` → ``Foo.java``, ``a.spec.ts`` → ``a.ts``/``a.tsx``/``a.js``)."""
    stem, _, suffix = name.rpartition(".")
    if not stem:
        return []
    for pre in ("test_",):
        if stem.startswith(pre):
            return [f"{stem[len(pre):]}.{suffix}"]
    for post in ("_test", "_spec", ".test", ".spec", "-test", "-spec", "Tests", "Test", "Spec", "IT"):
        if stem.endswith(post) and len(stem) > len(post):
            base = stem[: -len(post)]
            if suffix in ("js", "jsx", "ts", "tsx", "mjs", "cjs"):
                return [f"{base}.{s}" for s in (suffix, "ts", "tsx", "js", "jsx", "mjs") ]
            return [f"{base}.{suffix}"]
    return []


def _common_prefix_len(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a.split("/"), b.split("/"), strict=False):
        if x != y:
            break
        n += 1
    return n


def nearest(candidates: list[str], from_path: str) -> str:
    """Deterministic choice among equally named targets: the one sharing the longest
    directory prefix with the referring file, then the shortest path, then by name."""
    if len(candidates) == 1:
        return candidates[0]
    return min(candidates, key=lambda p: (-_common_prefix_len(p, from_path), p.count("/"), p))


READ_KINDS = ("path", "name", "module", "dir", "defines", "ecosystems")


def module_names(path: str, paths: Collection[str]) -> list[str]:
    """The module names ``IndexView.build`` files a Python file under (none for another
    file): its dotted path, and its name from the nearest ancestor that is not a package
    when that differs (``paths``: every file, for the ``__init__.py`` files)."""
    if not path.endswith(".py"):
        return []
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
        if not parts:
            return []
    out = [".".join(parts)]
    k = len(parts) - 1
    while k > 0 and "/".join(parts[:k]) + "/__init__.py" in paths:
        k -= 1
    qualified = ".".join(parts[k:])
    if qualified != out[0]:
        out.append(qualified)
    return out


def modules_moved(init: str, before: Collection[str], now: Collection[str]) -> dict[str, set[str]]:
    """The Python files, in both ``before`` and ``now`` (every file, each time), whose module
    names (``module_names``) a package's ``__init__.py`` (``init``) coming or going moves,
    each with the names it gained or lost: only files under its folder can name it as an
    ancestor. (A pass over the paths, ~5 ms at 50,000 files: what the whole pass it saves
    resolves again is every file.)"""
    folder = init.rsplit("/", 1)[0] + "/" if "/" in init else ""
    out: dict[str, set[str]] = {}
    for q in now:
        if q == init or not q.endswith(".py") or not q.startswith(folder) or q not in before:
            continue
        old, new = module_names(q, before), module_names(q, now)
        if old != new:
            out[q] = set(old) ^ set(new)
    return out


def lookups_of(path: str, paths: Collection[str]) -> set[str]:
    """The recorded lookups (``IndexView.read``) whose answer a file at ``path`` can change
    by coming or going, among ``paths`` (with it or without it: an ``__init__.py`` is
    not one of those, it moves other modules' names): its path, its file name, its module
    names and its folder (the short names it defines are the caller's)."""
    name = path.rsplit("/", 1)[-1]
    folder = path.rsplit("/", 1)[0] if "/" in path else ""
    out = {f"path\x00{path}", f"name\x00{name}", f"dir\x00{folder}"}
    out.update(f"module\x00{m}" for m in module_names(path, paths))
    return out


@dataclass(slots=True)
class IndexView:
    facts: dict[str, FileFacts]
    modules: dict[str, list[str]] = field(default_factory=dict)
    basenames: dict[str, list[str]] = field(default_factory=dict)
    # each file's symbol and heading lines by name, made when first asked for (a cold
    # build's providers ask of a few files: made for every file, they were most of the
    # index's 0.47 s in a profiled one-file rebuild at 20k files)
    symbols: dict[str, dict[str, tuple[int, int]]] = field(default_factory=dict)
    anchors: dict[str, dict[str, tuple[int, int]]] = field(default_factory=dict)
    memo: dict[tuple[str, str], list] = field(default_factory=dict)  # per-file resolutions shared by providers
    # while one file's edges are made: the lookups whose answers depend on which files there
    # are (``read``: a path, a file name, a module name, a folder's files, a short name
    # defined; in the other languages' resolvers, a JVM key, a namespace, what the
    # manifests hold, which folders there are: ``Ecosystems``), for ``providers.edges_to_make``
    reads: set[str] | None = None

    def read(self, kind: str, key: str = "") -> None:
        """Record a lookup of ``kind`` (``READ_KINDS``) and ``key`` by the file being made."""
        if self.reads is not None:
            self.reads.add(f"{kind}\x00{key}")

    @classmethod
    def build(cls, facts: dict[str, FileFacts]) -> IndexView:
        paths = set(facts)
        modules: dict[str, list[str]] = defaultdict(list)
        basenames: dict[str, list[str]] = defaultdict(list)
        for path in sorted(paths):
            basenames[path.rsplit("/", 1)[-1]].append(path)
            for name in module_names(path, paths):
                modules[name].append(path)
        return cls(facts, dict(modules), dict(basenames))

    @classmethod
    def again(cls, previous: IndexView, facts: dict[str, FileFacts], changed: set[str]) -> IndexView:
        """``build(facts)`` from the index of the previous build's facts, when the files
        are the same paths and only ``changed`` ones changed: the module map and the file
        names are the previous build's, and so are the symbol and heading lines it made,
        but the changed files' (made again when asked for; a long-lived builder's; the
        memo starts empty)."""
        symbols, anchors = dict(previous.symbols), dict(previous.anchors)
        for p in changed:
            symbols.pop(p, None)
            anchors.pop(p, None)
        return cls(facts, previous.modules, previous.basenames, symbols, anchors)

    def module(self, name: str, from_path: str) -> str | None:
        if self.reads is not None:
            self.reads.add(f"module\x00{name}")
        cands = self.modules.get(name)
        return nearest(cands, from_path) if cands else None

    def relative_module(self, mod: str, level: int, from_path: str) -> str:
        """The absolute dotted path of a relative import, from the file's location."""
        parts = from_path[:-3].split("/") if from_path.endswith(".py") else from_path.split("/")
        base = parts[:-1]  # the package of the importing module
        if level > 1:
            base = base[: len(base) - (level - 1)] if level - 1 <= len(base) else []
        return ".".join([*base, *([mod] if mod else [])])

    def python_import(self, imp: ImportRef, from_path: str) -> tuple[str, str | None, list[tuple[str, str | None]]]:
        """One Python import resolved: (absolute module, its file or None, and for each
        imported name the file of the submodule it names, or None when it is a name the
        module defines). ``("", None, [])`` when a relative import leaves the tree."""
        mod, names, level = imp[0], imp[1], imp[2]
        absolute = self.relative_module(mod, level, from_path) if level else mod
        if not absolute:
            return "", None, []
        return (absolute, self.module(absolute, from_path),
                [(name, self.module(f"{absolute}.{name}", from_path)) for name in names])

    def symbol_range(self, path: str, name: str) -> tuple[int, int] | None:
        if self.reads is not None:
            self.reads.add(f"path\x00{path}")
        lines = self.symbols.get(path)
        if lines is None:
            f = self.facts.get(path)
            lines = self.symbols[path] = {s[0]: (s[2], s[3]) for s in f.symbols} if f is not None else {}
        return lines.get(name)

    def path(self, candidate: str, from_path: str, *, basename_fallback: bool = False) -> str | None:
        """Resolve a written path: relative to the referring file, then to the root, then
        (for free-text mentions) by a unique suffix or file name."""
        cand = unquote(candidate.split("#", 1)[0].split("?", 1)[0]).strip()
        if not cand or cand.endswith("/"):
            return None
        tries = []
        if cand.startswith("/"):
            tries.append(cand.lstrip("/"))
        else:
            tries.append(posixpath.join(posixpath.dirname(from_path), cand))
            tries.append(cand)
        reads = self.reads
        for t in tries:
            norm = posixpath.normpath(t)
            if not norm.startswith("../") and norm != "..":
                if reads is not None:
                    reads.add(f"path\x00{norm}")
                if norm in self.facts:
                    return norm
        if basename_fallback:
            name = cand.rsplit("/", 1)[-1]
            if reads is not None:
                reads.add(f"name\x00{name}")
            cands = self.basenames.get(name, [])
            if "/" in cand:
                tail = "/" + cand.lstrip("./")
                cands = [c for c in cands if ("/" + c).endswith(tail)]
            if len(cands) == 1:
                return cands[0]
        return None

    def anchor_range(self, path: str, link: str) -> tuple[int, int] | None:
        if "#" not in link:
            return None
        if self.reads is not None:
            self.reads.add(f"path\x00{path}")
        lines = self.anchors.get(path)
        if lines is None:
            f = self.facts.get(path)
            lines = self.anchors[path] = {heading_slug(h[0]): (h[2], h[3]) for h in f.headings} \
                if f is not None else {}
        return lines.get(heading_slug(unquote(link.split("#", 1)[1])))
