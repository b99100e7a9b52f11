"""The symbol graph (design §5b): every definition the extractors found becomes a symbol,
and the call sites, base classes and signature types between them become edges.

A pure phase: Phase 1's facts and the index in, rows out (nothing reads the disk). It runs
over every file's facts on every build, reused or read again, so a selective rebuild yields
the same symbol graph as a full one by construction.

Symbols: one per qualified name and file, id ``path#qualified`` (overloads and
redefinitions are one symbol: in Python the last definition, elsewhere the first), and one
``module`` symbol per code file (id ``path#``) that holds what is defined at its top level
and the calls made there.

Edges (``relation``):

* ``contains`` – module → top-level symbol, type → member (κ 1);
* ``calls`` – the innermost function, method, type or module around a call site → the
  callee, one edge per (caller, callee) with the call sites' lines;
* ``inherits`` / ``implements`` – a type → a base it names;
* ``references`` – a function → a type its signature names.

Each resolved name carries how it was resolved and the confidence that follows from it:

==================  =====  ===============================================================
resolution          κ      the name was …
==================  =====  ===============================================================
same_scope          0.95   defined in the caller's file or class (``self.f``, ``this.f``)
imported            0.9    imported into the file (``from m import f``, ``pkg.F``, ``C.m``)
typed               0.85   a member of the type its receiver was declared with or built from
                           (``s = Session(); s.send()``, ``def f(s: Session)``, ``var s Session``)
inherited           0.85   a member of a base class of the caller's class
same_package        0.85   defined once in the caller's directory (a Go or Java package)
receiver            0.8    a member of the one class named like its receiver (``session.send``)
unique              0.7    defined once in the repository (a bare call)
unique_member       0.5    the one method of that name in the repository (``x.f``, x unknown)
ambiguous           0.5/n  one of n ≤ ``MAX_CANDIDATES`` definitions (an edge to each)
==================  =====  ===============================================================

>>> from oracl.core.records import FileFacts
>>> f = FileFacts("m.py", "a", "c", 1, 0, 0, "ok", language="python",
...               symbols=(("f", "function", 1, 2), ("g", "function", 3, 4)),
...               symbol_details=(("f", "def f()", ""), ("g", "def g()", "")), calls=(("f", 4),))
>>> g = symbol_graph([f], IndexView.build({"m.py": f}))
>>> [(e["source"], e["target"], e["relation"], e["resolution"]) for e in g.edges if e["relation"] == "calls"]
[('m.py#g', 'm.py#f', 'calls', 'same_scope')]
"""

from __future__ import annotations

import bisect
import hashlib
import marshal
import re
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from oracl.builder.extractors.code import CODE_LANGUAGES
from oracl.builder.extractors.providers import FAMILY, ecosystems_of
from oracl.builder.extractors.resolve import IndexView
from oracl.core.records import FileFacts

CONFIDENCE = {"same_scope": 0.95, "imported": 0.9, "typed": 0.85, "inherited": 0.85, "same_package": 0.85, "receiver": 0.8,
              "unique": 0.7, "unique_member": 0.5, "ambiguous": 0.5}
MAX_CANDIDATES = 5          # a name defined more often than this is not linked at all
MAX_LINES = 64              # call-site lines kept per (caller, callee): a test module calling parse() 100 times
MAX_BASE_DEPTH = 4          # base classes searched for an inherited member
FORK_MIN_CALLS = 50_000     # call sites to resolve before half of them go to a second process
GUESSES = frozenset({"receiver", "unique_member", "ambiguous"})
SELF = frozenset({"self", "this", "$this", "cls", "Self", "@"})
CALLABLE = frozenset({"function", "method", "async_function", "class", "struct", "record", "object", "macro"})
FREE_CALLABLE = CALLABLE - {"method"}
FUNCTION_KINDS = frozenset({"function", "method", "async_function"})
TYPE_ONLY = frozenset({"interface", "type"})  # TypeScript declarations that name a type and no value
TYPE_KINDS = frozenset({"class", "interface", "struct", "enum", "trait", "record", "object", "protocol", "type"})
SCOPES = frozenset({"function", "method", "async_function", *TYPE_KINDS})
IMPLICIT_THIS = frozenset({"java", "kotlin", "scala", "csharp", "cpp", "ruby", "swift"})  # `f()` may be `this.f()`
RELATIONS = ("calls", "contains", "implements", "inherits", "references")
_WORD = re.compile(r"[A-Za-z_]\w*")


@dataclass(slots=True)
class SymbolGraph:
    nodes: list[dict[str, Any]] = field(default_factory=list)
    edges: list[dict[str, Any]] = field(default_factory=list)
    unresolved: int = 0      # call sites naming nothing defined here (a library, a builtin)
    dropped: int = 0         # call sites naming more than MAX_CANDIDATES definitions
    # path → [call sites unresolved, too ambiguous] of that file's calls
    sites: dict[str, list[int]] = field(default_factory=dict)
    table: SymbolTable | None = None  # the resolver's tables this graph was made with
    # path → what resolving that file's names read (``_Resolver.reads``), for the files resolved
    reads: dict[str, frozenset[str]] = field(default_factory=dict)
    # (``rebase``) type id → its bases now, for the types of the files resolved
    bases_of: dict[str, list[str]] = field(default_factory=dict)

    def counts(self) -> dict[str, Any]:
        by_relation: dict[str, int] = defaultdict(int)
        for e in self.edges:
            by_relation[e["relation"]] += 1
        return {"symbols": len(self.nodes), "edges": len(self.edges),
                "edges_by_relation": dict(sorted(by_relation.items())),
                "calls_unresolved": self.unresolved, "calls_too_ambiguous": self.dropped}


def _module_name(f: FileFacts) -> str:
    stem = f.path.rsplit("/", 1)[-1]
    return stem.rsplit(".", 1)[0] if "." in stem[1:] else stem


def _exported(language: str, name: str, qualified: str, signature: str) -> bool:
    """Visible outside its file or package, as each language says it (a heuristic for
    JavaScript, whose exports are statements of their own)."""
    words = signature.split()
    if language == "python":
        return "_" not in qualified or not any(p.startswith("_") and not (p.startswith("__") and p.endswith("__"))
                       for p in qualified.split("."))
    if language == "go":
        return name[:1].isupper()
    if language == "rust":
        return signature.startswith("pub")
    if language in ("c", "cpp"):
        return "static" not in words[:3]
    if language in ("java", "kotlin", "scala", "csharp", "swift", "php"):
        return "private" not in words and "fileprivate" not in words and "internal" not in words[:2]
    if language in ("javascript", "typescript", "tsx"):
        return not name.startswith(("_", "#"))
    return True


class _Files:
    """Per-file tables the resolver looks names up in."""

    def __init__(self) -> None:
        self.top: dict[str, dict[str, list[str]]] = defaultdict(dict)     # path → short name → ids at top level
        self.members: dict[str, dict[str, str]] = {}                      # type id → member name → id
        self.types: dict[str, dict[str, str]] = defaultdict(dict)         # path → type name → id
        self.owner: dict[str, str] = {}                                   # symbol id → its type's id
        self.parent: dict[str, str] = {}                                  # symbol id → the symbol around it
        self.nested: dict[str, dict[str, str]] = {}                       # function id → name → nested def
        self.bases: dict[str, list[str]] = defaultdict(list)              # type id → base type ids
        self.by_short: dict[tuple[str, str], list[str]] = defaultdict(list)  # (family, name) → ids
        self.by_dir: dict[tuple[str, str], list[str]] = defaultdict(list)    # (dir, name) → top-level ids
        self.kind: dict[str, str] = {}
        self.path: dict[str, str] = {}
        self.span: dict[str, tuple[int, int]] = {}
        self.prototypes: set[str] = set()  # C/C++ declarations without a body (`int add(int, int);`)
        self.types_named: dict[tuple[str, str], list[str]] = defaultdict(list)  # (family, lower name) → type ids


_RET_ARROW = re.compile(r"\)\s*->\s*['\"]?\*?&?(?:mut\s+)?([A-Za-z_][\w.]*)")  # Python, Rust, Swift
_RET_COLON = re.compile(r"\)\s*:\s*([A-Za-z_$][\w.$]*)\s*(?:<[^()]*>)?\s*;?\s*(?:=>|=|\{|$)")  # TS, Kotlin, PHP, Scala
_RET_BEFORE = re.compile(r"([\w.$]+)\s*(?:<[^()]*>)?(?:\[\])?\s+([\w$]+)\s*[<(]")  # Java, C#, C, C++: `T name(`
# Go: `func (b *B) F() *T`, `F() (*T, error)`, `F() (c *T, r *E)`, `F() []*T` (what ranging over it yields)
_RET_GO = re.compile(r"\)\s*(?:\(\s*(?:[A-Za-z_]\w*\s+)?(?:\[\])?\*?([A-Za-z_][\w.]*)\s*(?:,[^()]*)?\)"
                     r"|(?:\[\])?\*?([A-Za-z_][\w.]*))\s*$")
# a lookup in the tables of every file's names (``by_short``, ``by_dir``) is read as a token of
# its own (``*m:name``: the methods of that name, ``*c:`` the free callables, ``*t:`` the types,
# ``*v:`` the files declaring it, ``*r:`` its ids and their owners; ``*d:dir\0name`` a
# directory's), which a change moves only where the lookup's outcome moved (``lookup_outcomes``);
# a bare ``name`` is a lookup in given files (each read as ``\0path``), which only a change of
# those files, or of an import's target, moves (``change_tokens``)
MAX_REEXPORTS = 4  # re-exports followed from a name's import to its definition (zod: index → classic → external → schemas)
_GO_RECEIVER = re.compile(r"func\s*\(\s*([A-Za-z_]\w*)\s")
_NOT_TYPES = frozenset({"void", "int", "long", "boolean", "bool", "string", "String", "number", "any", "unknown",
                        "None", "str", "float", "double", "char", "byte", "short", "Object", "object", "never",
                        "Promise", "Optional", "List", "Map", "Set", "T", "K", "V", "E", "R"})


def qualified_of(sid: str) -> str:
    """The qualified name a symbol id holds: ``path#X`` and ``path#X@function`` (a value
    sharing its name with a TypeScript type) are both X."""
    return sid.rpartition("#")[2].split("@", 1)[0]


def module_typed(f: FileFacts) -> list[tuple[str, str]]:
    """(variable, declared type) of ``f``'s variables declared outside its functions: what
    a file importing one can read of it (``current_app: FlaskProxy``)."""
    if not f.typed:
        return []
    funcs = sorted((s[2], s[3]) for s in f.symbols if s[1] in FUNCTION_KINDS)
    starts, reach, most = [a for a, _ in funcs], [], 0
    for _, b in funcs:  # the furthest line any function starting so far reaches
        most = max(most, b)
        reach.append(most)
    out = []
    for v, ty, ln in f.typed:
        i = bisect.bisect_right(starts, ln) - 1
        if not ty.endswith("()") and (i < 0 or reach[i] < ln):
            out.append((v, ty))
    return out


_ARROW_LANGUAGES = frozenset({"python", "rust", "swift"})
_COLON_LANGUAGES = frozenset({"typescript", "tsx", "javascript", "kotlin", "php", "scala"})
_BEFORE_LANGUAGES = frozenset({"java", "csharp", "c", "cpp"})


def return_type(language: str, name: str, signature: str) -> str:
    """The type a callable's signature says it returns, as written (``this``/``Self`` as
    they are), or "" when it says none a chain could go on through."""
    if language in _ARROW_LANGUAGES:
        m = _RET_ARROW.search(signature) if "->" in signature else None
    elif language in _COLON_LANGUAGES:
        m = _RET_COLON.search(signature) if ":" in signature else None
    elif language == "go":
        m = _RET_GO.search(signature) if ")" in signature else None
    elif language in _BEFORE_LANGUAGES:
        m = _RET_BEFORE.search(signature)
        m = m if m is not None and m.group(2) == name else None
    else:
        return ""
    if m is None:
        return ""
    ret = (m.group(1) or m.group(m.lastindex or 1)).rsplit(".", 1)[-1].strip("'\"")
    return "" if ret in _NOT_TYPES or ret in ("public", "private", "protected", "static", "final", "new") else ret


def interface(f: FileFacts) -> str:
    """What resolving *another* file's names may read of ``f`` (its symbols' names, kinds
    and qualified names, whether a C declaration is a prototype, the types its callables
    return, the declared types of its variables outside functions, its bases, imports and
    their renames, namespaces, manifest and language, whether it holds code), as a digest. Two versions
    of a file with the same interface differ only in rows that start in the file itself:
    its symbols' lines, signatures and docs, and the edges its own calls, bases and
    signatures make."""
    return hashlib.sha256(orjson.dumps(_interface_doc(f), option=orjson.OPT_SORT_KEYS)).hexdigest()


_SYMBOL_PARTS = frozenset({3, 4, 10})  # the parts of ``_interface_doc`` made of the symbols, one entry each


def _interface_doc(f: FileFacts) -> list[object]:
    """What ``interface`` digests, in its order (``_SYMBOL_PARTS``: those said per symbol)."""
    details = f.symbol_details if len(f.symbol_details) == len(f.symbols) else tuple((s[0], "", "") for s in f.symbols)
    return [f.path, f.language, f.language in CODE_LANGUAGES and bool(f.symbols or f.calls),
           [(s[0], s[1]) for s in f.symbols],
           [(d[0], f.language in ("c", "cpp") and d[1].endswith(";")) for d in details],
           f.bases and [b[:3] for b in f.bases], [i[:3] for i in f.imports], f.namespaces, f.manifest,
           [list(r) for r in f.renames],  # a re-export's rename is read by the files importing through it
           [return_type(f.language, d[0].rsplit(".", 1)[-1], d[1]) for s, d in zip(f.symbols, details, strict=False)
            if s[1] in CALLABLE],  # a call chain goes on through what a method returns
           module_typed(f)]  # an importer's calls on such a variable are resolved by its type


def _top_level_apart(f: FileFacts) -> tuple[dict[str, list[tuple[object, ...]]], list[tuple[object, ...]], list[object]]:
    """``interface(f)``'s parts, the top-level names that are not types apart: (each such
    name → its entries, every other symbol's entry, the rest of the interface)."""
    details = f.symbol_details if len(f.symbol_details) == len(f.symbols) else tuple((s[0], "", "") for s in f.symbols)
    top: dict[str, list[tuple[object, ...]]] = {}
    rest: list[tuple[object, ...]] = []
    for s, d in zip(f.symbols, details, strict=True):
        entry = (s[1], d[0], f.language in ("c", "cpp") and d[1].endswith(";"),
                 return_type(f.language, d[0].rsplit(".", 1)[-1], d[1]) if s[1] in CALLABLE else "")
        if "." not in s[0] and "." not in d[0] and s[1] not in TYPE_KINDS:
            top.setdefault(s[0], []).append(entry)
        else:
            rest.append((s[0], *entry))
    other = [part for i, part in enumerate(_interface_doc(f)) if i not in _SYMBOL_PARTS]
    return top, rest, other


def moved_names(old: FileFacts, new: FileFacts) -> set[str] | None:
    """When two versions of one Python file differ in their ``interface`` only in top-level
    names that are not types (a function added, removed, or with another kind or return
    type), those names: a file's resolution can move with such a change only
    if it looked one of them up, and every lookup reads the name it looks up (``call``,
    ``_top``, ``type_name``: ``_Resolver.reads``) — neither the file's name nor its
    directory's words matter (it neither came nor went), nor its other names. None when
    anything else moved (``change_tokens`` of both versions then applies)."""
    if old.path != new.path or old.language != "python" or new.language != "python":
        return None
    a, b = _top_level_apart(old), _top_level_apart(new)
    if a[1] != b[1] or a[2] != b[2]:
        return None
    return {n for n in a[0].keys() | b[0].keys() if a[0].get(n) != b[0].get(n)}


@dataclass(slots=True)
class SymbolTable:
    """What every file's names give the resolver, kept by a long-lived builder (``oracl
    watch``) between builds: the tables after the declarations, the members attached to
    types declared elsewhere, and the bases. While no file is added or removed and every
    changed file keeps its ``interface``, the next build's tables are these with the changed
    files' spans moved (``symbol_graph(table=…)``): the other files' names are not read again."""

    t: _Files
    attached: list[tuple[str, str]]  # (type id, member id): a member declared outside its type


_TABLE_FORMAT = 1
_DEFAULTS = {"top": dict, "types": dict, "bases": list, "by_short": list, "by_dir": list, "types_named": list}


def encode_table(table: SymbolTable) -> bytes:
    """``table`` as bytes a later build reads back with ``decode_table`` (marshal: plain
    dicts, lists, tuples, strings and numbers; nothing in it runs when it is read). The
    symbols' lines (``span``) are left out: a kept table serves only builds that declare
    again every file whose calls they resolve, and a caller's lines are the only ones the
    resolver reads."""
    fields = {k: dict(v) if isinstance(v, dict) else v for k, v in vars(table.t).items()}
    fields["span"] = {}
    return marshal.dumps((_TABLE_FORMAT, fields, table.attached), 4)


def decode_table(blob: bytes) -> SymbolTable | None:
    """The tables ``encode_table`` wrote, or None when ``blob`` is not such a record."""
    try:
        version, fields, attached = marshal.loads(blob)
    except (ValueError, TypeError, EOFError):
        return None
    blank = vars(_Files())
    if version != _TABLE_FORMAT or not isinstance(fields, dict) or set(fields) != set(blank) \
            or not isinstance(attached, list):
        return None
    t = _Files()
    for name, value in fields.items():
        if type(value) is not (dict if isinstance(blank[name], dict) else set):
            return None
        setattr(t, name, defaultdict(_DEFAULTS[name], value) if name in _DEFAULTS else value)
    return SymbolTable(t, attached)


Declaration = _Files  # one file's entries in tables of their own (``declared``), as the patches hold them


def declared(f: FileFacts) -> _Files:
    """The entries ``_declare`` makes of one file, in tables of their own."""
    scratch = _Files()
    _declare(scratch, SymbolGraph(), f, False, {}, {}, defaultdict(list))
    return scratch


def encode_declared(decls: dict[str, tuple[_Files | None, _Files | None]], bases: dict[str, list[str]]) -> bytes:
    """A patch of the name tables (``name_tables``) as bytes: per file, its declaration
    in the tables patched (None: it was not there) and its declaration now (None: gone),
    and the bases of the types of the files resolved again since (marshal, as
    ``encode_table``; the symbols' lines left out)."""
    def plain(x: _Files | None) -> dict[str, Any] | None:
        if x is None:
            return None
        fields = {k: dict(v) if isinstance(v, dict) else v for k, v in vars(x).items()}
        fields["span"] = {}
        return fields

    return marshal.dumps((_TABLE_FORMAT, {p: (plain(a), plain(b)) for p, (a, b) in sorted(decls.items())},
                          dict(sorted(bases.items()))), 4)


def decode_declared(blob: bytes) -> tuple[dict[str, tuple[_Files | None, _Files | None]], dict[str, list[str]]] | None:
    """What ``encode_declared`` wrote, or None when ``blob`` is not such a record."""
    try:
        version, decls, bases = marshal.loads(blob)
    except (ValueError, TypeError, EOFError):
        return None
    if version != _TABLE_FORMAT or not isinstance(decls, dict) or not isinstance(bases, dict):
        return None
    blank = vars(_Files())

    def files(fields: Any) -> _Files | None:
        if fields is None:
            return None
        if not isinstance(fields, dict) or set(fields) != set(blank):
            raise ValueError("not a declaration")
        x = _Files()
        for name, value in fields.items():
            setattr(x, name, defaultdict(_DEFAULTS[name], value) if name in _DEFAULTS else value)
        return x

    try:
        return {p: (files(a), files(b)) for p, (a, b) in decls.items()}, bases
    except (ValueError, TypeError):
        return None


_LISTS = ("by_short", "by_dir", "types_named")  # tables whose lists hold ids of many files, in the files' order
_BY_ID = ("kind", "path", "span", "owner", "parent", "nested", "members")


# each kept table's keys of members declared outside their type, by directory: a superset
# (a key gone from ``by_dir`` stays here until the table is made again), kept beside the
# table by ``patch_table`` so that attaching a few directories' members again does not
# walk every ``by_dir`` key (~45 ms a define at 20k files)
_DOTTED: weakref.WeakKeyDictionary[_Files, dict[str, set[tuple[str, str]]]] = weakref.WeakKeyDictionary()


def _dotted_keys(t: _Files) -> dict[str, set[tuple[str, str]]]:
    held = _DOTTED.get(t)
    if held is None:
        held = {}
        for key in t.by_dir:
            if "." in key[1]:
                held.setdefault(key[0], set()).add(key)
        _DOTTED[t] = held
    return held


def _attach(t: _Files, dirs: set[str] | None) -> list[tuple[str, str]]:
    """Members declared outside their type (Go methods, Rust impls, C++ out-of-line
    definitions) attached to the one type of that name in their directory (``dirs``: those
    directories' only, found by ``_dotted_keys``; None: every one): entered in the type's
    members (after what is declared inside it) and as their owner. The (type id, member
    id) pairs attached."""
    attached: list[tuple[str, str]] = []
    if dirs is None:
        items = list(t.by_dir.items())
    else:
        held = _dotted_keys(t)
        items = [(k, t.by_dir[k]) for d in sorted(dirs) for k in sorted(held.get(d, ())) if k in t.by_dir]
    for (directory, dotted), ids in items:
        if "." not in dotted or (dirs is not None and directory not in dirs):
            continue
        type_name, member = dotted.split(".", 1)
        owners = [i for i in t.by_dir.get((directory, type_name), ()) if t.kind.get(i) in TYPE_KINDS]
        if len(owners) == 1:
            for sid in ids:
                t.members.setdefault(owners[0], {}).setdefault(member, sid)
                t.owner[sid] = owners[0]
                attached.append((owners[0], sid))
    return attached


def _detach(t: _Files, pairs: list[tuple[str, str]]) -> None:
    """Undo ``_attach`` of ``pairs``: each member out of its type's members (where it is the
    one entered under its name) and its owner; a type left with no member loses its entry
    (a whole pass makes one only when something is entered)."""
    for holder, sid in pairs:
        held = t.members.get(holder)
        if held is not None:
            for name in [k for k, v in held.items() if v == sid]:
                del held[name]
            if not held:
                del t.members[holder]
        if t.owner.get(sid) == holder:
            del t.owner[sid]


def _picked(t: _Files, ids: list[str], how: str) -> list[Hit]:
    """The hits of candidates ``ids`` found ``how``: one, or each as ambiguous, or none when
    there are more than ``MAX_CANDIDATES`` (a C prototype and its definition are one)."""
    if not ids:
        return []
    if len(ids) > 1 and any(i in t.prototypes for i in ids):
        ids = [i for i in ids if i not in t.prototypes] or ids
    if len(ids) == 1:
        return [(ids[0], how, 1)]
    return [(i, "ambiguous", len(ids)) for i in ids] if len(ids) <= MAX_CANDIDATES else []


def lookup_keys(decls: Iterable[_Files]) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """The (family, name) and (directory, name) keys the declarations ``decls`` enter in
    the tables of every file's names."""
    names: set[tuple[str, str]] = set()
    dirs: set[tuple[str, str]] = set()
    for x in decls:
        names.update(x.by_short)
        dirs.update(x.by_dir)
    return names, dirs


def lookup_outcomes(t: _Files, names: Iterable[tuple[str, str]], dirs: Iterable[tuple[str, str]]
                    ) -> dict[str, list[Any]]:
    """What each lookup in the tables of every file's names gives for the keys ``names``
    ((family, name)) and ``dirs`` ((directory, name)), by the token its readers record
    (``*m:name``…). A change moves the readers of a token only where this differs before and
    after the tables are patched: ``x.evalf()`` among 40 methods named ``evalf`` links none
    (more than ``MAX_CANDIDATES``), and so does it among 41 or 39."""
    out: dict[str, list[Any]] = defaultdict(list)
    for fam, name in sorted(names):
        ids = t.by_short.get((fam, name), ())
        methods = [i for i in ids if t.kind[i] == "method"]
        out["*m:" + name].append((fam, tuple(methods) if len(methods) <= MAX_CANDIDATES else None))
        out["*c:" + name].append((fam, _picked(t, [i for i in ids if t.kind[i] in FREE_CALLABLE], "unique")))
        out["*t:" + name].append((fam, _picked(t, [i for i in ids if t.kind[i] in TYPE_KINDS], "unique")))
        files = sorted({t.path[i] for i in ids})
        out["*v:" + name].append((fam, tuple(files) if len(files) <= MAX_CANDIDATES else None))
        out["*r:" + name].append((fam, tuple((i, t.owner.get(i)) for i in ids)))
    for d, name in sorted(dirs):
        out[f"*d:{d}\0{name}"].append(tuple((i, t.kind[i]) for i in t.by_dir.get((d, name), ())))
    return out


def moved_lookups(before: dict[str, list[Any]], after: dict[str, list[Any]]) -> set[str]:
    """The tokens whose lookups ``lookup_outcomes`` found to give another outcome."""
    return {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}


def patch_table(table: SymbolTable, gone: list[tuple[str, _Files]], came: list[tuple[str, _Files]],
                order: dict[str, int], moved: set[tuple[str, str]] | None = None) -> str:
    """Take out of ``table`` the entries of the declarations ``gone`` (path, what
    ``declared`` gave of the file the tables were made with) and enter those of ``came``,
    each id at the place a whole declaration pass in ``order`` (path → position) would give
    it: the tables are then the ones ``symbol_graph`` makes of the new facts, but for the
    bases (made again by ``symbol_graph(rebase=…)``) and the spans. "" when patched; else
    why they cannot be (nothing changed then). Members declared outside their type in the
    changed files' directories are attached again as a whole pass attaches them (which type
    a member attaches to is read across its directory); ``moved`` (when given) gets the
    (type id, member id) pairs attached before or after but not both."""
    t = table.t
    dirs = {p.rsplit("/", 1)[0] if "/" in p else "" for p, _ in (*gone, *came)}
    was = [(h, m) for h, m in table.attached if _dir_of(t.path.get(m, ""), m) in dirs]
    _detach(t, was)
    back = {i for _, x in came for i in x.kind}  # (ids declared again keep their bases until made again)
    for path, x in gone:
        t.top.pop(path, None)
        t.types.pop(path, None)
        for name in _BY_ID:
            table_of: dict[str, Any] = getattr(t, name)
            for i in x.kind:
                table_of.pop(i, None)
        for i in x.kind:
            if i not in back:
                t.bases.pop(i, None)
        t.prototypes.difference_update(x.prototypes)
        for name in _LISTS:
            table_of = getattr(t, name)
            for key, ids in getattr(x, name).items():
                left = [i for i in table_of.get(key, ()) if i not in ids]
                if left:
                    table_of[key] = left
                else:
                    table_of.pop(key, None)
    dotted = _dotted_keys(t)
    for path, x in came:
        for key in x.by_dir:
            if "." in key[1]:
                dotted.setdefault(key[0], set()).add(key)
        if path in x.top:
            t.top[path] = dict(x.top[path])
        if path in x.types:
            t.types[path] = dict(x.types[path])
        for name in _BY_ID:
            getattr(t, name).update(getattr(x, name))
        t.prototypes.update(x.prototypes)
        at = order[path]
        for name in _LISTS:
            table_of = getattr(t, name)
            for key, ids in getattr(x, name).items():
                held = table_of[key]
                k = 0
                while k < len(held) and order.get(t.path[held[k]], -1) < at:
                    k += 1
                held[k:k] = list(ids)
    now = _attach(t, dirs)
    if was or now:
        gone_pairs = set(was)
        table.attached = [pair for pair in table.attached if pair not in gone_pairs] + now
        if moved is not None:
            moved.update(set(was) ^ set(now))
    return ""


def _dir_of(path: str, sid: str) -> str:
    """The directory of a symbol's file (its path, else the part of its id before ``#``)."""
    path = path or sid.split("#", 1)[0]
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _declare(t: _Files, g: SymbolGraph, f: FileFacts, own: bool, spans: dict[str, list[tuple[int, int, str]]],
             module_id: dict[str, str], rows_of: dict[str, list[dict[str, Any]]]) -> None:
    """One code file's symbols entered in the resolver's tables ``t`` (its scopes in
    ``spans``); with ``own``, its symbol rows and ``contains`` edges made in ``g`` too."""
    fam = FAMILY.get(f.language, f.language)
    directory = f.path.rsplit("/", 1)[0] if "/" in f.path else ""
    mid = f"{f.path}#"
    module_id[f.path] = mid
    if own:
        g.nodes.append({"id": mid, "name": _module_name(f), "qualified": f.path, "kind": "module",
                        "language": f.language, "path": f.path, "start": 1, "end": max(1, f.line_count),
                        "signature": "", "doc": "", "exported": True})
    t.kind[mid], t.path[mid] = "module", f.path
    scope_rows: list[tuple[int, int, str]] = []
    by_qualified: dict[str, str] = {}
    details = f.symbol_details if len(f.symbol_details) == len(f.symbols) else \
        tuple((s[0], "", "") for s in f.symbols)
    # one symbol per qualified name and file: overloads, a property's setter, a redefinition.
    # Python keeps the last definition (the one the name is bound to at run time), the
    # others the first; the other definitions' lines still belong to it.
    # TypeScript's declaration merging: `interface X` and `function X`/`const X = …` are two
    # symbols (a type and a value), the value's id marked with its kind (`…#X@function`)
    merging = f.language in ("typescript", "tsx")
    rep: dict[tuple[str, bool], int] = {}
    for i, (declared, d) in enumerate(zip(f.symbols, details, strict=True)):
        rkey = (d[0], merging and declared[1] not in TYPE_ONLY)
        if f.language == "python" or rkey not in rep:
            rep[rkey] = i
    others: list[tuple[int, int, str]] = []
    for i, ((name, kind, start, end), (qualified, signature, doc)) in enumerate(zip(f.symbols, details, strict=True)):
        value = merging and kind not in TYPE_ONLY
        if rep[(qualified, value)] != i:
            others.append((start, end, qualified))
            continue
        short = qualified.rsplit(".", 1)[-1] or name
        sid = f"{f.path}#{qualified}@{kind}" if value and (qualified, False) in rep else f"{f.path}#{qualified}"
        t.kind[sid], t.path[sid], t.span[sid] = kind, f.path, (start, end)
        if f.language in ("c", "cpp") and signature.endswith(";"):
            t.prototypes.add(sid)
        if own:  # the other files' rows are never made: only their names are known
            row = {"id": sid, "name": short, "qualified": qualified, "kind": kind,
                   "language": f.language, "path": f.path, "start": start, "end": end,
                   "signature": signature, "doc": doc,
                   "exported": _exported(f.language, short, qualified, signature)}
            g.nodes.append(row)
            rows_of[f.path].append(row)
        parent_q = qualified.rsplit(".", 1)[0] if "." in qualified else ""
        parent = by_qualified.get(parent_q) if parent_q else None
        by_qualified.setdefault(qualified, sid)
        if parent is not None:
            if own:
                _edge(g, parent, sid, "contains", 1.0, "defined", 1, start)
            t.parent[sid] = parent
            if t.kind.get(parent) in TYPE_KINDS:
                t.members.setdefault(parent, {}).setdefault(short, sid)
                t.owner[sid] = parent
            else:
                t.nested.setdefault(parent, {}).setdefault(short, sid)
        elif not parent_q:
            if own:
                _edge(g, mid, sid, "contains", 1.0, "defined", 1, start)
            t.top[f.path].setdefault(short, []).append(sid)
            t.by_dir[(directory, short)].append(sid)
        else:  # a member of a type declared elsewhere (Go receivers, Rust impls, C++ out-of-line)
            if own:
                _edge(g, mid, sid, "contains", 1.0, "defined", 1, start)
            t.by_dir[(directory, parent_q.rsplit(".", 1)[-1] + "." + short)].append(sid)
        if kind in TYPE_KINDS:
            t.types[f.path].setdefault(short, sid)
            t.types_named[(fam, short.lower())].append(sid)
        t.by_short[(fam, short)].append(sid)
        if kind in SCOPES:
            scope_rows.append((start, end, sid))
    scope_rows.extend((a, b, by_qualified[q]) for a, b, q in others
                      if t.kind.get(by_qualified[q]) in SCOPES)
    spans[f.path] = scope_rows


def symbol_graph(facts: list[FileFacts], idx: IndexView, only: frozenset[str] | None = None,
                 table: SymbolTable | None = None,
                 fork: Callable[[Callable[[], Any]], Callable[[], Any]] | None = None,
                 rebase: Callable[[set[str]], Iterable[str]] | None = None) -> SymbolGraph:
    """The symbols of every code file and the edges between them. With ``only``, the
    rows that start in those files: every file's names are still known to the resolver,
    but only these files' symbols, and the edges whose source is one of their symbols,
    are made (what a selective rebuild needs when no other file's resolution can have
    changed: see ``interface``). ``table`` (with ``only``): the previous build's tables,
    valid for these facts but for the spans of the files in ``only``; they are updated in
    place and only those files are declared again. ``rebase`` (with ``table``): the
    tables' bases of the ``only`` files' types are made again too (the tables were
    patched for files that came, went or changed their interface: ``patch_table``), and
    ``rebase(paths)`` names the files that read the bases of the files ``paths``, whose
    bases moved: they are resolved too, until no file's bases move. The graph's
    ``table`` is the tables this build leaves, its ``reads`` what resolving each file
    read. ``fork``: starts a function elsewhere (a forked child) and returns what waits
    for its value; with many call sites to resolve, half of them are resolved there (the
    graph is the same)."""
    g = SymbolGraph()
    mine_set = set(only) if only is not None else None

    def mine(path: str) -> bool:
        return mine_set is None or path in mine_set

    spans: dict[str, list[tuple[int, int, str]]] = {}   # path → (start, end, id) of scopes
    module_id: dict[str, str] = {}
    rows_of: dict[str, list[dict[str, Any]]] = defaultdict(list)
    def is_code(f: FileFacts) -> bool:
        return f.language in CODE_LANGUAGES and bool(f.symbols or f.calls)

    # (with kept tables only the files ``only`` names are declared and resolved: no other
    # file's symbols are read, nor decoded from its shard)
    def code_of(paths: set[str]) -> list[FileFacts]:  # (the code files among paths, in the facts' order)
        if len(idx.facts) == len(facts):  # (the facts are the index's, in sorted order: ``walk``)
            return [f for f in (idx.facts.get(p) for p in sorted(paths)) if f is not None and is_code(f)]
        return [f for f in facts if f.path in paths and is_code(f)]

    code = [f for f in facts if is_code(f)] if table is None else code_of(mine_set)  # type: ignore[arg-type]
    own_ids: dict[str, list[str]] = {}

    def take(files: Iterable[FileFacts]) -> None:  # declared on their own; only their spans are new to the tables
        assert table is not None
        for f in files:
            scratch = _Files()
            _declare(scratch, g, f, True, spans, module_id, rows_of)
            table.t.span.update(scratch.span)
            own_ids[f.path] = list(scratch.kind)

    if table is not None:
        assert only is not None, "a kept table serves a build of some files' rows"
        t = table.t
        take(f for f in code if mine(f.path))
        attached = table.attached
    else:
        t = _Files()
        for f in code:
            _declare(t, g, f, mine(f.path), spans, module_id, rows_of)
        attached = _attach(t, None)
    g.table = SymbolTable(t, attached)
    r = _Resolver(t, idx)

    def bases(f: FileFacts, write: bool) -> None:
        r.file(f)
        for owner_q, written, relation, line in f.bases:
            src = r.type_id(f.path, owner_q)
            if src is None:
                continue
            for target, how, n in r.type_name(f, written):
                if target != src:
                    if write:
                        t.bases[src].append(target)
                    if mine(f.path):
                        _edge(g, src, target, relation, _kappa(how, n), how, n, line)

    if rebase is not None:
        assert table is not None and mine_set is not None
        by_path = idx.facts if len(idx.facts) == len(facts) else {f.path: f for f in facts}
        pending = list(code)
        while pending:
            moved: set[str] = set()
            for f in pending:
                before = {i: t.bases.pop(i) for i in own_ids[f.path] if i in t.bases}
                if f.bases:
                    bases(f, True)
                if before != {i: t.bases[i] for i in own_ids[f.path] if i in t.bases}:
                    moved.add(f.path)
            more = sorted(p for p in (rebase(moved) if moved else ())
                          if p in by_path and p not in mine_set and is_code(by_path[p]))
            mine_set.update(more)
            pending = [by_path[p] for p in more]
            take(pending)
        code = code_of(mine_set)  # (in the facts' order, as before)
    else:
        for f in code:
            if f.bases and (table is None or mine(f.path)):  # reading a file's imports is this pass's cost:
                bases(f, table is None)                      # only files that name a base pay it
                # (a kept table's bases are whole: type_name never reads them)
    for holder, sid in attached:
        if mine(t.path[holder]):
            _edge(g, holder, sid, "contains", 1.0, "defined", 1, 0)
    todo = [f for f in code if mine(f.path)]
    waiter = None
    if fork is not None and len(todo) > 1 and sum(len(f.calls) for f in todo) >= FORK_MIN_CALLS:
        # the second half of the calls resolved in a forked child on the other core (the
        # tables are the ones made above, shared copy-on-write); what it returns joins this
        # graph below: per file, in the same order (the edges are sorted afterwards)
        at = min(_half(todo), len(todo) - 1)
        theirs, todo = todo[at:], todo[:at]

        def other() -> tuple[list[dict[str, Any]], dict[str, list[int]], int, int, dict[str, set[str]]]:
            h = SymbolGraph()
            _resolve_calls(h, r, t, theirs, spans, module_id, rows_of)
            return h.edges, h.sites, h.unresolved, h.dropped, {f.path: r.reads.get(f.path, set()) for f in theirs}

        waiter = fork(other)
    _resolve_calls(g, r, t, todo, spans, module_id, rows_of)
    if waiter is not None:
        edges, sites, unresolved, dropped, reads = waiter()
        g.edges.extend(edges)
        g.sites.update(sites)
        g.unresolved += unresolved
        g.dropped += dropped
        r.reads.update(reads)
    g.reads = {f.path: frozenset(r.reads.get(f.path, ())) for f in code if mine(f.path)}
    if rebase is not None:
        g.bases_of = {i: list(t.bases.get(i, ())) for ids in own_ids.values() for i in ids if t.kind.get(i) in TYPE_KINDS}
    g.edges.sort(key=lambda e: (e["source"], e["target"], e["relation"]))
    g.nodes.sort(key=lambda n: n["id"])
    return g


def _half(files: list[FileFacts]) -> int:
    """Where ``files`` splits into two runs of about as many call sites each."""
    total = sum(len(f.calls) for f in files)
    seen = 0
    for i, f in enumerate(files):
        seen += len(f.calls)
        if 2 * seen >= total:
            return i + 1
    return len(files)


def _resolve_calls(g: SymbolGraph, r: _Resolver, t: _Files, files: list[FileFacts],
                   spans: dict[str, list[tuple[int, int, str]]], module_id: dict[str, str],
                   rows_of: dict[str, list[dict[str, Any]]]) -> None:
    """The ``calls`` edges of ``files``' call sites and the ``references`` edges of their
    signatures, into ``g`` (with each file's unresolved and too ambiguous sites)."""
    for f in files:
        r.file(f)
        missed = g.sites.setdefault(f.path, [0, 0])
        owners = r.owners = _owners(spans[f.path], f.line_count, module_id[f.path])
        sites: dict[tuple[str, str], list[int]] = {}
        meta: dict[tuple[str, str], tuple[str, int]] = {}
        for callee, line in f.calls:
            caller = owners[line] if 0 < line < len(owners) else module_id[f.path]
            hits = r.call(f, caller, callee, line)
            if hits is None:
                g.dropped += 1
                missed[1] += 1
                continue
            if not hits:
                g.unresolved += 1
                missed[0] += 1
                continue
            for target, how, n in hits:
                if target == caller and how in GUESSES:
                    continue  # recursion is a call, but not one guessed from a name alone (`loader.list_templates()`)
                key = (caller, target)
                sites.setdefault(key, []).append(line)
                meta.setdefault(key, (how, n))
        for (caller, target), lines in sites.items():
            how, n = meta[(caller, target)]
            e = _edge(g, caller, target, "calls", _kappa(how, n), how, n, lines[0])
            e["lines"] = sorted(set(lines))[:MAX_LINES]
        # types a signature names
        for sym in rows_of.get(f.path, ()):
            if sym["kind"] not in ("function", "method", "async_function") or not sym["signature"]:
                continue
            done: set[str] = set()
            owner = t.owner.get(sym["id"])
            for word in _WORD.findall(sym["signature"].split("(", 1)[-1] if "(" in sym["signature"] else ""):
                if word in done or word == sym["name"] or not word[:1].isupper():
                    continue
                done.add(word)
                for target, how, n in r.type_name(f, word):
                    if target != owner:  # a method naming its own type says nothing new
                        _edge(g, sym["id"], target, "references", _kappa(how, n), how, n, sym["start"])


def _kappa(how: str, n: int) -> float:
    """κ of a resolution, rounded to 9 places as the export keeps it (a few dozen distinct
    values: computed once each, not once per edge)."""
    k = _KAPPA.get((how, n))
    if k is None:
        k = _KAPPA[(how, n)] = round(CONFIDENCE[how] / n if how == "ambiguous" else CONFIDENCE[how], 9)
    return k


_KAPPA: dict[tuple[str, int], float] = {}


def _edge(g: SymbolGraph, source: str, target: str, relation: str, confidence: float, how: str, n: int,
          line: int) -> dict[str, Any]:
    """One edge row; ``confidence`` is κ as ``_kappa`` gives it (already rounded)."""
    e = {"source": source, "target": target, "relation": relation, "confidence": confidence,
         "resolution": how, "candidates": n, "lines": [line] if line else []}
    g.edges.append(e)
    return e


def _owners(scopes: list[tuple[int, int, str]], line_count: int, module: str) -> list[str]:
    """For each line of a file, the innermost function, method or type around it."""
    owners = [module] * (max(line_count, max((e for _, e, _ in scopes), default=0)) + 2)
    for start, end, sid in sorted(scopes, key=lambda s: (s[0], -s[1])):
        for i in range(start, min(end, len(owners) - 1) + 1):
            owners[i] = sid  # inner scopes start later and overwrite their outer scope's lines
    return owners


Hit = tuple[str, str, int]  # (target id, resolution, candidates)


class _Resolver:
    def __init__(self, t: _Files, idx: IndexView) -> None:
        self.t = t
        self.idx = idx
        self.f: FileFacts | None = None
        self.owners: list[str] = []  # the current file's innermost scope per line
        self.names: dict[str, list[str]] = {}     # imported name → files
        self.aliases: dict[str, list[str]] = {}   # module alias → files
        self.renamed: dict[str, str] = {}         # local name → the name it was imported as
        self.external: frozenset[str] = frozenset()  # names bound to a library's modules
        self._resolving: set[tuple[str, str, int]] = set()  # calls being typed now (a cycle stops)
        self._return_memo: dict[str, dict[str, str]] = {}     # path → qualified name → return type as written
        self._elsewhere_memo: dict[tuple[str, str], tuple[str | None, frozenset[str]]] = {}  # (family, name) → a typed module variable's type
        self._receiver_names: dict[str, dict[str, str]] = {}  # path → Go method → its receiver's name
        self._variable_memo: dict[tuple[str, str], tuple[str | None, frozenset[str]]] = {}  # (file, imported name) → its declared type
        self._imports: dict[str, _Imports] = {}
        self._receiver_memo: dict[tuple[str, str, str], tuple[list[Hit], frozenset[str]]] = {}
        self._methods_memo: dict[tuple[str, str], list[str]] = {}
        self._callable_memo: dict[tuple[str, str], list[str]] = {}
        self._reversed: list[tuple[str, str]] | None = None
        # what each file's resolution read (see ``read_tokens``): the names looked up, hit or
        # missed (and a token of its own for a lookup in the tables of every file's names:
        # ``*m:name``…, ``lookup_outcomes``), ``~name`` for a type looked up by the end of its
        # name, and ``\0path`` for a file whose entries, facts or imports were read
        self.reads: dict[str, set[str]] = {}
        self.rd: set[str] = set()
        self._import_tokens: dict[str, frozenset[str]] = {}

    def imports_of(self, path: str) -> _Imports:
        hit = self._imports.get(path)
        f = self.idx.facts.get(path)
        if hit is None:
            hit = self._imports[path] = _imports(f, self.idx) if f is not None else ({}, {}, {}, frozenset())
        words = self._import_tokens.get(path)
        if words is None:
            words = self._import_tokens[path] = import_tokens(f) if f is not None else frozenset()
        self.rd.add("\0" + path)
        self.rd |= words
        return hit

    def _recorded(self, memo: dict[Any, tuple[Any, frozenset[str]]], key: Any, compute: Callable[[], Any]) -> Any:
        """``compute()`` memoised under ``key`` with what it read, which a later caller
        (resolving another file) reads too."""
        hit = memo.get(key)
        if hit is not None:
            self.rd |= hit[1]
            return hit[0]
        outer, self.rd = self.rd, set()
        try:
            value = compute()
        finally:
            inner, self.rd = self.rd, outer
        outer |= inner
        memo[key] = (value, frozenset(inner))
        return value

    def file(self, f: FileFacts) -> None:
        if self.f is not None and self.f.path == f.path:
            return
        self.f = f
        self.rd = self.reads.setdefault(f.path, set())
        self.names, self.aliases, self.renamed, self.external = self.imports_of(f.path)
        self.typed: dict[str, list[tuple[int, str]]] = defaultdict(list)
        for var, vtype, line in f.typed:
            self.typed[var].append((line, vtype))
        if len(self._imports) > 4096:  # re-exports are looked up again, cheaply
            self._imports = {f.path: (self.names, self.aliases, self.renamed, self.external)}

    def type_id(self, path: str, qualified: str) -> str | None:
        sid = f"{path}#{qualified}"
        return sid if sid in self.t.kind else None

    def _family(self, f: FileFacts) -> str:
        return FAMILY.get(f.language, f.language)

    def _pick(self, ids: list[str], how: str) -> list[Hit]:
        return _picked(self.t, ids, how)

    def _top(self, paths: list[str], name: str, kinds: frozenset[str] | None = None, depth: int = 0,
             follow: bool = True) -> list[str]:
        """Top-level definitions of ``name`` in ``paths``, following re-exports (a package's
        ``__init__`` importing the name from a module, an ``index.js`` re-exporting it)."""
        out: list[str] = []
        self.rd.add(name)
        for p in dict.fromkeys(paths):
            self.rd.add("\0" + p)
            found = [i for i in self.t.top.get(p, {}).get(name, ()) if kinds is None or self.t.kind[i] in kinds]
            if len(found) > 1 and kinds is TYPE_KINDS:
                found = found[:1]  # TypeScript's `interface X` + `const X = make(…)`: one merged type (_member)
            if not found and follow and depth < MAX_REEXPORTS:
                names, _, renamed, _ = self.imports_of(p)  # a re-export may rename: `from .m import a as b`
                found = self._top(names.get(name, []), renamed.get(name, name), kinds, depth + 1)
                if not found and "*" in names:  # `export * from "./m"`: a barrel, every name of m
                    found = self._top(names["*"], name, kinds, depth + 1)
            out.extend(i for i in found if i not in out)
        return out

    def _member(self, type_id: str, name: str) -> tuple[str, int] | None:
        """A member of a type or of one of its bases (with the depth it was found at)."""
        # a type declared twice under one name in one file (TypeScript's declaration merging:
        # `interface ZodString` + `const ZodString = $constructor(…)`) is one type
        short = qualified_of(type_id)
        rd, path = self.rd, self.t.path
        rd.add(name)
        rd.add(short)
        frontier = [type_id, *(i for i in self.t.top.get(self.t.path.get(type_id, ""), {}).get(short, ())
                               if i != type_id and self.t.kind[i] in TYPE_KINDS)]
        seen = set(frontier)
        for depth in range(MAX_BASE_DEPTH + 1):
            nxt = []
            for tid in frontier:
                rd.add("\0" + path.get(tid, ""))
                hit = self.t.members.get(tid, {}).get(name)
                if hit is not None:
                    return hit, depth
                for b in self.t.bases.get(tid, ()):
                    if b not in seen:
                        seen.add(b)
                        nxt.append(b)
            frontier = nxt
            if not frontier:
                break
        return None

    def type_name(self, f: FileFacts, written: str) -> list[Hit]:
        """The type a name written in ``f`` refers to (``B``, ``m.B``, ``pkg::B``)."""
        parts = re.split(r"\.|::|\\", written)
        name, qual = parts[-1], parts[-2] if len(parts) > 1 else ""
        self.rd.add(name)
        local = self.t.types.get(f.path, {}).get(name)
        if local is not None and not qual:
            return [(local, "same_scope", 1)]
        files = self.aliases.get(qual, []) if qual else self.names.get(name, [])
        hits = self._top(files, name if qual else self.renamed.get(name, name), TYPE_KINDS) if files else []
        if hits:
            return self._pick(hits, "imported")
        directory = f.path.rsplit("/", 1)[0] if "/" in f.path else ""
        self.rd.add(f"*d:{directory}\0{name}")
        near = [i for i in self.t.by_dir.get((directory, name), ()) if self.t.kind[i] in TYPE_KINDS]
        if near:
            return self._pick(near, "same_package")
        self.rd.add("*t:" + name)
        ids = [i for i in self.t.by_short.get((self._family(f), name), ()) if self.t.kind[i] in TYPE_KINDS]
        return self._pick(ids, "unique")

    def _type_of(self, caller: str, var: str, line: int) -> str:
        """The type ``var`` was declared with or built from, as seen from a call at ``line``:
        in the caller (the latest before the line), else in its class (``self.x = X()``),
        else anywhere in the file."""
        entries = self.typed.get(var)
        if not entries:
            return ""
        t = self.t
        scope: str | None = caller
        while scope is not None:  # the caller, the functions around it, its class
            if scope in t.span:
                a, b = t.span[scope]
                inside = [(ln, ty) for ln, ty in entries if a <= ln <= b and (t.kind[scope] in TYPE_KINDS or ln <= line)]
                if inside:
                    return max(inside)[1]
            scope = t.parent.get(scope)
        # else a module-level declaration, else the one type the name is declared with
        # throughout the file (Go's `c *Command` in every method of command.go)
        owners = self.owners
        module = [(ln, ty) for ln, ty in entries
                  if not (0 < ln < len(owners) and t.kind.get(owners[ln]) in FUNCTION_KINDS)]
        before = [e for e in module if e[0] <= line]
        if before or module:
            return max(before)[1] if before else module[0][1]
        kinds = {ty for _, ty in entries}
        return kinds.pop() if len(kinds) == 1 else ""

    def _type_around(self, sid: str) -> str | None:
        """The type a symbol is (or is defined in), through nested functions."""
        scope: str | None = sid
        while scope is not None and self.t.kind.get(scope) not in TYPE_KINDS:
            scope = self.t.parent.get(scope)
        return scope

    def call(self, f: FileFacts, caller: str, callee: str, line: int = 0) -> list[Hit] | None:
        """The definitions a call site names: [] when none is defined here, None when too
        many are."""
        recv, _, name = callee.rpartition(".")
        t = self.t
        fam = self._family(f)
        self.rd.add(name)
        if recv.startswith("?~"):  # `new B().a().name()`: through what each step returns
            hit = self._through_chain(f, caller, recv[2:].split("~"), name, line)
            if hit:
                return hit
            recv = "?"
        if not recv:
            # the caller's own nested definitions, then the file, then what the file imports
            scope: str | None = caller
            while scope is not None:  # a function defined in the caller or around it
                own = t.nested.get(scope, {}).get(name)
                if own is not None and t.kind[own] in CALLABLE:
                    return [(own, "same_scope", 1)]
                scope = t.parent.get(scope)
            if f.language in IMPLICIT_THIS:
                around = self._type_around(caller)
                found = self._member(around, name) if around is not None else None
                if found is not None and t.kind[found[0]] in CALLABLE:
                    return [(found[0], "same_scope" if found[1] == 0 else "inherited", 1)]
            local = self._top([f.path], name, CALLABLE, follow=False)
            if local:
                return [(local[0], "same_scope", 1)]
            files = self.names.get(name)
            if files:
                hits = self._top(files, self.renamed.get(name, name), CALLABLE)
                if hits:
                    return self._pick(hits, "imported") or None
            directory = f.path.rsplit("/", 1)[0] if "/" in f.path else ""
            self.rd.add(f"*d:{directory}\0{name}")  # (the tables of every file's names: ``lookup_outcomes``)
            near = [i for i in t.by_dir.get((directory, name), ()) if t.kind[i] in CALLABLE and t.path[i] != f.path]
            if near:
                return self._pick(near, "same_package") or None
            self.rd.add("*c:" + name)
            key = (fam, name)
            if key not in self._callable_memo:
                self._callable_memo[key] = [i for i in t.by_short.get(key, ()) if t.kind[i] in FREE_CALLABLE]
            ids = self._callable_memo[key]
            if not ids:
                return []
            return self._pick(ids, "unique") or None
        cls = self._type_around(caller)
        if recv in SELF or recv == "super":
            if cls is not None:
                found = self._member(cls, name)
                if found is not None and not (recv == "super" and found[1] == 0):
                    return [(found[0], "same_scope" if found[1] == 0 else "inherited", 1)]
                if recv == "super":
                    for b in t.bases.get(cls, ()):
                        found = self._member(b, name)
                        if found is not None:
                            return [(found[0], "inherited", 1)]
                    return []  # the base is a library's (`super().parse_args()` on click's Group)
            return self._members_named(fam, name)
        if recv in self.external:
            return []  # `mock.patch()`, `np.array()`: a library's module, never a method found by its name
        if recv != "?":
            # a module or package: `mod.f()`, `pkg.F()`; but a name the file imports is that name
            # (`import {Ky} from "./core/Ky.js"`: `Ky.create()` is the class's, not the module's)
            files = self.aliases.get(recv) if recv not in self.names else None
            if files:
                hits = self._top(files, name, CALLABLE)
                if hits:
                    return self._pick(hits, "imported") or None
                return []
            declared = self._type_of(caller, recv, line)
            if not declared and recv in self.names:  # an imported variable of a declared type
                tid = self._imported_variable(recv)
                found = self._member(tid, name) if tid is not None else None
                if found is not None:
                    return [(found[0], "typed", 1)]
            if declared.endswith("()"):  # `x = f()`: what f returns, when its signature says
                tid = self._call_type(f, caller, declared[:-2], line)
                found = self._member(tid, name) if tid is not None else None
                if found is not None:
                    return [(found[0], "typed", 1)]
            elif declared:
                for tid, _how, _ in self.type_name(f, declared):
                    found = self._member(tid, name)
                    if found is not None:
                        return [(found[0], "typed", 1)]
                return []  # declared with a library's type (`runner = CliRunner()`), or one without the member
            if not declared and recv not in self.names:  # `core.$ZodCUID.init()`: a typed variable of another module
                tid = self._variable_elsewhere(fam, recv)
                found = self._member(tid, name) if tid is not None else None
                if found is not None:
                    return [(found[0], "typed", 1)]
            for tid, how, _ in self.type_name(f, recv) if recv[:1].isupper() else []:
                found = self._member(tid, name)  # a static call, a constructor: `Cls.make()`
                if found is not None:
                    return [(found[0], how if how != "ambiguous" else "unique", 1)]
            if cls is not None and f.language == "go" and recv == self._go_receiver(f, caller):
                found = self._member(cls, name)  # a Go method called on its receiver
                if found is not None:
                    return [(found[0], "same_scope" if found[1] == 0 else "inherited", 1)]
            typed = self._by_receiver(fam, recv, name)
            if typed:
                return typed
            if recv[:1].isupper() and recv[1:2].islower():
                return []  # `String::new()`, `Math.max()`: a type this repository does not define
        return self._members_named(fam, name)

    def _go_receiver(self, f: FileFacts, caller: str) -> str:
        """The receiver's name of the Go method ``caller`` (``c`` of ``func (c *Context) F()``),
        not a field of it (``c.Writer.Header()`` is the field's, not Context's)."""
        table = self._receiver_names.get(f.path)
        if table is None:
            table = self._receiver_names[f.path] = {
                d[0]: m.group(1) for d in f.symbol_details if (m := _GO_RECEIVER.match(d[1])) is not None}
        return table.get(caller.partition("#")[2], "")

    def _returns(self, sid: str) -> str:
        """What the signature of callable ``sid`` says it returns, as written: read from its
        file's facts when a chain first asks (most builds never ask for most symbols)."""
        path = self.t.path.get(sid, "")
        self.rd.add("\0" + path)
        table = self._return_memo.get(path)
        if table is None:
            f = self.idx.facts.get(path)
            table = self._return_memo[path] = {} if f is None or len(f.symbol_details) != len(f.symbols) else {
                d[0]: return_type(f.language, d[0].rsplit(".", 1)[-1], d[1])
                for s_, d in zip(f.symbols, f.symbol_details, strict=True) if s_[1] in CALLABLE}
        return table.get(qualified_of(sid), "")

    def _returned(self, sid: str) -> str | None:
        """The type a callable returns, resolved where it is declared (``this``/``Self``: its own)."""
        written = self._returns(sid)
        if not written:
            return None
        if written in ("this", "Self", "self", "static"):
            return self.t.owner.get(sid)
        return self._type_in(self.t.path[sid], written)

    def _type_in(self, path: str, written: str) -> str | None:
        """A type name as written in the file ``path`` (its imports, not the current file's)."""
        self.rd.add("\0" + path)
        facts = self.idx.facts.get(path)
        if facts is None:
            return None
        saved = (self.names, self.aliases, self.renamed, self.external)
        self.names, self.aliases, self.renamed, self.external = self.imports_of(path)
        try:
            hits = self.type_name(facts, written)
        finally:
            self.names, self.aliases, self.renamed, self.external = saved
        return hits[0][0] if len(hits) == 1 else None

    def _imported_variable(self, name: str) -> str | None:
        """The type of a module-level variable another file declares and this one imports
        (flask's ``current_app: FlaskProxy``), when one file declares it with one type."""
        key = (self.f.path if self.f is not None else "", name)  # (every call on it asks again)
        return self._recorded(self._variable_memo, key, lambda: self._imported_variable_type(name))

    def _variable_elsewhere(self, fam: str, name: str) -> str | None:
        """The declared type of the one module-level variable named ``name`` in this
        language family, where a definition of that name marks the file (TypeScript's
        ``export const $ZodCUID: core.$constructor<$ZodCUID> = …``, reached as
        ``core.$ZodCUID``): None when there is none or more than one."""
        def elsewhere() -> str | None:
            self.rd.add(name)
            self.rd.add("*v:" + name)
            files = {self.t.path[i] for i in self.t.by_short.get((fam, name), ())}
            return self._declared_in(sorted(files), name) if len(files) <= MAX_CANDIDATES else None

        return self._recorded(self._elsewhere_memo, (fam, name), elsewhere)

    def _imported_variable_type(self, name: str) -> str | None:
        return self._declared_in(self.names.get(name, ()), self.renamed.get(name, name))

    def _declared_in(self, paths: Iterable[str], name: str) -> str | None:
        """The one type the files ``paths`` declare their module-level variable ``name``
        with (each resolved where it is declared), None when they say none or several."""
        found = set()
        for path in paths:
            self.rd.add("\0" + path)
            facts = self.idx.facts.get(path)
            declared = {ty for var, ty in module_typed(facts) if var == name} if facts is not None else set()
            if len(declared) == 1:
                tid = self._type_in(path, declared.pop())
                if tid is not None:
                    found.add(tid)
        return found.pop() if len(found) == 1 else None

    def _call_type(self, f: FileFacts, caller: str, callee: str, line: int) -> str | None:
        """The type a call evaluates to: the class it constructs, or what the one callable it
        names returns. A call met again while being resolved (``x = x.next()``) is none."""
        key = (caller, callee, line)
        if key in self._resolving:
            return None
        self._resolving.add(key)
        try:
            hits = self.call(f, caller, callee, line)
        finally:
            self._resolving.discard(key)
        if not hits or len(hits) != 1 or hits[0][1] in ("ambiguous", "unique_member"):
            return None
        return hits[0][0] if self.t.kind.get(hits[0][0]) in TYPE_KINDS else self._returned(hits[0][0])

    def _through_chain(self, f: FileFacts, caller: str, steps: list[str], name: str, line: int) -> list[Hit]:
        """``name`` on the type a chain of calls ends with: ``new B`` is B; ``x~a`` is what
        ``x.a()`` returns (x a variable of a declared type, a class, a module); ``f()`` what f
        returns; each further step what that member returns. Typed, as a declared type is."""
        first, rest = steps[0], steps[1:]
        tid: str | None = None
        if first.startswith("new "):
            hits = self.type_name(f, first[4:])
            tid = hits[0][0] if len(hits) == 1 else None
        else:
            callee = first[:-2] if first.endswith("()") else f"{first}.{rest.pop(0)}" if rest else ""
            tid = self._call_type(f, caller, callee, line) if callee else None
        for step in rest:
            if tid is None:
                return []
            found = self._member(tid, step)
            tid = self._returned(found[0]) if found is not None else None
        if tid is None:
            return []
        found = self._member(tid, name)
        return [(found[0], "typed", 1)] if found is not None and self.t.kind[found[0]] in CALLABLE else []

    def _by_receiver(self, fam: str, recv: str, name: str) -> list[Hit]:
        """``session.send()``: the one type named like the receiver that has the member
        (itself or through a base), or the one object it was assigned on (``res.send = …``)."""
        if recv.startswith("__") and recv.endswith("__"):
            return []  # `self.__dict__.get()`: a dunder names no type of the repository
        low = recv.lower().strip("_$").replace("_", "")  # `path_router` names a PathRouter
        if len(low) < 3:
            return []
        def receiver() -> list[Hit]:
            found = set()
            for tid in self._types_like(fam, low):
                hit = self._member(tid, name)
                if hit is not None:
                    found.add(hit[0])
            return self._receiver_of(fam, low, name, found)

        out: list[Hit] = self._recorded(self._receiver_memo, (fam, low, name), receiver)
        return out

    def _types_like(self, fam: str, low: str) -> list[str]:
        """The types named ``low``, or (≥ 4 letters) whose name ends with it: a bisect over
        the reversed names, not a scan of every type."""
        self.rd.add("~" + low)
        if self._reversed is None:
            self._reversed = sorted((family, tname[::-1]) for family, tname in self.t.types_named)
        out = list(self.t.types_named.get((fam, low), ()))
        if len(low) >= 4:
            rev = low[::-1]
            i = bisect.bisect_left(self._reversed, (fam, rev))
            while i < len(self._reversed) and self._reversed[i][0] == fam and self._reversed[i][1].startswith(rev):
                if self._reversed[i][1] != rev:
                    out.extend(self.t.types_named[(fam, self._reversed[i][1][::-1])])
                i += 1
        return out

    def _receiver_of(self, fam: str, low: str, name: str, found: set[str]) -> list[Hit]:
        self.rd.add(name)
        if len(found) == 1:
            return [(next(iter(found)), "receiver", 1)]
        if found:
            return []
        self.rd.add("*r:" + name)
        hits = []
        for i in self.t.by_short.get((fam, name), ()):
            owner = self.t.owner.get(i)
            # the type it belongs to, or the object it was assigned on (`res.send = function`)
            qualified = qualified_of(owner or i)
            if owner is None and "." not in qualified:
                continue
            type_name = (qualified if owner else qualified.rsplit(".", 1)[0]).rsplit(".", 1)[-1].lower()
            if type_name == low or (len(low) >= 4 and type_name.endswith(low)):
                hits.append(i)
        return [(hits[0], "receiver", 1)] if len(hits) == 1 else []

    def _members_named(self, fam: str, name: str) -> list[Hit] | None:
        self.rd.add(name)
        self.rd.add("*m:" + name)
        key = (fam, name)
        if key not in self._methods_memo:
            self._methods_memo[key] = [i for i in self.t.by_short.get(key, ()) if self.t.kind[i] == "method"]
        ids = self._methods_memo[key]
        if not ids:
            return []
        if len(ids) == 1:
            return [(ids[0], "unique_member", 1)]
        return [(i, "ambiguous", len(ids)) for i in ids] if len(ids) <= MAX_CANDIDATES else None


_Imports = tuple[dict[str, list[str]], dict[str, list[str]], dict[str, str], frozenset[str]]
_TOKEN = re.compile(r"[^\W\d][\w$]*|\$[\w$]*")


def import_tokens(f: FileFacts) -> frozenset[str]:
    """The words of ``f``'s imports (each part of a module's name or path, the names
    imported, the renames): an import can only resolve to another file when a file of
    that name, or in a directory of that name, is added or removed (``change_tokens``)."""
    words: set[str] = set()
    for imp in f.imports:
        words.update(_TOKEN.findall(imp[0]))
        for name in imp[1]:
            words.update(_TOKEN.findall(name))
    for local, orig in f.renames:
        words.update(_TOKEN.findall(local))
        words.update(_TOKEN.findall(orig))
    return frozenset(words)


_DIRECTORY_MODULES = frozenset({"go", "swift"})  # a package is its directory's files (``ecosystems.package_files``)


def change_tokens(f: FileFacts) -> set[str]:
    """What a file's resolution must have read (``_Resolver.reads``) to be changed by ``f``
    coming, going or changing its ``interface``: ``f`` itself (``\\0path``); the words of
    its name (an import naming it), and of its directory's where an import names the
    directory (a Go or Swift package, an ``index.js``, a ``mod.rs``), and of its namespaces;
    and ``~s`` for each ending ``s`` a type it declares can be looked up by (``_types_like``:
    the name, and its endings of four letters or more). Not the names it declares: a lookup
    of a name in given files reads them (``\0path``, this file's when it is one of them),
    and one in the tables of every file's names moves only where its outcome moved
    (``lookup_outcomes``, compared before and after the tables are patched). A file that read
    ``sqrt`` through its import of another module, or ``x.evalf()`` among more methods of
    that name than are linked, is not moved by a copy of ``sqrt`` or ``evalf`` coming or
    going (sympy: an added copy of a module resolved 339 files again before)."""
    name = f.path.rsplit("/", 1)
    out = {"\0" + f.path, *_TOKEN.findall(name[-1])}
    if len(name) > 1 and (f.language in _DIRECTORY_MODULES or name[-1].split(".", 1)[0] in ("index", "mod")):
        out.update(_TOKEN.findall(name[0].rsplit("/", 1)[-1]))  # (imports name the directory, not the file)
    details = f.symbol_details if len(f.symbol_details) == len(f.symbols) else tuple((s[0], "", "") for s in f.symbols)
    for s, d in zip(f.symbols, details, strict=True):
        parts = [s[0], *d[0].split(".")]
        if s[1] in TYPE_KINDS:
            for word in {s[0], parts[-1]}:
                low = word.lower()
                out.update("~" + low[i:] for i in range(max(1, len(low) - 3)))
    for ns in f.namespaces:
        out.update(_TOKEN.findall(ns))
    out.discard("")
    return out


def _imports(f: FileFacts, idx: IndexView) -> _Imports:
    """(imported name → files defining it, module alias → files, local name → the name it
    was imported as) of one file: ``from m import a as b`` makes ``b`` a name of m's files
    whose definition is ``a``; ``import a.b as c`` and ``import * as c from "./m"`` make
    ``c`` an alias of the module), and the names a Python file binds to modules outside the
    repository (``from unittest import mock``: ``mock.patch()`` is the library's)."""
    names: dict[str, list[str]] = defaultdict(list)
    aliases: dict[str, list[str]] = defaultdict(list)
    external: set[str] = set()
    python = f.language == "python"
    for imp in f.imports:
        mod, imported, level = imp[0], imp[1], imp[2]
        if python:
            absolute, base, subs = idx.python_import(imp, f.path)
            if not base and not level and absolute:  # a library's module
                external.update(name for name, sub in subs if not sub)
                if not subs:
                    external.add(absolute.split(".", 1)[0])
                    external.update(local for local, orig in f.renames if orig == absolute)
            for name, sub in subs:
                if sub:
                    aliases[name].append(sub)
                elif base:
                    names[name].append(base)
            if not subs and base:
                # `import a.b` binds `a`; a call `a.b.f()` is kept as `b.f`: both name a module
                aliases[absolute.rsplit(".", 1)[-1]].append(base)
                if "." in absolute and not level:
                    top = idx.module(absolute.split(".", 1)[0], f.path)
                    if top:
                        aliases[absolute.split(".", 1)[0]].append(top)
            continue
        targets = ecosystems_of(idx).resolve(f, imp)
        if not targets:
            continue
        for name in imported:
            names[name].extend(targets)
        last = re.split(r"[/.:\\]+", mod.rstrip("/").removesuffix(".js").removesuffix(".ts"))[-1] if mod else ""
        if imported and f.language in ("javascript", "typescript", "tsx"):
            last = ""  # `import {Doc} from "./doc.js"` binds Doc, not `doc` (a local `doc` is a variable)
        if last and last != "*":
            aliases[last].extend(targets)
            if f.language in ("java", "kotlin", "scala", "csharp", "php", "rust"):
                names[last].extend(targets)  # `import a.b.C` / `use a::b::f` bring the name itself
            for local, orig in f.renames:  # `import * as ns from "./m"`: ns is the module
                if orig == "*" + mod:
                    aliases[local].extend(targets)
    renamed: dict[str, str] = {}
    for local, orig in f.renames:
        if orig in names:  # `from m import a as b`: b names what a named there
            names[local] = list(dict.fromkeys([*names.get(local, []), *names[orig]]))
            renamed[local] = orig
        elif not orig.startswith("*") and orig.rsplit(".", 1)[-1] in aliases:  # `import a.b as c`: c is a.b
            aliases[local] = list(dict.fromkeys([*aliases.get(local, []), *aliases[orig.rsplit(".", 1)[-1]]]))
    return dict(names), dict(aliases), renamed, frozenset(external - names.keys() - aliases.keys())
