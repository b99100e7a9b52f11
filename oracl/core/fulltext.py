"""ORACL's own full-text postings: BM25 over each file's term bag, kept beside the database
instead of in it, so that a one-file change writes a few kilobytes, not the engine's index
pages (Kùzu 0.11.3's index wrote 22 MB at its checkpoint for one new 142-term document at
20k files, and its in-place delete dropped other documents' postings: docs/decisions.md).

A bundle holds two files:

* ``fulltext.bin`` (the *base*), written by a full build, or when the delta outgrows its
  bound: every document's length and, per term (sorted), the documents holding it with the
  term's frequency. It is read through ``mmap`` (a query touches the pages of its terms
  only) and hard-linked from bundle to bundle while it holds;
* ``fulltext.delta``: what changed since the base, rewritten by each build – the base
  documents gone (their ids) and the term bag of every document written since.

Scores are exactly what the engine's index gave a full build of the same documents
(``tests/test_fulltext.py`` compares them with ``QUERY_FTS_INDEX``): the same tokens
(``IGNORE`` made spaces, lower case, split on spaces), the same 570 stop words dropped, the
same Porter stems (libstemmer, as the engine links it), and its BM25,
``log10((N − df + 0.5) / (df + 0.5) + 1) · tf·(k1 + 1) / (tf + k1·(1 − b + b·len/avgdl))``
with k1 = 1.2 and b = 0.75. N, df and avgdl count the live documents only (the base's
minus those gone, plus the delta's): no superseded row ever weighs in, and nothing is held
per epoch. Two differences: a query is lower-cased as its documents are (the engine
lower-cased only the ASCII letters of a query), and ties are broken by path.

>>> bag("parse parsing http_server the")
({'pars': 2, 'http': 1, 'server': 1}, 4)
"""

from __future__ import annotations

import bisect
import heapq
import math
import mmap
import re
import struct
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson

from oracl.core.stopwords import STOPWORDS

FORMAT = "fulltext-2 (documents by path): kuzu-0.11.3 tokens, 570 stop words, porter, bm25 k1=1.2 b=0.75"  # a change: a full build
BASE_FILE = "fulltext.bin"
DELTA_FILE = "fulltext.delta"
K1, B = 1.2, 0.75
# the engine's default ignore patterns: every character class it made a space, for the
# documents and (without the wildcards * and ?) for a query
IGNORE = re.compile(r"""[0-9!@#$%^&*()_+={}\[\]:;<>,.?~/|'"`-]+""")
IGNORE_QUERY = re.compile(r"""[0-9!@#$%^&()_+={}\[\]:;<>,.~/|'"`-]+""")
_MAGIC = b"ORACLFT1"
_HEAD = struct.Struct("<8s4Q8Q")  # magic; docs, terms, postings, total length; 8 section offsets
# a delta past this many documents is folded into a new base by the next build
DELTA_DOCS_MIN = 64
DELTA_DOCS_SHARE = 100  # … or past one document in this many, whichever is more


def delta_bound(n_docs: int) -> int:
    """The documents a delta may hold before the next build writes a new base:
    max(``DELTA_DOCS_MIN``, n_docs // ``DELTA_DOCS_SHARE``). ``delta_bound(20000) == 200``."""
    return max(DELTA_DOCS_MIN, n_docs // DELTA_DOCS_SHARE)


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import Stemmer  # PyStemmer: libstemmer, the stemmer the engine's index used

    return Stemmer.Stemmer("porter")


def doc_terms(text: str) -> list[str]:
    """A document's terms, in order: the engine's tokens less its stop words, stemmed."""
    words = [w for w in IGNORE.sub(" ", text).lower().split(" ") if w and w not in STOPWORDS]
    return list(_stemmer().stemWords(words))


def bag(text: str) -> tuple[dict[str, int], int]:
    """(term → frequency, length) of a document: its length counts every term it keeps."""
    terms = doc_terms(text)
    return dict(Counter(terms)), len(terms)


def query_terms(q: str, conjunctive: bool = False) -> list[str]:
    """A query's terms: tokenised as a document is, but keeping ``*`` and ``?`` (a term
    holding one is a pattern over the index's terms, never stemmed); stop words are dropped
    only from a conjunctive query (the engine's rule: elsewhere they simply match nothing)."""
    out = []
    stem = _stemmer().stemWord
    for w in IGNORE_QUERY.sub(" ", q).lower().split(" "):
        if not w or (conjunctive and w in STOPWORDS):
            continue
        out.append(w if ("*" in w or "?" in w) else stem(w))
    return out


def bm25(tf: int, df: int, length: int, n_docs: int, avgdl: float) -> float:
    """One term's share of a document's score, as the engine computed it.
    ``bm25(1, 1, 4, 4, 4.0)`` = log10(3.5 / 1.5 + 1) · 2.2 / 2.2 = 0.5228787452803376."""
    return math.log10((n_docs - df + 0.5) / (df + 0.5) + 1) * ((tf * (K1 + 1) / (tf + K1 * (1 - B + B * (length / avgdl)))))


# ---- the base ----------------------------------------------------------------------------

def encode_base(docs: Iterable[tuple[str, Mapping[str, int], int]]) -> bytes:
    """The base file of ``docs`` (path, term bag, length), in the order of their paths'
    bytes (a document is then found by binary search, ``Base.doc_id``); a document without
    terms is left out (the engine's index held no row for it either)."""
    paths: list[bytes] = []
    lengths = array("I")
    by_term: dict[str, tuple[array, array]] = {}
    rows = sorted(((p.encode("utf-8", "surrogateescape"), t, n) for p, t, n in docs if n > 0), key=lambda r: r[0])
    for path, terms, length in rows:
        doc = len(paths)
        paths.append(path)
        lengths.append(length)
        for term, tf in terms.items():
            slot = by_term.get(term)
            if slot is None:
                slot = by_term[term] = (array("I"), array("I"))
            slot[0].append(doc)
            slot[1].append(tf)
    encoded = sorted((t.encode("utf-8", "surrogateescape"), t) for t in by_term)
    path_off, term_off, post_off = array("I", [0]), array("I", [0]), array("I", [0])
    for p in paths:
        path_off.append(path_off[-1] + len(p))
    post_doc, post_tf = array("I"), array("I")
    for raw, term in encoded:
        term_off.append(term_off[-1] + len(raw))
        d, f = by_term[term]
        post_doc.extend(d)
        post_tf.extend(f)
        post_off.append(len(post_doc))
    sections = [path_off.tobytes(), b"".join(paths), lengths.tobytes(), term_off.tobytes(),
                b"".join(raw for raw, _ in encoded), post_off.tobytes(), post_doc.tobytes(), post_tf.tobytes()]
    offsets, at = [], _HEAD.size
    for s in sections:
        at += -at % 4  # every section 4-aligned
        offsets.append(at)
        at += len(s)
    out = bytearray(_HEAD.pack(_MAGIC, len(paths), len(encoded), len(post_doc), sum(lengths), *offsets))
    for s, off in zip(sections, offsets, strict=True):
        out += b"\0" * (off - len(out))
        out += s
    return bytes(out)


def _sorted_index(at: Callable[[int], bytes], n: int, key: bytes) -> int:
    """Where ``key`` is among the ``n`` sorted byte strings ``at(0)`` … ``at(n - 1)`` (-1:
    absent), by binary search (``bisect`` over them, read one at a time)."""
    i = bisect.bisect_left(range(n), key, key=at)
    return i if i < n and at(i) == key else -1


class Base:
    """A base file, read in place (``mmap``)."""

    def __init__(self, data: Any) -> None:
        self._data = data
        try:
            magic, self.n_docs, self.n_terms, n_post, self.total_len, *off = _HEAD.unpack_from(data, 0)
        except struct.error:
            raise ValueError("a full-text base file shorter than its header") from None
        if magic != _MAGIC:
            raise ValueError("not a full-text base file")
        n, t, size = self.n_docs, self.n_terms, len(data)

        def section(i: int, count: int) -> memoryview:
            if not 0 <= off[i] <= off[i] + 4 * count <= size or off[i] % 4:
                raise ValueError("a full-text base file whose sections overrun it")
            return memoryview(data)[off[i]:off[i] + 4 * count].cast("I")

        self._path_off = section(0, n + 1)
        self.lengths = section(2, n)
        self._term_off = section(3, t + 1)
        self._post_off = section(5, t + 1)
        self._post_doc = section(6, n_post)
        self._post_tf = section(7, n_post)
        self._paths, self._terms = off[1], off[4]
        if (self._paths + self._path_off[n] > size or self._terms + self._term_off[t] > size
                or self._post_off[t] != n_post):
            raise ValueError("a full-text base file whose sections overrun it")

    @classmethod
    def open(cls, path: Path) -> Base:
        with open(path, "rb") as fh:
            size = fh.seek(0, 2)
            if size == 0:
                raise ValueError("an empty full-text base file")
            return cls(mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ))

    def path(self, doc: int) -> str:
        a, b = self._path_off[doc], self._path_off[doc + 1]
        return bytes(self._data[self._paths + a:self._paths + b]).decode("utf-8", "surrogateescape")

    def _path_bytes(self, doc: int) -> bytes:
        return bytes(self._data[self._paths + self._path_off[doc]:self._paths + self._path_off[doc + 1]])

    def doc_id(self, path: str) -> int:
        """The id of ``path``'s document (-1: absent), by binary search over the sorted paths:
        a rebuild finds the few files it wrote again without a pass over every path."""
        return _sorted_index(self._path_bytes, self.n_docs, path.encode("utf-8", "surrogateescape"))

    def term(self, i: int) -> bytes:
        return bytes(self._data[self._terms + self._term_off[i]:self._terms + self._term_off[i + 1]])

    def find(self, term: str) -> int:
        """The index of ``term`` (-1: absent), by binary search over the sorted terms."""
        return _sorted_index(self.term, self.n_terms, term.encode("utf-8", "surrogateescape"))

    def postings(self, i: int) -> tuple[memoryview, memoryview]:
        a, b = self._post_off[i], self._post_off[i + 1]
        return self._post_doc[a:b], self._post_tf[a:b]

    def terms(self) -> Iterable[str]:
        return (self.term(i).decode("utf-8", "surrogateescape") for i in range(self.n_terms))

    def bags(self) -> dict[int, dict[str, int]]:
        """Every document's term bag (a new base is made from them: the delta folded in)."""
        out: dict[int, dict[str, int]] = {}
        for i, term in enumerate(self.terms()):
            docs, tfs = self.postings(i)
            for d, tf in zip(docs, tfs, strict=True):
                out.setdefault(d, {})[term] = tf
        return out


# ---- the delta ---------------------------------------------------------------------------

@dataclass
class Delta:
    """What changed since the base: its documents gone (ids) and the bags written since."""

    gone: set[int] = field(default_factory=set)
    docs: dict[str, tuple[int, dict[str, int]]] = field(default_factory=dict)  # path → (length, bag)

    def encode(self) -> bytes:
        return orjson.dumps({"gone": sorted(self.gone),
                             "docs": {p: [n, t] for p, (n, t) in sorted(self.docs.items())}})

    @classmethod
    def decode(cls, raw: bytes) -> Delta:
        try:
            d = orjson.loads(raw)
            return cls({int(i) for i in d["gone"]},
                       {str(p): (int(v[0]), {str(t): int(f) for t, f in v[1].items()}) for p, v in d["docs"].items()})
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError, IndexError):
            raise ValueError("a damaged full-text delta file") from None


# ---- a reader ----------------------------------------------------------------------------

class FullText:
    """The live documents of a bundle: its base less the documents gone, plus the delta's.

    >>> ft = FullText(None, Delta(docs={"a.py": (2, {"sign": 1, "export": 1})}))
    >>> [(p, round(s, 6)) for p, s in ft.search("signing", 5)]
    [('a.py', 0.124939)]
    """

    def __init__(self, base: Base | None, delta: Delta) -> None:
        self.base = base
        self.delta = delta
        gone = delta.gone
        self.n_docs = (base.n_docs - len(gone) if base is not None else 0) + \
            sum(1 for n, _ in delta.docs.values() if n > 0)
        total = base.total_len if base is not None else 0
        if base is not None:
            total -= sum(base.lengths[i] for i in gone)
        self.total_len = total + sum(n for n, _ in delta.docs.values())
        self._inverted: dict[str, list[tuple[str, int]]] | None = None

    @classmethod
    def open(cls, folder: Path) -> FullText | None:
        """The bundle ``folder``'s postings; None when it has none (built without them).
        Raises ValueError (or OSError) for files that are not whole."""
        try:
            raw = (folder / DELTA_FILE).read_bytes()
        except FileNotFoundError:
            return None
        base = Base.open(folder / BASE_FILE) if (folder / BASE_FILE).exists() else None
        return cls(base, Delta.decode(raw))

    @property
    def avgdl(self) -> float:
        return self.total_len / self.n_docs if self.n_docs else 0.0

    def _delta_postings(self, term: str) -> list[tuple[str, int]]:
        if self._inverted is None:
            inv: dict[str, list[tuple[str, int]]] = {}
            for path, (n, terms) in self.delta.docs.items():
                if n > 0:
                    for t, tf in terms.items():
                        inv.setdefault(t, []).append((path, tf))
            self._inverted = inv
        return self._inverted.get(term, [])

    def _matching(self, pattern: str) -> list[str]:
        """The index's terms a wildcard term matches whole (``*`` any run, ``?`` one character)."""
        rx = re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern), re.S)
        found = {t for t in (self.base.terms() if self.base is not None else ()) if rx.fullmatch(t)}
        if self._inverted is None:
            self._delta_postings("")
        assert self._inverted is not None
        found.update(t for t in self._inverted if rx.fullmatch(t))
        return sorted(found)

    def search(self, q: str, k: int, conjunctive: bool = False) -> list[tuple[str, float]]:
        """The ``k`` best live documents for ``q``: (path, score), best first, ties by path.
        ``conjunctive``: only documents holding every distinct query term."""
        terms = query_terms(q, conjunctive)
        unique = list(dict.fromkeys(terms))
        if not unique or k <= 0 or self.n_docs == 0:
            return []
        index_terms: list[str] = []
        for t in unique:
            index_terms.extend(self._matching(t) if ("*" in t or "?" in t) else [t])
        n, avgdl, base, gone = self.n_docs, self.avgdl, self.base, self.delta.gone
        scores: dict[int | str, float] = {}
        matched: Counter[int | str] = Counter()
        lengths = base.lengths if base is not None else None
        delta_len = self.delta.docs
        for term in dict.fromkeys(index_terms):
            hits: list[tuple[int | str, int]] = []
            if base is not None:
                i = base.find(term)
                if i >= 0:
                    docs, tfs = base.postings(i)
                    if gone:
                        hits.extend((d, tf) for d, tf in zip(docs, tfs, strict=True) if d not in gone)
                    else:
                        hits.extend(zip(docs, tfs, strict=True))
            hits.extend(self._delta_postings(term))
            if not hits:
                continue
            df = len(hits)
            idf = math.log10((n - df + 0.5) / (df + 0.5) + 1)
            for doc, tf in hits:
                length = lengths[doc] if isinstance(doc, int) and lengths is not None else delta_len[doc][0]  # type: ignore[index]
                scores[doc] = scores.get(doc, 0.0) + idf * ((tf * (K1 + 1) / (tf + K1 * (1 - B + B * (length / avgdl)))))
                matched[doc] += 1
        if conjunctive:
            need = len(unique)
            scores = {d: s for d, s in scores.items() if matched[d] == need}
        if not scores:
            return []
        # the k best by score, those tied with the k-th kept until their paths break the tie
        best = heapq.nlargest(k, scores.values())
        floor = best[-1] if len(best) == k else -math.inf
        chosen = [(-s, self._path(d)) for d, s in scores.items() if s >= floor]
        chosen.sort()
        return [(p, -s) for s, p in chosen[:k]]

    def _path(self, doc: int | str) -> str:
        if isinstance(doc, str):
            return doc
        assert self.base is not None
        return self.base.path(doc)


# ---- a build's write ---------------------------------------------------------------------

def write(folder: Path, docs: Iterable[tuple[str, str]], *, previous: Path | None = None,
          delete: Iterable[str] = (), durable: bool = True) -> tuple[str, dict[str, str]]:
    """The postings of a bundle, written into ``folder``: from ``docs`` (path, text) alone
    (``previous`` None: a full build), or as the ``previous`` bundle's with the documents of
    ``delete`` gone and ``docs`` (re)written. The previous base is hard-linked while the
    delta stays within ``delta_bound``; past it, base and delta are folded into a new base.
    Returns (what it did when it folded the delta into a new base, else "", the SHA-256 of
    the files linked rather than written, from the previous bundle's manifest)."""
    from oracl.core.vault import atomic_write

    bags = [(p, *bag(text)) for p, text in docs]
    if previous is not None and not (previous / DELTA_FILE).exists():
        raise ValueError(f"the bundle {previous.name} has no full-text postings")
    if previous is None:
        atomic_write(folder / BASE_FILE, encode_base((p, t, n) for p, t, n in bags), durable)
        atomic_write(folder / DELTA_FILE, Delta().encode(), durable)
        return "", {}
    old = FullText.open(previous)
    assert old is not None
    base, delta = old.base, old.delta
    for p in (*delete, *(p for p, _, _ in bags)):
        delta.docs.pop(p, None)
        doc = base.doc_id(p) if base is not None else -1
        if doc >= 0:
            delta.gone.add(doc)
    for p, terms, n in bags:
        if n > 0:
            delta.docs[p] = (n, terms)
    live = (base.n_docs - len(delta.gone) if base is not None else 0) + len(delta.docs)
    if len(delta.docs) + len(delta.gone) > delta_bound(live):
        merged: dict[str, tuple[dict[str, int], int]] = {}
        if base is not None:
            for d, terms in base.bags().items():
                if d not in delta.gone:
                    merged[base.path(d)] = (terms, int(base.lengths[d]))
        for p, (n, terms) in delta.docs.items():
            merged[p] = (terms, n)
        atomic_write(folder / BASE_FILE, encode_base((p, *merged[p]) for p in sorted(merged)), durable)
        atomic_write(folder / DELTA_FILE, Delta().encode(), durable)
        return f"the full-text delta folded into a new base of {len(merged):,} documents", {}
    known: dict[str, str] = {}
    if base is not None:
        import os

        from oracl.core.vault import MANIFEST

        os.link(previous / BASE_FILE, folder / BASE_FILE)
        try:
            sealed = orjson.loads((previous / MANIFEST).read_bytes())["files"].get(BASE_FILE)
        except (OSError, orjson.JSONDecodeError, KeyError, TypeError):
            sealed = None
        if isinstance(sealed, str):
            known[BASE_FILE] = sealed
    atomic_write(folder / DELTA_FILE, delta.encode(), durable)
    return "", known
