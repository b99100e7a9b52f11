"""The path vocabulary every plane shares: what a path says about a file — a test, its
role (product, example, fixture, vendored), its language — and the buckets of the
priority formula (design §4), so that readers explain a build without importing it.

>>> is_test_path("pkg/tests/test_auth.py"), role("examples/tutorial/auth.py"), LANGUAGE_OF_SUFFIX["rs"]
(True, 'example', 'rust')
"""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime
from fnmatch import fnmatchcase

_TEST_DIRS = frozenset({"tests", "test", "__tests__", "spec"})
_TEST_NAME = re.compile(
    r"^(?:test_.+\.py|.+_test\.(?:py|go|rb|exs?|dart|cc|cpp|c)|.+[._](?:test|spec)\.(?:[cm]?[jt]sx?|rb)"
    r"|.+_spec\.rb|[A-Z]\w*(?:Test|Tests|Spec|IT)\.(?:java|kt|scala|cs|php|swift|groovy)"
    r"|test_.+\.(?:c|cc|cpp|sh|bats)|.+\.bats)$")


@functools.lru_cache(maxsize=1 << 18)  # (asked of every file by several passes; a path's answer never moves)
def is_test_path(path: str) -> bool:
    """A test artifact, by each language's conventions: under a tests/test/__tests__/spec
    directory, or named like a test (test_*.py, *_test.go, *.test.ts, *.spec.js,
    *_spec.rb, FooTest.java, FooTests.cs …)."""
    parts = path.split("/")
    if any(p in _TEST_DIRS for p in parts[:-1]):
        return True
    return _TEST_NAME.match(parts[-1]) is not None


_TEST_SUPPORT_DIRS = frozenset({"fixtures", "fixture", "__fixtures__", "testdata", "test_data", "test-data",
                                "helpers", "helper", "support", "mocks", "__mocks__", "stubs", "snapshots",
                                "__snapshots__", "apps", "test_apps", "ui", "pass", "fail", "data"})
_TEST_SUPPORT_NAMES = frozenset({"conftest.py", "__init__.py", "setup.py", "mod.rs", "helpers.py", "utils.py",
                                 "fixtures.py", "testing.py"})


# what a test to run is written in: a data file under tests/ (ripgrep's `tests/data/sherlock.Z`,
# a `.gitignore` case) is what a test reads, not a test
TEST_CODE_SUFFIXES = frozenset("""
py pyi js mjs cjs jsx ts tsx mts cts go rs java kt kts scala groovy rb php cs fs vb swift m mm c cc cpp cxx
ex exs erl clj cljs dart lua pl t pm r jl hs ml zig nim cr sh bash bats zsh ps1 feature robot
""".split())


def is_test_to_run(path: str) -> bool:
    """A test file a change asks to run: a test artifact (``is_test_path``) that is not a
    test's support – a fixture app (flask's ``tests/test_apps/cliapp/app.py``), a helper
    (``test/helpers/…``), a trybuild case (``tests/ui/…``, ``…/fail/…``), ``conftest.py`` –
    unless it is named like a test itself.

    >>> is_test_to_run("tests/test_cli.py"), is_test_to_run("tests/test_apps/cliapp/app.py")
    (True, False)
    """
    if not is_test_path(path):
        return False
    parts = path.split("/")
    name = parts[-1]
    if "." not in name[1:] or name.rsplit(".", 1)[1].lower() not in TEST_CODE_SUFFIXES:
        return False
    if _TEST_NAME.match(parts[-1]) is not None:
        return parts[-1] not in _TEST_SUPPORT_NAMES
    inside = next((i for i, part in enumerate(parts[:-1]) if part in _TEST_DIRS), len(parts))
    return parts[-1] not in _TEST_SUPPORT_NAMES and not any(p in _TEST_SUPPORT_DIRS for p in parts[inside + 1:-1])


ROLE_DIRS = {
    "example": frozenset({"example", "examples", "sample", "samples", "demo", "demos", "tutorial", "tutorials",
                          "_example", "_examples", "cookbook"}),
    "fixture": frozenset({"fixture", "fixtures", "__fixtures__", "testdata", "test_data", "test-data",
                          "__snapshots__", "snapshots"}),
    "vendored": frozenset({"vendor", "vendored", "_vendor", "third_party", "third-party", "thirdparty",
                           "node_modules", "external", "extern", "bower_components"}),
    "generated": frozenset({"_build", "__generated__"}),  # a documentation build's output
}
# a library copied in under its release's name (sphinx's `jquery-3.5.1.js`, `underscore-1.13.1.js`)
# or minified: another project's code, whatever folder holds it
_VENDORED_NAME = re.compile(r"^[a-z][\w.]*?-v?\d+(?:\.\d+)+(?:\.slim)?(?:\.min)?\.(?:js|css)$|\.min\.(?:js|css)$")


def role(path: str) -> str:
    """``product``, or the first of ``vendored``/``generated``/``fixture``/``example`` a
    directory of the path names (``examples/tutorial/flaskr/auth.py`` → example); a library
    copied in under its release's name or minified (``static/jquery-3.5.1.js``) is vendored."""
    parts = [p.lower() for p in path.split("/")[:-1]]
    for name in ("vendored", "generated", "fixture", "example"):
        if any(p in ROLE_DIRS[name] for p in parts):
            return name
    if _VENDORED_NAME.search(path.rsplit("/", 1)[-1].lower()):
        return "vendored"
    return "product"


# file suffix (lower case) → language; a name without a suffix is looked up whole
LANGUAGE_OF_SUFFIX: dict[str, str] = {
    "py": "python", "pyi": "python", "go": "go", "js": "javascript", "mjs": "javascript",
    "cjs": "javascript", "jsx": "javascript", "ts": "typescript", "mts": "typescript",
    "cts": "typescript", "tsx": "tsx", "rs": "rust", "java": "java", "kt": "kotlin", "kts": "kotlin",
    "c": "c", "h": "c", "cc": "cpp", "cpp": "cpp", "cxx": "cpp", "c++": "cpp", "hpp": "cpp",
    "hh": "cpp", "hxx": "cpp", "h++": "cpp", "ipp": "cpp", "cs": "csharp", "rb": "ruby",
    "rake": "ruby", "gemspec": "ruby", "php": "php", "swift": "swift", "scala": "scala", "sc": "scala",
    "sh": "bash", "bash": "bash", "zsh": "bash", "bats": "bash", "ksh": "bash",
}

BUCKET_WEIGHTS: dict[str, float] = {
    "security": 0.30, "connectivity": 0.10, "usage": 0.10, "authority": 0.10,
    "lifecycle": 0.08, "testing": 0.07, "documentation": 0.05, "freshness": 0.05,
    "governance": 0.04, "cost_savings": 0.04, "instruction": 0.04, "completeness": 0.03,
}


def iso(ns: int) -> str:
    """ISO-8601 UTC with a ``Z``, to the microsecond (what ``strftime("%Y-%m-%dT%H:%M:%S.%fZ")``
    gives, in half its time: a build formats two per file).

    >>> iso(1_733_390_000_999_999_999), iso(0)
    ('2024-12-05T09:13:21.000000Z', '1970-01-01T00:00:00.000000Z')
    """
    d = datetime.fromtimestamp(ns / 1e9, UTC)
    return "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ" % (d.year, d.month, d.day, d.hour, d.minute, d.second,
                                                   d.microsecond)


def utc(text: object) -> datetime | None:
    """The time an ISO-8601 UTC stamp (``2026-12-03T18:00:00Z``, with or without a fraction
    of a second) names, to the second; None when it is not one.

    >>> utc("2026-12-03T18:00:00.123456Z")
    datetime.datetime(2026, 12, 3, 18, 0, tzinfo=datetime.timezone.utc)
    """
    if not isinstance(text, str) or len(text) < 20 or not text.endswith("Z"):
        return None
    try:
        return datetime.strptime(text[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
    except ValueError:
        return None


# never text: skipped by the walk without being opened (anything else is sniffed)
BINARY_SUFFIXES = frozenset("""
png jpg jpeg gif bmp ico icns webp tif tiff psd svgz avif heic
zip gz tgz bz2 xz zst 7z rar tar jar war ear whl egg apk dmg iso deb rpm
so dll dylib a lib o obj exe bin class pyc pyo pyd wasm node
woff woff2 ttf otf eot
pdf doc docx xls xlsx ppt pptx odt ods
mp3 mp4 m4a ogg wav flac avi mov mkv webm
sqlite db kuzu parquet arrow feather npy npz pkl pickle h5 hdf5 onnx pt pth ckpt
""".split())


def binary_suffix(name: str) -> str:
    """The file's suffix when it names a binary format, else ''."""
    low = name.lower()
    suffix = low.rsplit(".", 1)[1] if "." in low[1:] else ""
    return suffix if suffix in BINARY_SUFFIXES else ""


def glob_match(path: str, pattern: str) -> bool:
    """``fnmatch`` where ``*`` also crosses ``/``; ``dir/**`` matches everything below ``dir``."""
    if pattern.endswith("/**") and path.startswith(pattern[:-2]):
        return True
    return fnmatchcase(path, pattern)
