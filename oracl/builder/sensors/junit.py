"""JUnit XML (pytest ``--junitxml``, Maven Surefire, gotestsum, jest-junit): one test
observation per ``<testcase>``: pass, fail (``<failure>`` or ``<error>``) or skip; the file
from its ``file`` attribute, else its ``classname`` as a module path (``tests.test_app`` →
``tests/test_app``, a suffix the mapping completes)."""

from __future__ import annotations

from oracl.builder.sensors.observe import Observation, xml_root


def parse(data: bytes) -> list[Observation]:
    root = xml_root(data, "JUnit")
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
