"""Edges across the members of a workspace (design §12, issue 35): a dependency one
member's manifest names and another member provides links the importing files to the
provider's files and symbols; ``impact`` and ``callers`` cross that boundary.

Each member's bundle carries ``interface.json`` (``builder.pipeline.interface``): the
packages it provides with their import prefixes, the dependencies its manifests name, and
per file its imports of outside code with the call sites they bind. A **link** is (consumer,
provider, package): the consumer requires the package by a name the provider declares
(compared as the ecosystem compares names). A **use** is one of the consumer's imports
whose module starts with one of the package's prefixes, with the calls it binds; its
**targets** are the provider's files the module names (``werkzeug.serving`` →
``src/werkzeug/serving.py``; ``com.google.gson.Gson`` → ``…/com/google/gson/Gson.java``;
``body-parser/json`` → the file the package's ``exports`` map names for ``./json``).

Impact across members, from a change in member P:

1. P's own ``impact`` (to ``MAX_K`` rows) gives the symbols and files the change reaches.
2. In every member C linked to P, an **entry** is a call site whose called name is one of
   those symbols' names, defined in the package's importable code (``in_package``; 0.9 ÷ the
   number of reached definitions of that name there), or, for an import none of whose
   uses is recorded as a call, the import when its targets include a reached file (0.5:
   the module changed, what of it is used is not known).
3. C's own ``impact`` from the call entries' lines (the innermost definitions holding
   them; from the import entries' only when C calls nothing reached); a seeded file's score
   × its best entry's confidence, any other's × the best seeded entry's, at least 0.5 for a
   file importing a reached module. C's reached symbols and files
   are then P's for the members linked to C, ``hops`` times at most. A member is entered
   once: a dependency cycle across repositories (A → B → A) is named, not followed again.

Two members that provide the same package both get the links (what is reached is not
under-reported) and a notice names them. A member that cannot be opened, does not verify,
or whose bundle predates ``interface.json`` is named; the others still answer.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from oracl.core.errors import ConfigError, OraclError, QueryError, VaultError, in_range
from oracl.core.members import Member, WorkspaceFile
from oracl.core.packages import normalise
from oracl.core.vault import INTERFACE_FILE, MANIFEST
from oracl.read.memory import _without
from oracl.read.snapshot import Snapshot

MAX_HOPS = 5
ENTRY_CALL = 0.9     # a call site naming a reached definition (÷ how many reached definitions share the name)
ENTRY_IMPORT = 0.5   # an import of a reached module, no call of a reached name seen
ENTRY_TYPED = 0.8    # a method called on a variable declared with the provider's type (÷ definitions of Type.method)
_EXT = {"python": (".py",), "npm": (".js", ".ts", ".mjs", ".cjs", ".tsx", ".jsx"), "go": (".go",),
        "rust": (".rs",), "maven": (".java", ".kt", ".scala")}
MAX_INTERFACE_BYTES = 256 << 20


@dataclass
class View:
    """One member's latest build as the workspace joins it."""

    member: Member
    snap: Snapshot
    iface: dict[str, Any]
    hidden: frozenset[str] = frozenset()  # files holding key material, when the answer withholds them
    _by_base: dict[str, list[str]] | None = None

    @property
    def name(self) -> str:
        return self.member.name

    def files(self) -> dict[str, list[Any]]:
        return self.snap.built_files(database=False)[1]

    def by_base(self) -> dict[str, list[str]]:
        """file name → paths (the targets' lookup)."""
        if self._by_base is None:
            idx: dict[str, list[str]] = defaultdict(list)
            for p in self.files():
                idx[p.rsplit("/", 1)[-1]].append(p)
            self._by_base = dict(idx)
        return self._by_base


@dataclass
class Link:
    consumer: View
    provider: View
    package: dict[str, Any]
    require: dict[str, Any]
    shared_with: list[str] = field(default_factory=list)  # other members providing the same package


def _interface(snap: Snapshot) -> dict[str, Any]:
    """The bundle's ``interface.json``, checked against the manifest's digest of it (the
    manifest is what a member's signature covers)."""
    path = snap.bundle / INTERFACE_FILE
    try:
        if path.stat().st_size > MAX_INTERFACE_BYTES:
            raise VaultError(f"its interface.json is over {MAX_INTERFACE_BYTES >> 20} MiB")
        data = path.read_bytes()
        listed = orjson.loads((snap.bundle / MANIFEST).read_bytes()).get("files", {}).get(INTERFACE_FILE)
    except FileNotFoundError:
        raise VaultError("its build predates interface.json (rebuild it with this ORACL to link it)") from None
    except (OSError, orjson.JSONDecodeError, AttributeError) as exc:
        raise VaultError(f"its interface.json cannot be read ({exc})") from None
    if listed != hashlib.sha256(data).hexdigest():
        raise VaultError("its interface.json does not match the bundle's manifest")
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise VaultError("its interface.json is not JSON") from None
    if not isinstance(doc, dict) or doc.get("format") != 1:
        raise VaultError("its interface.json is of another format (rebuild it)")
    if not _well_formed(doc):
        raise VaultError("its interface.json is malformed (a field of the wrong type)")
    return doc


def _well_formed(doc: dict[str, Any]) -> bool:
    """Every field a reader takes is there with its type (a signed bundle from elsewhere is
    still input: a wrong type is refused here, not a crash later)."""
    def strs(d: Any, keys: tuple[str, ...]) -> bool:
        return isinstance(d, dict) and all(isinstance(d.get(k), str) for k in keys)

    packages, requires, files = doc.get("packages"), doc.get("requires"), doc.get("files")
    if not (isinstance(packages, list) and isinstance(requires, list) and isinstance(files, dict)):
        return False
    if not all(strs(p, ("ecosystem", "name", "folder", "manifest")) and isinstance(p.get("prefixes"), list)
               and all(isinstance(x, str) for x in p["prefixes"]) for p in packages):
        return False
    if not all(strs(r, ("ecosystem", "name", "manifest")) and isinstance(r.get("line"), int)
               and isinstance(r.get("as", ""), str) for r in requires):
        return False
    for u in files.values():
        if not isinstance(u, dict) or not isinstance(u.get("imports"), list) or not isinstance(u.get("calls"), list):
            return False
        if not all(isinstance(i, list) and len(i) == 3 and isinstance(i[0], str) and isinstance(i[1], list)
                   and all(isinstance(n, str) for n in i[1]) and isinstance(i[2], int) for i in u["imports"]):
            return False
        if not all(isinstance(c, list) and len(c) == 3 and isinstance(c[0], str) and isinstance(c[1], int)
                   and isinstance(c[2], int) for c in u["calls"]):
            return False
    return True


@contextmanager
def opened(ws: WorkspaceFile, withhold: bool = False) -> Iterator[tuple[list[View], list[dict[str, Any]], list[str]]]:
    """Every member's latest build held open (views, each member's status, notices); with
    ``withhold``, each view knows its files that hold key material (left out of answers)."""
    from oracl.read.fanout import _verify_member
    from oracl.read.memory import sensitive_paths

    views, status, notices = [], [], []
    with ExitStack() as stack:
        for m in ws.members:
            try:
                snap = stack.enter_context(Snapshot.open(Path(m.root)))
                checked = _verify_member(snap, m)
                status.append({"name": m.name, "root": m.root, "build_id": snap.build_id, "ok": True,
                               "checked": checked})
            except (OraclError, OSError) as exc:
                why = str(exc).split("\n")[0][:300]
                status.append({"name": m.name, "root": m.root, "ok": False, "error": why})
                notices.append(f"member {m.name} did not answer: {why}")
                continue
            try:
                views.append(View(m, snap, _interface(snap), sensitive_paths(snap) if withhold else frozenset()))
            except OraclError as exc:
                status[-1]["linked"] = False
                notices.append(f"member {m.name} is not linked to the others: {exc}")
        yield views, status, notices


def links(views: list[View]) -> tuple[list[Link], list[str]]:
    """Every (consumer, provider, package) the members' manifests make, and notices."""
    providers: dict[tuple[str, str], list[tuple[View, dict[str, Any]]]] = defaultdict(list)
    for v in views:
        for pkg in v.iface.get("packages", []):
            providers[(pkg["ecosystem"], normalise(pkg["ecosystem"], pkg["name"]))].append((v, pkg))
    notices = [f"package {key[1]} ({key[0]}) is provided by {len(ps)} members: "
               f"{', '.join(v.name for v, _ in ps)}; what imports it is linked to each"
               for key, ps in sorted(providers.items()) if len({v.name for v, _ in ps}) > 1]
    out = []
    for c in views:
        seen = set()
        for req in c.iface.get("requires", []):
            key = (req["ecosystem"], normalise(req["ecosystem"], req["name"]))
            provs = [(p, pkg) for p, pkg in providers.get(key, []) if p is not c]
            for p, pkg in provs:
                if (p.name, pkg["name"]) in seen:
                    continue
                seen.add((p.name, pkg["name"]))
                out.append(Link(c, p, pkg, req, [o.name for o, _ in provs if o is not p]))
    return out, notices


def in_package(link: Link, path: str) -> bool:
    """Whether a provider's file is the package's importable code: under its folder (for
    Python, inside one of its top-level packages or modules; for Rust, ``src/``), not a test."""
    from oracl.core.paths import is_test_path

    pkg = link.package
    base = f"{pkg['folder']}/" if pkg["folder"] else ""
    if not path.startswith(base) or is_test_path(path):
        return False
    rest = path[len(base):]
    if pkg["ecosystem"] == "python":
        rest = rest.removeprefix("src/")
        return any(rest.startswith(x + "/") or rest == x + ".py" for x in pkg["prefixes"])
    if pkg["ecosystem"] == "rust":
        return rest.startswith("src/")
    return True


def _matches(eco: str, spec: str, prefix: str, alias: str = "") -> bool:
    if eco == "python":
        return spec == prefix or spec.startswith(prefix + ".")
    if eco in ("npm", "go"):
        return spec == prefix or spec.startswith(prefix + "/")
    if eco == "rust":
        first = spec.split("::", 1)[0]
        return first in (prefix, alias)
    if eco == "maven":
        return spec.startswith(prefix + ".")
    return False


def targets(link: Link, spec: str, names: list[str]) -> list[str]:
    """The provider's files a module (and the names imported from it) stands for."""
    pkg, p = link.package, link.provider
    eco, folder = pkg["ecosystem"], pkg["folder"]
    base = f"{folder}/" if folder else ""
    prefix = next((x for x in sorted(pkg["prefixes"], key=len, reverse=True) if _matches(eco, spec, x)), "")
    files = p.files()
    if eco == "python":
        rel = spec.replace(".", "/")
        cands = [f"{b}{rel}{tail}" for b in (base, f"{base}src/") for tail in (".py", "/__init__.py")]
        cands += [f"{b}{rel}/{n}.py" for b in (base, f"{base}src/") for n in names]
        return [c for c in cands if c in files]
    if eco == "npm":
        sub = spec[len(prefix):].strip("/")
        entries = pkg.get("entries")
        named = entries.get(f"./{sub}" if sub else ".") if isinstance(entries, dict) else None
        if isinstance(named, str):  # the package's exports map (or main) says which file
            hit = [f"{base}{named}{e}" for e in ("",) + _EXT[eco] + tuple(f"/index{x}" for x in _EXT[eco])
                   if f"{base}{named}{e}" in files]
            if hit:
                return hit[:1]
        stems = [f"{base}{d}{sub}" for d in ("", "src/", "lib/")] if sub else \
            [f"{base}{d}index" for d in ("", "src/", "lib/")]
        found = [s + e for s in stems for e in _EXT[eco] + tuple(f"/index{x}" for x in _EXT[eco]) if s + e in files]
        return found[:4] or ([f"{base}package.json"] if f"{base}package.json" in files else [])
    if eco == "go":
        sub = spec[len(prefix):].strip("/")
        d = f"{base}{sub}/" if sub else base
        return sorted(f for f in files if f.startswith(d) and "/" not in f[len(d):] and f.endswith(".go")
                      and not f.endswith("_test.go"))[:50]
    if eco == "rust":
        parts = spec.split("::")[1:]
        src = f"{base}src/"
        cands = [f"{src}lib.rs"]
        for i in range(len(parts), 0, -1):
            rel = "/".join(parts[:i])
            cands = [f"{src}{rel}.rs", f"{src}{rel}/mod.rs"] + cands
        return [c for c in cands if c in files][:1]
    if eco == "maven":
        parts = spec.split(".")
        if parts[-1] == "*":
            d = "/".join(parts[:-1]) + "/"
            return sorted(f for f in files if f.startswith(base) and d in f and f.rsplit("/", 1)[0].endswith(d[:-1])
                          and f.endswith(_EXT[eco]))[:50]
        for i in range(len(parts), 1, -1):  # a class, or an inner class: a.b.Outer.Inner
            suffix = "/".join(parts[:i])
            got = [f for ext in _EXT[eco] for f in p.by_base().get(parts[i - 1] + ext, [])
                   if f.startswith(base) and f.endswith(suffix + ext)]
            if got:
                return got
    return []


def uses(link: Link) -> Iterator[tuple[str, list[Any], list[list[Any]]]]:
    """(file, import, the calls it binds) for each of the consumer's imports of the package."""
    pkg = link.package
    eco = pkg["ecosystem"]
    alias = link.require.get("as", "")
    for path, u in link.consumer.iface.get("files", {}).items():
        imports = u["imports"]
        for i, imp in enumerate(imports):
            if any(_matches(eco, imp[0], x, alias) for x in pkg["prefixes"]):
                yield path, imp, [c for c in u["calls"] if c[2] == i]


def typed_calls(link: Link) -> Iterator[tuple[str, str, str, int]]:
    """(file, type, method, line) for each call on a variable of an outside type, in the
    consumer's files that import the package (``FlagSet.Lookup`` in a file importing pflag)."""
    pkg = link.package
    alias = link.require.get("as", "")
    for path, u in link.consumer.iface.get("files", {}).items():
        typed = [c for c in u["calls"] if c[2] == -1]
        if typed and any(_matches(pkg["ecosystem"], imp[0], x, alias) for imp in u["imports"] for x in pkg["prefixes"]):
            for call, line, _ in typed:
                kind, _, method = call.partition(".")
                yield path, kind, method, line


def _of_type(defs: list[dict[str, Any]], kind: str, method: str) -> list[dict[str, Any]]:
    """The definitions that are ``kind``'s ``method`` (``FlagSet.Lookup``, ``pkg.FlagSet.Lookup``)."""
    return [d for d in defs if d["qualified"] == f"{kind}.{method}" or d["qualified"].endswith(f".{kind}.{method}")]


def called_name(call: str, imp: list[Any]) -> str:
    """The provider's name a call site names: ``click.echo`` → ``echo``; ``rs`` bound by
    ``from werkzeug.serving import run_simple as rs`` → ``run_simple``."""
    parts = call.replace("::", ".").split(".")
    if len(parts) > 1:
        return parts[-1]
    names = imp[1]
    if call not in names and len(names) == 1:
        return str(names[0])
    return call


def link_summary(links_: list[Link]) -> list[dict[str, Any]]:
    """Each link with how many of the consumer's files import the package."""
    out = []
    for ln in links_:
        files = {path for path, _, _ in uses(ln)}
        out.append({"consumer": ln.consumer.name, "provider": ln.provider.name, "ecosystem": ln.package["ecosystem"],
                    "package": ln.package["name"], "manifest": ln.require["manifest"], "line": ln.require["line"],
                    "files": len(files), "shared_with": ln.shared_with})
    return out


# ---- impact across members -----------------------------------------------------------------

def _reach(result: dict[str, Any]) -> tuple[dict[str, list[dict[str, Any]]], dict[str, int]]:
    """(name → reached definitions, reached file → its distance) of one member's impact."""
    names: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in result["seeds"] + result["symbols"]:
        if s.get("kind") != "module":
            names[s["name"]].append(s)
    files = {f["path"]: f["distance"] for f in result["files"]}
    files.update({p: 0 for p in result["changed"]})
    return dict(names), files


def _where(link: Link, d: dict[str, Any]) -> str:
    """``path:line`` of a provider's definition (the withheld marker for a file holding key material)."""
    from oracl.read.memory import WITHHELD

    if d["path"] in link.provider.hidden:
        return WITHHELD
    return f"{d['path']}:{d['start']}" if d.get("start") else d["path"]


def _entries(link: Link, names: dict[str, list[dict[str, Any]]], files: dict[str, int]) -> dict[str, list[dict[str, Any]]]:
    """consumer path → its entries (line, confidence, what of the provider it uses)."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for path, kind, method, line in typed_calls(link):
        defs = [d for d in _of_type(names.get(method, []), kind, method) if in_package(link, d["path"])]
        if defs:
            out[path].append({"line": line, "confidence": round(ENTRY_TYPED / len(defs), 6), "kind": "typed",
                              "uses": f"{kind}.{method}", "defined": _where(link, defs[0]),
                              "qualified": defs[0]["qualified"]})
    for path, imp, calls in uses(link):
        hit_call = False
        for call, line, _ in calls:
            defs = [d for d in names.get(called_name(call, imp), []) if in_package(link, d["path"])]
            if defs:
                hit_call = True
                out[path].append({"line": line, "confidence": round(ENTRY_CALL / len(defs), 6), "kind": "call",
                                  "uses": call,
                                  "defined": _where(link, defs[0]),
                                  "qualified": defs[0]["qualified"]})
        for n in imp[1]:
            defs = [d for d in names.get(n, []) if in_package(link, d["path"])]
            if defs and not hit_call:
                hit_call = True
                out[path].append({"line": imp[2], "confidence": round(ENTRY_CALL / len(defs), 6), "kind": "call",
                                  "uses": f"import {n} from {imp[0]}",
                                  "defined": _where(link, defs[0]),
                                  "qualified": defs[0]["qualified"]})
        # an import alone is an entry only when nothing the file calls of the package is
        # known (a recorded call through it, reached or not) and nothing else of it entered
        if not hit_call and not calls and not out.get(path):
            reached = sorted(set(targets(link, imp[0], imp[1])) & files.keys(), key=lambda p: (files[p], p))
            if reached:
                out[path].append({"line": imp[2], "confidence": ENTRY_IMPORT, "kind": "import",
                                  "uses": f"import {imp[0]}",
                                  "defined": _where(link, {"path": reached[0]}), "qualified": ""})
    return dict(out)


def member_of(ws: WorkspaceFile, folder: Path) -> str:
    """The member whose root holds ``folder`` (the deepest, when roots nest)."""
    here = folder.expanduser().resolve()
    best = max((m for m in ws.members if here == Path(m.root) or Path(m.root) in here.parents),
               key=lambda m: len(m.root), default=None)
    if best is None:
        raise ConfigError(f"{here} is inside no member of {ws.path}: name the member that changes with --member NAME")
    return best.name


def links_workspace(ws: WorkspaceFile, withhold: bool = False) -> dict[str, Any]:
    """Every edge between members (``oracl workspace links``) and the packages each provides."""
    with opened(ws, withhold) as (views, status, notices):
        all_links, link_notices = links(views)
        return {"schema": "oracl.workspace-links/1", "workspace": str(ws.path), "links": link_summary(all_links),
                "packages": [{"repository": v.name, "ecosystem": p["ecosystem"], "package": p["name"],
                              "folder": p["folder"], "prefixes": p["prefixes"][:20]}
                             for v in views for p in v.iface.get("packages", [])],
                "members": status, "notices": notices + link_notices}


def impact_workspace(ws: WorkspaceFile, member: str, targets_: list[str] | None = None, *, diff: str | None = None,
                     depth: int = 3, hops: int = 3, k: int = 20, cwd: Path | None = None,
                     withhold: bool = False) -> dict[str, Any]:
    """What a change in ``member`` reaches in it and, across manifests' dependencies, in
    the other members (each member's files and tests with the entries that reach them)."""
    from oracl.read.callgraph import MAX_K, impact

    in_range("--hops", hops, 1, MAX_HOPS)
    in_range("-k", k, 1, MAX_K)
    with opened(ws, withhold) as (views, status, notices):
        origin = next((v for v in views if v.name == member), None)
        if origin is None:
            known = [m.name for m in ws.members]
            if member in known:
                raise QueryError(f"member {member} cannot answer: "
                                 + next((n for n in notices if n.startswith(f"member {member} ")), "see the notices"))
            raise ConfigError(f"no member named {member!r} in {ws.path} (members: {', '.join(known[:10])})")
        all_links, link_notices = links(views)
        notices += link_notices
        first = impact(origin.snap, targets_ or [], diff=diff, depth=depth, k=MAX_K, cwd=cwd)
        notices += [f"{member}: {n}" for n in first["notices"]]
        sections = [_section(origin, 0, "", [], first, {}, {}, k, 1.0)]
        frontier = [(origin, _reach(first))]
        entered = {origin.name}
        for hop in range(1, hops + 1):
            nxt = []
            for prov, (names, files) in frontier:
                for ln in (x for x in all_links if x.provider is prov):
                    entries = _entries(ln, names, files)
                    if not entries:
                        continue
                    c = ln.consumer
                    if c.name in entered:
                        notices.append(f"{prov.name} → {c.name}: {c.name} is already reached (a dependency cycle "
                                       "across repositories, or a second path); not followed again")
                        continue
                    entered.add(c.name)
                    # the call entries start the member's own impact; an import alone does only
                    # when nothing of the provider's reached code is called in the member
                    seeded = {p: [e for e in es if e["kind"] != "import"] for p, es in entries.items()}
                    seeded = {p: es for p, es in seeded.items() if es} or entries
                    lines = {p: [(e["line"], e["line"]) for e in es] for p, es in seeded.items()}
                    res = impact(c.snap, [], changed_lines=lines, depth=depth, k=MAX_K)
                    best = max(e["confidence"] for es in seeded.values() for e in es)
                    sections.append(_section(c, hop, prov.name, [ln.package["name"]], res, entries, seeded, k, best))
                    nxt.append((c, _reach(res)))
            frontier = nxt
            if not frontier:
                break
        else:
            ahead = {ln.consumer.name for v, _ in frontier for ln in all_links if ln.provider is v} - entered
            if ahead:
                notices.append(f"stopped after {hops} hop(s) (--hops): {', '.join(sorted(ahead))} further "
                               "downstream not followed")
        reached = [s for s in sections if s["hop"] > 0]
        return {"schema": "oracl.workspace-impact/1", "workspace": str(ws.path), "member": member,
                "targets": targets_ or [], "diff": diff, "depth": depth, "hops": hops,
                "changed": first["changed"], "repositories": sections,
                "reached_repositories": len(reached),
                "reached_files": sum(s["file_count"] + s["test_count"] for s in reached),
                "links": link_summary(all_links), "members": status, "notices": notices}


def _section(v: View, hop: int, via: str, packages: list[str], res: dict[str, Any],
             entries: dict[str, list[dict[str, Any]]], seeded: dict[str, list[dict[str, Any]]], k: int,
             scale: float) -> dict[str, Any]:
    """One member's part of a workspace impact: its entries, then its files and tests. A
    seeded entry file scores its own impact's score × its best entry's confidence; any
    other file its own score × ``scale`` (the best seeded entry's), raised to 0.5 when it
    imports a reached module (an unseeded import entry); an entry file's reasons say first
    what of the provider it uses."""
    from oracl.core.paths import is_test_to_run

    def row(f: dict[str, Any]) -> dict[str, Any]:
        own, seed = entries.get(f["path"]), seeded.get(f["path"])
        score = f["score"] * (max(e["confidence"] for e in seed) if seed else scale)
        if own and not seed:
            score = max(score, max(e["confidence"] for e in own))
        out = {**f, "score": round(score, 6)}
        if own:
            e = min(own, key=lambda x: (-x["confidence"], x["line"]))
            out["reasons"] = [f"uses {e['uses']} ({via}: {e['defined']})", *[r for r in f["reasons"] if r != "changed"]][:5]
            out["distance"] = max(1, f["distance"])
        return out

    res = _without(res, v.hidden)
    entries = {p: es for p, es in entries.items() if p not in v.hidden}
    listed = {f["path"] for f in res["files"]} | {f["path"] for f in res["tests"]}
    extra: list[dict[str, Any]] = [{"path": p, "score": 0.0, "distance": 1, "reasons": []}
                                   for p in sorted(entries) if p not in listed]
    files = sorted((row(f) for f in res["files"] + [x for x in extra if not is_test_to_run(x["path"])]),
                   key=lambda f: (-f["score"], f["distance"], f["path"]))
    tests = sorted((row(f) for f in res["tests"] + [x for x in extra if is_test_to_run(x["path"])]),
                   key=lambda f: (-f["score"], f["distance"], f["path"]))
    return {"repository": v.name, "hop": hop, "via": via, "packages": packages, "build_id": v.snap.build_id,
            "entries": sorted(({"path": p, **e} for p, es in entries.items() for e in es),
                              key=lambda e: (e["path"], e["line"], e["uses"]))[: k],
            "entry_count": sum(len(es) for es in entries.values()),
            "files": files[:k], "file_count": len(files), "tests": tests[:k], "test_count": len(tests),
            "symbols": res["symbols"][:k], "symbol_count": res["symbol_count"]}


# ---- callers across members ----------------------------------------------------------------

def _names(answer: dict[str, Any], name: str) -> bool:
    """Whether a member's callers/callees answer is about ``name`` itself: an exact match,
    and for a qualified name (``Flask.run``) a definition whose qualified name is it or
    ends with it (another member's ``ReloaderLoop.run`` is not ``Flask.run``)."""
    if answer["match"] == "fuzzy":
        return False
    dotted = name.replace("::", ".")
    if "." not in dotted or "/" in dotted or ":" in name.replace("::", ""):
        return True
    return any(t["qualified"] == dotted or t["qualified"].endswith("." + dotted) for t in answer["targets"])


def _calls_across(ws: WorkspaceFile, name: str, label: str, across: Any, min_confidence: float, k: int,
                  withhold: bool) -> dict[str, Any]:
    """The frame of ``callers``/``callees`` over a workspace: each member defining ``name``
    answers with its own call edges (``label``), then ``across(member, its answer, links)``
    adds the rows that cross into other members; across rows first, by confidence."""
    from oracl.read import callgraph

    in_range("-k", k, 1, callgraph.MAX_K)
    local = callgraph.callers if label == "callers" else callgraph.callees
    rows: list[dict[str, Any]] = []
    defined: list[dict[str, Any]] = []
    with opened(ws, withhold) as (views, status, notices):
        all_links, link_notices = links(views)
        notices += link_notices
        for v in views:
            try:
                own = local(v.snap, name, min_confidence=min_confidence, k=callgraph.MAX_K)
            except QueryError:
                continue  # not defined here
            if not _names(own, name):
                continue
            own = _without(own, v.hidden)
            defined += [{**t, "repository": v.name} for t in own["targets"]]
            rows += [{**r, "repository": v.name, "across": ""} for r in own[label]]
            rows += across(v, own, all_links)
        if not defined:
            raise QueryError(f"no member defines {name!r} (oracl symbols {name} --workspace FILE finds close names)")
        rows = [r for r in rows if r["confidence"] >= min_confidence]
        rows.sort(key=lambda r: (r["across"] == "", -r["confidence"], r["repository"], r["path"], r.get("lines", [0])))
        return {"schema": f"oracl.workspace-{label}/1", "workspace": str(ws.path), "query": name,
                "definitions": defined, label: rows[:k], "total": len(rows),
                "across": sum(1 for r in rows if r["across"]),
                "links": link_summary(all_links), "members": status, "notices": notices}


def callers_workspace(ws: WorkspaceFile, name: str, *, min_confidence: float = 0.7, k: int = 100,
                      withhold: bool = False) -> dict[str, Any]:
    """Who calls ``name``: in each member that defines it (its own callers), and in the
    members whose manifests depend on that member's package (call sites naming it through
    an import of the package; each caller is the innermost definition holding the call)."""
    from oracl.read.callgraph import _innermost, named_each

    short = name.replace("::", ".").rsplit(".", 1)[-1]

    def across(v: View, own: dict[str, Any], all_links: list[Link]) -> list[dict[str, Any]]:
        rows = []
        for ln in (x for x in all_links if x.provider is v):
            defs = [t for t in own["targets"] if in_package(ln, t["path"])]
            # (line, call, confidence, how, candidates) of each call site naming a definition of name
            sites: dict[str, list[tuple[int, str, float, str, int]]] = defaultdict(list)
            for path, imp, calls in uses(ln) if defs else ():
                for call, line, _ in calls:
                    if called_name(call, imp) == short and path not in ln.consumer.hidden:
                        sites[path].append((line, call, ENTRY_CALL / len(defs), "import", len(defs)))
            for path, kind, method, line in typed_calls(ln) if defs else ():
                typed = _of_type(defs, kind, method) if method == short else []
                if typed and path not in ln.consumer.hidden:
                    sites[path].append((line, f"{kind}.{method}", ENTRY_TYPED / len(typed), "typed", len(typed)))
            syms = defaultdict(list)
            for r in named_each(ln.consumer.snap, "symbols_in_files", sorted(sites)) if sites else ():
                syms[r["path"]].append(r)
            for path, found in sorted(sites.items()):
                spans = [(float(site[0]), float(site[0])) for site in found]
                by_id = {s["id"]: s for s in syms[path]}
                inner = _innermost([(s["id"], s["kind"], s["start"], s["end"]) for s in syms[path]], spans)
                for sid, _, start, end in inner or [(f"{path}#", "module", 1, 1)]:
                    s = by_id.get(sid, {"id": sid, "qualified": path, "name": path, "kind": "module"})
                    held = [site for site in found if start <= site[0] <= end] or found[:1]
                    best = max(held, key=lambda site: site[2])
                    rows.append({"id": s["id"], "qualified": s["qualified"], "name": s["name"], "kind": s["kind"],
                                 "path": path, "lines": sorted({site[0] for site in held}),
                                 "confidence": round(best[2], 6), "resolution": best[3], "candidates": best[4],
                                 "via": defs[0]["id"], "repository": ln.consumer.name,
                                 "across": f"{ln.package['name']} ({v.name})",
                                 "calls": sorted({site[1] for site in held})})
        return rows

    return _calls_across(ws, name, "callers", across, min_confidence, k, withhold)


def callees_workspace(ws: WorkspaceFile, name: str, *, min_confidence: float = 0.7, k: int = 100,
                      withhold: bool = False) -> dict[str, Any]:
    """What ``name`` calls: in each member that defines it, its own callees and the
    definitions of other members it calls through the packages its manifests depend on
    (each call site inside the definition, resolved by name in the package's importable
    code; confidence 0.9 ÷ the definitions of that name there). ``lines`` is where the
    callee is defined, ``call_sites`` the lines in the caller."""
    from oracl.read.callgraph import lookup

    def across(v: View, own: dict[str, Any], all_links: list[Link]) -> list[dict[str, Any]]:
        rows = []
        for ln in (x for x in all_links if x.consumer is v):
            for t in own["targets"]:
                def inside(path: str, line: int, t: dict[str, Any] = t) -> bool:
                    return path == t["path"] and t.get("start", 0) <= line <= t.get("end", 0)

                # (type or "", the name called) → [(line, call)]: by import, or on a value of an outside type
                sites: dict[tuple[str, str], list[tuple[int, str]]] = defaultdict(list)
                for path, imp, calls in uses(ln):
                    for call, line, _ in calls:
                        if inside(path, line):
                            sites[("", called_name(call, imp))].append((line, call))
                for path, kind, method, line in typed_calls(ln):
                    if inside(path, line):
                        sites[(kind, method)].append((line, f"{kind}.{method}"))
                for (kind, callee), found in sorted(sites.items()):
                    defs = [d for d in lookup(ln.provider.snap, callee, fuzzy=False, k=20)[0]
                            if d.get("name") == callee and in_package(ln, d["path"])
                            and d["path"] not in ln.provider.hidden]
                    defs = _of_type(defs, kind, callee) if kind else defs
                    conf = (ENTRY_TYPED if kind else ENTRY_CALL) / max(1, len(defs))
                    rows += [{"id": d["id"], "qualified": d["qualified"], "name": d["name"], "kind": d["kind"],
                              "path": d["path"], "start": d.get("start"), "lines": [d.get("start", 1)],
                              "call_sites": sorted({x for x, _ in found}), "confidence": round(conf, 6),
                              "resolution": "typed" if kind else "import", "candidates": len(defs), "via": t["id"],
                              "repository": ln.provider.name, "across": f"{ln.package['name']} ({ln.provider.name})",
                              "calls": sorted({c for _, c in found})} for d in defs]
        return rows

    return _calls_across(ws, name, "callees", across, min_confidence, k, withhold)
