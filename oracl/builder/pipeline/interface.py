"""A repository's interface to other repositories (design §12, issue 35): what packages it
provides, what packages its manifests require, and where its files use code from outside
the repository. Written into every bundle as ``interface.json`` (listed in the manifest,
so a member's signature covers it); a workspace's readers join members through it.

* ``packages`` – each package a manifest at the root (or in one of the root's workspace
  folders, ``core.packages``) declares: its ecosystem, its name as the manifest says it,
  the folder it lives in, and the ``prefixes`` code imports it by (Python: the top-level
  packages under the folder or its ``src/``; npm: the name; Go: the module path; Rust: the
  crate name with ``_``; Maven and Gradle: the Java/Kotlin packages its files declare).
* ``requires`` – each dependency those manifests name: ecosystem, name, the manifest and
  the line. Only names are kept: a version specifier can hold a URL with a token.
* ``files`` – per file, its imports of code from outside the repository (``[module, names,
  line]``: ``from werkzeug.serving import run_simple`` → ``["werkzeug.serving",
  ["run_simple"], 2]``) and the call sites whose first name one of those imports binds
  (``[call, line, import index]``: ``click.echo`` after ``import click``).

Imports of the repository's own modules are left out by their first name (a top-level
package or module of its own, its own npm name, Go module or crate, its own Java
packages). A malformed manifest declares nothing (the build does not fail over it).
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson

from oracl.core.packages import normalise, workspace_packages
from oracl.core.paths import is_test_path
from oracl.core.records import FileFacts

FORMAT = 1
MAX_MANIFEST_BYTES = 1 << 20
MAX_CALLS_PER_FILE = 2000
MAX_PREFIXES = 2000
JS = frozenset({"javascript", "typescript", "tsx", "vue", "svelte"})
JVM = frozenset({"java", "kotlin", "scala"})
_PEP508 = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_IDENT = re.compile(r"^[A-Za-z_$][\w$]*$")
_GO_REQUIRE = re.compile(r"^\s*(?:require\s+)?([\w.~-]+\.[\w.~/-]+)\s+v\S+", re.M)
_GRADLE_DEP = re.compile(r"""\b(?:implementation|api|compileOnly|runtimeOnly|testImplementation|compile)\s*\(?\s*["']([\w.-]+):([\w.-]+)(?::[^"']*)?["']""")
_RUST_ROOTS = frozenset({"crate", "self", "super", "std", "core", "alloc"})
_TYPE = re.compile(r"^[A-Z][A-Za-z0-9_]*$")
TYPE_KINDS = frozenset({"class", "interface", "struct", "enum", "trait", "object", "record", "protocol", "type"})


def _read(root: Path, rel: str) -> str:
    """A manifest's text: a regular file inside the root (no symbolic link), at most 1 MiB."""
    path = root / rel
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_MANIFEST_BYTES:
            return ""
        return path.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _table(doc: Any, key: str) -> dict[str, Any]:
    value = doc.get(key) if isinstance(doc, dict) else None
    return value if isinstance(value, dict) else {}


def _line(text: str, needle: str) -> int:
    i = text.find(needle)
    return text.count("\n", 0, i) + 1 if i >= 0 else 1


# ---- manifests: what a folder provides and requires ---------------------------------------

def _python(root: Path, folder: str, paths: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    provides: list[dict[str, Any]] = []
    requires: list[dict[str, Any]] = []
    for name in ("pyproject.toml", "setup.cfg", "setup.py", "requirements.txt"):
        rel = f"{folder}/{name}".lstrip("/")
        text = _read(root, rel)
        if not text:
            continue
        own, deps = "", []
        try:
            if name == "pyproject.toml":
                doc = tomllib.loads(text)
                project = _table(doc, "project")
                poetry = _table(_table(doc, "tool"), "poetry")
                own = project.get("name") or (poetry.get("name") if isinstance(poetry, dict) else "") or ""
                deps = [d for d in project.get("dependencies") or [] if isinstance(d, str)]
                for group in (project.get("optional-dependencies") or {}).values():
                    deps += [d for d in group if isinstance(d, str)] if isinstance(group, list) else []
                for group in (doc.get("dependency-groups") or {}).values():
                    deps += [d for d in group if isinstance(d, str)] if isinstance(group, list) else []
                if isinstance(poetry, dict):
                    deps += [k for k in (poetry.get("dependencies") or {}) if k != "python"]
            elif name == "setup.cfg":
                m = re.search(r"^\s*name\s*=\s*([\w.-]+)", text, re.M)
                own = m.group(1) if m else ""
                m = re.search(r"^install_requires\s*=\s*\n((?:[ \t]+\S.*\n?)+)", text, re.M)
                deps = m.group(1).split("\n") if m else []
            elif name == "setup.py":
                m = re.search(r"""\bname\s*=\s*["']([\w.-]+)["']""", text)
                own = m.group(1) if m else ""
                m = re.search(r"install_requires\s*=\s*\[([^\]]*)\]", text)
                deps = re.findall(r"""["']([^"']+)["']""", m.group(1)) if m else []
            else:
                deps = [ln for ln in text.splitlines() if not ln.lstrip().startswith(("#", "-"))]
        except (tomllib.TOMLDecodeError, AttributeError, TypeError, ValueError):
            continue
        if isinstance(own, str) and own and not provides:
            provides.append({"ecosystem": "python", "name": own, "folder": folder, "manifest": rel,
                             "prefixes": _python_tops(folder, paths)})
        for d in deps:
            m = _PEP508.match(d)
            if m:
                requires.append({"ecosystem": "python", "name": m.group(1), "manifest": rel,
                                 "line": _line(text, m.group(1))})
    return provides, requires


def _python_tops(folder: str, paths: list[str]) -> list[str]:
    """The top-level packages (folders with ``__init__.py``) under ``folder`` or its ``src/``,
    else its top-level modules: what ``import NAME`` finds once the package is installed."""
    base = f"{folder}/" if folder else ""
    packages, modules = set(), set()
    for p in paths:
        if not p.startswith(base) or not p.endswith(".py"):
            continue
        rest = p[len(base):]
        if rest.startswith("src/"):
            rest = rest[4:]
        parts = rest.split("/")
        if len(parts) == 2 and parts[1] == "__init__.py":
            packages.add(parts[0])
        elif len(parts) == 1 and parts[0] not in ("setup.py", "conftest.py", "noxfile.py", "fabfile.py"):
            modules.add(parts[0][:-3])
    tops = packages or modules
    return sorted(t for t in tops if t.isidentifier() and not t.startswith("test"))[:MAX_PREFIXES]


def _npm(root: Path, folder: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rel = f"{folder}/package.json".lstrip("/")
    text = _read(root, rel)
    try:
        doc = orjson.loads(text) if text else None
    except orjson.JSONDecodeError:
        return [], []
    if not isinstance(doc, dict):
        return [], []
    provides = ([{"ecosystem": "npm", "name": doc["name"], "folder": folder, "manifest": rel,
                  "prefixes": [doc["name"]], "entries": _npm_entries(doc)}]
                if isinstance(doc.get("name"), str) and doc["name"] else [])
    requires = [{"ecosystem": "npm", "name": k, "manifest": rel, "line": _line(text, f'"{k}"')}
                for table in ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies")
                if isinstance(doc.get(table), dict) for k in doc[table] if isinstance(k, str)]
    return provides, requires


def _npm_entries(doc: dict[str, Any]) -> dict[str, str]:
    """What each import path of an npm package stands for: its ``exports`` map (subpath →
    the first file a condition names: ``"./json": "./lib/types/json.js"``), else ``"."`` →
    ``main``; paths relative to the package's folder, at most ``MAX_PREFIXES``.

    >>> _npm_entries({"exports": {".": "./index.js", "./json": {"require": "./lib/json.js"}}})
    {'.': 'index.js', './json': 'lib/json.js'}
    >>> _npm_entries({"main": "lib/express"}), _npm_entries({"exports": "./main.mjs"})
    ({'.': 'lib/express'}, {'.': 'main.mjs'})
    """
    def first(value: Any) -> str:
        if isinstance(value, str):
            return value
        if isinstance(value, dict):
            return next((f for v in value.values() if (f := first(v))), "")
        if isinstance(value, list):
            return next((f for v in value if (f := first(v))), "")
        return ""

    exports = doc.get("exports")
    if isinstance(exports, dict) and any(isinstance(k, str) and k.startswith(".") for k in exports):
        pairs = [(k, first(v)) for k, v in exports.items() if isinstance(k, str) and k.startswith(".")]
    elif exports is not None and first(exports):
        pairs = [(".", first(exports))]
    else:
        pairs = [(".", doc["main"])] if isinstance(doc.get("main"), str) else []
    return {k: v.removeprefix("./") for k, v in pairs[:MAX_PREFIXES] if v and ".." not in v.split("/")}


def _go(root: Path, folder: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rel = f"{folder}/go.mod".lstrip("/")
    text = _read(root, rel)
    m = re.search(r"^\s*module\s+(\S+)", text, re.M)
    provides = ([{"ecosystem": "go", "name": m.group(1).strip('"'), "folder": folder, "manifest": rel,
                  "prefixes": [m.group(1).strip('"')]}] if m else [])
    requires = [{"ecosystem": "go", "name": r.group(1), "manifest": rel, "line": text.count("\n", 0, r.start()) + 1}
                for r in _GO_REQUIRE.finditer(text) if not r.group(0).lstrip().startswith("module")]
    return provides, requires


def _cargo(root: Path, folder: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rel = f"{folder}/Cargo.toml".lstrip("/")
    text = _read(root, rel)
    try:
        doc = tomllib.loads(text) if text else {}
    except tomllib.TOMLDecodeError:
        return [], []
    pkg, lib = _table(doc, "package"), _table(doc, "lib")
    name = pkg.get("name") if isinstance(pkg.get("name"), str) else ""
    crate = str(lib.get("name") if isinstance(lib.get("name"), str) else name)
    provides = ([{"ecosystem": "rust", "name": name, "folder": folder, "manifest": rel,
                  "prefixes": [crate.replace("-", "_")]}] if name else [])
    tables = [doc.get(t) for t in ("dependencies", "dev-dependencies", "build-dependencies")]
    tables += [t.get(k) for t in (doc.get("target") or {}).values() if isinstance(t, dict)
               for k in ("dependencies", "dev-dependencies", "build-dependencies")]
    tables.append(_table(_table(doc, "workspace"), "dependencies"))
    requires = []
    for table in tables:
        for key, spec in (table.items() if isinstance(table, dict) else ()):
            real = spec.get("package") if isinstance(spec, dict) and isinstance(spec.get("package"), str) else key
            requires.append({"ecosystem": "rust", "name": real, "as": key.replace("-", "_"), "manifest": rel,
                             "line": _line(text, key)})
    return provides, requires


def _maven(root: Path, folder: str, paths: list[str], spaces: dict[str, tuple[str, ...]]
           ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    from defusedxml import ElementTree
    from defusedxml.common import DefusedXmlException

    rel = f"{folder}/pom.xml".lstrip("/")
    text = _read(root, rel)
    provides: list[dict[str, Any]] = []
    requires: list[dict[str, Any]] = []
    if text:
        try:
            doc = ElementTree.fromstring(text.encode("utf-8"))
        except (ElementTree.ParseError, DefusedXmlException, ValueError):
            return [], []
        def child(el: Any, tag: str) -> str:
            for c in list(el):
                if c.tag.rsplit("}", 1)[-1] == tag and c.text:
                    return c.text.strip()
            return ""
        parent = next((c for c in list(doc) if c.tag.rsplit("}", 1)[-1] == "parent"), None)
        group = child(doc, "groupId") or (child(parent, "groupId") if parent is not None else "")
        artifact = child(doc, "artifactId")
        if group and artifact:
            provides.append({"ecosystem": "maven", "name": f"{group}:{artifact}", "folder": folder, "manifest": rel,
                             "prefixes": _jvm_packages(folder, paths, spaces)})
        for el in doc.iter():
            if el.tag.rsplit("}", 1)[-1] == "dependency":
                g, a = child(el, "groupId"), child(el, "artifactId")
                if g and a and "${" not in g + a:
                    requires.append({"ecosystem": "maven", "name": f"{g}:{a}", "manifest": rel,
                                     "line": _line(text, f"<artifactId>{a}</artifactId>")})
    for name in ("build.gradle", "build.gradle.kts"):
        grel = f"{folder}/{name}".lstrip("/")
        gtext = _read(root, grel)
        for m in _GRADLE_DEP.finditer(gtext):
            requires.append({"ecosystem": "maven", "name": f"{m.group(1)}:{m.group(2)}", "manifest": grel,
                             "line": gtext.count("\n", 0, m.start()) + 1})
    return provides, requires


def _jvm_packages(folder: str, paths: list[str], spaces: dict[str, tuple[str, ...]]) -> list[str]:
    base = f"{folder}/" if folder else ""
    out = {s for p in paths if p.startswith(base) and not is_test_path(p) for s in spaces.get(p, ())}
    return sorted(out)[:MAX_PREFIXES]


# ---- files: where code from outside is used ------------------------------------------------

def _own_firsts(packages: list[dict[str, Any]], paths: Iterable[str]) -> set[str]:
    """First names that are the repository's own: its packages' prefixes and its top-level
    Python folders and modules (``import app.models`` inside ``app`` is not a dependency)."""
    own = {p for pkg in packages for p in pkg["prefixes"]}
    for p in paths:
        if p.endswith(".py"):
            parts = p.split("/")
            own.add(parts[1] if parts[0] == "src" and len(parts) > 2 else parts[0].removesuffix(".py"))
    return own


def _outside(f: FileFacts, spec: str, level: int, own: set[str]) -> bool:
    lang = f.language
    if not spec or level:
        return False
    if lang == "python":
        return spec.split(".", 1)[0] not in own
    if lang in JS:
        return not spec.startswith((".", "/", "node:", "#", "~")) and spec not in own
    if lang == "go":
        return "." in spec.split("/", 1)[0] and not any(spec == o or spec.startswith(o + "/") for o in own)
    if lang == "rust":
        first = spec.split("::", 1)[0]
        return first not in _RUST_ROOTS and first not in own
    if lang in JVM:
        return not spec.startswith(("java.", "javax.", "kotlin.", "scala.")) and \
            not any(spec == o or spec.startswith(o + ".") for o in own)
    return False


def _binds(f: FileFacts, spec: str, names: tuple[str, ...]) -> set[str]:
    """The names an import makes usable in the file (what a call's first name may be)."""
    lang = f.language
    out = set(names)
    if lang == "python":
        if not names:
            out.add(spec.split(".", 1)[0])
    elif lang in JS:
        last = re.split(r"[/@]", spec.rstrip("/"))[-1].split(".")[0]
        if not names and _IDENT.match(last):
            out.add(last)  # `const get = require("lodash/get")`: the binding's name is a guess
    elif lang == "go":
        last = re.sub(r"\.v\d+$", "", spec.rstrip("/").rsplit("/", 1)[-1])
        out.add(re.sub(r"^go-|-go$", "", last).replace("-", "_"))
    elif lang == "rust":
        parts = [p for p in spec.split("::") if p not in ("*", "")]
        out.update(parts[:1] + parts[-1:])
    elif lang in JVM:
        last = spec.rsplit(".", 1)[-1]
        if last != "*":
            out.add(last)
    out.update(local for local, orig in f.renames if orig in names or orig == spec or orig == "*" + spec)
    return {n for n in out if n}


def file_uses(f: FileFacts, own: set[str], local_types: frozenset[str] = frozenset()) -> dict[str, Any] | None:
    """One file's imports of outside code and the call sites they bind, or None. A call
    on a variable whose declared type is not one of the repository's own (``fs.Lookup``
    after ``var fs *pflag.FlagSet``) is kept as ``Type.method`` with import index -1: the
    reader links it to the provider defining that type's method."""
    imports: list[list[Any]] = []
    bound: dict[str, int] = {}
    for imp in f.imports:
        spec, names, level, line = imp[0], imp[1], imp[2], imp[3]
        if not _outside(f, spec, level, own):
            continue
        for n in _binds(f, spec, names):
            bound.setdefault(n, len(imports))
        imports.append([spec, list(names), line])
    if not imports:
        return None
    declared: dict[str, list[tuple[int, str]]] = defaultdict(list)  # variable → (line, an outside type)
    for var, typ, line in f.typed:
        t = typ.lstrip("*&[]").rsplit(".", 1)[-1]
        if _TYPE.match(t) and t not in local_types and var not in bound:
            declared[var].append((line, t))
    calls = []
    for text, line in f.calls if bound else ():
        head, _, rest = text.partition(".")
        i = bound.get(head.partition("::")[0] if ":" in head else head)
        if i is not None:
            calls.append([text, line, i])
        elif head in declared and rest and "." not in rest:
            before = [t for at, t in declared[head] if at <= line]
            if before:
                calls.append([f"{before[-1]}.{rest}", line, -1])
        if len(calls) >= MAX_CALLS_PER_FILE:
            break
    return {"imports": imports, "calls": calls}


def basis_of(own: set[str], local_types: frozenset[str]) -> str:
    """A digest of what every file's uses are made under besides its own facts: the
    repository's own packages and its type names (``file_uses``)."""
    return hashlib.sha256(orjson.dumps([sorted(own), sorted(local_types)])).hexdigest()


def latest_memo(bundle: Path, basis: str, facts: Mapping[str, FileFacts]) -> dict[str, Any] | None:
    """A memo for ``interface`` made of the latest build's ``interface.json`` (``bundle``,
    checked against its manifest; ``basis``: the one it was made under, as its ``stat.bin``
    recorded it; ``facts``: its files' facts): each file with imports, as the very facts
    object it was made of, and its uses there (none when it has no entry). None when the
    file cannot be read or is not one of this format."""
    from oracl.core.vault import INTERFACE_FILE, MANIFEST

    try:
        data = (bundle / INTERFACE_FILE).read_bytes()
        if orjson.loads((bundle / MANIFEST).read_bytes())["files"][INTERFACE_FILE] != \
                hashlib.sha256(data).hexdigest():
            return None
        doc = orjson.loads(data)
        if doc.get("format") != FORMAT or not isinstance(doc.get("files"), dict):
            return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    uses = doc["files"]
    # (every file, with or without imports: whether it has any is not read, so that a file's
    # facts not decoded from their shard stay so)
    return {"basis": basis, "uses": {p: (f, uses.get(p)) for p, f in facts.items()}}


def _type_names(f: FileFacts) -> list[str]:
    return [s[0].rsplit(".", 1)[-1] for s in f.symbols if s[1] in TYPE_KINDS]


def type_counts(facts: list[FileFacts], latest: tuple[dict[str, int], Mapping[str, FileFacts]] | None = None,
                changed: tuple[Iterable[str], Mapping[str, FileFacts]] | None = None) -> dict[str, int]:
    """How many type declarations of each name the files ``facts`` hold (the repository's
    own type names, which ``file_uses`` tells from outside ones). ``latest``: the counts a
    build recorded and its files' facts: a file whose facts are the very object it had
    there is not read again (its symbols stay undecoded); the others' names are taken out
    and put in. ``changed``, with ``latest``: (the only paths whose facts can differ from
    the latest's, this build's facts by path): only those are looked at, no pass over
    every file (a long-lived builder's, which knows what it read again and what went)."""
    if latest is None:
        counts: dict[str, int] = {}
        for f in facts:
            for name in _type_names(f):
                counts[name] = counts.get(name, 0) + 1
        return counts
    counts, before = dict(latest[0]), latest[1]

    def count(f: FileFacts, by: int) -> None:
        for name in _type_names(f):
            counts[name] = counts.get(name, 0) + by

    if changed is not None:
        paths, now = changed
        touched: set[str] = set()
        for path in set(paths):
            old, new = before.get(path), now.get(path)
            if old is new:
                continue
            for one, by in ((old, -1), (new, 1)):
                if one is not None:
                    touched.update(_type_names(one))
                    count(one, by)
        for name in touched:
            if counts.get(name, 0) <= 0:
                counts.pop(name, None)
        return counts
    here = {f.path for f in facts}
    for path, gone in before.items():
        if path not in here:
            count(gone, -1)
    for f in facts:
        old = before.get(f.path)
        if old is not f:
            if old is not None:
                count(old, -1)
            count(f, 1)
    return {name: n for name, n in counts.items() if n > 0}


def encode_type_counts(counts: dict[str, int]) -> bytes:
    return orjson.dumps(sorted(counts.items()))


def decode_type_counts(data: bytes) -> dict[str, int] | None:
    """What ``encode_type_counts`` wrote, or None when ``data`` is not that."""
    try:
        pairs = orjson.loads(data)
        out = {str(name): int(n) for name, n in pairs}
    except (orjson.JSONDecodeError, TypeError, ValueError):
        return None
    return out if all(n > 0 for n in out.values()) else None


def interface(root: Path, facts: list[FileFacts], memo: dict[str, Any] | None = None,
              types: dict[str, int] | None = None) -> dict[str, Any]:
    """The ``interface.json`` document of a build (canonical: sorted keys; files by path,
    each file's imports and calls in source order). ``memo``: kept between builds (a
    long-lived builder's, or ``latest_memo``'s of the latest bundle): a file's uses are
    taken from it while its facts are the very object they were made of and the
    repository's own packages and type names are the same (``basis``); it then holds this
    build's. ``types``: ``type_counts(facts)``, when the caller has it."""
    paths = sorted(f.path for f in facts)
    spaces = {f.path: f.namespaces for f in facts if f.language in JVM and f.namespaces}
    folders = [""] + sorted(workspace_packages(root))
    provides: list[dict[str, Any]] = []
    requires: list[dict[str, Any]] = []
    readers = (lambda d: _python(root, d, paths), lambda d: _npm(root, d), lambda d: _go(root, d),
               lambda d: _cargo(root, d), lambda d: _maven(root, d, paths, spaces))
    for folder in folders:
        for read in readers:
            try:
                got = read(folder)
            except (ValueError, TypeError, AttributeError, KeyError, RecursionError):
                continue  # a manifest of an unexpected shape declares nothing; the build goes on
            provides += got[0]
            requires += got[1]
    own = _own_firsts(provides, paths)
    local_types = frozenset(type_counts(facts) if types is None else types)
    basis = basis_of(own, local_types)
    same = memo is not None and memo.get("basis") == basis
    kept: dict[str, tuple[FileFacts, dict[str, Any] | None]] = memo.get("uses", {}) if memo is not None and same else {}
    made: dict[str, tuple[FileFacts, dict[str, Any] | None]] = {}
    uses = {}
    for f in sorted(facts, key=lambda x: x.path):
        hit = kept.get(f.path)
        if hit is not None and hit[0] is f:  # (the very facts it was made of: not read)
            u = hit[1]
        elif not f.imports:
            continue
        else:
            u = file_uses(f, own, local_types)
        made[f.path] = (f, u)
        if u:
            uses[f.path] = u
    doc = {"format": FORMAT, "packages": provides, "requires": _unique(requires), "files": uses}
    if memo is not None:
        memo.clear()
        memo.update(basis=basis, uses=made)
        # (what ``interface_again`` starts from: this document and what it was made under)
        memo["state"] = {"paths": paths, "listed": frozenset(paths), "spaces": spaces, "own": own,
                         "local": local_types, "doc": doc}
    return doc


def _unique(requires: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen = set()
    reqs = []
    for r in requires:
        key = (r["ecosystem"], normalise(r["ecosystem"], r["name"]), r["manifest"])
        if key not in seen:
            seen.add(key)
            reqs.append(r)
    return reqs


def interface_again(root: Path, memo: dict[str, Any], reread: Iterable[str], removed: Iterable[str],
                    now: Mapping[str, FileFacts], before: Mapping[str, FileFacts],
                    types: Mapping[str, int]) -> dict[str, Any] | None:
    """``interface``'s document made from the one ``memo`` holds (a long-lived builder's:
    the last build's, ``memo["state"]``) when only the files ``reread`` changed: the same
    files (none came or went), the same type names (``types``' keys), the same JVM
    namespaces in the changed files, and the manifests declaring the same packages and
    requirements (read again: a handful of files). The changed files' uses are made again
    and the document patched; nothing else is looked at. None: ``interface`` must make it."""
    st = memo.get("state")
    if st is None or any(True for _ in removed):
        return None
    changed = sorted(set(reread))
    if any(p not in st["listed"] or p not in now for p in changed):
        return None
    local: frozenset[str] = st["local"]
    for p in changed:
        old, new = before.get(p), now[p]
        if old is None or (new.language in JVM and tuple(new.namespaces or ()) != tuple(old.namespaces or ())):
            return None
        if any((name in types) != (name in local) for f in (old, new) for name in _type_names(f)):
            return None
    paths, spaces = st["paths"], st["spaces"]
    provides: list[dict[str, Any]] = []
    requires: list[dict[str, Any]] = []
    for folder in [""] + sorted(workspace_packages(root)):
        for read in (lambda d: _python(root, d, paths), lambda d: _npm(root, d), lambda d: _go(root, d),
                     lambda d: _cargo(root, d), lambda d: _maven(root, d, paths, spaces)):
            try:
                got = read(folder)
            except (ValueError, TypeError, AttributeError, KeyError, RecursionError):
                continue
            provides += got[0]
            requires += got[1]
    doc = st["doc"]
    if provides != doc["packages"] or _unique(requires) != doc["requires"]:
        return None
    own, uses, files = st["own"], memo["uses"], doc["files"]
    for p in changed:
        f = now[p]
        u = file_uses(f, own, local) if f.imports else None
        uses[p] = (f, u)
        if u:
            files[p] = u
        else:
            files.pop(p, None)
    return doc


def encode(doc: dict[str, Any]) -> bytes:
    return orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)
