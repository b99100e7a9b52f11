"""Build, package and deploy files (design §3b): what the import resolvers need from them
(a Go module's path, a package's entry points, a workspace's members, include
directories, PSR-4 prefixes) as ``manifest``, and what they name as ``refs``:

* ``("configures", path)`` – a script, an entry point, a copied path, a source list entry;
* ``("depends_on", dir-or-path)`` – a workspace member, a sub-project, a local dependency.

Every reader is line- or JSON-based and never raises on a malformed file (the file is
still recorded; a malformed JSON file is tagged so by the structural check).

>>> manifest_of("go.mod", "module github.com/spf13/cobra\\n\\ngo 1.15\\n")[0]
{'go_module': 'github.com/spf13/cobra'}
"""

from __future__ import annotations

import re
import tomllib
from typing import Any

import orjson

from oracl.core.records import Ref

_MAX_REFS = 500
JSONC_MAX = 256 * 1024



def _table(doc: dict[str, Any], key: str) -> dict[str, Any]:
    """``doc[key]`` when it is a table (a JSON object, a TOML table), else an empty one."""
    value = doc.get(key)
    return value if isinstance(value, dict) else {}

def manifest_name(path: str) -> str:
    """The kind of build file a path is, or ''."""
    name = path.rsplit("/", 1)[-1]
    low = name.lower()
    if low in ("package.json", "go.mod", "cargo.toml", "composer.json", "pom.xml", "cmakelists.txt",
               "compile_commands.json", "makefile", "gnumakefile", "package.swift"):
        return low
    if low.startswith(("tsconfig", "jsconfig")) and low.endswith(".json"):
        return "tsconfig.json"
    if low in ("settings.gradle", "settings.gradle.kts"):
        return "settings.gradle"
    if low.startswith(("dockerfile", "containerfile")) or low.endswith(".dockerfile"):
        return "dockerfile"
    if re.fullmatch(r"(docker-)?compose(\.[\w-]+)?\.ya?ml", low):
        return "compose"
    if "/.github/workflows/" in f"/{path}" and low.endswith((".yml", ".yaml")):
        return "workflow"
    if low.endswith(".mk"):
        return "makefile"
    return ""


def _line_of(text: str, needle: str) -> int:
    i = text.find(needle)
    return text.count("\n", 0, i) + 1 if i >= 0 else 1


def _json(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        # tsconfig and jsconfig allow comments and trailing commas (a real one is a few KiB:
        # a larger malformed file is not worth a second, regex-driven pass)
        if len(text) > JSONC_MAX:
            return None
        stripped = re.sub(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', lambda m: m.group(1) or "", text, flags=re.S)
        stripped = re.sub(r",(\s*[}\]])", r"\1", stripped)
        try:
            return orjson.loads(stripped)
        except orjson.JSONDecodeError:
            return None


def _strings(value: Any) -> list[str]:
    """Every string inside a JSON value (conditional ``exports`` maps, ``bin`` maps …)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


_SCRIPT_PATH = re.compile(r"(?<![\w@:/.-])((?:\.{0,2}/)?[\w.-]+(?:/[\w.-]+)*\.(?:js|mjs|cjs|ts|sh|py|rb|go|rs))\b")


def manifest_of(path: str, text: str) -> tuple[dict[str, object], tuple[Ref, ...]]:
    """(manifest facts, refs) of a build file; ({}, ()) for any other file."""
    kind = manifest_name(path)
    if not kind:
        return {}, ()
    try:
        return _READERS[kind](text)
    except (ValueError, TypeError, AttributeError, KeyError, RecursionError):
        return {}, ()


def _package_json(text: str) -> tuple[dict[str, object], tuple[Ref, ...]]:
    doc = _json(text)
    if not isinstance(doc, dict):
        return {}, ()
    facts: dict[str, object] = {}
    refs: list[Ref] = []
    if isinstance(doc.get("name"), str):
        facts["js_name"] = doc["name"]
    entries = [v for k in ("main", "module", "types", "typings", "browser") for v in _strings(doc.get(k))]
    exports = doc.get("exports")
    if isinstance(exports, dict) and any(k.startswith(".") for k in exports):
        facts["js_exports"] = {k: _strings(v)[0] for k, v in exports.items() if k.startswith(".") and _strings(v)}
    elif exports is not None:
        facts["js_exports"] = {".": _strings(exports)[0]} if _strings(exports) else {}
    facts["js_main"] = entries[0] if entries else ""
    for value in entries + _strings(doc.get("bin")) + _strings(exports):
        refs.append(("configures", value, _line_of(text, f'"{value}"')))
    scripts = doc.get("scripts")
    if isinstance(scripts, dict):
        for cmd in _strings(scripts):
            for m in _SCRIPT_PATH.finditer(cmd):
                refs.append(("configures", m.group(1), _line_of(text, cmd)))
    ws = doc.get("workspaces")
    members = _strings(ws.get("packages") if isinstance(ws, dict) else ws)
    if members:
        facts["workspaces"] = members
        refs.extend(("depends_on", m, _line_of(text, f'"{m}"')) for m in members)
    return facts, tuple(refs[:_MAX_REFS])


def _tsconfig(text: str) -> tuple[dict[str, object], tuple[Ref, ...]]:
    doc = _json(text)
    if not isinstance(doc, dict):
        return {}, ()
    opts = _table(doc, "compilerOptions")
    facts: dict[str, object] = {}
    if isinstance(opts.get("baseUrl"), str):
        facts["ts_base_url"] = opts["baseUrl"]
    if isinstance(opts.get("paths"), dict):
        facts["ts_paths"] = {k: _strings(v) for k, v in opts["paths"].items() if isinstance(k, str)}
    refs = [("configures", e, _line_of(text, e)) for e in _strings(doc.get("extends"))
            if e.startswith(".")]
    refs += [("depends_on", r, _line_of(text, r)) for ref in doc.get("references") or []
             if isinstance(ref, dict) for r in _strings(ref.get("path"))]
    return facts, tuple(refs)


def _go_mod(text: str) -> tuple[dict[str, object], tuple[Ref, ...]]:
    facts: dict[str, object] = {}
    refs: list[Ref] = []
    for i, line in enumerate(text.splitlines(), 1):
        m = re.match(r"\s*module\s+(\S+)", line)
        if m:
            facts["go_module"] = m.group(1).strip('"')
        m = re.search(r"=>\s*(\.{1,2}/\S*)", line)
        if m:
            refs.append(("depends_on", m.group(1), i))
    return facts, tuple(refs)


def _cargo(text: str) -> tuple[dict[str, object], tuple[Ref, ...]]:
    doc = tomllib.loads(text)
    facts: dict[str, object] = {}
    refs: list[Ref] = []
    pkg = _table(doc, "package")
    if isinstance(pkg.get("name"), str):
        facts["crate"] = pkg["name"].replace("-", "_")
    lib = _table(doc, "lib")
    if isinstance(lib.get("path"), str):
        facts["crate_lib"] = lib["path"]
        refs.append(("configures", lib["path"], _line_of(text, lib["path"])))
    for b in doc.get("bin") or []:
        if isinstance(b, dict) and isinstance(b.get("path"), str):
            refs.append(("configures", b["path"], _line_of(text, b["path"])))
    ws = _table(doc, "workspace")
    members = [m for m in ws.get("members") or [] if isinstance(m, str)]
    if members:
        facts["members"] = members
        refs.extend(("depends_on", m, _line_of(text, f'"{m}"')) for m in members)
    for table in ("dependencies", "dev-dependencies", "build-dependencies"):
        deps = _table(doc, table)
        for dep in deps.values():
            if isinstance(dep, dict) and isinstance(dep.get("path"), str):
                refs.append(("depends_on", dep["path"], _line_of(text, dep["path"])))
    wdeps = _table(ws, "dependencies")
    for dep in wdeps.values():
        if isinstance(dep, dict) and isinstance(dep.get("path"), str):
            refs.append(("depends_on", dep["path"], _line_of(text, dep["path"])))
    return facts, tuple(refs[:_MAX_REFS])


def _composer(text: str) -> tuple[dict[str, object], tuple[Ref, ...]]:
    doc = _json(text)
    if not isinstance(doc, dict):
        return {}, ()
    psr4: dict[str, list[str]] = {}
    for key in ("autoload", "autoload-dev"):
        auto = _table(doc, key)
        for prefix, dirs in (auto.get("psr-4") or {}).items():
            psr4.setdefault(prefix, []).extend(_strings(dirs))
    refs = [("configures", d, _line_of(text, d)) for ds in psr4.values() for d in ds]
    return ({"psr4": psr4} if psr4 else {}), tuple(refs)


def _pom(text: str) -> tuple[dict[str, object], tuple[Ref, ...]]:
    refs: list[Ref] = []
    for m in re.finditer(r"<module>\s*([^<\s]+)\s*</module>", text):
        refs.append(("depends_on", m.group(1), text.count("\n", 0, m.start()) + 1))
    for m in re.finditer(r"<(?:source|testSource)Directory>\s*([^<\s]+)\s*<", text):
        refs.append(("configures", m.group(1), text.count("\n", 0, m.start()) + 1))
    return {}, tuple(refs)


def _settings_gradle(text: str) -> tuple[dict[str, object], tuple[Ref, ...]]:
    refs: list[Ref] = []
    for i, line in enumerate(text.splitlines(), 1):
        if re.match(r"\s*include\b", line):
            for name in re.findall(r"[\"']:?([\w:.-]+)[\"']", line):
                refs.append(("depends_on", name.replace(":", "/"), i))
    return {}, tuple(refs)


_CMAKE_CALL = re.compile(r"\b(add_subdirectory|include_directories|target_include_directories|add_executable"
                         r"|add_library|target_sources|include)\s*\(([^)]*)\)", re.I | re.S)


def _cmake(text: str) -> tuple[dict[str, object], tuple[Ref, ...]]:
    includes: list[str] = []
    refs: list[Ref] = []
    for m in _CMAKE_CALL.finditer(text):
        cmd, args = m.group(1).lower(), m.group(2).split()
        line = text.count("\n", 0, m.start()) + 1
        words = [a.strip('"') for a in args if not a.isupper() and "$" not in a and a != "${CMAKE_CURRENT_SOURCE_DIR}"]
        if cmd == "add_subdirectory" and words:
            refs.append(("depends_on", words[0], line))
        elif cmd in ("include_directories", "target_include_directories"):
            includes.extend(w for w in words[1 if cmd.startswith("target") else 0:])
        elif cmd in ("add_executable", "add_library", "target_sources"):
            refs.extend(("configures", w, line) for w in words[1:] if "." in w)
        elif cmd == "include" and words and words[0].endswith(".cmake"):
            refs.append(("configures", words[0], line))
    return ({"include_dirs": includes} if includes else {}), tuple(refs[:_MAX_REFS])


def _compile_commands(text: str) -> tuple[dict[str, object], tuple[Ref, ...]]:
    doc = _json(text)
    dirs: set[str] = set()
    for entry in doc if isinstance(doc, list) else []:
        cmd = entry.get("command") or " ".join(_strings(entry.get("arguments"))) if isinstance(entry, dict) else ""
        dirs.update(re.findall(r"-I\s*(\S+)", cmd or ""))
    return ({"include_dirs": sorted(dirs)} if dirs else {}), ()


def _makefile(text: str) -> tuple[dict[str, object], tuple[Ref, ...]]:
    refs: list[Ref] = []
    for i, line in enumerate(text.splitlines(), 1):
        m = re.match(r"\s*-?include\s+(.+)", line)
        if m:
            refs.extend(("configures", w, i) for w in m.group(1).split() if "$" not in w)
        elif line.startswith("\t"):
            refs.extend(("configures", p.group(1), i) for p in _SCRIPT_PATH.finditer(line))
    return {}, tuple(refs[:_MAX_REFS])


def _dockerfile(text: str) -> tuple[dict[str, object], tuple[Ref, ...]]:
    refs: list[Ref] = []
    for i, line in enumerate(text.splitlines(), 1):
        m = re.match(r"\s*(COPY|ADD)\s+(.*)", line, re.I)
        if m:
            args = [a for a in m.group(2).split() if not a.startswith("--")]
            refs.extend(("configures", a.strip('"[],'), i) for a in args[:-1] if "$" not in a)
        for p in _SCRIPT_PATH.finditer(line) if re.match(r"\s*(RUN|CMD|ENTRYPOINT)\b", line, re.I) else ():
            refs.append(("configures", p.group(1), i))
    return {}, tuple(refs[:_MAX_REFS])


def _compose(text: str) -> tuple[dict[str, object], tuple[Ref, ...]]:
    refs: list[Ref] = []
    for i, line in enumerate(text.splitlines(), 1):
        m = re.match(r"\s*(?:build|context|dockerfile|env_file)\s*:\s*[\"']?(\.{0,2}/?[\w./-]+)", line)
        if m and m.group(1) not in (".",):
            refs.append(("configures", m.group(1), i))
        m = re.match(r"\s*-\s*[\"']?(\.{1,2}/[\w./-]+):", line)  # a bind-mounted local path
        if m:
            refs.append(("configures", m.group(1), i))
    return {}, tuple(refs)


def _workflow(text: str) -> tuple[dict[str, object], tuple[Ref, ...]]:
    refs: list[Ref] = []
    for i, line in enumerate(text.splitlines(), 1):
        m = re.match(r"\s*-?\s*uses\s*:\s*(\./[\w./-]+)", line)
        if m:
            refs.append(("configures", m.group(1), i))
        refs.extend(("configures", p.group(1), i) for p in _SCRIPT_PATH.finditer(line)
                    if "run" in line or line.startswith(" " * 8))
    return {}, tuple(refs[:_MAX_REFS])


def _package_swift(text: str) -> tuple[dict[str, object], tuple[Ref, ...]]:
    refs = [("configures", m.group(1), text.count("\n", 0, m.start()) + 1)
            for m in re.finditer(r"path:\s*\"([^\"]+)\"", text)]
    return {}, tuple(refs)


_READERS = {
    "package.json": _package_json, "tsconfig.json": _tsconfig, "go.mod": _go_mod, "cargo.toml": _cargo,
    "composer.json": _composer, "pom.xml": _pom, "settings.gradle": _settings_gradle,
    "cmakelists.txt": _cmake, "compile_commands.json": _compile_commands, "makefile": _makefile,
    "gnumakefile": _makefile, "dockerfile": _dockerfile, "compose": _compose, "workflow": _workflow,
    "package.swift": _package_swift,
}
