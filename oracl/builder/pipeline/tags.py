"""Phase 1c: the seven baseline tags, pure functions of the path (design §3).

>>> path_tags("docs/public/guide/README.md", Config())["content_type"]
'instruction'
"""

from __future__ import annotations

import re

from oracl.core.config import Config
from oracl.core.paths import glob_match

ARCHIVE_SEGMENTS = frozenset({"archive", "archived", "legacy", "quarantine"})
STAGING_SEGMENTS = frozenset({"drafts"})
PLACEHOLDER_WORDS = frozenset({"placeholder", "stub", "template", "example", "sample"})
INSTRUCTION_WORDS = ("readme", "instructions", "guide", "runbook", "howto", "contributing", "agents")
ISSUE_WORDS = ("issue", "bug", "incident")
CLASSIFICATION_LEVELS = ("public", "internal", "confidential", "sensitive")
_SLUG = re.compile(r"[^a-z0-9_]+")
_WORDS = re.compile(r"[a-z0-9]+")


def slug(segment: str) -> str:
    """A domain slug: lower case, runs of other characters folded to ``-``."""
    return _SLUG.sub("-", segment.lower()).strip("-") or "_"


def package_of(parts: list[str], packages: dict[str, str]) -> int:
    """How many leading segments of a path name the innermost workspace package holding
    it (``Config.packages``), 0 when none does."""
    for i in range(len(parts) - 1, 0, -1):
        if "/".join(parts[:i]) in packages:
            return i
    return 0


def domain_of(path: str, domain_map: dict[str, str], packages: dict[str, str] | None = None) -> str:
    """The workspace package's domain when one holds the path (``packages/zod/src/a.ts`` →
    ``zod``), else the first segment's (through ``domain_map``), ``root`` at the top."""
    parts = path.split("/")
    if len(parts) == 1:
        return "root"
    at = package_of(parts, packages) if packages else 0
    first = packages["/".join(parts[:at])] if packages and at else parts[0]
    return domain_map.get(first) or domain_map.get(first.lower()) or slug(first)


def component_of(parts: list[str], packages: dict[str, str]) -> str | None:
    """The folder under the domain's: the second segment, or inside a workspace package
    the first folder under it (under its ``src``/``lib`` when it has one)."""
    at = package_of(parts, packages) if packages else 1
    rest = parts[at or 1:]
    if at and len(rest) >= 3 and rest[0] in ("src", "lib"):
        rest = rest[1:]
    return rest[0] if len(rest) >= 2 else None


def content_type_of(name: str) -> str:
    low = name.lower()
    words = set(_WORDS.findall(low))
    if "report" in low:
        return "report"
    if any(w in words or w + "s" in words for w in ISSUE_WORDS):
        return "issue"
    if any(w in low for w in INSTRUCTION_WORDS):
        return "instruction"
    return "generic"


def is_placeholder(name: str) -> bool:
    if name == ".gitkeep":
        return True
    stem = name.rsplit(".", 1)[0].lower() if "." in name[1:] else name.lower()
    return any(w in PLACEHOLDER_WORDS or w.rstrip("s") in PLACEHOLDER_WORDS
               for w in _WORDS.findall(stem))


def classification_of(path: str, cfg: Config) -> str:
    level = "public" if path.startswith(("docs/public/", "docs/external/")) else "internal"
    for pattern, value in sorted(cfg.classification_globs.items()):
        if glob_match(path, pattern) and value in CLASSIFICATION_LEVELS:
            # the strictest matching level wins, so a broad glob cannot lower a narrow one
            if CLASSIFICATION_LEVELS.index(value) > CLASSIFICATION_LEVELS.index(level) or level == "public":
                level = value
    return level


def path_tags(path: str, cfg: Config) -> dict[str, object]:
    """The baseline tags of a repo-relative POSIX path. Same path → same tags.

    What the folder determines (domain, lifecycle, component; the classification when no
    glob is set) and what the file name determines are each worked out once per folder and
    per name for a Config object (a whole build asks for every file's: at 20k files in 839
    folders, 0.42 → 0.26 s in a new process, 0.05 s once the memo is filled); the dict is
    new every call."""
    _, folders, names = _memo_for(cfg)
    folder, _, name = path.rpartition("/")
    at = folders.get(folder)
    if at is None:
        at = folders[folder] = _folder_tags(path, cfg)
    of_name = names.get(name)
    if of_name is None:
        of_name = names[name] = _name_tags(name)
    domain, lifecycle, classification, component = at
    tags: dict[str, object] = {
        "domain": domain,
        "lifecycle": lifecycle,
        "classification": classification if classification is not None else classification_of(path, cfg),
        "content_type": of_name[0],
        "placeholder": of_name[1],
        "format": of_name[2],
    }
    if component is not None:
        tags["component"] = component
    return tags


def folder_domain(path: str, cfg: Config) -> str:
    """``path_tags(path, cfg)["domain"]``: its folder's, worked out once per folder."""
    _, folders, _ = _memo_for(cfg)
    folder = path.rpartition("/")[0]
    at = folders.get(folder)
    if at is None:
        at = folders[folder] = _folder_tags(path, cfg)
    return at[0]


# (the Config, its folders' tags, its names' tags): replaced whole, never emptied in place,
# so a thread holding another Config's never reads this one's
_Memo = tuple[Config | None, dict[str, tuple[str, str, str | None, str | None]], dict[str, tuple[str, bool, str]]]
_MEMO: _Memo = (None, {}, {})
_MEMO_MAX = 1 << 18  # folders and names kept for one Config: started again past this many


def _memo_for(cfg: Config) -> _Memo:
    """The memo of ``cfg`` (a Config is immutable: the same object gives the same tags);
    another Config object starts a new one."""
    global _MEMO
    memo = _MEMO
    if memo[0] is not cfg or len(memo[1]) + len(memo[2]) > _MEMO_MAX:
        memo = _MEMO = (cfg, {}, {})
    return memo


def _folder_tags(path: str, cfg: Config) -> tuple[str, str, str | None, str | None]:
    """(domain, lifecycle, classification or None when globs make it the path's, component)
    of ``path``'s folder: any file of the folder has the same."""
    parts = path.split("/")
    ancestors = {p.lower() for p in parts[:-1]}
    if ancestors & ARCHIVE_SEGMENTS:
        lifecycle = "archived"
    elif ancestors & STAGING_SEGMENTS:
        lifecycle = "staging"
    else:
        lifecycle = "active"
    # (no glob: public or internal by the folder alone; a file path never ends in "/")
    classification = None if cfg.classification_globs else classification_of(path, cfg)
    return (domain_of(path, cfg.domain_map, cfg.packages), lifecycle, classification,
            component_of(parts, cfg.packages))


def _name_tags(name: str) -> tuple[str, bool, str]:
    suffix = name.rsplit(".", 1)[1].lower() if "." in name[1:] else ""
    return content_type_of(name), is_placeholder(name), suffix
