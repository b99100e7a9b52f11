"""Secret detection and redaction (design §11): a secret's value never leaves the build.

A ``Redactor`` reads a text line by line (a private key block spans lines) and replaces
every secret value it finds with a marker such as ``«redacted:aws-secret-key»``, keeping
every newline, so line numbers, line ranges and fragments stay true. The build runs it on
every text file before anything is extracted or indexed; the readers run it again on every
line they serve from the disk (the file may have changed since the build).

The rules are the ones users know from secret scanners (gitleaks, detect-secrets): cloud
keys, private key blocks, API tokens of the common providers, JWTs, passwords in URLs,
password and token assignments, and high-entropy literals in assignments.

>>> redact_text('API_KEY = "sk-live-4f9a8b7c6d5e4f3a2b1c"\\n')
'API_KEY = "«redacted:api-token»"\\n'
>>> Redactor().line("aws_access_key_id = AKIAIOSFODNN7EXAMPLE")
('aws_access_key_id = «redacted:aws-access-key-id»', ('aws-access-key-id',))
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

MARK = "«redacted:{}»"
MARKED = re.compile(r"«redacted:[a-z0-9-]+»")  # a marker in a redacted text
MAX_SCAN_LINE = 1 << 16  # a longer line is scanned in its first 64 KiB only (minified code holds no assignment rules' targets)

# (rule, pattern, group holding the secret value (0 = the whole match))
_TOKEN_RULES: tuple[tuple[str, re.Pattern[str], int], ...] = (
    ("aws-access-key-id", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[A-Z0-9]{16}\b"), 0),
    ("aws-secret-key", re.compile(
        r"(?i)aws.{0,20}?(?:secret|private).{0,20}?['\"]?\s*(?::=|=>|[:=])\s*['\"]?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"), 1),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b"), 0),
    ("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"), 0),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), 0),
    ("slack-webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}"), 0),
    ("stripe-key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"), 0),
    ("api-token", re.compile(r"\bsk-(?:(?:ant|proj|live|test|svcacct|admin)-)?[A-Za-z0-9_-]{20,}"), 0),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}"), 0),
    ("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), 0),
    ("pypi-token", re.compile(r"\bpypi-AgE[A-Za-z0-9_-]{40,}"), 0),
    ("sendgrid-key", re.compile(r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"), 0),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), 0),
    ("url-password", re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s/:@'\"]{1,128}:([^\s/@'\"]{3,128})@"), 1),
)
# rules that need their context (a header, a URL parameter, a command, a .netrc line, a
# sentence): (rule, pattern, lower-case substrings one of which the line must hold); the
# value is the first group that matched
_CONTEXT_RULES: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = (
    ("authorization-header", re.compile(
        r"(?i)\b(?:proxy-)?authorization['\"]?\s*[:=]\s*['\"]?(?:bearer|basic|token|digest|apikey)\s+"
        r"([A-Za-z0-9._~+/-]{8,}=*)"), ("authoriz",)),
    ("bearer-token", re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{20,}=*)"), ("bearer",)),
    ("url-secret-parameter", re.compile(
        r"(?i)[?&;](?:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|token|key|secret|client[_-]?secret|"
        r"password|passwd|pwd|private[_-]?token|sig|signature|x-amz-signature|x-goog-signature)="
        r"([^&\s'\"#<>]{4,})"), ("key=", "token=", "secret=", "passw", "pwd=", "sig=", "signature=")),
    ("mailgun-key", re.compile(r"\bkey-((?=[0-9a-z]*[0-9])(?=[0-9a-z]*[a-z])[0-9a-z]{32})\b"), ("key-",)),
    ("command-line-password", re.compile(
        r"(?i)\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n]*?\s-p(?:'([^']{3,})'|\"([^\"]{3,})\"|"
        r"([^\s'\"]{3,}))"), ("mysql", "mariadb")),
    ("command-line-password", re.compile(
        r"(?i)(?:^|\s)--password[= ](?:'([^']{3,})'|\"([^\"]{3,})\"|([^\s'\"]{3,}))"), ("--password",)),
    ("command-line-password", re.compile(r"(?i)\bsshpass\s+-p\s*['\"]?([^\s'\"]{3,})"), ("sshpass",)),
    ("command-line-password", re.compile(
        r"(?i)\bcurl\b[^\n]*?\s(?:-u|--user)\s+['\"]?[^\s:'\"]+:([^\s'\"@]{3,})"), ("curl",)),
    ("netrc-password", re.compile(r"(?i)\b(?:machine\s+\S+|default)\b.*?\bpassword\s+(\S{3,})"), ("password",)),
    ("netrc-password", re.compile(r"(?i)\blogin\s+\S+\s+password\s+(\S{3,})"), ("password",)),
    ("prose-password", re.compile(
        r"(?i)\b(?:password|passwd|passphrase|pwd)\b(?:\s+is|:)\s+['\"`]?([^\s'\"`]{4,64})"),
     ("passw", "pwd", "passphrase")),
)
_CONTEXT_ANY = re.compile("|".join(sorted({re.escape(n) for _, _, needs in _CONTEXT_RULES for n in needs})))
_CONTEXT_NEEDS_PLAUSIBLE = frozenset({"bearer-token", "authorization-header", "url-secret-parameter",
                                      "command-line-password", "netrc-password"})
_CODE_CHARS = re.compile(r"[()\[\]{},<>;]")  # an annotation, a call or a template: code, not a password
_SYMBOL_OR_DIGIT = re.compile(r"[0-9!@#$%^&*?~+]")
# string literals joined by space or + (a token split in two: "ghp_abc" "def…", 'sk_live_' + '…')
_LITERAL = re.compile(r"""(['"])((?:(?!\1)[^\\\n])*)\1""")
_JOIN_GAP = re.compile(r"\s*(?:\+|\.\.?|\|\|)?\s*\\?\s*")
# the substrings without which each token rule cannot match (in rule order)
_RULE_TRIGGERS: tuple[tuple[str, ...], ...] = (
    ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA"), (),  # () = "aws" in the lower-cased line
    ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), ("glpat-",), ("xox",), ("hooks.slack",),
    ("_live_", "_test_"), ("sk-",), ("AIza",), ("npm_",), ("pypi-",), ("SG.",), ("eyJ",), ("://",),
)
_SECRET_NAME = r"[A-Za-z0-9_.-]*(?:password|passwd|passphrase|pwd|secret|token|api_?key|apikey|access_?key|private_?key|client_?secret|credential|auth_?key)[A-Za-z0-9_.-]*"
# NAME = "value" / NAME: 'value' / "NAME": "value" / NAME => "value", matched from the end of
# the secret word in NAME (a regex searching for NAME itself cost 22 µs a line)
_ASSIGN_AFTER = re.compile(r"[A-Za-z0-9_-]*['\"]?\s*(?::=|=>|[:=])\s*([bu]?)(['\"])((?:(?!\2)[^\\\n]|\\.){4,512})\2")
# NAME=value in .env, INI, YAML, properties (unquoted)
_BARE_ASSIGN = re.compile(r"(?i)^\s*(?:export\s+)?(" + _SECRET_NAME + r")\s*(?::|=)\s*([^\s'\"#;,][^\s#;,]{3,511})\s*$")
# any NAME = "long random literal"
_ANY_QUOTED_ASSIGN = re.compile(r"(?:[:=]|=>)\s*[bru]?(['\"])([A-Za-z0-9+/_=.~-]{24,512})\1")
_BEGIN = re.compile(r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?-----")
_END = re.compile(r"-----END ((?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?-----")
# a line of a PEM body (or of its headers), possibly inside a string literal
_PEM_BODY = re.compile(r"""\s*(?:["'`]|b["'])?\s*(?:[A-Za-z0-9+/=]{16,}|Proc-Type:|DEK-Info:|Comment:)""")
_B64_CHARS = re.compile(r"[A-Za-z0-9+/=]")
# what may stand between an armored block's BEGIN line and its body: armor headers
# ("Version: GnuPG v2", "Comment: …") and the blank line that ends them (RFC 4880 §6.2)
_ARMOR_HEADER = re.compile(r"""\s*(?:["'`]|b["'])?\s*(?:[A-Za-z][\w-]{0,30}: .*|\\n)?\s*(?:["'`],?)?\s*$""")
MAX_ARMOR_HEADERS = 8
_PLACEHOLDER = re.compile(
    r"(?i)^(?:none|null|nil|true|false|undefined|changeme|change_me|password|secret|token|example|xxx+|\*+|"
    r"pass|passwd|pwd|user|<[^>]*>|\{[^{}]*\}|\{\{.*\}\}|\$\{.*\}|\$[A-Za-z_]\w*|%\(.*\)s|%s|"
    r"os\.environ.*|env\(.*|getenv.*|process\.env.*|"
    r"/[\w/.{}:-]*|[a-z]+(?:[_-][a-z]+)+|#[0-9a-f]{3,8})$")  # … a URL path, a snake_case word, a colour
_REGEX_LIKE = re.compile(r"\\[wdsbWDSB]|\(\?|^\^|^\[")  # a pattern, not a password
_WORD_RUN = re.compile(r"[a-z]{7}")  # a word inside a literal: written by a person
_CODE_REF = re.compile(r"^[A-Za-z_][\w.]*(?:\(.*\))?$")  # an identifier or a call: a reference, not a value
BARE_FORMATS = frozenset({"env", "ini", "cfg", "conf", "properties", "yaml", "yml", "toml", "netrc", ""})


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    if not value:
        return 0.0
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _random_looking(value: str) -> bool:
    """A literal a person would not type: mixed classes, ≥ 4.2 bits per character (a hex
    digest has at most 4), no word of 7 letters, no path, at most two separators."""
    classes = sum((any(c.islower() for c in value), any(c.isupper() for c in value),
                   any(c.isdigit() for c in value)))
    return (classes == 3 and entropy(value) >= 4.2 and "/" not in value.strip("/") and "." not in value
            and value.count("-") + value.count("_") <= 2 and not _WORD_RUN.search(value))


def _plausible(value: str, quoted: bool) -> bool:
    """A value that could be a real secret: not a placeholder, a reference, a pattern or a
    plain word (a password of letters only is not told from a word: a digit or a symbol is
    required, as secret scanners' generic rules do)."""
    v = value.strip()
    if len(v) < 4 or _PLACEHOLDER.match(v) or v.startswith("«redacted:") or _REGEX_LIKE.search(v):
        return False
    if v.replace(" ", "").isalpha():
        return False
    if not quoted and _CODE_REF.match(v) and not any(c.isdigit() for c in v):
        return False
    return len(set(v)) > 2


def _context_value(rule: str, value: str) -> bool:
    if rule == "prose-password":  # a sentence: a value with a digit or a symbol, and no code in it
        return (_plausible(value, False) and not _CODE_CHARS.search(value)
                and bool(_SYMBOL_OR_DIGIT.search(value)) and not value.endswith((":", ",", ".")))
    if rule in _CONTEXT_NEEDS_PLAUSIBLE:
        return _plausible(value, True) and not value.startswith(("$", "{", "%", "<"))
    return True


def split_literal_spans(text: str) -> list[tuple[int, int, str]]:
    """The contents of string literals on ``text`` that are joined (by space or ``+``)
    into a token a token rule matches: each piece is a span of that rule.

    >>> split_literal_spans('T = "ghp_A1b2C3d4E5f6G7h8" "I9j0K1l2M3n4O5p6Q7r8"')
    [(5, 25, 'github-token'), (28, 48, 'github-token')]
    """
    pieces = list(_LITERAL.finditer(text))
    out: list[tuple[int, int, str]] = []
    i = 0
    while i < len(pieces):
        j = i
        while j + 1 < len(pieces) and _JOIN_GAP.fullmatch(text, pieces[j].end(), pieces[j + 1].start()):
            j += 1
        if j > i:
            joined = "".join(p.group(2) for p in pieces[i:j + 1])
            for rule, pattern, _group in _TOKEN_RULES:
                if rule != "url-password" and pattern.search(joined):
                    out += [(p.start(2), p.end(2), rule) for p in pieces[i:j + 1] if p.end(2) > p.start(2)]
                    break
        i = j + 1
    return out


def join_split_lines(lines: list[str], at: Iterable[int] | None = None) -> list[str]:
    """``lines`` with a token split between a literal ending line i and one starting line
    i + 1 (``T = ("ghp_A1b2…"`` / ``"…Q7r8")``) redacted on both lines; ``at``: the i to
    look at (every one by default). A split within one line is ``Redactor.line``'s."""
    out = list(lines)
    for i in (range(len(out) - 1) if at is None else at):
        if i + 1 >= len(out) or i < 0:
            continue
        a, b = out[i], out[i + 1]
        if not (a.rstrip().endswith(("'", '"', "+", "\\", "..", "||")) and b.lstrip()[:1] in ("'", '"')):
            continue
        cut = len(a) + 1
        spans = split_literal_spans(a + "\n" + b)
        if not (any(st < cut for st, _, _ in spans) and any(st >= cut for st, _, _ in spans)):
            continue
        for k, (line, base) in enumerate(((a, 0), (b, cut))):
            mine = sorted((st - base, en - base, rule) for st, en, rule in spans if base <= st < base + len(line) + 1)
            for st, en, rule in reversed(mine):
                line = line[:st] + MARK.format(rule) + line[en:]
            out[i + k] = line
    return out


@dataclass(slots=True)
class Finding:
    rule: str
    line: int


class Redactor:
    """Feed lines in order (``line``); the body of a private key block is redacted, from the
    line after its BEGIN marker (when that line is key material, not code that merely
    names the marker) to its END marker (to the end of the text when there is none). ``fmt`` (a file suffix) lets
    bare ``NAME=value`` assignments count in configuration formats only."""

    def __init__(self, fmt: str = "") -> None:
        self.bare = fmt.lower() in BARE_FORMATS
        self.key = ""  # "" | "maybe" (a BEGIN line was seen) | "in" (inside a key block)
        self.headers = 0  # armor header or blank lines seen since the BEGIN line
        self.lineno = 0
        self.findings: list[Finding] = []
        self.values: list[tuple[str, str]] = []  # (value, rule) of single-line finds, in memory only

    def line(self, text: str) -> tuple[str, tuple[str, ...]]:
        """The line with its secrets replaced, and the rules that fired."""
        self.lineno += 1
        if self.key == "maybe":  # after a BEGIN line: a key only when key material follows
            if self._armor(text):
                return text, ()
            self.key = "in" if _PEM_BODY.match(text) else ""
        if self.key == "in":
            end = _END.search(text)
            if end is None:
                return self._hit(MARK.format("private-key") if text.strip() else text, "private-key")
            self.key = ""
            return self._hit(MARK.format("private-key") + text[end.start():], "private-key")
        begin = _BEGIN.search(text) if "PRIVATE KEY" in text else None
        if begin is not None:
            end = _END.search(text, begin.end())
            if end is None:
                self.key = "maybe"  # the BEGIN line itself holds no secret: it stays
                return text, ()
            body = text[begin.end():end.start()]
            if len(_B64_CHARS.findall(body)) >= 16:  # a whole key on one line ("…\\nMIIE…\\n…")
                return self._hit(text[:begin.end()] + MARK.format("private-key") + text[end.start():], "private-key")
        if len(text) > MAX_SCAN_LINE:
            out, rules = self._scan(text[:MAX_SCAN_LINE])
            return out + text[MAX_SCAN_LINE:], rules
        return self._scan(text)

    def skip(self, text: str) -> None:
        """Pass a line that will not be served: only a key block's start or end is noted."""
        self.lineno += 1
        if self.key == "maybe":
            if self._armor(text):
                return
            self.key = "in" if _PEM_BODY.match(text) else ""
        if self.key == "in":
            self.key = "" if _END.search(text) else "in"
        elif "PRIVATE KEY" in text:
            begin = _BEGIN.search(text)
            if begin is not None and _END.search(text, begin.end()) is None:
                self.key = "maybe"

    def _armor(self, text: str) -> bool:
        """Whether a line after a BEGIN line is an armor header or the blank line after them
        (a PGP block: the body starts after them); a few at most."""
        if self.headers < MAX_ARMOR_HEADERS and _ARMOR_HEADER.match(text) and not _PEM_BODY.match(text):
            self.headers += 1
            return True
        self.headers = 0
        return False

    def _hit(self, text: str, rule: str) -> tuple[str, tuple[str, ...]]:
        self.findings.append(Finding(rule, self.lineno))
        return text, (rule,)

    def _scan(self, text: str) -> tuple[str, tuple[str, ...]]:
        spans: list[tuple[int, int, str]] = []
        low = text.lower()
        token = _TOKEN_ANY.search(text) is not None
        if token or "aws" in low:
            for (rule, pattern, group), triggers in zip(_TOKEN_RULES, _RULE_TRIGGERS, strict=True):
                if not (any(t in text for t in triggers) if triggers else "aws" in low):
                    continue
                for m in pattern.finditer(text):
                    if rule != "url-password" or _plausible(m.group(group), True):
                        spans.append((m.start(group), m.end(group), rule))
        names = [n.end() for n in _NAME_ANY.finditer(low)]
        if names:
            for end in names:  # the assignment is matched right after each secret word
                hit = _ASSIGN_AFTER.match(text, end)  # (not after a dot: token.type = "x" names "type")
                if hit and _plausible(hit.group(3), True):
                    spans.append((hit.start(3), hit.end(3), "password-assignment"))
            if self.bare:
                bare = _BARE_ASSIGN.match(text)
                if bare and _plausible(bare.group(2), False):
                    spans.append((bare.start(2), bare.end(2), "password-assignment"))
        if _LITERAL_TRIGGER.search(text):
            for m in _ANY_QUOTED_ASSIGN.finditer(text):
                if _random_looking(m.group(2)):
                    spans.append((m.start(2), m.end(2), "high-entropy-literal"))
        if _CONTEXT_ANY.search(low):
            for rule, pattern, needs in _CONTEXT_RULES:
                if any(n in low for n in needs):
                    for m in pattern.finditer(text):
                        g = next((i for i in range(1, (m.lastindex or 0) + 1) if m.group(i) is not None), 0)
                        if _context_value(rule, m.group(g)):
                            spans.append((m.start(g), m.end(g), rule))
        if token and ("'" in text or '"' in text):
            spans += split_literal_spans(text)
        if not spans:
            return text, ()
        spans.sort(key=lambda s: (s[0], -s[1]))
        out: list[str] = []
        pos = 0
        rules: list[str] = []
        for start, end, rule in spans:
            if start < pos:  # inside a span already redacted
                continue
            out.append(text[pos:start])
            out.append(MARK.format(rule))
            self.values.append((text[start:end], rule))
            pos = end
            rules.append(rule)
            self.findings.append(Finding(rule, self.lineno))
        out.append(text[pos:])
        return "".join(out), tuple(rules)

    def lines(self, lines: Iterable[str]) -> list[str]:
        return [self.line(x)[0] for x in lines]


# Cheap triggers, found over the whole text at C speed (substring search, one regex): only
# the lines they hit are scanned by the rules, and a text without any is returned as it
# is. Every rule needs one of them. (One regex of all the triggers ran 5× slower.)
TOKEN_TRIGGERS = ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "ghp_", "gho_", "ghu_",
                  "ghs_", "ghr_", "github_pat_", "glpat-", "xox", "hooks.slack", "_live_", "_test_", "sk-",
                  "AIza", "npm_", "pypi-", "SG.", "eyJ", "://")
NAME_TRIGGERS = ("passw", "passphrase", "pwd", "secret", "token", "apikey", "api_key", "access_key", "accesskey", "private_key",
                 "privatekey", "credential", "auth_key", "authkey")  # found in the lower-cased text
# the context rules' own (a header, a URL parameter, a command line)
CONTEXT_TRIGGERS = ("authoriz", "bearer", "key=", "sig=", "key-", "mysql", "sshpass", "curl")
_TOKEN_ANY = re.compile("|".join(re.escape(t) for t in TOKEN_TRIGGERS))
_NAME_ANY = re.compile("|".join(NAME_TRIGGERS))
_LITERAL_TRIGGER = re.compile(r"[:=]\s*[bru]?['\"][A-Za-z0-9+/_=.~-]{24}")


def _finds(text: str, literals: tuple[str, ...], out: list[int]) -> None:
    for lit in literals:
        i = text.find(lit)
        while i >= 0:
            out.append(i)
            i = text.find(lit, i + 1)


def _candidate_lines(text: str) -> list[int] | None:
    """0-based indices of the lines a rule could fire on (sorted); None when every line
    must be read in order (a private key block spans lines)."""
    if "PRIVATE KEY" in text:
        return None
    starts: list[int] = []
    _finds(text, TOKEN_TRIGGERS, starts)
    low = text.lower()
    _finds(low, NAME_TRIGGERS, starts)
    _finds(low, CONTEXT_TRIGGERS, starts)
    starts += [m.start() for m in _LITERAL_TRIGGER.finditer(text)]
    if not starts:
        return []
    newlines = [m.start() for m in re.finditer("\n", text)] if len(starts) > 16 else None
    lines = {bisect_right(newlines, pos - 1) if newlines is not None else text.count("\n", 0, pos)
             for pos in starts}
    return sorted(lines)


_TYPED_ASSIGN = re.compile(r"(?i)\b(" + _SECRET_NAME + r")\s*[:=]\s*([^\s'\"]{4,256})")


def redact_typed(text: str) -> str:
    """Text a person typed (a query): ``redact_text``, and ``NAME=value`` / ``NAME: value``
    of a secret name anywhere in it, unquoted, as in a configuration file.

    >>> redact_typed("why does api_key=9f8e7d6c5b4a3210 fail")
    'why does api_key=«redacted:password-assignment» fail'
    """
    out = redact_text(text)
    spans = [(m.start(2), m.end(2)) for m in _TYPED_ASSIGN.finditer(out) if _plausible(m.group(2), False)
             and not m.group(2).startswith("«redacted:")]
    for start, end in reversed(spans):
        out = out[:start] + MARK.format("password-assignment") + out[end:]
    return out


def holds_token(name: str) -> bool:
    """A file or folder name that is itself a token (``ghp_…``, ``AKIA…``, ``sk-live-…``):
    the walk leaves it out, since a path is a key of the index, the export and every answer.

    >>> holds_token("ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8.txt"), holds_token("task_test_utils.py")
    (True, False)
    """
    return bool(_TOKEN_ANY.search(name)) and redact_text(name) != name


def redact_text(text: str, fmt: str = "") -> str:
    """``text`` with every secret replaced by its marker; newlines are kept."""
    return scan_text(text, fmt)[0]


def redact_all(texts: list[str]) -> list[str]:
    """``texts`` redacted together: a value found in one (``AKIA…`` in a query) is also
    replaced wherever another holds it in any case (the query's lower-cased terms)."""
    r = Redactor()
    out = ["".join(r.line(part)[0] + nl for part, nl in _split_keep(t)) for t in texts]
    for value, rule in sorted(set(r.values), key=lambda v: -len(v[0])):
        if len(value) >= 4:
            pattern = re.compile(re.escape(value), re.I)
            out = [pattern.sub(MARK.format(rule), t) for t in out]
    return out


def redact_tree(value: Any) -> Any:
    """A JSON-like value with the secrets of all its strings replaced together (a token
    pasted into a query is also replaced in the query's lower-cased terms): log rows and
    the query an answer echoes."""
    texts: list[str] = []

    def collect(v: Any) -> None:
        if isinstance(v, str):
            texts.append(v)
        elif isinstance(v, dict):
            for x in v.values():
                collect(x)
        elif isinstance(v, list | tuple):
            for x in v:
                collect(x)

    collect(value)
    clean = iter(redact_all(texts))

    def rebuild(v: Any) -> Any:
        if isinstance(v, str):
            return next(clean)
        if isinstance(v, dict):
            return {k: rebuild(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [rebuild(x) for x in v]
        return v

    return rebuild(value)


def scan_text(text: str, fmt: str = "") -> tuple[str, list[Finding]]:
    """(the redacted text, what was found where): only the lines a trigger hits are
    scanned (every line, in order, when the text holds a private key block)."""
    r = Redactor(fmt)
    candidates = _candidate_lines(text)
    if candidates is None:
        return "".join(r.line(part)[0] + nl for part, nl in _split_keep(text)), r.findings
    if not candidates:
        return text, []
    lines = text.split("\n")
    changed = False
    for i in candidates:
        r.lineno = i
        new, rules = r.line(lines[i])
        if rules:
            lines[i] = new
            changed = True
    firsts = [i for i in candidates if _TOKEN_ANY.search(lines[i])] if ("'" in text or '"' in text) else []
    if firsts:  # a token split over two lines' literals: its prefix opens the first line's literal
        joined = join_split_lines(lines, firsts)
        if joined != lines:
            r.findings += [Finding("split-token", i + 1) for i, (x, y) in enumerate(zip(lines, joined, strict=True)) if x != y]
            lines, changed = joined, True
    return ("\n".join(lines) if changed else text), r.findings


def _split_keep(text: str) -> Iterable[tuple[str, str]]:
    start = 0
    n = len(text)
    while start < n:
        i = text.find("\n", start)
        if i < 0:
            yield text[start:], ""
            return
        yield text[start:i], "\n"
        start = i + 1


SECRET_FILE_NAMES = frozenset({".env", ".netrc", "_netrc", ".pgpass", ".npmrc", ".pypirc", "credentials",
                               "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", ".htpasswd", ".git-credentials"})
SECRET_FILE_SUFFIXES = frozenset({"pem", "key", "p12", "pfx", "jks", "keystore", "ppk", "asc", "gpg", "kdbx"})


def suffix_of(rel: str) -> str:
    """The format a file's name says (``env`` for ``.env`` files), lower case."""
    name = rel.rsplit("/", 1)[-1].lower()
    if name == ".env" or name.startswith(".env.") or name.endswith(".env"):
        return "env"
    return name.rsplit(".", 1)[1] if "." in name[1:] else ""


def is_secret_file(rel: str) -> bool:
    """A file whose whole purpose is to hold secrets (``.env``, ``.env.local``, key files):
    recorded (its path, size and checksum) but its text is never indexed."""
    name = rel.rsplit("/", 1)[-1].lower()
    if name in SECRET_FILE_NAMES or name.startswith(".env.") or name.endswith(".env"):
        return not name.endswith((".example", ".sample", ".template", ".dist"))
    suffix = name.rsplit(".", 1)[1] if "." in name[1:] else ""
    return suffix in SECRET_FILE_SUFFIXES or (name.startswith("id_") and suffix == "")
