"""Per-file scanners run once per file in a Phase 1 worker.

They find *candidates* (a link target, a string that looks like a path or a module, a
heading) with their line; resolution against the whole index happens later, in the
providers, so a file is read exactly once per build.

>>> markdown_headings("# A\\ntext\\n## B\\n")
(('A', 1, 1, 2), ('B', 2, 3, 3))
"""

from __future__ import annotations

import configparser
import re
from functools import lru_cache

import orjson

from oracl.core.config import MENTION_SUFFIXES
from oracl.core.records import Heading, Mention

MAX_CANDIDATES = 2000  # per file and kind: bounds the cost of a pathological file

_MD_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_MD_LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_MD_REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)")
_PATHLIKE = re.compile(r"(?<![\w@:/.-])((?:\.{1,2}/)?(?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w/])")
_DOTTED = re.compile(r"(?<![\w./-])([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?::[A-Za-z_]\w*)?")
_QUOTED = re.compile(r"\"((?:[^\"\\\n]|\\.)*)\"|'([^'\n]*)'")
_SECRET_KEY_LINE = re.compile(
    r"(?i)(?:password|passwd|secret|api_?key|token|private_?key)[\w-]*[\"']?\s*[:=]\s*(.*)$")
_SECRET_WORD = re.compile(r"(?i)password|passwd|secret|api_?key|token|private_?key")
_URL = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|(?:mailto|tel|data|javascript|urn):)", re.I)
CONFIG_FORMATS = frozenset({"json", "yaml", "yml", "toml", "ini", "cfg"})
HASH_COMMENT_FORMATS = frozenset({"py", "sh", "ps1", "yaml", "yml", "toml", "ini", "cfg"})


def markdown_headings(text: str) -> tuple[Heading, ...]:
    """ATX headings with the line range of their section (to the next heading of ≤ level)."""
    found: list[tuple[str, int, int]] = []
    in_fence = False
    lines = text.splitlines()
    for i, line in enumerate(lines, 1):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        m = None if in_fence else _MD_HEADING.match(line)
        if m:
            found.append((m.group(2), len(m.group(1)), i))
    return sections(found, len(lines))


def sections(found: list[tuple[str, int, int]], n_lines: int) -> tuple[Heading, ...]:
    """Headings ``(title, level, line)`` with the line range of their section: to the line
    before the next heading of the same or a higher level, or the end of the text."""
    out: list[Heading] = []
    for idx, (title, level, start) in enumerate(found):
        end = n_lines
        for _title2, level2, start2 in found[idx + 1:]:
            if level2 <= level:
                end = start2 - 1
                break
        out.append((title, level, start, max(start, end)))
    return tuple(out)


def markdown_links(text: str) -> tuple[Mention, ...]:
    """Relative link targets of inline and reference-style links (URLs are left out)."""
    out: list[Mention] = []
    for i, line in enumerate(text.splitlines(), 1):
        targets = [m.group(1) for m in _MD_LINK.finditer(line)]
        ref = _MD_REF_DEF.match(line)
        if ref:
            targets.append(ref.group(1))
        for t in targets:
            if t and not _URL.match(t) and not t.startswith("#"):
                out.append((t, i))
        if len(out) >= MAX_CANDIDATES:
            break
    return tuple(out)


@lru_cache(maxsize=8)
def _suffix_hit(suffixes: tuple[str, ...]) -> re.Pattern[str]:
    alts = "|".join(sorted((re.escape(x.lstrip(".")) for x in suffixes), key=len, reverse=True))
    return re.compile(rf"\.(?:{alts})(?![\w/])", re.I)


_TOKEN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-")


def path_mentions(text: str, suffixes: tuple[str, ...] = MENTION_SUFFIXES) -> tuple[Mention, ...]:
    """Tokens that look like paths of indexable files (``a/b.py``, ``README.md``), one per
    line and token. Found from the suffix backwards, so the cost follows the hits, not the
    text length."""
    out: list[Mention] = []
    line, last = 1, 0
    seen: set[tuple[str, int]] = set()
    for m in _suffix_hit(suffixes).finditer(text):
        i = m.start()
        while i > 0 and text[i - 1] in _TOKEN_CHARS and m.start() - i < 400:
            i -= 1
        if i > 0 and text[i - 1] in "@:":
            continue  # part of a URL or an e-mail address
        tok = text[i:m.end()].lstrip("-")
        if not _PATHLIKE.fullmatch(tok):
            continue
        line += text.count("\n", last, i)
        last = i
        if (tok, line) not in seen:
            seen.add((tok, line))
            out.append((tok, line))
            if len(out) >= MAX_CANDIDATES:
                break
    return tuple(out)


def _comment_part(line: str) -> str:
    """The text after the first ``#`` that is not inside a quoted string."""
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            return line[i + 1:]
    return ""


def comment_references(text: str, fmt: str) -> tuple[Mention, ...]:
    """Paths and dotted module names written in ``#`` comments of code and config files."""
    if fmt not in HASH_COMMENT_FORMATS:
        return ()
    out: list[Mention] = []
    for i, line in enumerate(text.splitlines(), 1):
        if "#" not in line:
            continue
        comment = _comment_part(line)
        if not comment or comment.startswith("!"):
            continue
        seen: set[str] = set()
        for m in _PATHLIKE.finditer(comment):
            seen.add(m.group(1))
        for m in _DOTTED.finditer(comment):
            seen.add(m.group(1))
        out.extend((tok, i) for tok in sorted(seen))
        if len(out) >= MAX_CANDIDATES:
            break
    return tuple(out)


def config_values(text: str, fmt: str) -> tuple[Mention, ...]:
    """String values of a config file that could name a path or a module, with their line.

    Line-based on purpose: it gives exact line numbers and still works on a file that
    does not parse (the file is tagged malformed, its references are still found).
    """
    if fmt not in CONFIG_FORMATS:
        return ()
    out: list[Mention] = []
    for i, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        cands = [a or b for a, b in _QUOTED.findall(line)]
        if fmt in ("yaml", "yml", "ini", "cfg") or not cands:
            tail = re.split(r"[:=]\s", stripped, maxsplit=1)
            val = tail[1] if len(tail) == 2 else stripped.lstrip("- ")
            cands.extend(v.strip().strip("\"'[],") for v in re.split(r"[\s,]+", val))
        for c in cands:
            c = c.strip()
            if 2 < len(c) < 300 and ("/" in c or "." in c) and " " not in c and not _URL.match(c):
                out.append((c, i))
        if len(out) >= MAX_CANDIDATES:
            break
    return tuple(out)


def _yaml_problem(text: str) -> str:
    """'' when the text parses as a YAML stream (libyaml's parser through PyYAML: events
    only, nothing constructed, so a custom ``!Tag`` is fine), else the parser's reason
    and line. A template (``{{ … }}``, ``{% … %}``: Helm, Ansible, Jinja) is not YAML until
    it is rendered, and is not checked."""
    import yaml

    if "{{" in text or "{%" in text:
        return ""
    try:
        for _ in yaml.parse(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            pass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" on line {mark.line + 1}" if mark is not None else ""
        return f"YAML: {exc.problem or exc.context or 'does not parse'}{where}"
    except yaml.YAMLError as exc:
        return f"YAML: {str(exc).splitlines()[0][:160]}"
    return ""


def validate_structured(text: str, fmt: str) -> str:
    """'' when a json/jsonl/toml/ini/cfg/yaml text parses, else a short reason."""
    try:
        if fmt == "json":
            orjson.loads(text)
        elif fmt == "jsonl":
            for i, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    try:
                        orjson.loads(line)
                    except orjson.JSONDecodeError:
                        return f"invalid JSON on line {i}"
        elif fmt == "toml":
            import tomllib
            tomllib.loads(text)
        elif fmt in ("ini", "cfg"):
            parser = configparser.ConfigParser(strict=False, interpolation=None)
            parser.read_string(text)
        elif fmt in ("yaml", "yml"):
            return _yaml_problem(text)
    except (ValueError, configparser.Error) as exc:
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"
    except RecursionError:
        return "nested too deeply to parse"
    return ""


def security_signals(text: str) -> tuple[bool, bool]:
    """(secret-like key named, credential literal present) for a non-Python text. Only the
    key *names* matter; values are looked at for emptiness only. (Key material is the
    secret detector's to find: ``oracl.core.secrets``.)"""
    names = literal = False
    end = -1
    for hit in _SECRET_WORD.finditer(text):  # only the lines holding a secret word are read, once
        if hit.start() <= end:
            continue
        start = text.rfind("\n", 0, hit.start()) + 1
        end = text.find("\n", hit.end())
        if end < 0:
            end = len(text)
        line = text[start:end]
        m = _SECRET_KEY_LINE.search(line)
        if m:
            names = True
            value = m.group(1).strip().strip(",").strip("\"'")
            if len(value) >= 4 and not value.startswith(("$", "{", "<", "%", "os.", "env")):
                literal = True
                break
    return names, literal
