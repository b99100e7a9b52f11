"""What an adapter reports: an ``Observation`` per test result, finding, covered file or
note, with the path as the report wrote it (``ingest`` maps it to the build's files)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from defusedxml import ElementTree
from defusedxml.common import DefusedXmlException

from oracl.core.errors import IngestError

KINDS = ("test", "finding", "coverage", "note")


@dataclass(frozen=True, slots=True)
class Observation:
    kind: str                 # test | finding | coverage | note
    path: str                 # as the report wrote it
    name: str = ""            # the test (id), the rule, the covering test's context
    outcome: str = ""         # pass | fail | skip (tests); error | warning | note (findings)
    lines: tuple[tuple[int, int], ...] = ()   # line ranges (findings, coverage)
    extra: dict[str, str] = field(default_factory=dict)  # names only: the tool, the class


def ranges(lines: list[int]) -> tuple[tuple[int, int], ...]:
    """Sorted line numbers as ranges: [1, 2, 3, 7] → ((1, 3), (7, 7))."""
    out: list[tuple[int, int]] = []
    for n in sorted(set(lines)):
        if out and n == out[-1][1] + 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return tuple(out)


def ranges_text(spans: tuple[tuple[int, int], ...]) -> str:
    """((1, 3), (7, 7)) → "1-3,7"."""
    return ",".join(f"{a}-{b}" if b > a else str(a) for a, b in spans)


def xml_ends(source: Any, what: str) -> Iterator[tuple[Any, Any]]:
    """(element, its parent or None) of each element of an XML report read as a stream, as
    it ends; the caller drops what it has read (``parent.remove(element)``) so the tree never
    holds more than the elements still open. DTDs are forbidden (an entity bomb or an
    external entity is refused, never expanded); IngestError naming ``what`` when the report
    is refused or not well-formed (what was yielded before stands)."""
    stack: list[Any] = []
    try:
        for event, elem in ElementTree.iterparse(source, events=("start", "end"), forbid_dtd=True):
            if event == "start":
                stack.append(elem)
                continue
            stack.pop()
            yield elem, (stack[-1] if stack else None)
    except DefusedXmlException as exc:
        raise IngestError(f"{what} report refused: {type(exc).__name__} (an XML entity or DTD trick)") from None
    except ElementTree.ParseError as exc:
        raise IngestError(f"{what} report is not well-formed XML: {exc}") from None
