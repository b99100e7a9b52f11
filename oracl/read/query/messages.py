"""Messages a report quotes → the code that writes them.

A bug report pastes what the program said: ``ValueError: None is not a valid Unit``, a
Sphinx build's ``index.rst:3: WARNING: toctree contains reference to nonexisting document
'genindex'``, pytest's ``E   Failed: …``. The words of such a line are the literal text of
a string in the code that raised or logged it, around the values the program filled in.
This module finds those lines, cuts each into its literal *fragments* (the text between
quoted values, numbers, paths and addresses), and says which files hold a fragment inside a
string literal.

Only lines that look like a program's message count (an exception or warning class and a
colon, a log level and a colon, pytest's ``E`` lines); a fragment needs three words and
twelve characters, and the interpreter's own messages (``object has no attribute``,
``index out of range``) are set aside: they name no code of the repository.

>>> message_fragments("Traceback ...\\nValueError: None is not a valid Unit\\nfoo")
['None is not a valid Unit']
>>> message_fragments("index.rst:3: WARNING: toctree contains reference to nonexisting document 'genindex'")
['toctree contains reference to nonexisting document']
>>> message_fragments("AttributeError: 'Foo' object has no attribute 'bar'")
[]
"""

from __future__ import annotations

import re

from oracl.read.query.frames import URL

MAX_FRAGMENTS = 8
MIN_WORDS = 3
MIN_CHARS = 12

# `ValueError: …`, `astropy.io.fits.verify.VerifyWarning: …`, `WARNING: …`, `E   Failed: …`
_MESSAGE = re.compile(
    r"^(?:.*?:\d+:\s*)?(?:E\s+)?(?:[\w.]*?(?:Error|Exception|Warning|Exit|Failure|Failed)|WARNING|ERROR|CRITICAL|FATAL"
    r"|error|warning|fatal)\s*:\s*(.{8,400}?)\s*$", re.M)
_WORD = re.compile(r"(?<![\w.])[A-Za-z]{2,}(?![\w.])")  # a word, not a part of `mod.submod.A`
_INNER = re.compile(r"^.*\b(?:WARNING|ERROR|CRITICAL|FATAL|[\w.]*(?:Error|Exception|Warning))\s*:\s*")
# the values a program fills into its message: quoted text, numbers, paths, <objects>, [lists], (tuples)
_VALUE = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`|<[^>\n]*>|\[[^\]\n]*\]|\([^)\n]*\)|\{[^}\n]*\}"
                    r"|(?:[\w.-]*/)+[\w.-]*|\b0x[0-9a-fA-F]+\b|\b\d[\w.]*\b")
# what the interpreter says (Python, JavaScript, Java, Go, Rust): no code of the repository writes it
INTERPRETER = tuple(s.lower() for s in (
    "object has no attribute", "index out of range", "is not defined", "not supported between instances of",
    "unsupported operand type", "object is not callable", "object is not subscriptable", "object is not iterable",
    "positional argument", "unexpected keyword argument", "referenced before assignment", "No module named",
    "cannot import name", "maximum recursion depth", "division by zero", "invalid literal for", "codec can't",
    "ordinal not in range", "is not a function", "Cannot read propert", "object is not an iterator",
    "assignment index out of range", "pop from empty", "truth value of an array", "must be str, not",
    "object does not support item assignment", "not enough values to unpack", "too many values to unpack",
    "null pointer", "nil pointer dereference", "called `Option::unwrap()`", "called `Result::unwrap()`",
    "has no len", "unhashable type", "can't multiply sequence", "can only concatenate"))


def message_fragments(text: str) -> list[str]:
    """The literal fragments of the program messages quoted in ``text``, first written
    first, each once, at most ``MAX_FRAGMENTS``."""
    out: list[str] = []
    for m in _MESSAGE.finditer(text.replace("\r", "")):
        # `SphinxWarning: /p/index.rst:3: WARNING: toctree …`: the innermost message
        message = _INNER.sub("", URL.sub(" ", m.group(1)))
        if any(s in message.lower() for s in INTERPRETER):
            continue
        for piece in _VALUE.split(message):
            piece = re.sub(r"\s+", " ", piece).strip(" .,:;-=")
            if len(piece) >= MIN_CHARS and len(_WORD.findall(piece)) >= MIN_WORDS and piece not in out:
                out.append(piece)
                if len(out) == MAX_FRAGMENTS:
                    return out
    return out


def literal_lines(fragment: str, text: str) -> list[tuple[int, bool]]:
    """(line number from 1, whether the literal ends there) for each place ``fragment``
    stands inside a string literal of ``text``: a quote opens before it on its line
    (``raise ValueError(f"{x} is not a valid Unit")``, ``__('toctree contains reference to
    nonexisting document %r')``). A literal that ends with the fragment wrote the message
    the report quotes; one going on (``"A Vector must be supplied to apply force."``)
    wrote a longer one.

    >>> literal_lines("must be supplied", "x = 1\\nraise TypeError('A Vector must be supplied')\\n# must be supplied")
    [(2, True)]
    """
    out: list[tuple[int, bool]] = []
    start = 0
    while (i := text.find(fragment, start)) >= 0:
        line_start = text.rfind("\n", 0, i) + 1
        end = i + len(fragment)
        if any(q in text[line_start:i] for q in "'\"`"):
            out.append((text.count("\n", 0, i) + 1, text[end:end + 1] in ("'", '"', "`", "")
                        or text[end:end + 2] in (".'", '."', ".`")))
        start = end
    return out
