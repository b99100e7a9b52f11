"""A file added, removed or renamed, or one whose interface moved: the symbol rows made
again for the files it can change, not for every file.

Such a file changes the resolver's tables (the names it declares) and so, possibly, what
other files' names resolve to. The latest build recorded, per file, what resolving its
names read (``read_sets``) and its tables (``name_tables``). This build takes the changed
files' old declarations out of the tables and enters their new ones (``patch_table``),
then resolves again the files whose reads meet what the changed files are
(``change_tokens``) or the lookups in every file's names whose outcome the patch moved
(``lookup_outcomes``), the changed files themselves and the files read again; when a
resolved file's bases move, the files that read its types are resolved too. Every other
file's rows are the latest's, unread; the rows made are compared with the latest's so
that the database is patched only for the files whose rows moved.

The result is the rows and tables a whole pass makes (tested against full builds); it
gives way to the whole pass when it cannot be sure of that: a package's ``__init__.py``
whose imports moved, a crate root or a manifest among the changed files (they move how
every import in their tree resolves; a package's ``__init__.py`` that stayed with the same
imports is taken as any module, with its package's words; one that came or went moves the
module names of the files under it, ``resolve.modules_moved``: those files are resolved
again, and the files that read their words), a directory that appears or empties, or no
record to start from. Members
declared outside their type (Go methods, Rust impls) in a changed file's directory are
attached again; a type that gains or loses one has its file's rows made again, and the
files that looked the member's name up are resolved again.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from oracl.builder import name_tables, read_sets
from oracl.builder.extractors.code import CODE_LANGUAGES
from oracl.builder.extractors.resolve import IndexView, modules_moved
from oracl.builder.pipeline.symbols import (
    SymbolGraph,
    SymbolTable,
    change_tokens,
    declared,
    interface,
    lookup_keys,
    lookup_outcomes,
    moved_lookups,
    moved_names,
    patch_table,
    symbol_graph,
)
from oracl.builder.segments import Segments
from oracl.core.parts import PartStore
from oracl.core.records import FileFacts

# files whose coming or going moves how the imports of a whole tree resolve
_ROOTS = frozenset({"__init__.py", "lib.rs", "main.rs"})


@dataclass(slots=True)
class Again:
    graph: SymbolGraph            # the rows of the files resolved again (and their tables, reads)
    made: list[str]               # the files whose segments this build made
    changed: list[str]            # the files that came, went or changed their interface
    gone: list[str] = field(default_factory=list)
    # the latest's patch of the name tables with this build's over it (``name_tables``)
    patch: tuple[name_tables.Declared, dict[str, list[str]]] = field(default_factory=lambda: ({}, {}))
    # what each file's resolution read, as the latest recorded it (``read_sets``): kept by a
    # long-lived builder, with this build's over it, for its next build (None: not kept)
    reads: dict[str, Any] | None = None


def _code(f: FileFacts) -> bool:
    return f.language in CODE_LANGUAGES and bool(f.symbols or f.calls)


def _dir(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _package_stays(old: FileFacts | None, new: FileFacts | None) -> bool:
    """Whether a package's ``__init__.py`` stayed with the same imports (what they import
    and the names they bind): the package is the same and so is every import through it, so
    what moved is its own names and whether it holds code, which only the files that looked
    one of those names up or read the file can see — as for any module, with the package's
    own words added (``_package_words``). A define in one resolved every file: 8 s and 59 MB
    written at 20k files."""
    return old is not None and new is not None and old.path.rsplit("/", 1)[-1] == "__init__.py" \
        and old.language == new.language == "python" \
        and [i[:3] for i in old.imports] == [i[:3] for i in new.imports] and old.renames == new.renames


def _package_words(path: str) -> set[str]:
    """The words of the directory an ``__init__.py`` makes a package (``import pkg.sub``
    names the directory, not the file)."""
    return set(re.findall(r"[^\W\d]\w*", _dir(path).rsplit("/", 1)[-1]))


def resolve_again(facts: list[FileFacts], index: IndexView, previous: dict[str, FileFacts], reread: list[str],
                  segments: Segments, store: PartStore, latest: dict[str, Any],
                  fork: Callable[[Callable[[], Any]], Callable[[], Any]] | None = None,
                  also: list[str] | tuple[str, ...] = (), kept: SymbolTable | None = None,
                  kept_reads: dict[str, Any] | None = None) -> Again | str:
    """The symbol rows of the files a change can move (``also``: files whose rows must be
    made whatever), or why a whole pass is needed instead. ``kept``: the latest's name
    tables as a long-lived builder holds them (the same files in the same places), patched
    here instead of read back (0.3–0.5 s at 20k files). ``kept_reads``: the reads the latest
    recorded, merged, as such a builder holds them (``Carry.reads``), not read back and
    merged (~50 ms at 20k files)."""
    here = index.facts if len(index.facts) == len(facts) else {f.path: f for f in facts}  # (by path: the index's)
    gone = [p for p in previous if p not in here]
    changed = sorted({*gone, *(p for p in reread if p not in previous
                               or p not in segments.files or interface(here[p]) != segments.files[p].interface)})
    tree: set[str] = set()  # (files whose module names a package's ``__init__.py`` coming or going moved)
    for p in changed:
        name = p.rsplit("/", 1)[-1]
        if name in _ROOTS and not _package_stays(previous.get(p), here.get(p)):
            if name != "__init__.py" or (p in previous) == (p in here):
                return f"{p} roots a tree of imports"
            tree.update(modules_moved(p, previous, here))
        if any(x is not None and x.manifest for x in (here.get(p), previous.get(p))):
            return f"{p} is a manifest"
    if any(p not in previous or p not in here for p in changed):  # (a directory moves only when a file comes or goes)
        before = {_dir(p) for p in previous}
        now = {_dir(p) for p in here}
        for p in changed:
            if (_dir(p) in before) != (_dir(p) in now):
                return f"the directory of {p} appeared or emptied"
    recorded = read_sets.read(store, latest) if kept_reads is None else None
    if kept_reads is None and recorded is None:
        return "the latest recorded no reads"
    order = {f.path: i for i, f in enumerate(facts)}
    table = kept if kept is not None else name_tables.read(store, latest, order)
    patch = name_tables.patch_of(store, latest)
    if table is None or patch is None:
        return "the latest recorded no name tables"
    old = {p: declared(previous[p]) for p in changed if p in previous and _code(previous[p])}
    new = {p: declared(here[p]) for p in changed if p in here and _code(here[p])}
    # (a file the latest's patch entered and this build removed is not in the tables read back:
    # ``name_tables.read`` enters only this build's files. It is entered here, after them, so
    # that what its going moves is seen against the latest's tables as they were)
    missing = [(p, old[p]) for p in gone if p in old and not any(i in table.t.kind for i in old[p].kind)]
    if missing:
        why = patch_table(table, [], missing, {**order, **{p: len(order) + k for k, (p, _) in enumerate(missing)}})
        if why:
            return why
    attached: set[tuple[str, str]] = set()  # (members that moved between types: their holders' rows move)
    keys = lookup_keys([*old.values(), *new.values()])
    outcomes = lookup_outcomes(table.t, *keys)  # (the lookups in every file's names these declarations enter)
    why = patch_table(table, list(old.items()), list(new.items()), order, attached)
    if why:
        return why
    tokens = moved_lookups(outcomes, lookup_outcomes(table.t, *keys))
    decls, bases = patch
    for p in changed:  # (what the base part held of it: the latest patch's, else its old declaration)
        decls[p] = (decls[p][0] if p in decls else old.get(p), new.get(p))
        if decls[p] == (None, None):
            del decls[p]
    for p in changed:
        names = moved_names(previous[p], here[p]) if p in previous and p in here else None
        if names is not None:  # (only top-level names of a Python file moved: only those are read in it;
            tokens |= names      # the lookups in every file's names are the outcomes' above)
            continue
        for f in (previous.get(p), here.get(p)):
            if f is not None:
                tokens |= change_tokens(f)
        if p.rsplit("/", 1)[-1] == "__init__.py":
            tokens |= _package_words(p)
    for q in tree:  # (an import naming such a module by a name it gained or lost reads its words)
        tokens |= change_tokens(here[q])
        if q.rsplit("/", 1)[-1] == "__init__.py":
            tokens |= _package_words(q)
    for holder, member in attached:  # (a type that gained or lost a member: the member's name, as a
        kind = holder.split("#", 1)[1]   # member lookup records it, and the type's, whole and last part;
        short = member.split("#", 1)[1].rsplit(".", 1)[-1]  # a lookup by its name alone, which reads its owner)
        tokens.update((short, "*r:" + short, kind, kind.rsplit(".", 1)[-1]))
    reads = kept_reads if kept_reads is not None else read_sets.merged(*recorded)  # type: ignore[misc]
    only = {p for p, seen in reads.items() if p in here and not tokens.isdisjoint(seen)}
    # (a type's file holds its `contains` edges to the members attached to it)
    only.update(p for p in (holder.split("#", 1)[0] for holder, _ in attached) if p in here)
    only.update(p for p in changed if p in here)
    only.update(tree)
    only.update(p for p in reread if p in here)
    only.update(p for p in also if p in here)
    only.update(f.path for f in facts if f.path not in reads and _code(f))  # (no record: resolved)

    def readers(paths: set[str]) -> list[str]:
        moved = {"\0" + p for p in paths}
        return [p for p, seen in reads.items() if not moved.isdisjoint(seen)]

    g = symbol_graph(facts, index, only=frozenset(only), table=table, fork=fork, rebase=readers)
    made = sorted(only | set(g.reads))
    # the bases of the types of the files resolved (none kept of a type no longer there)
    mine = {*g.reads, *gone}
    bases = {tid: held for tid, held in bases.items() if tid.split("#", 1)[0] not in mine}
    bases.update(g.bases_of)
    return Again(g, made, changed, gone, (decls, bases), reads)
