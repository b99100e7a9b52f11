"""The console's gate (design §11): a Cypher statement runs only when the engine's own
grammar reads it as one read query.

The statement is parsed by a parser generated from Kùzu 0.11.3's ``Cypher.g4``
(``oracl.face.cypher_grammar``), so comments, strings, numbers glued to words (``0LOAD``),
unicode dashes and spaces are read exactly as the engine reads them; there is no second,
hand-written lexer to disagree with it. Any syntax error refuses. Then the parse tree must
hold:

* exactly one statement, and that statement a query (``oC_Query``), after an optional
  EXPLAIN or PROFILE, or a standalone ``CALL f(…)`` of a read function;
* no updating clause (CREATE, MERGE, SET, DELETE) and no ``LOAD FROM`` anywhere in it;
* every ``CALL`` names a function of a fixed read-only list (``CALL threads=1`` sets an
  option and is a different rule, refused);
* no function that moves a sequence (``nextval``);
* at most ``MAX_NESTING`` open brackets, ``MAX_CASE_NESTING`` open CASEs and
  ``MAX_TOKENS`` tokens (the engine's binder recurses over a statement's tree: lists
  nested 1,000 deep and sums of 10,000 terms crash it, and CASEs nested 48 deep bind for
  over a minute).

Behind the gate each statement runs in a sandboxed child (``oracl.face.sandbox``).

>>> check("MATCH (a:Artifact) RETURN a.path LIMIT 3; // the top three")
'MATCH (a:Artifact) RETURN a.path LIMIT 3; // the top three'
>>> check("UNWIND [1] AS x WITH x SKIP 0LOAD FROM '/etc/passwd' RETURN *")
Traceback (most recent call last):
...
oracl.core.errors.RefusedError: refused: LOAD FROM reads files outside the graph; the console only reads the graph
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from typing import Any

from oracl.core.errors import QueryError, RefusedError

MAX_CHARS = 100_000
MAX_TOKENS = 4_000
MAX_NESTING = 48
PARSE_SECONDS = 5.0    # the parser's adaptive prediction can take exponential time on a crafted statement
MAX_CASE_NESTING = 12  # the engine binds nested CASEs in time ~1.7^depth: 18 deep took 3 s
# functions a CALL may name: catalogue and full-text reads (lower case)
# (not show_functions: it crashes the 0.11.3 engine on a read-only database)
READ_FUNCTIONS = frozenset({
    "show_tables", "table_info", "show_connection", "show_indexes", "db_version",
    "current_setting", "query_fts_index", "show_warnings", "show_sequences",
})
SIDE_EFFECT_FUNCTIONS = frozenset({"nextval", "setval"})
# parse-tree rules a read query never contains -> why
_REFUSED_RULES = {
    "OC_CreateContext": "writes to the graph",
    "OC_MergeContext": "writes to the graph", "OC_SetContext": "writes to the graph",
    "OC_DeleteContext": "writes to the graph", "KU_LoadFromContext": "reads files outside the graph",
    "KU_ScanSourceContext": "reads files outside the graph",
}
_WHAT = {"OC_CreateContext": "CREATE",
         "OC_MergeContext": "MERGE", "OC_SetContext": "SET", "OC_DeleteContext": "DELETE",
         "KU_LoadFromContext": "LOAD FROM", "KU_ScanSourceContext": "a scan source"}
# statement rules -> what they do (every alternative of oC_Statement but the query)
_STATEMENTS = {
    "KU_CopyFromContext": "COPY reads files outside the graph", "KU_CopyFromByColumnContext":
        "COPY reads files outside the graph", "KU_CopyTOContext": "COPY … TO writes files outside the graph",
    "KU_ExportDatabaseContext": "EXPORT DATABASE writes files", "KU_ImportDatabaseContext":
        "IMPORT DATABASE reads files and writes the graph", "KU_AttachDatabaseContext": "ATTACH opens another database",
    "KU_DetachDatabaseContext": "DETACH closes a database", "KU_UseDatabaseContext": "USE switches the database",
    "KU_ExtensionContext": "an extension statement loads or installs native code",
    "KU_TransactionContext": "a transaction statement controls transactions or checkpoints",
    "KU_CreateMacroContext": "CREATE MACRO defines something in the database",
    "KU_CommentOnContext": "COMMENT ON writes the catalogue", "KU_DropContext": "DROP writes the catalogue",
    "KU_AlterTableContext": "ALTER writes the catalogue", "KU_CreateUserContext": "CREATE USER writes the catalogue",
    "KU_CreateTypeContext": "CREATE TYPE writes the catalogue",
    "KU_CreateSequenceContext": "CREATE SEQUENCE writes the catalogue",
    "KU_CreateNodeTableContext": "CREATE NODE TABLE writes the catalogue",
    "KU_CreateRelTableContext": "CREATE REL TABLE writes the catalogue",
}
_OPEN = {"(", "[", "{"}
_CLOSE = {")", "]", "}"}


def _refuse(why: str) -> RefusedError:
    return RefusedError(f"refused: {why}; the console only reads the graph")


class _Listener:
    """Turns the first syntax error into a refusal (the engine stops at its first, too)."""

    def syntaxError(self, recognizer: Any, offending: Any, line: int, column: int, msg: str, e: Any) -> None:  # noqa: N802
        raise RefusedError(f"refused: the engine's grammar does not read this statement "
                           f"(line {line}, column {column + 1}: {msg[:120]})")

    def reportAmbiguity(self, *args: Any) -> None:  # noqa: N802
        pass

    def reportAttemptingFullContext(self, *args: Any) -> None:  # noqa: N802
        pass

    def reportContextSensitivity(self, *args: Any) -> None:  # noqa: N802
        pass


def _parse(statement: str) -> tuple[Any, Any]:
    from antlr4 import CommonTokenStream, InputStream

    from oracl.face.cypher_grammar.CypherLexer import CypherLexer
    from oracl.face.cypher_grammar.CypherParser import CypherParser
    from oracl.face.cypher_grammar.refusal import GrammarRefusal

    class Deadline(CommonTokenStream):
        """The token stream the parser reads through: every 256th look-ahead checks the
        process's CPU time, and past ``PARSE_SECONDS`` of it the parse stops with a
        refusal (CPU, not wall time: a busy machine does not refuse a statement it would
        read on a quiet one)."""

        calls = 0
        until = time.process_time() + PARSE_SECONDS

        def LA(self, i: int) -> int:  # noqa: N802
            self.calls += 1
            if not self.calls & 0xFF and time.process_time() > self.until:
                raise _refuse(f"the statement took over {PARSE_SECONDS:g} s to read")
            return super().LA(i)

    listener = _Listener()
    lexer = CypherLexer(InputStream(statement))
    lexer.removeErrorListeners()
    lexer.addErrorListener(listener)
    tokens = Deadline(lexer)
    tokens.fill()
    _bounded(tokens.tokens, lexer)
    parser = CypherParser(tokens)
    parser.removeErrorListeners()
    parser.addErrorListener(listener)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))  # the parser recurses ~25 frames a nesting level
    try:
        return parser.ku_Statements(), parser
    except GrammarRefusal as exc:
        raise RefusedError(f"refused: the engine refuses this statement ({exc})") from None
    except RecursionError:
        raise _refuse("the statement is nested too deeply") from None
    finally:
        sys.setrecursionlimit(limit)


def _bounded(tokens: list[Any], lexer: Any) -> None:
    if len(tokens) > MAX_TOKENS:
        raise _refuse(f"the statement has {len(tokens):,} tokens, over the console's {MAX_TOKENS:,}")
    depth = cases = 0
    case, end = lexer.CASE, lexer.END
    for tok in tokens:
        if tok.type == case:
            cases += 1
            if cases > MAX_CASE_NESTING:
                raise _refuse(f"the statement nests CASE over {MAX_CASE_NESTING} deep")
        elif tok.type == end:
            cases -= 1
        elif tok.text in _OPEN:
            depth += 1
            if depth > MAX_NESTING:
                raise _refuse(f"the statement nests brackets over {MAX_NESTING} deep")
        elif tok.text in _CLOSE:
            depth -= 1


def _walk(node: Any) -> Iterator[Any]:
    stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        stack.extend(reversed(getattr(cur, "children", None) or []))


def _function_name(invocation: Any) -> str:
    name = invocation.oC_FunctionName()
    if name is None:  # COUNT(*) or CAST(…)
        return invocation.getChild(0).getText().lower()
    text = name.getText()
    if text.startswith("`") and text.endswith("`"):
        text = text[1:-1].replace("``", "`")
    return text.lower()


def check(statement: str) -> str:
    """``statement`` itself when the engine's grammar reads it as a single read query;
    RefusedError (QueryError for an empty one) naming the reason otherwise."""
    if len(statement) > MAX_CHARS:
        raise _refuse(f"the statement has {len(statement):,} characters, over the console's {MAX_CHARS:,}")
    if not statement.strip(" \t\r\n\f\v;"):
        raise QueryError("empty statement")
    try:
        statement.encode("utf-8")
    except UnicodeEncodeError as exc:  # bytes typed that are not UTF-8 (surrogate-escaped by the terminal)
        raise QueryError(f"the statement is not UTF-8 text (at character {exc.start + 1})") from None
    tree, _ = _parse(statement)
    cyphers = tree.oC_Cypher()
    if len(cyphers) != 1:
        raise RefusedError("refused: more than one statement; run them one at a time")
    stmt = cyphers[0].oC_Statement()
    body = stmt.getChild(0)
    kind = type(body).__name__
    if kind == "KU_StandaloneCallContext":
        invocation = body.oC_FunctionInvocation()
        if invocation is None:
            raise _refuse("CALL option=value changes a setting of the session")
        calls = [invocation]
    elif kind == "OC_QueryContext":
        calls = []
    else:
        raise _refuse(_STATEMENTS.get(kind, f"{kind.removesuffix('Context')} is not a query"))
    for node in _walk(body):
        name = type(node).__name__
        if name in _REFUSED_RULES:
            what = "DETACH DELETE" if name == "OC_DeleteContext" and node.DETACH() is not None else _WHAT[name]
            raise _refuse(f"{what} {_REFUSED_RULES[name]}")
        if name == "KU_InQueryCallContext":
            calls.append(node.oC_FunctionInvocation())
        elif name == "OC_FunctionInvocationContext" and _function_name(node) in SIDE_EFFECT_FUNCTIONS:
            raise _refuse(f"{_function_name(node)}() moves a sequence")
    for invocation in calls:
        fn = _function_name(invocation)
        if fn not in READ_FUNCTIONS:
            raise RefusedError(f"refused: CALL {fn[:30]} is not one of the read-only functions "
                               f"({', '.join(sorted(READ_FUNCTIONS))})")
    return statement
