"""The one tokenizer: how text becomes terms for the full-text index, for the query and
for the spans a context pack quotes.

* ``identifier_parts`` splits a word on ``_ . / : -`` and on camelCase boundaries;
* ``stem`` is the light stemmer (plural, -ing, -ed) both sides compare with;
* ``term_bag`` is the index side: a file's words, compound identifiers kept whole and
  followed by their parts, code keywords dropped, term frequency capped;
* ``fts_document`` is the one full-text document of a file (its path, symbol names,
  heading titles and leading body bytes), for a build and for a repair alike;
* ``stems`` is the field side of scoring: the stemmed words and parts of some names.

>>> identifier_parts("parseHTTPResponse_v2")
['parse', 'http', 'response', 'v', '2']
>>> identifier_parts("src/flask/app.py")
['src', 'flask', 'app', 'py']
>>> term_bag("def parseURL(self): return x")
'parseurl parse url x'
>>> stem("signing"), stem("archives"), stem("running")
('sign', 'archive', 'run')
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_SEPARATORS = re.compile(r"[_./:-]+")
_SPLIT = re.compile(r"[^0-9A-Za-z]+")

# bytes that end a word: everything but ASCII letters, digits, "_" and non-ASCII (UTF-8) bytes
_SPLIT_TABLE = bytes(b if (chr(b).isalnum() and b < 128) or b == 95 or b >= 128 else 32
                     for b in range(256))

# words of every Python file: near-zero IDF, and a third of the postings of a code corpus
CODE_NOISE = frozenset({"self", "cls", "def", "return", "import", "from", "class", "none", "true",
                        "false", "pass", "elif", "else", "lambda", "yield", "async", "await",
                        "raise", "except", "try", "while", "args", "kwargs", "py"})


@lru_cache(maxsize=1 << 17)
def _parts(word: str) -> tuple[str, ...]:
    return tuple(p.lower() for p in _PART.findall(_SEPARATORS.sub(" ", word)))


def identifier_parts(word: str) -> list[str]:
    """snake_case, camelCase, dotted and path parts of ``word``, lower-cased."""
    return list(_parts(word))


def singular(word: str) -> str:
    """Plural normalisation: archives → archive, policies → policy."""
    w = word.lower()
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and w.endswith(("sses", "shes", "ches", "xes")):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


@lru_cache(maxsize=1 << 18)
def stem(word: str) -> str:
    """A light stemmer shared by query terms and field tokens: plural, -ing, -ed.
    Memoised: field tokens repeat across candidates and queries."""
    w = singular(word)
    if len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) > 4 and w.endswith("ed") and not w.endswith("eed"):
        w = w[:-2]
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]  # running → runn → run
    return w


def stems(texts: Iterable[str]) -> set[str]:
    """The stems of every word of ``texts`` and of each word's identifier parts."""
    out: set[str] = set()
    for text in texts:
        for word in _SPLIT.split(text):
            if not word:
                continue
            out.add(stem(word.lower()))
            for part in _parts(word):
                out.add(stem(part))
    return out


def term_bag(text: str | bytes, tf_cap: int = 0, keep_compounds: bool = True) -> str:
    """The terms of a text for the full-text index, in first-seen order.

    Compound identifiers are kept whole and followed by their parts
    (``parseHTTPResponse_v2`` → ``parsehttpresponse_v2 parse http response v 2``; the query
    side sends both) and keywords of code are dropped. Each term appears
    ``min(tf, tf_cap)`` times (``tf_cap`` 0: once), so BM25 keeps a saturated term
    frequency without indexing every repetition. Works on UTF-8 bytes with
    ``bytes.translate`` + ``split`` (C speed)."""
    data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    counts = Counter(data.translate(_SPLIT_TABLE).decode("utf-8", "replace").split())
    out: dict[str, int] = {}
    for w, c in counts.items():
        if "_" in w:
            parts = w.lower().split("_") if (w.islower() or w.isupper()) else list(_parts(w))
        elif w.islower() or w.isupper() or w.isdigit():
            parts = [w.lower()]
        else:
            parts = list(_parts(w))
        if len(parts) > 1 and keep_compounds:
            whole = w.lower().strip("_")  # the identifier itself is the sharpest evidence
            out[whole] = out.get(whole, 0) + c
        for part in parts:
            if part and part not in CODE_NOISE:
                out[part] = out.get(part, 0) + c
    if tf_cap <= 1:
        return " ".join(out)
    return " ".join(" ".join([t] * min(c, tf_cap)) for t, c in out.items())


def fts_document(path: str, symbols: Iterable[str], headings: Iterable[str], body: bytes, body_bytes: int,
                 tf_cap: int) -> str:
    """A file's full-text document: its path, symbol names, heading titles and the first
    ``body_bytes`` of its body (empty for a file that could not be read or parsed)."""
    head = "\n".join((path, " ".join(symbols), " ".join(headings))).encode("utf-8", "surrogateescape")
    return term_bag(head + b"\n" + body[:body_bytes], tf_cap)
