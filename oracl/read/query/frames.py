"""Stack traces and ``file:line`` mentions in a query → (path, line, function) evidence.

A pasted traceback names the files that ran, often as absolute paths of another machine
(``/home/ci/venv/lib/python3.12/site-packages/flask/app.py``). Each frame's path is
matched against the build's paths by its longest suffix of whole path components
(``flask/app.py`` → ``src/flask/app.py``); a suffix that fits more than
``MAX_AMBIGUOUS`` files names none of them.

Recognised: Python (``File "x.py", line 12, in f``), JavaScript/TypeScript
(``at f (x.js:12:5)``, ``at x.js:12:5``), Java/Kotlin (``at a.b.C.f(C.java:12)``),
Go (``\\t/x/y.go:12 +0x1d``), Rust (``at src/x.rs:12:5``, ``panicked at src/x.rs:12:5``)
and a bare ``path/to/file.ext:12``; a path with a directory and no line
(``src/flask/ctx.py``) is a frame of line 0.

>>> [(f.path, f.line, f.function) for f in parse_frames(
...     'File "/venv/site-packages/flask/app.py", line 1498, in wsgi_app\\n  at Gson.fromJson(Gson.java:12)')]
[('/venv/site-packages/flask/app.py', 1498, 'wsgi_app'), ('Gson.java', 12, 'Gson.fromJson')]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from oracl.core.locate import MAX_AMBIGUOUS, resolve  # noqa: F401 – the frames' path mapping, shared with the sensors

MAX_FRAMES = 40

_PY = re.compile(r'File "([^"\n]{1,400})", line (\d{1,7})(?:, in ([\w<>.$]{1,200}))?')
_JS = re.compile(r"\bat (?:(?:async )?([\w$.<>\[\] ]{1,200}?) \()?((?:[A-Za-z]:)?[^\s():]{1,400}):(\d{1,7}):\d{1,7}\)?")
_JAVA = re.compile(r"\bat ([\w$.<>]{1,300})\(([\w$-]{1,200}\.(?:java|kt|scala|groovy)):(\d{1,7})\)")
_PATH = re.compile(r"(?<![\w/.:@-])((?:[\w.-]{1,100}/){1,30}[\w-][\w.-]{0,99}\.[A-Za-z][A-Za-z0-9]{0,5})(?![\w/:-])")
URL = re.compile(r"\b[a-z][a-z0-9+.-]{1,20}://[^\s<>\"'`)\]]+", re.I)  # a web address (the parser drops them too)
_BARE = re.compile(r"(?<![\w/.:-])(/?(?:[\w.-]{1,100}/){0,30}[\w.-]{1,100}\.[A-Za-z]{1,6}):(\d{1,7})\b")


@dataclass(frozen=True, slots=True)
class Frame:
    path: str       # as written in the query
    line: int
    function: str   # "" when the frame does not say


def parse_frames(text: str) -> list[Frame]:
    """Every frame of ``text``, in the order written, at most ``MAX_FRAMES``."""
    found: list[tuple[int, Frame]] = []
    # a web address is no frame, however deep its path (an issue template's
    # `https://mybinder.org/…?urlpath=lab/tree/doc/examples/blank_template.ipynb`)
    taken: list[tuple[int, int]] = [(m.start(), m.end()) for m in URL.finditer(text)]

    def add(m: re.Match[str], path: str, line: str, function: str) -> None:
        if any(a <= m.start() < b for a, b in taken):
            return
        taken.append((m.start(), m.end()))
        found.append((m.start(), Frame(path, int(line), function or "")))

    for m in _PY.finditer(text):
        add(m, m.group(1), m.group(2), m.group(3))
    for m in _JAVA.finditer(text):
        add(m, m.group(2), m.group(3), m.group(1))
    for m in _JS.finditer(text):
        add(m, m.group(2), m.group(3), (m.group(1) or "").strip())
    for m in _BARE.finditer(text):
        add(m, m.group(1), m.group(2), "")
    for m in _PATH.finditer(text):
        add(m, m.group(1), "0", "")
    found.sort(key=lambda x: x[0])
    return [f for _, f in found[:MAX_FRAMES]]


def java_path(frame: Frame) -> str:
    """``a.b.C.f`` in ``C.java`` → ``a/b/C.java`` (the package's directory), else the file."""
    qualified = frame.function.split("$")[0].rsplit(".", 1)[0]  # drop the method
    if "." in qualified and frame.path.endswith((".java", ".kt", ".scala", ".groovy")):
        return qualified.rsplit(".", 1)[0].replace(".", "/") + "/" + frame.path
    return frame.path
