"""The line-oriented form of answers without loading rich (``face/render.py`` draws the
terminal form): whether stdout takes it, a field with its control characters escaped, a
tab-separated line, JSON text with the bidirectional controls escaped. ``oracl build -q``
and ``--json`` in a pipe print through this module alone (rich's import was 60–70 ms of a
cold rebuild)."""

from __future__ import annotations

import os
import re
import sys
from typing import Any

# control characters, and the bidirectional controls that make a name read backwards
# (U+202E in a file name): written as \xNN / \uNNNN wherever a value is shown
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_BIDI = re.compile(r"[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def plain() -> bool:
    """True when stdout is not a terminal: answers are written as tab-separated lines.
    ``TTY_COMPATIBLE=1`` asks for the terminal form anyway, ``=0`` for the plain one (a
    colour setting such as ``FORCE_COLOR`` never changes the form)."""
    forced = os.environ.get("TTY_COMPATIBLE", "")
    if forced in ("0", "1"):
        return forced == "0"
    try:
        return not sys.stdout.isatty()
    except ValueError:  # a closed stdout
        return True


def field(value: Any) -> str:
    """``value`` as a field: its control characters written as ``\\xNN`` / ``\\uNNNN``."""
    text = "" if value is None else str(value)
    return _CONTROL.sub(_escaped, text)


def _escaped(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def line(*fields: Any) -> None:
    sys.stdout.write("\t".join(field(f) for f in fields) + "\n")


def json_text(text: str) -> str:
    """JSON text with the bidirectional controls as ``\\uNNNN`` escapes (JSON escapes
    the other control characters itself)."""
    return _BIDI.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def build_fields(r: dict[str, Any], secs: float) -> tuple[Any, ...]:
    """``oracl build -q``'s line in a pipe: "built" (or "up to date" when nothing changed
    since the build it names), the root, the build id, files indexed and read, edges and
    wall seconds."""
    done = "up to date" if str(r["mode"]).startswith("up to date") else "built"
    return done, r["root"], r["build_id"], r["files_indexed"], r["files_read"], r["counts"]["edges"], f"{secs:.2f}"
