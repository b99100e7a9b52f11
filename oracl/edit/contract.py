"""The mutation contract an agent writes (design §5e): blocks of plain text, parsed exactly.

::

    @@FILE path/relative/to/root [sha256:HEX]
    @@REPLACE
    <exact existing text>
    @@WITH
    <new text>
    @@END

    @@CREATE path/of/a/new/file
    <its text>
    @@END

    @@DELETE path/of/a/file [sha256:HEX]

Rules:

* A marker is a whole line starting with ``@@`` and one of the words above; any other line
  is text (a diff's ``@@ -1,3 +1,4 @@`` too). A text line that must start with ``@@`` is
  written with one more ``@`` (``@@@END`` is the text ``@@END``).
* Lines end at ``\n`` (a ``\r`` before it belongs to the line; a form feed or U+2028 is
  text). A text is its lines with their newlines: ``@@REPLACE`` / ``x = 1`` / ``@@WITH`` is the text
  ``"x = 1\\n"``. Write ``@@WITH`` right after ``@@REPLACE``'s text and ``@@END`` right after
  ``@@WITH``'s; an empty ``@@WITH`` deletes the text. Several ``@@REPLACE``/``@@WITH``
  pairs may follow one ``@@FILE`` (each applies to the file as the previous one left it).
* A ``@@REPLACE`` text must occur exactly once in the file (checked by the gates, against the
  file as it is when the mutation is applied). The file's line endings are kept: in a CRLF
  file, every ``\\n`` of the contract's texts is written ``\\r\\n``.
* ``sha256:HEX`` (at least 12 hex digits): the checksum of the file the agent read; the
  mutation is refused when the file no longer has it. Without it, the checksum the latest
  build recorded is the one the agent is taken to have read.
* Anything else is a ``ContractError`` naming the block and its line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from oracl.core.errors import ContractError

MAX_INPUT_BYTES = 8 << 20   # a whole mutation
MAX_BLOCKS = 1_000          # edits (REPLACE pairs, CREATE, DELETE) in one mutation
MAX_TEXT_BYTES = 1 << 20    # one REPLACE, WITH or CREATE text
MARKER = re.compile(r"^@@(FILE|REPLACE|WITH|END|CREATE|DELETE)(?:[ \t]+(.*))?$")
SEEN = re.compile(r"^(.*?)[ \t]+sha256:([0-9a-fA-F]{12,64})$")


@dataclass(frozen=True, slots=True)
class Edit:
    """One change to one file: ``op`` is replace | create | delete; ``block`` its number
    (1-based, in the order written) and ``line`` where it starts in the mutation."""

    op: str
    path: str
    old: str = ""
    new: str = ""
    seen: str | None = None   # the checksum (a prefix of its hex) the agent read
    block: int = 0
    line: int = 0


@dataclass(frozen=True, slots=True)
class Mutation:
    edits: tuple[Edit, ...]

    @property
    def paths(self) -> list[str]:
        """The files it touches, in first-touched order."""
        return list(dict.fromkeys(e.path for e in self.edits))


def _head(rest: str | None, block: int, line: int, word: str) -> tuple[str, str | None]:
    if not rest or not rest.strip():
        raise ContractError(f"block {block} (line {line}): @@{word} needs a path")
    m = SEEN.match(rest.strip())
    path, seen = (m.group(1).strip(), m.group(2).lower()) if m else (rest.strip(), None)
    return path, seen


def parse(data: bytes | str) -> Mutation:
    """The edits of a mutation, in order (``ContractError`` for anything that does not parse).

    >>> m = parse("@@FILE a.py\\n@@REPLACE\\nx = 1\\n@@WITH\\nx = 2\\n@@END\\n@@DELETE old.py\\n")
    >>> [(e.op, e.path, e.old, e.new) for e in m.edits]
    [('replace', 'a.py', 'x = 1\\n', 'x = 2\\n'), ('delete', 'old.py', '', '')]
    """
    if isinstance(data, bytes):
        if len(data) > MAX_INPUT_BYTES:
            raise ContractError(f"the mutation is {len(data):,} bytes; at most {MAX_INPUT_BYTES:,} are read")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ContractError(f"the mutation is not UTF-8 (byte {exc.start}); refused") from None
    else:
        text = data
        if len(text.encode("utf-8", "surrogatepass")) > MAX_INPUT_BYTES:
            raise ContractError(f"the mutation is over {MAX_INPUT_BYTES:,} bytes; refused")
    if "\0" in text:
        raise ContractError("the mutation holds a NUL character; refused")
    edits: list[Edit] = []
    state = "out"          # out | file (after @@FILE) | replace | with | create
    path, seen, start, block = "", None, 0, 0
    buf: list[str] = []
    old = ""
    size = 0
    # split on "\n" only: a form feed or U+2028 inside a text is text (str.splitlines would cut there)
    lines = [x + "\n" for x in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    if not lines[-1]:
        lines.pop()
    for no, raw in enumerate(lines, 1):
        body = raw.rstrip("\r\n")
        m = MARKER.match(body)
        if m is None:
            if state in ("replace", "with", "create"):
                buf.append(raw[1:] if raw.startswith("@@@") else raw)
                size += len(buf[-1])
                if size > MAX_TEXT_BYTES:
                    raise ContractError(f"block {block} (line {start}): a text over {MAX_TEXT_BYTES:,} "
                                        "characters; refused")
                continue
            if not body.strip():
                continue  # blank lines between blocks
            where = f"block {block} (line {no})" if state == "file" else f"line {no}"
            raise ContractError(f"{where}: text outside a block ({body[:60]!r}); "
                                "a block starts with @@FILE, @@CREATE or @@DELETE")
        word, rest = m.group(1), m.group(2)
        if word in ("FILE", "CREATE", "DELETE"):
            if state not in ("out", "file"):
                raise ContractError(f"block {block} (line {start}): not closed with @@END before line {no}")
            if word == "FILE" and state == "file" and not any(e.block == block for e in edits):
                raise ContractError(f"block {block} (line {start}): @@FILE without @@REPLACE")
            block += 1
            start = no
            path, seen = _head(rest, block, no, word)
            if word == "DELETE":
                edits.append(Edit("delete", path, seen=seen, block=block, line=no))
                state = "out"
            elif word == "CREATE":
                if seen is not None:
                    raise ContractError(f"block {block} (line {no}): @@CREATE makes a new file; it has no sha256")
                state, buf = "create", []
            else:
                state = "file"
        elif word == "REPLACE":
            if state != "file" or rest:
                raise ContractError(f"line {no}: @@REPLACE belongs right after @@FILE PATH or after @@END "
                                    "of the same file's previous pair" if state != "file"
                                    else f"line {no}: @@REPLACE takes nothing after it")
            state, buf = "replace", []
        elif word == "WITH":
            if state != "replace" or rest:
                raise ContractError(f"block {block} (line {no}): @@WITH without @@REPLACE before it")
            old, buf, state = "".join(buf), [], "with"
            if not old:
                raise ContractError(f"block {block} (line {no}): the @@REPLACE text is empty")
        else:  # END
            if state == "with":
                edits.append(Edit("replace", path, old, "".join(buf), seen, block, start))
                state = "file"  # another REPLACE of the same file may follow
            elif state == "create":
                edits.append(Edit("create", path, new="".join(buf), block=block, line=start))
                state = "out"
            else:
                raise ContractError(f"line {no}: @@END without an open @@WITH or @@CREATE")
        if len(edits) > MAX_BLOCKS:
            raise ContractError(f"the mutation holds more than {MAX_BLOCKS:,} edits; refused")
        size = 0  # a marker starts or ends a text
    if state in ("replace", "with", "create"):
        raise ContractError(f"block {block} (line {start}): cut off, no @@END (the mutation is half-written)")
    if state == "file" and not any(e.block == block for e in edits):
        raise ContractError(f"block {block} (line {start}): @@FILE without @@REPLACE")
    if not edits:
        raise ContractError("the mutation holds no block (@@FILE, @@CREATE or @@DELETE)")
    return Mutation(tuple(edits))
