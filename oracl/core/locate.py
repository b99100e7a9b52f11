"""How a user names things on the command line: the repository (found by walking up from
the current directory, as git finds ``.git``), a file of the build (absolute, relative to
the root or to the current directory), and text that must not be a directory.

Pure functions over paths and strings; only ``find_root`` and ``directory_in_text`` look
at the disk (``stat`` only, never a read).

>>> candidates("auth.py", Path("/r"), Path("/r/src/pkg"))
['src/pkg/auth.py', 'auth.py']
>>> candidates("/r/src/pkg/auth.py", Path("/r"), Path("/elsewhere"))
['src/pkg/auth.py']
>>> nearest("src/pkg/auht.py", ["src/pkg/auth.py", "docs/auth.md", "src/pkg/util.py"])
['src/pkg/auth.py', 'src/pkg/util.py']
"""

from __future__ import annotations

import difflib
import os
import posixpath
from collections.abc import Iterable
from pathlib import Path

from oracl.core.vault import VAULT


def find_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` that holds a vault (``.oracl/``), or None."""
    here = Path(os.path.abspath(start))
    for folder in (here, *here.parents):
        try:
            if (folder / VAULT).is_dir():
                return folder
        except OSError:
            return None
    return None


def _inside(path: str, base: str) -> str | None:
    """``path`` relative to ``base`` when it lies inside it (lexically), else None."""
    rel = posixpath.relpath(path, base) if path != base else "."
    return None if rel == ".." or rel.startswith("../") else rel


def candidates(text: str, root: Path, cwd: Path | None) -> list[str]:
    """The root-relative paths ``text`` may name, most likely first: an absolute path
    inside the root; a path relative to the current directory (when that is inside the
    root); a path relative to the root. Lexical: nothing is read."""
    t = text.strip().replace("\\", "/")
    if not t:
        return []
    bases = list(dict.fromkeys(p.as_posix() for p in (Path(os.path.abspath(root)), Path(os.path.realpath(root)))))
    out: list[str] = []
    if t.startswith("/"):
        for base in bases:
            rel = _inside(posixpath.normpath(t), base)
            if rel and rel != ".":
                out.append(rel)
        return list(dict.fromkeys(out))
    if cwd is not None:
        here = posixpath.normpath(posixpath.join(Path(os.path.abspath(cwd)).as_posix(), t))
        for base in bases:
            rel = _inside(here, base)
            if rel and rel != ".":
                out.append(rel)
    plain = posixpath.normpath(t)
    if plain != "." and not plain.startswith("../"):
        out.append(plain)
    return list(dict.fromkeys(out))


def nearest(text: str, paths: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` indexed paths closest to ``text``: the same file name first (closest
    folder first), then paths that read alike."""
    want = text.strip().replace("\\", "/")
    while want.startswith(("./", "/")):
        want = want[1:] if want.startswith("/") else want[2:]
    name = posixpath.basename(want)
    pool = list(paths)
    same = [p for p in pool if posixpath.basename(p) == name]
    ratio = difflib.SequenceMatcher

    def alike(p: str) -> float:
        return ratio(None, want, p).ratio()

    out = sorted(same, key=lambda p: (-alike(p), p))[:n]
    if len(out) < n:
        names = {posixpath.basename(p) for p in pool}
        close = set(difflib.get_close_matches(name, names, n=n * 4, cutoff=0.6))
        more = sorted((p for p in pool if posixpath.basename(p) in close and p not in out),
                      key=lambda p: (-alike(p), p))
        out += more[: n - len(out)]
    return out


def under(folder: str, paths: Iterable[str], n: int = 5) -> list[str]:
    """Up to ``n`` indexed paths inside ``folder`` (root-relative), shallowest first."""
    prefix = folder.rstrip("/") + "/"
    inside = [p for p in paths if p.startswith(prefix)]
    return sorted(inside, key=lambda p: (p.count("/"), p))[:n]


def directory_in_text(word: str, root: Path, cwd: Path) -> str | None:
    """A word typed where text is expected that names a directory outside the build's
    tree (``/path/to/other-repo``, ``.``, ``..``): the directory, else None. Bare words
    (``tests``, ``docs``) are text even when a folder has that name, and so is a folder
    inside the root (``src/flask`` is a fine thing to search for)."""
    w = word.strip()
    if not w or not (w in (".", "..") or "/" in w or w.startswith("~")):
        return None
    path = Path(os.path.expanduser(w))
    path = path if path.is_absolute() else cwd / path
    try:
        if not path.is_dir():
            return None
    except OSError:
        return None
    real, base = os.path.realpath(path), os.path.realpath(root)
    inside = _inside(Path(real).as_posix(), Path(base).as_posix())
    if inside and inside != "." and not (path / VAULT).is_dir():
        return None
    return w


MAX_AMBIGUOUS = 3  # more files than this ending the same way: a written path names none of them


def resolve(path: str, by_name: dict[str, list[str]]) -> str | None:
    """The build path ``path`` names: the one sharing the longest suffix of whole path
    components with it (at least the file name); None when none shares it or more than
    ``MAX_AMBIGUOUS`` tie.

    >>> resolve("/ci/site-packages/flask/app.py", {"app.py": ["src/flask/app.py", "examples/app.py"]})
    'src/flask/app.py'
    """
    parts = [p for p in path.replace("\\", "/").split("/") if p and p != "."]
    if not parts:
        return None
    candidates = by_name.get(parts[-1], [])
    best: list[str] = []
    best_len = 0
    for cand in candidates:
        cparts = cand.split("/")
        n = 0
        while n < min(len(parts), len(cparts)) and parts[-1 - n] == cparts[-1 - n]:
            n += 1
        if n > best_len:
            best, best_len = [cand], n
        elif n == best_len and n:
            best.append(cand)
    if not best:
        return None
    if len(best) == 1:
        return best[0]
    # several files end the same way: when the written path is longer than the suffix
    # they share, none is the one it names; else the shortest path (the least nested)
    if len(best) > MAX_AMBIGUOUS:
        return None
    return sorted(best, key=lambda p: (p.count("/"), p))[0] if best_len == len(parts) else None
