"""Import resolvers per ecosystem (design §5b): an import as written → the indexed files it
names. Built once per build over the Phase 1 facts (``Ecosystems.build``) and consulted
by the providers; nothing here reads the disk.

| language              | how an import becomes files                                        |
|-----------------------|--------------------------------------------------------------------|
| JavaScript/TypeScript | relative specifiers with extension and ``index`` resolution; a     |
|                       | workspace package by ``package.json`` name (``exports``, ``main``); |
|                       | ``tsconfig.json`` ``paths`` and ``baseUrl``                         |
| Go                    | ``go.mod``'s module path → the package directory's non-test files  |
| Rust                  | ``mod x;`` → ``x.rs`` / ``x/mod.rs``; ``crate::``/``self::``/       |
|                       | ``super::`` paths module by module; workspace crates by name        |
| Java/Kotlin/Scala     | ``package`` + class (or top-level declaration) → file; ``.*`` →    |
|                       | the package's files                                                 |
| C/C++                 | ``#include "…"`` relative, then include directories (CMake,        |
|                       | ``compile_commands.json``, ``include/``), then a unique path suffix |
| C#                    | ``using`` → the files declaring that namespace                     |
| Ruby                  | ``require_relative`` relative; ``require`` through every ``lib/``  |
| PHP                   | ``use`` through ``composer.json`` PSR-4 prefixes; ``require`` paths |
| Swift                 | ``import M`` → ``Sources/M/`` (a SwiftPM target's directory)       |
| Bash                  | ``source``/``.`` paths, relative to the script                     |
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from oracl.core.records import FileFacts, ImportRef

HELD_BACK = frozenset({"vendored", "generated", "minified", "lockfile"})
FANOUT = 30  # files one package-level import may name (a Go package, a Java wildcard)
JS_EXTS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".d.ts", ".json", ".vue")
JVM = ("java", "kotlin", "scala")
MANIFESTS = ("package.json", "Cargo.toml", "go.mod", "CMakeLists.txt", "pom.xml", "build.gradle",
             "build.gradle.kts", "composer.json", "Package.swift", "pyproject.toml", "setup.py")


def _dir(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


Read = Callable[[str, str], None]


class _Looked(dict):
    """A table of ``Ecosystems`` that records each key looked up in it (``read(kind, key)``:
    ``IndexView.read``, so a file's edges say which paths, folders, names, packages and
    namespaces their imports read), and, when it is walked, ``every`` (what a walk reads:
    all its keys). Looked up by ``get``, ``in`` and ``[]``; nothing else reads it."""

    __slots__ = ("_read", "_kind", "_every")

    def __init__(self, data: Mapping[Any, Any], read: Read, kind: str, every: tuple[str, str]) -> None:
        super().__init__(data)
        self._read, self._kind, self._every = read, kind, every

    def get(self, key: Any, default: Any = None) -> Any:
        self._read(self._kind, key)
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        self._read(self._kind, str(key))
        return super().__contains__(key)

    def __getitem__(self, key: Any) -> Any:
        self._read(self._kind, key)
        return super().__getitem__(key)

    def __iter__(self) -> Iterator[Any]:
        self._read(*self._every)
        return super().__iter__()


class _Whole(list):
    """A list of ``Ecosystems`` made of what every file of a kind holds (the manifests, the
    folders' names): walking it records ``keys``."""

    __slots__ = ("_read", "_keys")

    def __init__(self, data: Iterable[Any], read: Read, keys: tuple[tuple[str, str], ...]) -> None:
        super().__init__(data)
        self._read, self._keys = read, keys

    def __iter__(self) -> Iterator[Any]:
        for kind, key in self._keys:
            self._read(kind, key)
        return super().__iter__()


class _WholeMap(_Looked):
    """A table of ``Ecosystems`` made of what every file of a kind holds: any lookup in it
    records ``every``."""

    __slots__ = ()

    def get(self, key: Any, default: Any = None) -> Any:
        self._read(*self._every)
        return dict.get(self, key, default)

    def __contains__(self, key: object) -> bool:
        self._read(*self._every)
        return dict.__contains__(self, key)

    def __getitem__(self, key: Any) -> Any:
        self._read(*self._every)
        return dict.__getitem__(self, key)


MANIFESTS_READ = ("manifests", "")   # what every manifest holds (module paths, packages, crates, labels)
DIRS_READ = ("dirs", "")             # which folders there are (lib/, include/, Sources/…), and their walk
WHOLE_READ = ("ecosystems", "")      # a walk of every file or name


def jvm_keys(path: str, f: FileFacts) -> list[str]:
    """The keys a JVM file is filed under in ``Ecosystems.jvm``: its package and stem, its
    package's wildcard, and each top-level declaration not named as its file."""
    pkg = f.namespaces[0] if f.namespaces else ""
    name = path.rsplit("/", 1)[-1]
    stem = name.rsplit(".", 1)[0]
    out = [f"{pkg}.{stem}" if pkg else stem, pkg + ".*"]
    for sym, detail in zip(f.symbols, f.symbol_details, strict=False):
        if "." not in detail[0] and sym[0] != stem:
            out.append(f"{pkg}.{sym[0]}" if pkg else sym[0])
    return out


def came_or_went_reads(path: str, f: FileFacts, folder_moved: bool) -> set[str]:
    """What a file coming or going can change of the lookups ``Ecosystems`` records, beyond
    its path, name and folder (``resolve.lookups_of``): the whole set of files (a walk of
    them); its JVM keys and its namespaces; what every manifest holds, when it has one or is
    a crate's root; the folders, when its folder appeared or emptied (``folder_moved``) or it
    is a Swift file (a folder under ``Sources/`` is a target while it holds one)."""
    out = {"\x00".join(WHOLE_READ)}
    if f.language in JVM:
        out.update(f"jvm\x00{k}" for k in jvm_keys(path, f))
    elif f.language in ("csharp", "php"):
        out.update(f"ns\x00{n}" for n in f.namespaces)
    name = path.rsplit("/", 1)[-1]
    if f.manifest or name in ("lib.rs", "main.rs"):
        out.add("\x00".join(MANIFESTS_READ))
    if folder_moved or name.endswith(".swift"):
        out.add("\x00".join(DIRS_READ))
    return out


def _join(*parts: str) -> str:
    return posixpath.normpath(posixpath.join(*[p for p in parts if p])) if any(parts) else ""


@dataclass(slots=True)
class Ecosystems:
    facts: dict[str, FileFacts]
    dir_files: dict[str, list[str]] = field(default_factory=dict)
    go_modules: list[tuple[str, str]] = field(default_factory=list)        # (module path, dir)
    js_packages: dict[str, tuple[str, dict]] = field(default_factory=dict)  # name → (dir, manifest)
    tsconfigs: list[tuple[str, dict]] = field(default_factory=list)         # (dir, manifest), deepest first
    crates: dict[str, str] = field(default_factory=dict)                    # crate name → root file
    crate_dirs: list[tuple[str, str]] = field(default_factory=list)         # (Cargo.toml dir, root file)
    jvm: dict[str, list[str]] = field(default_factory=dict)                 # fqcn / package → files
    namespaces: dict[str, list[str]] = field(default_factory=dict)          # C# / PHP namespace → files
    psr4: list[tuple[str, str]] = field(default_factory=list)               # (prefix, dir), longest first
    include_dirs: list[str] = field(default_factory=list)
    lib_dirs: list[str] = field(default_factory=list)
    swift_targets: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)                    # rst label → file
    defines: dict[str, str] = field(default_factory=dict)                   # Go template name → file
    suffix_index: dict[str, list[str]] = field(default_factory=dict)        # basename → paths

    @classmethod
    def build(cls, facts: dict[str, FileFacts], read: Read | None = None) -> Ecosystems:
        """The indexes over ``facts``; with ``read`` (``IndexView.read``), tables that
        record what the resolvers look up in them (``came_or_went_reads`` says which of
        those a file coming or going moves)."""
        eco = cls(facts)
        dir_files: dict[str, list[str]] = defaultdict(list)
        jvm: dict[str, list[str]] = defaultdict(list)
        spaces: dict[str, list[str]] = defaultdict(list)
        include_dirs: list[str] = []
        for path in sorted(facts):
            f = facts[path]
            d = _dir(path)
            dir_files[d].append(path)
            eco.suffix_index.setdefault(path.rsplit("/", 1)[-1], []).append(path)
            name = path.rsplit("/", 1)[-1]
            m = f.manifest
            if m:
                if "go_module" in m:
                    eco.go_modules.append((str(m["go_module"]), d))
                if "js_name" in m:
                    eco.js_packages.setdefault(str(m["js_name"]), (d, m))
                if "ts_base_url" in m or "ts_paths" in m:
                    eco.tsconfigs.append((d, m))
                if name == "Cargo.toml" and "crate" in m:
                    root = _join(d, str(m.get("crate_lib") or "src/lib.rs"))
                    if root not in facts:
                        root = _join(d, "src/main.rs")
                    eco.crates[str(m["crate"])] = root
                    eco.crate_dirs.append((d, root))
                for prefix, dirs in (m.get("psr4") or {}).items():  # type: ignore[attr-defined]
                    for target in dirs:
                        eco.psr4.append((prefix.rstrip("\\"), _join(d, target)))
                include_dirs.extend(_join(d, i) for i in m.get("include_dirs") or [])  # type: ignore[attr-defined]
                for label in m.get("rst_labels") or []:  # type: ignore[attr-defined]
                    eco.labels.setdefault(str(label), path)
                for define in m.get("template_defines") or []:  # type: ignore[attr-defined]
                    eco.defines.setdefault(str(define), path)
            if f.language in JVM:
                for key in jvm_keys(path, f):
                    jvm[key].append(path)
            elif f.language in ("csharp", "php"):
                for ns in f.namespaces:
                    spaces[ns].append(path)
        for d in dir_files:
            base = d.rsplit("/", 1)[-1]
            if base == "lib":
                eco.lib_dirs.append(d)
            elif base in ("include", "inc"):
                include_dirs.append(d)
            parent = _dir(d)
            if parent.rsplit("/", 1)[-1] == "Sources" and any(p.endswith(".swift") for p in dir_files[d]):
                eco.swift_targets.setdefault(base, d)
        eco.dir_files = dict(dir_files)
        eco.jvm = dict(jvm)
        eco.namespaces = dict(spaces)
        eco.include_dirs = list(dict.fromkeys(include_dirs))
        eco.go_modules.sort(key=lambda x: -len(x[0]))
        eco.psr4.sort(key=lambda x: -len(x[0]))
        eco.tsconfigs.sort(key=lambda x: -x[0].count("/") - bool(x[0]))
        eco.crate_dirs.sort(key=lambda x: -x[0].count("/") - bool(x[0]))
        if read is not None:
            eco._record(read)
        return eco

    def _record(self, read: Read) -> None:
        """Each table made one that records what is looked up in it."""
        self.facts = _Looked(self.facts, read, "path", WHOLE_READ)
        self.dir_files = _Looked(self.dir_files, read, "dir", DIRS_READ)
        self.suffix_index = _Looked(self.suffix_index, read, "name", WHOLE_READ)
        self.jvm = _Looked(self.jvm, read, "jvm", WHOLE_READ)
        self.namespaces = _Looked(self.namespaces, read, "ns", WHOLE_READ)
        for name in ("js_packages", "crates", "labels", "defines"):
            setattr(self, name, _WholeMap(getattr(self, name), read, "manifests", MANIFESTS_READ))
        self.swift_targets = _WholeMap(self.swift_targets, read, "dirs", DIRS_READ)
        for name in ("go_modules", "tsconfigs", "crate_dirs", "psr4"):
            setattr(self, name, _Whole(getattr(self, name), read, (MANIFESTS_READ,)))
        self.include_dirs = _Whole(self.include_dirs, read, (MANIFESTS_READ, DIRS_READ))
        self.lib_dirs = _Whole(self.lib_dirs, read, (DIRS_READ,))

    # ---- the resolvers ------------------------------------------------------------------

    def resolve(self, f: FileFacts, imp: ImportRef) -> list[str]:
        """The files an import of ``f`` names (several for a package), [] when none is indexed."""
        resolver = _RESOLVERS.get(f.language)
        if resolver is None:
            return []
        return [t for t in resolver(self, f, imp) if t and t != f.path][:FANOUT]

    def resolve_ref(self, f: FileFacts, kind: str, target: str) -> list[str]:
        return [t for t in resolve_ref(self, f, kind, target) if t != f.path][:FANOUT]

    def file(self, path: str) -> str | None:
        return path if path in self.facts else None

    def unique_suffix(self, spec: str) -> str | None:
        """The one indexed file whose path ends with ``/spec`` (or is ``spec``)."""
        name = spec.rsplit("/", 1)[-1]
        cands = [p for p in self.suffix_index.get(name, []) if ("/" + p).endswith("/" + spec.lstrip("./"))]
        return cands[0] if len(cands) == 1 else None

    def package_files(self, d: str, suffix: str, skip_tests: str = "") -> list[str]:
        """A package directory's files of one suffix (not its tests, not generated ones)."""
        return [p for p in self.dir_files.get(d, []) if p.endswith(suffix) and not (skip_tests and p.endswith(skip_tests))
                and self.facts[p].parse_status not in HELD_BACK]

    def js_file(self, base: str) -> str | None:
        if base in self.facts and not self.dir_files.get(base):
            return base
        stem = base[:-3] if base.endswith((".js", ".jsx")) else ""
        for cand in ([base + e for e in JS_EXTS] + [_join(base, "index" + e) for e in JS_EXTS]
                     + ([stem + ".ts", stem + ".tsx"] if stem else [])):
            if cand in self.facts:
                return cand
        return None

    def js_package(self, spec: str) -> str | None:
        parts = spec.split("/")
        name = "/".join(parts[:2]) if spec.startswith("@") else parts[0]
        hit = self.js_packages.get(name)
        if hit is None:
            return None
        d, m = hit
        rest = spec[len(name):].lstrip("/")
        exports = m.get("js_exports") or {}
        key = "./" + rest if rest else "."
        if isinstance(exports, dict) and key in exports:
            return self.js_file(_join(d, str(exports[key])))
        if rest:
            return self.js_file(_join(d, rest))
        main = m.get("js_main") or "index"
        return self.js_file(_join(d, str(main)))

    def rust_module_dir(self, path: str) -> str:
        """The directory a Rust file's child modules live in."""
        d, name = _dir(path), path.rsplit("/", 1)[-1]
        return d if name in ("lib.rs", "main.rs", "mod.rs") else _join(d, name[:-3])

    def rust_child(self, d: str, seg: str) -> str | None:
        return self.file(_join(d, seg + ".rs")) or self.file(_join(d, seg, "mod.rs"))

    def crate_root(self, path: str) -> str | None:
        for d, root in self.crate_dirs:
            if not d or path.startswith(d + "/"):
                return root
        return None


def _javascript(eco: Ecosystems, f: FileFacts, imp: ImportRef) -> list[str]:
    spec = imp[0]
    if spec.startswith("."):
        hit = eco.js_file(_join(_dir(f.path), spec))
        return [hit] if hit else []
    if spec.startswith("/"):
        hit = eco.js_file(spec.lstrip("/"))
        return [hit] if hit else []
    for d, m in eco.tsconfigs:
        if d and not f.path.startswith(d + "/"):
            continue
        base = _join(d, str(m.get("ts_base_url") or "."))
        for pattern, targets in (m.get("ts_paths") or {}).items():
            head, star, tail = pattern.partition("*")
            if (spec.startswith(head) and spec.endswith(tail) and len(spec) >= len(head) + len(tail)) if star \
                    else spec == pattern:
                middle = spec[len(head):len(spec) - len(tail)] if star else ""
                for t in targets:
                    hit = eco.js_file(_join(base, t.replace("*", middle)))
                    if hit:
                        return [hit]
        if "ts_base_url" in m:
            hit = eco.js_file(_join(base, spec))
            if hit:
                return [hit]
        break
    hit = eco.js_package(spec)
    return [hit] if hit else []


def _go(eco: Ecosystems, f: FileFacts, imp: ImportRef) -> list[str]:
    spec = imp[0]
    for module, d in eco.go_modules:
        if spec == module or spec.startswith(module + "/"):
            pkg = _join(d, spec[len(module) + 1:]) if spec != module else d
            return eco.package_files(pkg, ".go", "_test.go")
    return []


def _rust(eco: Ecosystems, f: FileFacts, imp: ImportRef) -> list[str]:
    spec, level = imp[0], imp[2]
    if level == 1:  # `mod x;`
        hit = eco.rust_child(eco.rust_module_dir(f.path), spec)
        return [hit] if hit else []
    segs = [s for s in spec.split("::") if s]
    if not segs:
        return []
    head = segs[0]
    if head == "crate":
        root = eco.crate_root(f.path)
    elif head in ("self", "super"):
        root = f.path
    else:
        root = eco.crates.get(head)
    if root is None or root not in eco.facts:
        return []
    d = _dir(root) if head == "crate" or head not in ("self", "super") else eco.rust_module_dir(f.path)
    target = root if head not in ("self", "super") else f.path
    for seg in segs[1:]:
        if seg == "super":
            d = _dir(d)
            target = eco.file(_join(d, "mod.rs")) or eco.file(d + ".rs") or target
            continue
        if seg == "self":
            continue
        child = eco.rust_child(d, seg)
        if child is None:
            break
        target, d = child, _join(d, seg)
    return [target] if target != f.path else []


def _jvm(eco: Ecosystems, f: FileFacts, imp: ImportRef) -> list[str]:
    spec = imp[0]
    if spec.endswith(".*"):
        return list(eco.jvm.get(spec, [])) or eco.jvm.get(spec[:-2], [])[:1]
    parts = spec.split(".")
    for cut in range(len(parts), max(0, len(parts) - 3), -1):  # a nested class, a static member
        hit = eco.jvm.get(".".join(parts[:cut]))
        if hit:
            return hit[:1] if len(hit) > 1 and cut == len(parts) else hit
    return []


def _c(eco: Ecosystems, f: FileFacts, imp: ImportRef) -> list[str]:
    spec, level = imp[0], imp[2]
    cands = [_join(_dir(f.path), spec)] if level == 1 else []
    cands += [_join(d, spec) for d in eco.include_dirs] + [posixpath.normpath(spec)]
    for c in cands:
        if c in eco.facts:
            return [c]
    hit = eco.unique_suffix(spec) if level == 1 or "/" in spec else None
    return [hit] if hit else []


def _csharp(eco: Ecosystems, f: FileFacts, imp: ImportRef) -> list[str]:
    spec = imp[0]
    hit = eco.namespaces.get(spec)
    if hit:
        return hit
    ns, _, cls = spec.rpartition(".")  # `using static N.Class`
    return [p for p in eco.namespaces.get(ns, []) if p.rsplit("/", 1)[-1] == cls + ".cs"]


def _ruby(eco: Ecosystems, f: FileFacts, imp: ImportRef) -> list[str]:
    spec, level = imp[0], imp[2]
    spec = spec if spec.endswith(".rb") else spec + ".rb"
    cands = [_join(_dir(f.path), spec)] if level == 1 else [_join(d, spec) for d in eco.lib_dirs] + [spec]
    return [c for c in cands if c in eco.facts][:1]


def _php(eco: Ecosystems, f: FileFacts, imp: ImportRef) -> list[str]:
    spec, level = imp[0], imp[2]
    if level == 1:
        for c in (_join(_dir(f.path), spec.lstrip("/")), spec.lstrip("/")):
            if c in eco.facts:
                return [c]
        hit = eco.unique_suffix(spec) if "/" in spec else None
        return [hit] if hit else []
    for prefix, d in eco.psr4:
        if spec.startswith(prefix + "\\"):
            c = _join(d, spec[len(prefix) + 1:].replace("\\", "/") + ".php")
            if c in eco.facts:
                return [c]
    ns, _, cls = spec.rpartition("\\")
    return [p for p in eco.namespaces.get(ns, []) if p.rsplit("/", 1)[-1] == cls + ".php"][:1]


def _swift(eco: Ecosystems, f: FileFacts, imp: ImportRef) -> list[str]:
    d = eco.swift_targets.get(imp[0])
    return eco.package_files(d, ".swift") if d else []


def _bash(eco: Ecosystems, f: FileFacts, imp: ImportRef) -> list[str]:
    spec = re.sub(r"^\$\{?\w+\}?/", "", imp[0])
    if "$" in spec:
        return []
    for c in (_join(_dir(f.path), spec), posixpath.normpath(spec)):
        if c in eco.facts:
            return [c]
    return []


_RESOLVERS = {
    "javascript": _javascript, "typescript": _javascript, "tsx": _javascript, "go": _go, "rust": _rust,
    "java": _jvm, "kotlin": _jvm, "scala": _jvm, "c": _c, "cpp": _c, "csharp": _csharp, "ruby": _ruby,
    "php": _php, "swift": _swift, "bash": _bash,
}


# ---- docs, templates and build files ----------------------------------------------------------

DOC_SUFFIXES = (".rst", ".md", ".txt", ".adoc", ".html")
TEMPLATE_SUFFIXES = (".html", ".jinja", ".j2", ".ejs", ".erb", ".tmpl", ".gotmpl", ".hbs")


def resolve_ref(eco: Ecosystems, f: FileFacts, kind: str, target: str) -> list[str]:
    """The files a doc, template or build-file reference names (``module`` refs are the
    providers' own: they go through the Python module map)."""
    d = _dir(f.path)
    if kind == "doc":
        base = target.lstrip("/")
        roots = [d] if not target.startswith("/") else []
        roots += [r for r in _doc_roots(eco, f.path)]
        for r in roots:
            for c in [_join(r, base)] + [_join(r, base + s) for s in DOC_SUFFIXES]:
                if c in eco.facts:
                    return [c]
        return []
    if kind == "ref":
        hit = eco.labels.get(target)
        return [hit] if hit else []
    if kind == "include":
        clean = target.split("#", 1)[0].split("?", 1)[0]
        for c in (_join(d, clean), clean.lstrip("/")):
            if c in eco.facts:
                return [c]
        return []
    if kind == "template":
        if f.language == "gotemplate" and target in eco.defines:
            return [eco.defines[target]]
        names = [target] + [target + s for s in TEMPLATE_SUFFIXES]
        if "/" not in target:  # a Rails partial: `render "form"` → _form.html.erb
            names += [f"_{target}.html.erb", f"_{target}.erb"]
        for n in names:
            c = _join(d, n)
            if c in eco.facts:
                return [c]
        for n in names:
            tail = n.rsplit("/", 1)[-1]
            cands = [p for p in eco.suffix_index.get(tail, []) if ("/" + p).endswith("/" + n.lstrip("./"))]
            if cands:
                from oracl.builder.extractors.resolve import nearest
                return [nearest(cands, f.path)]
        return []
    if kind in ("configures", "depends_on"):
        clean = target.rstrip("/")
        if any(ch in clean for ch in "*?["):
            return _glob_dirs(eco, d, clean)
        # relative to the build file, then to the root (a CI step runs at the root)
        for c in dict.fromkeys((_join(d, clean.lstrip("./")) if not clean.startswith("/") else "",
                                posixpath.normpath(clean.lstrip("/")))):
            if not c or c.startswith(".."):
                continue
            if c in eco.facts:
                return [c]
            if c in eco.dir_files or _dirs_below(eco, c):
                return _dir_entry(eco, c)
        return []
    return []


def _dirs_below(eco: Ecosystems, d: str) -> list[str]:
    return [k for k in eco.dir_files if k.startswith(d + "/")][:1]


def _dir_entry(eco: Ecosystems, d: str) -> list[str]:
    """What a directory named by a build file stands for: its manifest, else its index."""
    for name in MANIFESTS:
        c = _join(d, name)
        if c in eco.facts:
            return [c]
    for name in ("index.js", "index.ts", "main.go", "src/lib.rs", "src/main.rs", "__init__.py", "README.md"):
        c = _join(d, name)
        if c in eco.facts:
            return [c]
    return []


def _glob_dirs(eco: Ecosystems, base: str, pattern: str) -> list[str]:
    from fnmatch import fnmatchcase

    full = _join(base, pattern)
    out: list[str] = []
    for d in sorted(eco.dir_files):
        if fnmatchcase(d, full):
            out.extend(_dir_entry(eco, d))
    return out[:FANOUT]


def _doc_roots(eco: Ecosystems, path: str) -> list[str]:
    """Sphinx source directories above a page (a directory holding ``conf.py``), nearest first."""
    d = _dir(path)
    out = []
    while True:
        if _join(d, "conf.py") in eco.facts:
            out.append(d)
        if not d:
            break
        d = _dir(d)
    return out or [""]
