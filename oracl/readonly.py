"""The console's gate (design §11): a Cypher statement runs only when its structure is a
read query.

The statement is tokenised the way the engine's lexer does it, left to right: a comment
(``/* … */``, ``// …``) is a comment wherever it starts outside a string, so a quote inside
a comment hides nothing; a string runs to its closing quote, with backslash escapes; a
backquoted name runs to its closing backquote. Anything the lexer cannot place – an
unterminated comment, string or name, a character outside printable ASCII where the
engine would read keywords – is refused, so the gate and the engine can never read one
statement two ways. Then:

* exactly one statement (a ``;`` may only end it);
* it starts with a read clause (MATCH, OPTIONAL MATCH, WITH, UNWIND, RETURN, CALL), after
  an optional EXPLAIN or PROFILE;
* no word outside strings, comments and property or label positions is a keyword of a
  statement that writes, loads, copies, exports, imports, attaches, installs,
  checkpoints or opens a transaction;
* every CALL names a function of a fixed read-only list, called with parentheses (``CALL
  threads=1`` sets an option and is refused);
* no function that moves a sequence is called.

>>> check("MATCH (a:Artifact) RETURN a.path LIMIT 3; // the top three")
'MATCH (a:Artifact) RETURN a.path LIMIT 3'
>>> check("/* ' */ COPY (MATCH (a) RETURN a) TO 'x.csv' /* ' */")
Traceback (most recent call last):
...
oracl.errors.RefusedError: refused: COPY reads or writes files outside the graph; the console only reads the graph
"""

from __future__ import annotations

from dataclasses import dataclass

from oracl.errors import QueryError, RefusedError

READ_STARTS = frozenset({"MATCH", "OPTIONAL", "WITH", "UNWIND", "RETURN", "CALL"})
PREFIXES = frozenset({"EXPLAIN", "PROFILE"})
# keyword -> why it is refused
REFUSED = {
    **dict.fromkeys(("CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "DROP", "ALTER", "RENAME",
                     "FOREACH"), "it writes to the graph"),
    **dict.fromkeys(("COPY", "LOAD", "EXPORT", "IMPORT"), "reads or writes files outside the graph"),
    **dict.fromkeys(("ATTACH", "USE"), "opens another database"),
    "INSTALL": "installs an extension", "EXTENSION": "loads an extension",
    "CHECKPOINT": "writes the database files",
    **dict.fromkeys(("BEGIN", "COMMIT", "ROLLBACK", "TRANSACTION", "COMMIT_SKIP_CHECKPOINT",
                     "ROLLBACK_SKIP_CHECKPOINT"), "controls transactions"),
    **dict.fromkeys(("MACRO", "SEQUENCE", "TABLE", "GRAPH", "PROJECT"), "defines something in the database"),
}
# functions a CALL may name: catalogue and full-text reads (lower case)
# (not show_functions: it crashes the 0.11.3 engine on a read-only database)
READ_FUNCTIONS = frozenset({
    "show_tables", "table_info", "show_connection", "show_indexes", "db_version",
    "current_setting", "query_fts_index", "show_warnings", "show_sequences",
})
SIDE_EFFECT_FUNCTIONS = frozenset({"nextval", "setval"})
_WHITESPACE = " \t\r\n\f\v"
_PUNCT = set("()[]{},.:;=<>+-*/%^|!?$&~@")


@dataclass(frozen=True, slots=True)
class Token:
    kind: str   # word | string | name (backquoted) | number | punct | param
    text: str
    pos: int


def tokenize(text: str) -> list[Token]:
    """The statement's tokens, comments dropped; QueryError for anything unplaceable."""
    out: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in _WHITESPACE:
            i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise RefusedError("refused: an unterminated /* comment")
            i = end + 2
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
        elif ch in "'\"":
            j = i + 1
            while j < n and text[j] != ch:
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                raise RefusedError("refused: an unterminated string literal")
            out.append(Token("string", text[i:j + 1], i))
            i = j + 1
        elif ch == "`":
            j = i + 1
            while True:
                end = text.find("`", j)
                if end < 0:
                    raise RefusedError("refused: an unterminated `name`")
                if text.startswith("``", end):  # a doubled backquote is part of the name
                    j = end + 2
                    continue
                break
            out.append(Token("name", text[i:end + 1], i))
            i = end + 1
        elif ch == "$":
            j = i + 1
            while j < n and (text[j].isascii() and (text[j].isalnum() or text[j] == "_")):
                j += 1
            out.append(Token("param", text[i:j], i))
            i = j
        elif ch.isascii() and (ch.isalpha() or ch == "_"):
            j = i + 1
            while j < n and text[j].isascii() and (text[j].isalnum() or text[j] == "_"):
                j += 1
            out.append(Token("word", text[i:j], i))
            i = j
        elif ch.isascii() and ch.isdigit():
            j = i + 1
            while j < n and text[j].isascii() and (text[j].isalnum() or text[j] in "._"):
                j += 1
            out.append(Token("number", text[i:j], i))
            i = j
        elif ch in _PUNCT:
            out.append(Token("punct", ch, i))
            i += 1
        else:
            raise RefusedError(f"refused: the character {ch!r} (U+{ord(ch):04X}) outside a string literal")
    return out


def check(statement: str) -> str:
    """The statement to run (up to its last token: no trailing ``;`` or comment) when
    ``statement`` is a single read query; QueryError naming the reason otherwise."""
    toks = tokenize(statement)
    while toks and toks[-1].text == ";":
        toks.pop()
    if not toks:
        raise QueryError("empty statement")
    if any(t.kind == "punct" and t.text == ";" for t in toks):
        raise RefusedError("refused: more than one statement; run them one at a time")
    first = 0
    while first < len(toks) and toks[first].kind == "word" and toks[first].text.upper() in PREFIXES:
        first += 1
    if first >= len(toks) or toks[first].kind != "word" or toks[first].text.upper() not in READ_STARTS:
        word = toks[first].text[:30] if first < len(toks) else ""
        if word.upper() in REFUSED:
            raise RefusedError(f"refused: {word.upper()} {REFUSED[word.upper()]}; the console only reads the graph")
        raise RefusedError(f"refused: a read query starts with MATCH, OPTIONAL MATCH, WITH, UNWIND, RETURN or "
                         f"CALL, not {word!r}")
    for k, tok in enumerate(toks):
        if tok.kind != "word":
            continue
        prev = toks[k - 1].text if k else ""
        if prev in (".", ":") and toks[k - 1].kind == "punct":
            continue  # a property (a.set) or a label (:Copy)
        nxt = toks[k + 1] if k + 1 < len(toks) else None
        if nxt is not None and nxt.kind == "punct" and nxt.text == ":" and prev in ("{", ","):
            continue  # a map key ({copy: 1})
        word = tok.text.upper()
        if word in REFUSED:
            raise RefusedError(f"refused: {word} {REFUSED[word]}; the console only reads the graph")
        if word == "CALL":
            name = nxt.text.lower() if nxt is not None and nxt.kind == "word" else ""
            after = toks[k + 2] if k + 2 < len(toks) else None
            if name not in READ_FUNCTIONS or after is None or after.text != "(":
                shown = nxt.text[:30] if nxt is not None else ""
                raise RefusedError(f"refused: CALL {shown} is not one of the read-only functions "
                                 f"({', '.join(sorted(READ_FUNCTIONS))})")
        if tok.text.lower() in SIDE_EFFECT_FUNCTIONS and nxt is not None and nxt.text == "(":
            raise RefusedError(f"refused: {tok.text}() moves a sequence; the console only reads the graph")
    last = toks[-1]
    return statement[:last.pos + len(last.text)]
