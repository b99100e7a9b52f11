"""Chunk BM25: the best-matching symbol, section or window of each candidate file.

A file's full-text score sums its words over the whole file, so a long file with one
relevant function is diluted and a short file with one common word can win. Here each
candidate's text is cut into chunks — its symbols and heading sections (from the build),
and windows of ``WINDOW`` lines that cover what lies between them — and each chunk is
scored with BM25 against the query's weighted terms:

    chunk(c) = Σ_t ω_t · idf_t · tf(t, c)·(k1 + 1) / (tf(t, c) + k1·(1 − b + b·|c| / avg|c|))
    idf_t    = ln(1 + (N − n_t + 0.5) / (n_t + 0.5))

over the N chunks of the candidates (n_t of them contain t), |c| in lines (a best chunk shorter than
``MIN_QUOTE_LINES`` is quoted with what surrounds it: ``widen``). A term matches
a word that starts with its stem at a word or camelCase boundary ("cooki" matches
``extract_cookies_to_jar`` and ``getCookieJar``). The file's chunk score is its best
chunk's; the best chunks are also the lines a context pack quotes.

>>> text = "def a():\\n    return 1\\n\\ndef persist_cookies(jar):\\n    jar.save()\\n"
>>> best = score_chunks([("cooki", 1.0), ("persist", 1.0)], {"m.py": text},
...                     {"m.py": [("a", "function", 1, 2), ("persist_cookies", "function", 4, 5)]})
>>> best["m.py"][0].label, best["m.py"][0].start, best["m.py"][0].end
('symbol persist_cookies', 1, 5)
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

K1 = 1.2
B = 0.75
WINDOW = 30              # lines of a window chunk (between and around symbols)
MAX_SYMBOL_LINES = 400   # a symbol longer than this is scored through its windows and members
MAX_TERMS = 32           # the heaviest query stems a chunk is scored on
MAX_CHUNKS_PER_FILE = 2000
QUOTED = 4               # the best chunks of a file that may be quoted (and so widened)


@dataclass(frozen=True, slots=True)
class Chunk:
    start: int     # 1-based, inclusive
    end: int
    label: str     # "symbol NAME", "section TITLE" or "lines"
    score: float


def term_pattern(stems: Sequence[str]) -> re.Pattern[str] | None:
    """One alternation of the (lower-case) stems, longest first, matched in the lower-cased
    text; a stem shorter than 4 must end the word. Where a match may start is checked on
    the original text (``_hits``): a regular expression with a look-behind for the word
    or camelCase boundary and ``re.I`` was 7 × slower."""
    alts = []
    for s in sorted(set(stems), key=lambda s: (-len(s), s)):
        if len(s) < 2:
            continue
        alts.append(re.escape(s) + (r"(?![a-z])" if len(s) < 4 else ""))
    if not alts:
        return None
    return re.compile("(" + "|".join(alts) + ")")


def file_chunks(symbols: Iterable[Sequence[object]], line_count: int) -> list[tuple[int, int, str]]:
    """(start, end, label) of each chunk of a file: its symbols and sections no longer
    than ``MAX_SYMBOL_LINES``, and windows of ``WINDOW`` lines over the whole file."""
    out: list[tuple[int, int, str]] = []
    for item in symbols:
        name, kind, start, end = str(item[0]), str(item[1]), int(item[2]), int(item[3])  # type: ignore[call-overload]
        if 1 <= start <= end and end - start < MAX_SYMBOL_LINES:
            out.append((start, end, f"{'section' if kind == 'heading' else 'symbol'} {name}"))
    for start in range(1, max(1, line_count) + 1, WINDOW):
        out.append((start, min(line_count, start + WINDOW - 1), "lines"))
    return out[:MAX_CHUNKS_PER_FILE]


def _hits(pattern: re.Pattern[str], text: str, index: dict[str, int]) -> tuple[list[int], list[int]]:
    """(line numbers, term indices) of every match at a word start or a camelCase hump,
    in text order."""
    lines, terms = [], []
    line, pos = 1, 0
    low = text.lower()
    if len(low) != len(text):  # a letter whose lower case is longer ("İ"): no humps then
        text = low
    for m in pattern.finditer(low):
        i = m.start()
        if i:
            before = text[i - 1]
            if before.isalnum() and not (before.islower() and text[i].isupper()):
                continue  # inside a word: "pars" in "spars"
        line += text.count("\n", pos, i)
        pos = i
        lines.append(line)
        terms.append(index[m.group(1)])
    return lines, terms


def score_chunks(terms: Sequence[tuple[str, float]], texts: dict[str, str],
                 structure: dict[str, list[Sequence[object]]]) -> dict[str, list[Chunk]]:
    """path → its chunks with a positive score, best first. ``terms`` are (stem, ω);
    ``structure`` is each path's symbols and sections as (name, kind, start, end)."""
    weights: dict[str, float] = {}
    for s, w in terms:
        s = s.lower()
        if len(s) >= 2:
            weights[s] = max(weights.get(s, 0.0), w)
    top = sorted(weights, key=lambda s: (-weights[s], s))[:MAX_TERMS]
    pattern = term_pattern(top)
    if pattern is None:
        return {}
    index = {s: i for i, s in enumerate(top)}
    omega = [weights[s] for s in top]
    per_file: list[tuple[str, list[tuple[int, int, str]], list[list[int]]]] = []
    lengths: dict[str, int] = {}
    df = [0] * len(top)
    n_chunks = 0
    total_len = 0
    for path, text in texts.items():
        lines, term_ids = _hits(pattern, text, index)
        line_count = text.count("\n") + (0 if text.endswith("\n") else 1)
        lengths[path] = line_count
        chunks = file_chunks(structure.get(path, ()), line_count)
        counts: list[list[int]] = []
        for start, end, _ in chunks:
            lo, hi = bisect_left(lines, start), bisect_right(lines, end)
            tf = [0] * len(top)
            for i in term_ids[lo:hi]:
                tf[i] += 1
            for i, c in enumerate(tf):
                if c:
                    df[i] += 1
            counts.append(tf)
            total_len += end - start + 1
        n_chunks += len(chunks)
        per_file.append((path, chunks, counts))
    if not n_chunks:
        return {}
    avg = total_len / n_chunks
    idf = [math.log(1 + (n_chunks - n + 0.5) / (n + 0.5)) for n in df]
    out: dict[str, list[Chunk]] = {}
    for path, chunks, counts in per_file:
        scored = []
        for (start, end, label), tf in zip(chunks, counts, strict=True):
            norm = K1 * (1 - B + B * (end - start + 1) / avg)
            score = sum(omega[i] * idf[i] * c * (K1 + 1) / (c + norm) for i, c in enumerate(tf) if c)
            if score > 0:
                scored.append(Chunk(start, end, label, score))
        if scored:
            # best first; a symbol before a window of the same score; then the shorter span
            scored.sort(key=lambda c: (-c.score, c.label == "lines", c.end - c.start, c.start))
            symbols = structure.get(path, ())
            out[path] = [widen(c, symbols, lengths[path]) for c in scored[:QUOTED]] + scored[QUOTED:]
    return out


MIN_QUOTE_LINES = 8     # a shorter window is quoted with the symbol around it, or ± WIDEN lines …
MIN_WHOLE_SYMBOL = 3    # … and so is a symbol shorter than this (a constant, a field, a one-liner)
MAX_QUOTE_PARENT = 60   # … when that symbol is no longer than this
WIDEN = 5


def widen(chunk: Chunk, symbols: Sequence[Sequence[object]], line_count: int) -> Chunk:
    """A window of fewer than ``MIN_QUOTE_LINES`` lines, or a symbol of fewer than
    ``MIN_WHOLE_SYMBOL`` (a one-line constant, a field), says too little alone: quote the smallest symbol around it of at most ``MAX_QUOTE_PARENT``
    lines, else ``WIDEN`` lines either side. Its score is unchanged.

    >>> widen(Chunk(45, 45, "symbol C.f.X", 1.0), [("C", "class", 40, 70), ("C.f", "method", 44, 52)], 200)
    Chunk(start=44, end=52, label='symbol C.f', score=1.0)
    >>> widen(Chunk(3, 3, "symbol K", 1.0), [], 5)
    Chunk(start=1, end=5, label='symbol K', score=1.0)
    >>> widen(Chunk(3, 5, "symbol f", 1.0), [], 9)   # a whole three-line function stays
    Chunk(start=3, end=5, label='symbol f', score=1.0)
    """
    lines = chunk.end - chunk.start + 1
    if lines >= MIN_QUOTE_LINES or (chunk.label.startswith("symbol") and lines >= MIN_WHOLE_SYMBOL):
        return chunk  # a window long enough, or a whole function of a few lines
    around = [(int(x[2]), int(x[3]), str(x[0])) for x in symbols  # type: ignore[call-overload]
              if int(x[2]) <= chunk.start and chunk.end <= int(x[3])  # type: ignore[call-overload]
              and (int(x[2]), int(x[3])) != (chunk.start, chunk.end)  # type: ignore[call-overload]
              and int(x[3]) - int(x[2]) < MAX_QUOTE_PARENT]  # type: ignore[call-overload]
    if around:
        start, end, name = min(around, key=lambda a: a[1] - a[0])
        return Chunk(start, end, f"symbol {name}", chunk.score)
    return Chunk(max(1, chunk.start - WIDEN), min(max(line_count, chunk.end), chunk.end + WIDEN), chunk.label,
                 chunk.score)


SECOND_SPAN = 0.6  # a second, separate chunk is quoted when it scores at least this × the best


def best_spans(chunks: Sequence[Chunk], gap: int = 3) -> list[Chunk]:
    """The lines to quote from a file: its best chunk, and the best chunk apart from it
    that scores at least ``SECOND_SPAN`` × as much; in line order, merged when they lie
    within ``gap`` lines (the merged span keeps the better chunk's label and score).

    >>> a, b = Chunk(10, 20, "symbol f", 2.0), Chunk(22, 30, "symbol g", 1.5)
    >>> [(c.start, c.end, c.label) for c in best_spans([a, b])]
    [(10, 30, 'symbol f')]
    """
    if not chunks:
        return []
    first = chunks[0]
    picked = [first]
    for c in chunks[1:]:
        if c.score < SECOND_SPAN * first.score:
            break
        if c.end < first.start or c.start > first.end:
            picked.append(c)
            break
    picked.sort(key=lambda c: c.start)
    out: list[Chunk] = []
    for c in picked:
        if out and c.start <= out[-1].end + gap:
            keep = out[-1] if out[-1].score >= c.score else c
            out[-1] = Chunk(out[-1].start, max(out[-1].end, c.end), keep.label, keep.score)
        else:
            out.append(c)
    return out


def merge_spans(spans: Iterable[tuple[int, int]], gap: int = 3) -> list[tuple[int, int]]:
    """Spans sorted and merged when they overlap or lie within ``gap`` lines of each other.

    >>> merge_spans([(35, 35), (38, 38), (37, 37), (90, 99)])
    [(35, 38), (90, 99)]
    """
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1] + gap:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out
