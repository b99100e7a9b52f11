"""SearchQueryBuilder: free text → ``ParsedQuery`` in six deterministic passes (design §8).

1. directives  ``file: filename: path: prefix:`` (fast path) and filters ``domain: hub:
   type: ext: lifecycle: since: event:``
2. tokenise    lower-case, split on non-word characters, add snake/camel parts, keep whole
   path-like tokens (``src/app.py``) and dotted names
3. negation    ``-term``, ``NOT term``, "but not X", "except X", "excluding X", "without X"
   (plural-normalised); they become a path-level exclusion
4. hints      the tag-alias table ("reports" → content_type=report, "python" → format=py,
   a known domain → its hub …) gives *hints*, soft preferences: the word stays a search
   term and a file the hint describes ranks higher, but nothing is filtered out. Only an
   explicit ``domain:``/``type:``/``ext:``/``lifecycle:``/``since:`` filters, and hard.
5. time        "recent", "today", "this week", "last N days", "since YYYY-MM-DD"
6. weights     synonyms, then each term's class: entity 5.0, type 2.0, stop word 0.1

Queries come in every size. A *long* query (a commit message body, a pasted bug report
with a stack trace: a newline, or more than ``LONG_QUERY_WORDS`` words) is prose: its
"but not" and "-1" are not filters, its "tests" and "python" are not type filters. Its
paths and identifiers (``src/flask/ctx.py``, ``_encode_files``, ``Request.hooks``) are
strong evidence (entity class); its plain words are weaker (type class).

>>> q = SearchQueryBuilder().parse("signing code but not archived reports")
>>> [t.text for t in q.terms][:4], q.exclusions, q.hints.content_types, q.filters.empty
(['code', 'reports', 'signing', 'signature'], ('archived',), ('report',), True)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta

from oracl.core.errors import QueryError
from oracl.core.tokens import identifier_parts, singular, stem
from oracl.read.query.frames import URL

LONG_QUERY_WORDS = 24
TITLE_ENTITY = True  # a long query's title words weigh as its identifiers (entity class)
TITLE_MAX_WORDS = 20
MAX_QUERY_CHARS = 20_000
MAX_TERMS = 48
WEIGHT = {"entity": 5.0, "type": 2.0, "stop": 0.1}
SYNONYM_FACTOR = 0.5  # a synonym counts half of the word it was expanded from

FAST_DIRECTIVES = ("file", "filename", "path", "prefix")

STOP_WORDS = frozenset("""a an and are as at be but by for from has have how i if in into is it its of on
or that the their then there these this to was were what when where which while who why will with
within without would you your all any can could do does done should so than them they we our us
me my not no yes via per about after before over under also just only more most some such use used
using""".split())
# words of commit messages and bug reports that say what was done, not where
PROSE_WORDS = frozenset("""fix fixes fixed fixing add adds added adding remove removes removed removing
update updates updated updating support supports supported make makes made allow allows allowed
change changes changed improve improves improved refactor refactored handle handles handled ensure
ensures new now when bump bumps revert reverts reverted merge merged pull request issue issues
instead correctly properly also still already again get gets set sets call calls called""".split())
SUFFIX_PARTS = frozenset({"py", "md", "txt", "json", "yaml", "yml", "toml", "ini", "cfg", "sh", "ps1", "rst"})

SYNONYMS: dict[str, tuple[str, ...]] = {
    "auth": ("authentication", "login"), "authentication": ("auth", "login"), "login": ("auth",),
    "config": ("configuration", "settings"), "configuration": ("config", "settings"),
    "settings": ("config", "configuration"), "sign": ("signature", "signing"),
    "signing": ("sign", "signature"), "signature": ("sign", "signing"),
    "doc": ("docs", "documentation"), "docs": ("doc", "documentation"), "documentation": ("docs",),
    "db": ("database",), "database": ("db",), "err": ("error",), "error": ("exception",),
    "exception": ("error",), "test": ("tests", "testing"), "init": ("initialize",),
    "delete": ("remove",), "remove": ("delete",), "crypto": ("cryptography", "encryption"),
    "encrypt": ("encryption", "crypto"), "perm": ("permission",), "permission": ("permissions",),
    "deploy": ("deployment",), "deployment": ("deploy",), "log": ("logging", "logger"),
    "logging": ("log", "logger"), "http": ("request",), "cli": ("command",),
}

# (word → filter) for pass 4; plural-only where the singular is an everyday topic word
TYPE_ALIASES: dict[str, tuple[str, tuple[str, ...]]] = {
    "reports": ("content_type", ("report",)), "issues": ("content_type", ("issue",)),
    "incidents": ("content_type", ("issue",)), "bugs": ("content_type", ("issue",)),
    "runbooks": ("content_type", ("instruction",)), "guides": ("content_type", ("instruction",)),
    "instructions": ("content_type", ("instruction",)), "readmes": ("content_type", ("instruction",)),
    "tests": ("domain", ("tests",)),
    "python": ("format", ("py",)), "markdown": ("format", ("md",)),
    "yaml": ("format", ("yaml", "yml")), "json": ("format", ("json", "jsonl")),
    "configs": ("format", ("json", "yaml", "yml", "toml", "ini", "cfg")),
    "scripts": ("format", ("sh", "ps1")), "shell": ("format", ("sh",)),
    "powershell": ("format", ("ps1",)),
    "archived": ("lifecycle", ("archived",)), "legacy": ("lifecycle", ("archived",)),
    "drafts": ("lifecycle", ("staging",)),
}

EVENT_FILTERS = ("fail", "pass", "finding", "note")  # event:VALUE (design §5d)
_DIRECTIVE = re.compile(r"(?<![\w-])(-?)(file|filename|path|prefix|domain|hub|type|ext|lifecycle|since|event):"
                        r"(\"[^\"]*\"|'[^']*'|\S+)", re.I)
_NUMBER = re.compile(r"v?\d[\d.,_]*[a-z]?\d*", re.I)
_TOKEN = re.compile(r"[\w][\w./:-]*[\w]|[\w]", re.UNICODE)
_NEG_PHRASE = re.compile(r"\b(?:but not|except(?: for)?|excluding|without)\s+([\w./-]+)", re.I)
_NEG_OP = re.compile(r"(?:(?<=\s)|^)(?:-|NOT\s+)([A-Za-z_][\w./]*)")
# "docs: …", "fix(parser): …", "[tests] …", "polys: …": a commit message's prefix. A
# conventional-commit *type* (docs, fix, chore …) is prose and dropped; anything else
# ("polys:", "manualintegrate:", the "(parser)" scope) names the code and is kept.
_COMMIT_PREFIX = re.compile(r"^\s*(?:\[([\w -]+)\]|([A-Za-z][\w.-]*)(?:\(([\w./ -]*)\))?!?:)\s+")
COMMIT_TYPES = frozenset("""feat feature fix fixes bugfix docs doc test tests chore refactor ci build perf style
revert release deps dep bump typing types lint maint wip cleanup misc security""".split())
TYPE_PASS_MAX_WORDS = 5  # the alias table reads a few words typed by a person, not a sentence
_LAST_N = re.compile(r"\blast\s+(\d{1,4})\s+days?\b", re.I)
_SINCE = re.compile(r"\bsince\s+(\d{4}-\d{2}-\d{2})\b", re.I)


def exclusion_pattern(exclusions: tuple[str, ...]) -> str:
    """One regular expression for the path-level post-filter (and its Cypher twin): a path
    is excluded when a word of it starts with the stem of an exclusion (``archived`` →
    ``archiv`` excludes ``archive/x.md``; ``test`` does not exclude ``latest.py``)."""
    stems = sorted({stem(e)[:40] for e in exclusions if len(stem(e)) >= 2})
    if not stems:
        return ""
    return "(^|[^a-z0-9])(" + "|".join(re.escape(s) for s in stems) + ")"


def _is_entity_like(token: str) -> bool:
    """A path, a dotted name or an identifier with structure is strong evidence."""
    return ("/" in token or "." in token.strip(".") or "_" in token.strip("_")
            or bool(re.search(r"[a-z][A-Z]", token)))


def _title_words(text: str) -> set[str]:
    """The words of a long query's title: its first line, when that is a title (at most
    ``TITLE_MAX_WORDS`` words, no lead-in ending with a colon, no markup) and not the whole
    query. A report's or a commit's title says in a few words what it is about ("vector
    add 0 error", "linkcheck fails on anchors"); the body around it is mostly context,
    pasted code and output.

    >>> sorted(_title_words("Linkcheck: broken anchors\\nThe builder says ..."))
    ['anchors', 'broken', 'linkcheck']
    """
    first, _, rest = text.strip().partition("\n")
    first = first.strip()
    if not rest.strip() or first.endswith(":") or first.startswith(_NOT_A_TITLE):
        return set()  # one line; a lead-in ("Traceback (most recent call last):"); a template's markup
    words = [t.strip(".:-/").lower() for t in _TOKEN.findall(first)]
    return set(words) if len(words) <= TITLE_MAX_WORDS else set()


_NOT_A_TITLE = ("#", "<", "`", "*", ">", "|", "-", "=")

# `numpy: 1.23.4`, `netCDF4: None`, `- Python version: 3.8.2`, `pandas==1.4.3`, `sphinx 5.1.1`, `OS: Linux`
_ENV_LINE = re.compile(r"^\s*(?:[-*]\s*)?[A-Za-z][\w .()/+-]{0,40}?\s*(:|==)\s*(\S.{0,59}?)\s*$")
_PACKAGE_LINE = re.compile(r"^\s*(?:[-*]\s*)?[A-Za-z][\w.+-]{0,40}\s+(v?\d+(?:\.\d+)+\S*)\s*$")  # `Numpy 1.22.3`
_VERSION = re.compile(r"^(?:None|v?\d+(?:\.\d+)*(?:[-+.]\w+)*(?:\s.*)?)$", re.I)
ENV_RUN = 3  # consecutive `name: value` lines, a third of them versions: an environment dump


def without_environment(text: str) -> str:
    """``text`` less its environment dumps: runs of at least ``ENV_RUN`` lines of
    ``name: value`` (or ``name==version``, ``name version``) of which at least a third give
    a version or None — ``xr.show_versions()``, ``pip freeze``, an issue template's
    "Environment" list. Their names (``zarr``, ``netCDF4``, ``h5py``) are packages on the
    reporter's machine and would match the modules that wrap them.

    >>> without_environment("Bug in merge\\nxarray: 2022.10.0\\npandas: 1.4.3\\nzarr: None\\nOS: Linux\\nthe end")
    'Bug in merge\\nthe end'
    """
    lines = text.split("\n")
    kinds = []  # 2: a name and its version, 1: a name and a short value, 0: anything else
    for line in lines:
        m = _ENV_LINE.match(line)
        version = m is not None and _VERSION.match(m.group(2)) is not None
        kinds.append(2 if version or _PACKAGE_LINE.match(line) else 1 if m is not None and m.group(1) == ":" else 0)
    keep = [True] * len(lines)
    i = 0
    while i < len(lines):
        j = i
        while j < len(lines) and kinds[j]:
            j += 1
        if j - i >= ENV_RUN and 3 * sum(k == 2 for k in kinds[i:j]) >= j - i:
            keep[i:j] = [False] * (j - i)
        i = max(j, i + 1)
    return "\n".join(line for line, k in zip(lines, keep, strict=True) if k)


@dataclass(frozen=True, slots=True)
class Term:
    text: str            # lower-cased surface form
    stem: str            # what field tokens are compared with
    weight_class: str    # entity | type | stop
    weight: float        # ω
    origin: str          # query | part | synonym
    parent: str = ""     # for parts and synonyms: the term they came from


@dataclass(frozen=True, slots=True)
class Filters:
    domains: tuple[str, ...] = ()
    content_types: tuple[str, ...] = ()
    formats: tuple[str, ...] = ()
    lifecycles: tuple[str, ...] = ()
    since: datetime | None = None
    events: tuple[str, ...] = ()   # event:fail|pass|finding|note (phase 6): files with such events

    @property
    def empty(self) -> bool:
        return not (self.domains or self.content_types or self.formats or self.lifecycles or self.since
                    or self.events)


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    raw: str
    terms: tuple[Term, ...] = ()
    filters: Filters = field(default_factory=Filters)
    exclusions: tuple[str, ...] = ()
    fast: tuple[str, str] | None = None  # (directive, value) of file:/filename:/path:/prefix:
    long: bool = False
    wildcard: bool = False
    passes: tuple[tuple[str, str], ...] = ()  # (pass name, what it did) for --explain
    hints: Filters = field(default_factory=Filters)  # soft preferences read from plain words

    @property
    def fts_text(self) -> str:
        """The bag of words sent to the full-text index (heaviest terms first)."""
        seen: dict[str, None] = {}
        for t in sorted(self.terms, key=lambda t: -t.weight):
            if t.weight_class != "stop":
                parts = identifier_parts(t.text) or [t.text]
                if len(parts) > 1 and "/" not in t.text:
                    seen.setdefault(re.sub(r"[^\w]+", "_", t.text).strip("_"), None)
                for part in parts:
                    seen.setdefault(part, None)
        return " ".join(list(seen)[:MAX_TERMS])

    def to_json(self) -> dict[str, object]:
        f = self.filters
        return {
            "raw": self.raw[:500], "long": self.long, "wildcard": self.wildcard,
            "fast": list(self.fast) if self.fast else None,
            "terms": [{"text": t.text, "class": t.weight_class, "weight": t.weight, "origin": t.origin}
                      for t in self.terms],
            "filters": {"domains": list(f.domains), "content_types": list(f.content_types),
                        "formats": list(f.formats), "lifecycles": list(f.lifecycles),
                        "since": f.since.isoformat() if f.since else None, "events": list(f.events)},
            "exclusions": list(self.exclusions),
            "hints": {"domains": list(self.hints.domains), "content_types": list(self.hints.content_types),
                      "formats": list(self.hints.formats), "lifecycles": list(self.hints.lifecycles)},
        }


def _unquote(v: str) -> str:
    return v[1:-1] if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'" else v


def _parse_date(value: str) -> datetime:
    try:
        return datetime.combine(date.fromisoformat(value), datetime.min.time())
    except ValueError:
        raise QueryError(f"since: expects a date like 2026-01-31, not {value[:40]!r}") from None


class SearchQueryBuilder:
    """The six passes. ``domains`` are the build's known domains (for pass 4); ``now`` is
    an argument so that temporal expansion is reproducible."""

    def __init__(self, domains: tuple[str, ...] = (), now: datetime | None = None) -> None:
        self.domains = frozenset(domains)
        self.now = (now or datetime.now(UTC)).replace(tzinfo=None)

    def parse(self, text: str) -> ParsedQuery:
        if not isinstance(text, str):
            raise QueryError("the query must be text")
        text = text.replace("\x00", " ")[:MAX_QUERY_CHARS]
        passes: list[tuple[str, str]] = []
        long = "\n" in text.strip() or len(text.split()) > LONG_QUERY_WORDS

        # 1. directives
        fast: tuple[str, str] | None = None
        domains: list[str] = []
        ctypes: list[str] = []
        formats: list[str] = []
        lifecycles: list[str] = []
        exclusions: list[str] = []
        since: datetime | None = None
        events: list[str] = []
        found = []
        # a long query is prose (a pasted report): `type: str`, `File: app.py`, `path: /tmp/x`
        # in it are words, never a filter or the fast path
        for m in () if long else _DIRECTIVE.finditer(text):
            neg, name, value = m.group(1), m.group(2).lower(), _unquote(m.group(3))
            found.append(f"{'-' if neg else ''}{name}:{value}")
            if neg:
                exclusions.append(value.lower())
            elif name in FAST_DIRECTIVES:
                fast = fast or (name, value)
            elif name in ("domain", "hub"):
                domains.append(value.lower().removeprefix("hub:domain:").removeprefix("domain:"))
            elif name == "type":
                ctypes.append(value.lower())
            elif name == "ext":
                formats.extend(v.lstrip(".").lower() for v in value.split(",") if v)
            elif name == "lifecycle":
                lifecycles.append(value.lower())
            elif name == "since":
                since = _parse_date(value)
            elif name == "event":
                if value.lower() not in EVENT_FILTERS:
                    raise QueryError(f"event: expects one of {', '.join(EVENT_FILTERS)}, not {value[:40]!r}")
                events.append(value.lower())
        rest = text if long else _DIRECTIVE.sub(" ", text)
        prefix = _COMMIT_PREFIX.match(rest)
        if prefix:
            head = (prefix.group(1) or prefix.group(2) or "").strip()
            scope = (prefix.group(3) or "").strip()
            kept = [w for w in (head, scope) if w and w.lower() not in COMMIT_TYPES]
            rest = " ".join(kept) + " " + rest[prefix.end():]
        passes.append(("directives", ", ".join(found) or ("none (long query: prose)" if long else "none")))

        # 3 (before tokenising, on the text). negation: short queries only
        if not long:
            neg_found = [singular(m.group(1)) for m in _NEG_PHRASE.finditer(rest)]
            rest = _NEG_PHRASE.sub(" ", rest)
            neg_found += [singular(m.group(1)) for m in _NEG_OP.finditer(rest)]
            rest = _NEG_OP.sub(" ", rest)
            exclusions.extend(neg_found)
        passes.append(("negation", ", ".join(exclusions) or ("none (long query: prose)" if long else "none")))

        # 5 (on the text). temporal phrases: short queries only, except an explicit date
        when = _SINCE.search(rest)
        if when:
            since = _parse_date(when.group(1))
            rest = _SINCE.sub(" ", rest)
        if not long:
            low = rest.lower()
            n = _LAST_N.search(low)
            if n:
                since = self.now - timedelta(days=int(n.group(1)))
                rest = _LAST_N.sub(" ", rest)
            elif re.search(r"\btoday\b", low):
                since = self.now.replace(hour=0, minute=0, second=0, microsecond=0)
                rest = re.sub(r"(?i)\btoday\b", " ", rest)
            elif re.search(r"\bthis week\b", low):
                since = self.now - timedelta(days=7)
                rest = re.sub(r"(?i)\bthis week\b", " ", rest)
            elif re.search(r"\brecent(ly)?\b", low):
                since = self.now - timedelta(days=14)
                rest = re.sub(r"(?i)\brecent(ly)?\b", " ", rest)

        # 2. tokenise (a long query's web addresses are links to elsewhere: an image, a docs
        # page, a CI run; their host names, hashes and numbers would only add noise)
        if long:
            rest = without_environment(URL.sub(" ", rest))
        raw_tokens = [t.strip(".:-/") for t in _TOKEN.findall(rest)]
        raw_tokens = [t for t in raw_tokens if t]
        passes.append(("tokens", " ".join(raw_tokens[:60]) + (" …" if len(raw_tokens) > 60 else "")))

        # 4. hints through the alias table (a few words typed by a person only): the word
        # stays a search term; the hint is a soft preference, never a filter
        hints: dict[str, list[str]] = {"domain": [], "content_type": [], "format": [], "lifecycle": []}
        typed: list[str] = []
        content_words = [t for t in raw_tokens if t.lower() not in STOP_WORDS]
        # a sentence ("Fix mutability issues with headers", "Make json doc strings
        # consistent") is prose: its "issues" and "json" are topics, not hints
        typing = (not long and len(content_words) <= TYPE_PASS_MAX_WORDS and bool(raw_tokens)
                  and raw_tokens[0].lower() not in PROSE_WORDS and not prefix)
        for tok in raw_tokens:
            low = tok.lower()
            alias = TYPE_ALIASES.get(low) if typing else None
            if alias is None and typing and low in self.domains and low not in STOP_WORDS:
                alias = ("domain", (low,))
            if alias is not None:
                hints[alias[0]].extend(alias[1])
                typed.append(low)
        kept = raw_tokens
        passes.append(("hints", ", ".join(typed) or "none"))
        if since is not None:
            passes.append(("time", f"modified_at ≥ {since.isoformat()}"))
        else:
            passes.append(("time", "none"))

        # 6. synonyms and weight classes
        terms: dict[str, Term] = {}

        def add(t: Term) -> None:
            old = terms.get(t.text)
            if old is None or old.weight < t.weight:
                terms[t.text] = t

        title = _title_words(text) if long and TITLE_ENTITY else set()
        for tok in kept:
            low = tok.lower()
            if low in STOP_WORDS or low in PROSE_WORDS:
                add(Term(low, stem(low), "stop", WEIGHT["stop"], "query"))
                continue
            entity = _is_entity_like(tok)
            if long and _NUMBER.fullmatch(tok):  # a report's versions and counts ("10.15.5", "3680")
                add(Term(low, stem(low), "stop", WEIGHT["stop"], "query"))
                continue
            cls = "entity" if (entity or not long or low in title) else "type"
            add(Term(low, stem(low), cls, WEIGHT[cls], "query"))
            parts = identifier_parts(tok)
            if len(parts) > 1:
                for p in parts:
                    if p not in STOP_WORDS and p not in SUFFIX_PARTS and len(p) > 1 and not p.isdigit():
                        add(Term(p, stem(p), cls, WEIGHT[cls] * 0.6, "part", low))
        stems = {t.stem for t in terms.values()}
        for t in list(terms.values()):
            if t.origin == "query" and t.weight_class != "stop":
                for syn in SYNONYMS.get(t.text, SYNONYMS.get(t.stem, ())):
                    if stem(syn) in stems:
                        continue  # "signing" for "sign" is the same word once stemmed
                    stems.add(stem(syn))
                    add(Term(syn, stem(syn), t.weight_class, t.weight * SYNONYM_FACTOR, "synonym", t.text))
        ordered = sorted(terms.values(), key=lambda t: (-t.weight, t.text))
        if len(ordered) > MAX_TERMS * 2:
            ordered = ordered[: MAX_TERMS * 2]
        passes.append(("weights", " ".join(f"{t.text}:{t.weight:g}" for t in ordered[:40])))

        filters = Filters(tuple(dict.fromkeys(domains)), tuple(dict.fromkeys(ctypes)),
                          tuple(dict.fromkeys(formats)), tuple(dict.fromkeys(lifecycles)), since,
                          tuple(dict.fromkeys(events)))
        content = [t for t in ordered if t.weight_class != "stop" and t.origin != "synonym"]
        wildcard = fast is None and not content
        if wildcard and filters.empty and not exclusions:
            raise QueryError("the query is empty: give words to search for, or a filter such as domain:core")
        return ParsedQuery(raw=text, terms=tuple(ordered), filters=filters,
                           exclusions=tuple(dict.fromkeys(e for e in exclusions if e)), fast=fast,
                           long=long, wildcard=wildcard, passes=tuple(passes),
                           hints=Filters(domains=tuple(dict.fromkeys(hints["domain"])),
                                         content_types=tuple(dict.fromkeys(hints["content_type"])),
                                         formats=tuple(dict.fromkeys(hints["format"])),
                                         lifecycles=tuple(dict.fromkeys(hints["lifecycle"]))))


def parse(text: str, domains: tuple[str, ...] = (), now: datetime | None = None) -> ParsedQuery:
    """``SearchQueryBuilder(domains, now).parse(text)``."""
    return SearchQueryBuilder(domains, now).parse(text)


__all__ = ["Filters", "ParsedQuery", "SearchQueryBuilder", "Term", "parse", "replace", "stem", "singular"]
