"""A workspace's own packages, read from its package managers' manifests at the root: each
package's folder becomes a domain (issue 30: zod's one ``packages`` hub held 563 of its
624 files, because domains came from the first path segment alone).

Read, in this order, and merged:

* ``package.json`` ``workspaces`` (npm, yarn: a list, or ``{"packages": [...]}``), and
  ``pnpm-workspace.yaml`` ``packages`` (``!`` patterns exclude): folders with a
  ``package.json``;
* ``Cargo.toml`` ``[workspace] members`` less ``exclude``: folders with a ``Cargo.toml``;
* ``go.work`` ``use`` directives: folders with a ``go.mod``;
* ``pom.xml`` ``<modules>`` (read with defusedxml) and ``settings.gradle[.kts]``
  ``include``: Maven and Gradle modules;
* ``pyproject.toml`` ``[tool.uv.workspace] members``, and Python packages under ``src/``
  when there are two or more (one is the project itself, ``src`` → ``core`` as before).

A pattern is a path with ``*``, ``?``, ``[…]`` in a segment or a ``**`` segment; it is
matched against real folders under the root only (no symbolic link is followed, nothing
outside the root, hidden folders and ``node_modules`` left out), at most ``MAX_PACKAGES``.
Each package's domain is its folder's name as a slug (``packages/zod`` → ``zod``), or the
whole path's when two packages share a name (``apps/web`` and ``packages/web``).

>>> package_domains(["packages/zod", "apps/web", "packages/web"])
{'apps/web': 'apps-web', 'packages/web': 'packages-web', 'packages/zod': 'zod'}
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import tomllib
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

MAX_PACKAGES = 2000
MAX_MANIFEST_BYTES = 4 << 20
_DEEP = 6  # how deep a `**` segment looks
_SKIP = frozenset({"node_modules", "target", "build", "dist", "vendor", "__pycache__"})
_SLUG = re.compile(r"[^a-z0-9_]+")
_GRADLE_INCLUDE = re.compile(r"""\binclude\s*\(?\s*((?:["'][^"'\n]+["']\s*,?\s*)+)\)?""")
_QUOTED = re.compile(r"""["']([^"'\n]+)["']""")
_GO_USE = re.compile(r"^\s*use\s*(?:\(\s*([^)]*)\)|(\S+))", re.M)


def _slug(text: str) -> str:
    return _SLUG.sub("-", text.lower()).strip("-") or "_"


def package_domains(roots: Iterable[str]) -> dict[str, str]:
    """package folder → its domain: the folder's name, the path's where names collide."""
    roots = sorted(set(roots))
    names = Counter(_slug(r.rsplit("/", 1)[-1]) for r in roots)
    return {r: (n if names[n] == 1 else _slug(r)) for r in roots if (n := _slug(r.rsplit("/", 1)[-1]))}


def workspace_packages(root: Path) -> dict[str, str]:
    """The packages the root's manifests declare, as ``package_domains`` names them; {}
    when there are none (or the root cannot be read)."""
    found: list[str] = []
    for reader in (_npm, _pnpm, _cargo, _go_work, _maven, _gradle, _uv, _python_src):
        try:
            found.extend(reader(root))
        except (OSError, ValueError, UnicodeDecodeError, TypeError, AttributeError, RecursionError):
            continue  # a manifest that cannot be read declares nothing; the build reports nothing here
        if len(found) >= MAX_PACKAGES:
            break
    clean = [p for p in dict.fromkeys(found) if p and p != "."][:MAX_PACKAGES]
    return package_domains(clean)


def _read(path: Path) -> str:
    if not path.is_file() or path.is_symlink() or path.stat().st_size > MAX_MANIFEST_BYTES:
        return ""
    return path.read_text("utf-8")


def expand(root: Path, pattern: str, marker: str = "") -> list[str]:
    """The folders under ``root`` a workspace pattern names (POSIX, relative), those holding
    ``marker`` when one is given; never outside the root, never through a symbolic link."""
    pattern = pattern.strip().strip("/")
    while pattern.startswith("./"):
        pattern = pattern[2:]
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    if not parts or any(p == ".." for p in parts):
        return []
    level = [""]
    for part in parts:
        nxt: list[str] = []
        for base in level:
            if part == "**":
                nxt.extend(_below(root, base, _DEEP))
            elif any(c in part for c in "*?["):
                nxt.extend(f"{base}/{n}".lstrip("/") for n in _dirs(root, base) if fnmatch.fnmatchcase(n, part))
            elif _is_dir(root / base / part):
                nxt.append(f"{base}/{part}".lstrip("/"))
        level = nxt[:MAX_PACKAGES]
    return sorted(p for p in level if p and (not marker or (root / p / marker).is_file()))


def _is_dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def _dirs(root: Path, base: str) -> list[str]:
    try:
        with os.scandir(root / base) as it:
            return sorted(e.name for e in it if e.is_dir(follow_symlinks=False)
                          and not e.name.startswith(".") and e.name not in _SKIP)
    except OSError:
        return []


def _below(root: Path, base: str, depth: int) -> list[str]:
    out = [base]
    if depth:
        for n in _dirs(root, base):
            out.extend(_below(root, f"{base}/{n}".lstrip("/"), depth - 1))
    return out


def _patterns(root: Path, patterns: Any, marker: str) -> list[str]:
    if not isinstance(patterns, list):
        return []
    keep = [p for p in patterns if isinstance(p, str) and not p.startswith("!")]
    drop = {d for p in patterns if isinstance(p, str) and p.startswith("!") for d in expand(root, p[1:])}
    return [d for p in keep for d in expand(root, p, marker) if d not in drop]


def _npm(root: Path) -> list[str]:
    text = _read(root / "package.json")
    ws = json.loads(text).get("workspaces") if text else None
    if isinstance(ws, dict):
        ws = ws.get("packages")
    return _patterns(root, ws, "package.json")


def _pnpm(root: Path) -> list[str]:
    text = _read(root / "pnpm-workspace.yaml")
    if not text:
        return []
    import yaml  # only a pnpm workspace pays for it (0.1–0.4 s: every build and reader loads the config)

    data = yaml.safe_load(text)
    return _patterns(root, data.get("packages") if isinstance(data, dict) else None, "package.json")


def _cargo(root: Path) -> list[str]:
    text = _read(root / "Cargo.toml")
    ws = tomllib.loads(text).get("workspace", {}) if text else {}
    if not isinstance(ws, dict):
        return []
    excluded = set(_patterns(root, ws.get("exclude", []), ""))
    return [d for d in _patterns(root, ws.get("members", []), "Cargo.toml") if d not in excluded]


def _go_work(root: Path) -> list[str]:
    text = _read(root / "go.work")
    out = []
    for block, single in _GO_USE.findall(text):
        for d in (block.split() if block else [single]):
            if not d.startswith("//"):
                out.extend(expand(root, d, "go.mod"))
    return out


def _maven(root: Path, base: str = "", depth: int = 3) -> list[str]:
    from defusedxml import ElementTree

    text = _read(root / base / "pom.xml")
    if not text:
        return []
    out = []
    for el in ElementTree.fromstring(text.encode("utf-8")).iter():
        if el.tag.rsplit("}", 1)[-1] == "module" and el.text:
            for d in expand(root, f"{base}/{el.text.strip()}".lstrip("/"), "pom.xml"):
                out.append(d)
                if depth:
                    out.extend(_maven(root, d, depth - 1))
    return out


def _gradle(root: Path) -> list[str]:
    text = _read(root / "settings.gradle") or _read(root / "settings.gradle.kts")
    out = []
    for group in _GRADLE_INCLUDE.findall(text):
        for name in _QUOTED.findall(group):
            out.extend(expand(root, name.strip(":").replace(":", "/")))
    return out


def _uv(root: Path) -> list[str]:
    text = _read(root / "pyproject.toml")
    ws = tomllib.loads(text).get("tool", {}).get("uv", {}).get("workspace", {}) if text else {}
    return _patterns(root, ws.get("members") if isinstance(ws, dict) else None, "pyproject.toml")


def _python_src(root: Path) -> list[str]:
    pkgs = [f"src/{n}" for n in _dirs(root, "src") if (root / "src" / n / "__init__.py").is_file()]
    return pkgs if len(pkgs) >= 2 else []


def normalise(ecosystem: str, name: str) -> str:
    """A package name as its ecosystem compares them (PEP 503 for Python; Cargo treats
    ``-`` and ``_`` alike; npm and Maven names are case-insensitive here): what links one
    repository's dependency to another's package (``builder.pipeline.interface``, ``read.crossrepo``).

    >>> normalise("python", "Flask_SQLAlchemy"), normalise("rust", "serde-json"), normalise("npm", "@Scope/X")
    ('flask-sqlalchemy', 'serde_json', '@scope/x')
    """
    if ecosystem == "python":
        return re.sub(r"[-_.]+", "-", name).lower()
    if ecosystem == "rust":
        return name.replace("-", "_").lower()
    return name.lower() if ecosystem in ("npm", "maven") else name
