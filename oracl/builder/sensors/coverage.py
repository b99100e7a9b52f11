"""Coverage reports → which test runs which lines of which file.

* coverage.py JSON (``coverage json --show-contexts``, from ``--cov-context=test``): per
  file, ``contexts`` maps each line to the tests that ran it (``tests/test_app.py::test_x|run``);
  one observation per (file, test) with the test's lines. Without contexts, one per file
  with the executed lines and no test.
* LCOV (``SF:``/``DA:`` records) and Cobertura XML: the lines run, with no test (these
  formats do not say which test ran a line; ``TN:`` names a test run when present).
"""

from __future__ import annotations

import io
from collections import defaultdict
from collections.abc import Iterator
from typing import BinaryIO

import ijson

from oracl.builder.sensors.observe import Observation, ranges, xml_ends
from oracl.core.errors import IngestError


def parse_json(data: bytes | BinaryIO) -> list[Observation]:
    """coverage.py JSON, streamed file by file (``ijson``): a report of any size costs the
    memory of its largest file's entry, not of the whole document."""
    source = io.BytesIO(data) if isinstance(data, bytes) else data
    out = []
    seen = False
    try:
        for path, info in ijson.kvitems(source, "files", use_float=True):
            seen = True
            if isinstance(path, str) and isinstance(info, dict):
                out += _file_observations(path, info)
    except ijson.JSONError as exc:
        raise IngestError(f"coverage JSON is not readable JSON: {exc}") from None
    if not seen:
        raise IngestError("coverage JSON has no files")
    return sorted(out, key=lambda o: (o.path, o.name))


def _file_observations(path: str, info: dict) -> list[Observation]:
    contexts = info.get("contexts")
    if isinstance(contexts, dict) and contexts:
        by_test: dict[str, list[int]] = defaultdict(list)
        for line, tests in contexts.items():
            for test in tests or []:
                name = str(test).split("|", 1)[0]
                if name and str(line).isdigit():
                    by_test[name].append(int(line))
        return [Observation("coverage", path, test, "", ranges(lines)) for test, lines in sorted(by_test.items())]
    lines = [int(n) for n in info.get("executed_lines") or [] if isinstance(n, int)]
    return [Observation("coverage", path, "", "", ranges(lines))] if lines else []


def parse_lcov(data: bytes | BinaryIO) -> Iterator[Observation]:
    """LCOV records, read line by line."""
    source = io.BytesIO(data) if isinstance(data, bytes) else data
    path, test = "", ""
    lines: list[int] = []
    for line in source:
        raw = line.decode("utf-8", "replace").rstrip("\r\n")
        if raw.startswith("TN:"):
            test = raw[3:].strip()
        elif raw.startswith("SF:"):
            path, lines = raw[3:].strip(), []
        elif raw.startswith("DA:") and path:
            parts = raw[3:].split(",")
            if len(parts) >= 2 and parts[0].isdigit() and parts[1].strip().isdigit() and int(parts[1]) > 0:
                lines.append(int(parts[0]))
        elif raw.strip() == "end_of_record" and path:
            if lines:
                yield Observation("coverage", path, test, "", ranges(lines))
            path, lines = "", []


def parse_cobertura(data: bytes | BinaryIO) -> Iterator[Observation]:
    """Cobertura XML, streamed: each ``<class>`` is read, reported and dropped (the
    ``<sources>`` come first in the format)."""
    source = io.BytesIO(data) if isinstance(data, bytes) else data
    sources: list[str] = []
    for elem, parent in xml_ends(source, "Cobertura"):
        if elem.tag == "source" and elem.text and elem.text.strip():
            sources.append(elem.text.strip())
        elif elem.tag == "class":
            name = elem.get("filename") or ""
            lines = [int(x.get("number", "0")) for x in elem.iter("line")
                     if (x.get("number") or "").isdigit() and (x.get("hits") or "0").isdigit()
                     and int(x.get("hits") or 0) > 0]
            if parent is not None:
                parent.remove(elem)
            if name and lines:
                path = name if not sources or name.startswith("/") else sources[0].rstrip("/") + "/" + name
                yield Observation("coverage", path, "", "", ranges(lines))
