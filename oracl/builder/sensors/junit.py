"""JUnit XML (pytest ``--junitxml``, Maven Surefire, gotestsum, jest-junit): one test
observation per ``<testcase>``: pass, fail (``<failure>`` or ``<error>``) or skip; the file
from its ``file`` attribute, else its ``classname`` as a module path (``tests.test_app`` →
``tests/test_app``, a suffix the mapping completes)."""

from __future__ import annotations

from defusedxml import ElementTree
from defusedxml.common import DefusedXmlException

from oracl.builder.sensors.observe import Observation
from oracl.core.errors import IngestError


def parse(data: bytes) -> list[Observation]:
    try:
        root = ElementTree.fromstring(data, forbid_dtd=True)
    except DefusedXmlException as exc:
        raise IngestError(f"JUnit report refused: {type(exc).__name__} (an XML entity or DTD trick)") from None
    except ElementTree.ParseError as exc:
        raise IngestError(f"JUnit report is not well-formed XML: {exc}") from None
    out = []
    for case in root.iter("testcase"):
        name = case.get("name") or ""
        classname = case.get("classname") or ""
        path = case.get("file") or ""
        if not path and classname:
            path = classname.replace(".", "/")
        if not path or not name:
            continue
        if case.find("failure") is not None or case.find("error") is not None:
            outcome = "fail"
        elif case.find("skipped") is not None:
            outcome = "skip"
        else:
            outcome = "pass"
        out.append(Observation("test", path, name, outcome, extra={"class": classname} if classname else {}))
    return out
