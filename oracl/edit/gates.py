"""The gates an agent's mutation passes before anything is written (design §5e).

Each gate is a name and a check of one file's planned change (``Change``: the file as it is
now, as the mutation would leave it, what the latest build knows of it) that returns None
or why it refuses. ``evaluate`` runs every gate on every file and returns every verdict;
the mutation is written only when none refuses. The order is the order a reader wants the
reasons in: where the path points first, what the text would become last.

======================  =========================================================================
``inside-root``         the path is relative, has no ``..`` and resolves inside the root
``not-vault``           not under ``.oracl/`` (the memory itself) or a VCS folder (``.git/`` …)
``regular-file``        an existing regular file (no symlink, FIFO, device or folder); for
                        ``@@CREATE``, nothing there yet
``policy``              no ``[tool.oracl] agent_never`` glob matches it, and it is not what sets
                        the policy: ``.oracl.toml``, or ``pyproject.toml``'s ``[tool.oracl]``
                        table (the rest of pyproject.toml is the agent's)
``withheld``            not a file that holds key material (secret files, private key blocks)
``held-back``           not archived, generated, vendored, a lock file or minified, unless the
                        call allows that kind (``allow``)
``unchanged-since``     the file still has the checksum the agent read (its ``sha256:``, else
                        the latest build's)
``encoding``            the file is UTF-8 (a BOM and the line endings are kept)
``match``               every ``@@REPLACE`` text occurs exactly once where it is applied
``bounds``              at most ``MAX_FILES`` files, the result at most ``MAX_RESULT_BYTES``
``no-secret``           the new text holds no secret the old text did not
``syntax``              the result has no syntax errors where the file had none
``hub``                 a file more than ``agent_confirm_backrefs`` files name needs ``confirm``
======================  =========================================================================
"""

from __future__ import annotations

import errno
import os
import stat as stat_mod
import tomllib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from oracl.core.paths import glob_match
from oracl.core.secrets import is_secret_file, scan_text, suffix_of

MAX_FILES = 100
MAX_RESULT_BYTES = 8 << 20
VCS = frozenset({".git", ".hg", ".svn", ".oracl"})
HELD_BACK = ("archived", "generated", "vendored", "lockfile", "minified")


@dataclass(slots=True)
class Change:
    """One file's planned change, what the gates read."""

    path: str
    op: str                              # replace | create | delete
    blocks: list[int]                    # the mutation's blocks that touch it
    seen: str | None = None              # the checksum the agent read (a hex prefix)
    exists: bool = False
    kind: str = ""                       # "file", or what is there instead (symlink, fifo, …)
    before: bytes | None = None          # the bytes now
    after: bytes | None = None           # the bytes the mutation leaves (None: deleted)
    checksum: str | None = None          # SHA-256 of ``before``
    build: dict[str, Any] | None = None  # the latest build's row of the file (None: not in it)
    unsafe: str = ""                     # why the path cannot be opened safely, if it cannot
    text_error: str = ""                 # why the edits cannot be applied (encoding, match)
    text_gate: str = ""                  # the gate ``text_error`` belongs to
    sensitive: bool = False              # the build says it holds key material
    mode: int = 0o644                    # the file's permission bits now (kept by the write)
    backrefs: int = 0
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Context:
    allow: frozenset[str] = frozenset()  # held-back kinds the call allows
    confirm: bool = False                # the call confirms edits to hub files
    never: tuple[str, ...] = ()          # [tool.oracl] agent_never
    confirm_backrefs: int = 0            # [tool.oracl] agent_confirm_backrefs (0: off)
    files: int = 0                       # files the mutation touches
    syntax: Callable[[str, str], bool | None] | None = None  # path, text → has errors (None: unknown)


Check = Callable[[Change, Context], str | None]


def _inside(c: Change, ctx: Context) -> str | None:
    p = c.path
    if not p or p.startswith(("/", "\\")) or os.path.isabs(p) or (p[:1].isalpha() and p[1:3] in (":/", ":\\")):
        return "an absolute path; paths are relative to the root"
    if ".." in p.replace("\\", "/").split("/"):
        return "the path climbs out with '..'"
    if any(part in ("", ".") for part in p.split("/")):
        return "the path has an empty or '.' part; name the file plainly (pkg/x.py)"
    if c.unsafe.startswith("outside:"):
        return c.unsafe.split(":", 1)[1].strip()
    return None


def _not_vault(c: Change, ctx: Context) -> str | None:
    parts = set(c.path.replace("\\", "/").split("/"))
    hit = sorted(parts & VCS)
    return f"{hit[0]}/ is not the agent's to edit" if hit else None


def _regular(c: Change, ctx: Context) -> str | None:
    if c.unsafe and not c.unsafe.startswith("outside:"):
        return c.unsafe
    if c.op == "create":
        return f"a {c.kind} is already there (@@CREATE makes new files only)" if c.exists else None
    if not c.exists:
        return "no such file (@@CREATE makes a new one)"
    return None if c.kind == "file" else f"a {c.kind}, not a regular file"


def _policy(c: Change, ctx: Context) -> str | None:
    for pattern in ctx.never:
        if glob_match(c.path, pattern):
            return f"[tool.oracl] agent_never holds {pattern!r}"
    if c.path == ".oracl.toml":
        return ".oracl.toml governs what an agent may edit; a person edits it"
    if c.path == "pyproject.toml" and _oracl_table(c.before) != _oracl_table(c.after):
        return "[tool.oracl] governs what an agent may edit; a person edits it"
    return None


def _oracl_table(data: bytes | None) -> object:
    """``[tool.oracl]`` of a pyproject.toml's bytes ({} when it has none, "unreadable" when
    the TOML does not parse: a change into or out of that state is a change of the table)."""
    if data is None:
        return {}
    try:
        doc = tomllib.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return "unreadable"
    tool = doc.get("tool")
    return tool.get("oracl", {}) if isinstance(tool, dict) else {}


def _withheld(c: Change, ctx: Context) -> str | None:
    if is_secret_file(c.path):
        return "a secret file (its name says it holds keys or credentials)"
    if c.sensitive:
        return "the build found key material in it"
    return None


def _held_back(c: Change, ctx: Context) -> str | None:
    if c.build is None:
        return None
    kinds = []
    if c.build.get("lifecycle") == "archived":
        kinds.append("archived")
    if c.build.get("parse_status") in HELD_BACK:
        kinds.append(str(c.build["parse_status"]))
    refused = [k for k in kinds if k not in ctx.allow]
    return f"{refused[0]} (allow it with --allow {refused[0]})" if refused else None


def _unchanged(c: Change, ctx: Context) -> str | None:
    if c.op == "create" or c.checksum is None:
        return None
    if c.seen is not None:
        return None if c.checksum.startswith(c.seen) else (
            f"changed since the agent read it (sha256 {c.seen[:12]}…, now {c.checksum[:12]}…): read it again")
    if c.build is None:
        return "not in the latest build and no sha256: given; name the checksum read (@@FILE PATH sha256:HEX)"
    built = str(c.build.get("checksum") or "")
    return None if built == c.checksum else (
        f"changed since the latest build (sha256 {built[:12]}…, now {c.checksum[:12]}…): rebuild or name the checksum read")


def _text(gate: str) -> Check:
    def check(c: Change, ctx: Context) -> str | None:
        return c.text_error if c.text_gate == gate else None
    return check


def _bounds(c: Change, ctx: Context) -> str | None:
    if ctx.files > MAX_FILES:
        return f"the mutation touches {ctx.files:,} files; at most {MAX_FILES} at once"
    if c.after is not None and len(c.after) > MAX_RESULT_BYTES:
        return f"the result is {len(c.after):,} bytes; at most {MAX_RESULT_BYTES:,}"
    return None


def _rules(data: bytes | None, path: str) -> Counter[str]:
    if not data:
        return Counter()
    return Counter(f.rule for f in scan_text(data.decode("utf-8", "replace"), suffix_of(path))[1])


def _no_secret(c: Change, ctx: Context) -> str | None:
    if c.after is None:
        return None
    new = _rules(c.after, c.path) - _rules(c.before, c.path)
    if new:
        rule, n = sorted(new.items())[0]
        return f"the new text holds a secret ({rule}{f', {n} times' if n > 1 else ''}); never written"
    return None


# formats a library of their own parses (the languages go to ``Context.syntax``)
DATA_PARSERS: dict[str, tuple[Callable[[str], Any], type[Exception]]] = {
    ".json": (orjson.loads, orjson.JSONDecodeError), ".toml": (tomllib.loads, tomllib.TOMLDecodeError)}


def _errors(path: str, data: bytes, ctx: Context) -> bool | None:
    text = data.decode("utf-8-sig", "replace")
    suffix = os.path.splitext(path)[1].lower()
    if suffix in DATA_PARSERS:
        parse, error = DATA_PARSERS[suffix]
        try:
            parse(text)
        except error:
            return True
        return False
    return ctx.syntax(path, text) if ctx.syntax is not None else None


def _syntax(c: Change, ctx: Context) -> str | None:
    if c.after is None:
        return None
    after = _errors(c.path, c.after, ctx)
    if not after:
        return None
    before = _errors(c.path, c.before, ctx) if c.before is not None else False
    return None if before else "the result no longer parses (it did before)" if c.before is not None else \
        "the new file does not parse"


def _hub(c: Change, ctx: Context) -> str | None:
    if ctx.confirm_backrefs and c.backrefs > ctx.confirm_backrefs and not ctx.confirm:
        return (f"{c.backrefs:,} files name it (more than agent_confirm_backrefs = {ctx.confirm_backrefs:,}); "
                "confirm the edit (--confirm)")
    return None


GATES: tuple[tuple[str, Check], ...] = (
    ("inside-root", _inside), ("not-vault", _not_vault), ("regular-file", _regular), ("policy", _policy),
    ("withheld", _withheld), ("held-back", _held_back), ("unchanged-since", _unchanged),
    ("encoding", _text("encoding")), ("match", _text("match")), ("bounds", _bounds),
    ("no-secret", _no_secret), ("syntax", _syntax), ("hub", _hub),
)
GATE_NAMES = tuple(name for name, _ in GATES)
# once one of these refuses, the later gates have nothing sound to read (no file, no text)
STOPS = frozenset({"inside-root", "not-vault", "regular-file", "withheld", "encoding", "match"})


def evaluate(changes: list[Change], ctx: Context) -> list[dict[str, Any]]:
    """Every gate's verdict on every file: ``{"gate", "path", "blocks", "ok", "why"}``; a
    file's later gates are skipped (not passed) once a gate in ``STOPS`` refuses it."""
    out: list[dict[str, Any]] = []
    for c in changes:
        for name, check in GATES:
            why = check(c, ctx)
            out.append({"gate": name, "path": c.path, "blocks": c.blocks, "ok": why is None, "why": why or ""})
            if why is not None and name in STOPS:
                break
    return out


def kind_of(mode: int) -> str:
    if stat_mod.S_ISREG(mode):
        return "file"
    for test, name in ((stat_mod.S_ISLNK, "symlink"), (stat_mod.S_ISDIR, "folder"), (stat_mod.S_ISFIFO, "FIFO"),
                       (stat_mod.S_ISSOCK, "socket"), (stat_mod.S_ISCHR, "device"), (stat_mod.S_ISBLK, "device")):
        if test(mode):
            return name
    return "special file"


def loop_error(exc: OSError) -> bool:
    return exc.errno in (errno.ELOOP, errno.ENOTDIR)
