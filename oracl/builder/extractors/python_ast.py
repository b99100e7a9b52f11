"""The deep-AST analyzer for Python files (design §3): structural ``ast_*`` tags, a symbol
table with line ranges, import references and the security signals of §4.

It reads names only: a secret's value is never copied into a tag, a field or an export.

>>> a = analyze_python("import subprocess\\ndef f():\\n    '''doc'''\\n")
>>> a.tags["ast_functions"], a.sensitive, a.symbols
(1, ('subprocess',), (('f', 'function', 2, 3),))
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from oracl.core.records import Base, ImportRef, Mention, Symbol, SymbolDetail

SECRET_NAME = re.compile(r"(?i)(password|passwd|secret|api_?key|token|private_?key)")
SENSITIVE_MODULES = {
    "subprocess": "subprocess", "pty": "subprocess",
    "pickle": "pickle", "cpickle": "pickle", "marshal": "pickle", "shelve": "pickle", "dill": "pickle",
    "hashlib": "crypto", "hmac": "crypto", "secrets": "crypto", "ssl": "crypto",
    "cryptography": "crypto", "crypto": "crypto", "nacl": "crypto", "jwt": "crypto",
    "socket": "network", "requests": "network", "httpx": "network", "urllib": "network",
    "http": "network", "aiohttp": "network", "ftplib": "network", "smtplib": "network",
    "paramiko": "network", "urllib3": "network",
}
SENSITIVE_CALLS = {"eval": "eval", "exec": "eval", "__import__": "eval",
                   "system": "subprocess", "popen": "subprocess", "execv": "subprocess",
                   "execvp": "subprocess", "spawnl": "subprocess"}
# eval-family builtins called bare; os.system/popen/exec*/spawn* called through os.
SENSITIVE_CALL_TEXT = re.compile(r"(?<![\w.])(eval|exec|__import__)\s*\(|\bos\.(system|popen|execv|execvp|spawnl)\s*\(")
SENSITIVE_CALL_NEEDLES = ("eval(", "exec(", "__import__(", "os.system(", "os.popen(", "os.exec",
                          "os.spawn", "eval (", "exec (")
# the start of a string literal bound by `=` or `:` (a keyword argument, dict entry, setting)
LITERAL_BIND = re.compile(r"[=:][ \t]*[rbuRBU]?[\"']")
CLI_MODULES = {"argparse": "argparse", "click": "click", "typer": "typer", "fire": "fire",
               "docopt": "docopt", "optparse": "optparse"}
TEST_MODULES = {"pytest": "pytest", "unittest": "unittest", "nose": "nose", "hypothesis": "hypothesis"}


@dataclass(slots=True)
class PythonAnalysis:
    tags: dict[str, object] = field(default_factory=dict)
    symbols: tuple[Symbol, ...] = ()
    details: tuple[SymbolDetail, ...] = ()  # (qualified name, signature, first docstring line)
    test_markers: tuple[Mention, ...] = ()  # pytest/unittest test functions and classes
    bases: tuple[Base, ...] = ()            # (class, base class as written, "inherits", line)
    imports: tuple[ImportRef, ...] = ()
    renames: tuple[tuple[str, str], ...] = ()  # (local name, imported name) of ``import … as …``
    module_docstring: bool = False
    defs: int = 0
    documented_defs: int = 0
    sensitive: tuple[str, ...] = ()
    secret_key_names: bool = False
    credential_literal: bool = False
    syntax_error: str = ""


_STMT_KIND: dict[type, str] = {
    ast.ClassDef: "class", ast.FunctionDef: "def", ast.AsyncFunctionDef: "async_def",
    ast.Import: "import", ast.ImportFrom: "from", ast.Assign: "assign", ast.AnnAssign: "assign",
    ast.If: "block", ast.Try: "block", ast.With: "block", ast.AsyncWith: "block", ast.For: "block",
    ast.AsyncFor: "block", ast.While: "block",
}
if hasattr(ast, "TryStar"):
    _STMT_KIND[ast.TryStar] = "block"


def _has_docstring(node: ast.AST) -> bool:
    body = getattr(node, "body", None)
    if not body:
        return False
    first = body[0]
    return (type(first) is ast.Expr and type(first.value) is ast.Constant
            and isinstance(first.value.value, str))


def _detail(node: ast.AST, name: str, lines: list[str]) -> SymbolDetail:
    """(qualified name, the ``def``/``class`` line, the docstring's first line)."""
    line = node.lineno  # type: ignore[attr-defined]
    for deco in getattr(node, "decorator_list", ()):
        line = max(line, deco.end_lineno + 1 if deco.end_lineno else line)
    sig = lines[line - 1].strip().rstrip(":") if 0 < line <= len(lines) else ""
    doc = ""
    if _has_docstring(node):
        first = node.body[0].value.value.strip().split("\n", 1)[0]  # type: ignore[attr-defined]
        doc = first.strip()[:160]
    return (name, sig[:200], doc)


def _is_main_guard(node: ast.stmt) -> bool:
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    parts = [node.test.left, *node.test.comparators]
    return any(isinstance(p, ast.Name) and p.id == "__name__" for p in parts) and any(
        isinstance(p, ast.Constant) and p.value == "__main__" for p in parts)


def _target_names(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.Tuple | ast.List):
        return [n for elt in node.elts for n in _target_names(elt)]
    return []


def _dotted(node: ast.AST) -> str:
    """``a.b.C`` of a base class written as a dotted name (``Generic[T]`` → ``Generic``)."""
    if isinstance(node, ast.Subscript):
        node = node.value
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _nonempty_str(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) >= 4


def analyze_python(text: str) -> PythonAnalysis:
    """Analyze one module's source. A syntax error yields ``ast_error`` and no symbols."""
    out = PythonAnalysis()
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        out.syntax_error = f"{type(exc).__name__}: {getattr(exc, 'msg', exc)}"[:200]
        out.tags = {"ast_error": True}
        return out

    symbols: list[Symbol] = []
    details: list[SymbolDetail] = []
    markers: list[Mention] = []
    bases: list[Base] = []
    lines = text.splitlines()
    imports: list[ImportRef] = []
    renames: list[tuple[str, str]] = []
    sensitive: set[str] = set()
    cli: set[str] = set()
    tests: set[str] = set()
    classes = functions = documented = 0
    has_async = False
    secret_names = credential = False

    def note_module(top: str) -> None:
        top = top.lower()
        if top in SENSITIVE_MODULES:
            sensitive.add(SENSITIVE_MODULES[top])
        if top in CLI_MODULES:
            cli.add(CLI_MODULES[top])
        if top in TEST_MODULES:
            tests.add(TEST_MODULES[top])

    check_secrets = SECRET_NAME.search(text) is not None  # most modules name no secret at all

    # Statements only: walking every expression node costs 3× the parse itself, so
    # expression-level signals (calls, keyword and dict secrets) come from the text below.
    # Dispatch on the exact node type: most statements (Expr, Return, Assign…) fall
    # through one dict lookup.
    def visit(body: list[ast.stmt], prefix: str, in_class: bool) -> None:
        nonlocal classes, functions, documented, has_async, secret_names, credential
        for node in body:
            kind = _STMT_KIND.get(type(node))
            if kind is None:
                continue
            if kind == "class":
                classes += 1
                documented += _has_docstring(node)
                name = prefix + node.name  # type: ignore[attr-defined]
                symbols.append((name, "class", node.lineno, node.end_lineno or node.lineno))
                details.append(_detail(node, name, lines))
                if node.name.startswith("Test"):  # type: ignore[attr-defined]
                    markers.append((name, node.lineno))
                for base in node.bases:  # type: ignore[attr-defined]
                    written = _dotted(base)
                    if written and written != "object":
                        bases.append((name, written, "inherits", node.lineno))
                visit(node.body, name + ".", True)  # type: ignore[attr-defined]
            elif kind == "def" or kind == "async_def":
                functions += 1
                documented += _has_docstring(node)
                has_async = has_async or kind == "async_def"
                sym_kind = "method" if in_class else ("async_function" if kind == "async_def" else "function")
                name = prefix + node.name  # type: ignore[attr-defined]
                symbols.append((name, sym_kind, node.lineno, node.end_lineno or node.lineno))
                details.append(_detail(node, name, lines))
                if node.name.startswith("test"):  # type: ignore[attr-defined]
                    markers.append((name, node.lineno))
                visit(node.body, name + ".", False)  # type: ignore[attr-defined]
            elif kind == "import":
                for alias in node.names:  # type: ignore[attr-defined]
                    imports.append((alias.name, (), 0, node.lineno, node.end_lineno or node.lineno))
                    note_module(alias.name.split(".")[0])
                    if alias.asname and alias.asname != alias.name:
                        renames.append((alias.asname, alias.name))
            elif kind == "from":
                mod = node.module or ""  # type: ignore[attr-defined]
                names = tuple(a.name for a in node.names if a.name != "*")  # type: ignore[attr-defined]
                renames.extend((a.asname, a.name) for a in node.names  # type: ignore[attr-defined]
                               if a.asname and a.asname != a.name)
                imports.append((mod, names, node.level, node.lineno, node.end_lineno or node.lineno))  # type: ignore[attr-defined]
                if node.level == 0 and mod:  # type: ignore[attr-defined]
                    note_module(mod.split(".")[0])
            elif kind == "assign":
                if check_secrets:
                    targets = node.targets if type(node) is ast.Assign else [node.target]  # type: ignore[attr-defined]
                    for t in targets:
                        if any(SECRET_NAME.search(n) for n in _target_names(t)):
                            secret_names = True
                            credential = credential or _nonempty_str(node.value)  # type: ignore[attr-defined]
            else:  # compound: definitions under `if TYPE_CHECKING:` or `try:` belong to this scope
                visit(node.body, prefix, in_class)  # type: ignore[attr-defined]
                visit(getattr(node, "orelse", []), prefix, in_class)
                visit(getattr(node, "finalbody", []), prefix, in_class)
                for handler in getattr(node, "handlers", []):
                    visit(handler.body, prefix, in_class)

    visit(tree.body, "", False)
    if any(needle in text for needle in SENSITIVE_CALL_NEEDLES):  # substring tests are ~50× cheaper
        for m in SENSITIVE_CALL_TEXT.finditer(text):
            sensitive.add(SENSITIVE_CALLS[m.group(1) or m.group(2)])
    # keyword arguments and dict entries bound to a string literal: find the rare `= "` / `: '`
    # first, then read the name written before it (the text's length does not matter much)
    for m in LITERAL_BIND.finditer(text):
        k = m.start()
        while k > 0 and text[k - 1] in " \t\"'":
            k -= 1
        end = k
        while k > 0 and (text[k - 1].isalnum() or text[k - 1] == "_"):
            k -= 1
        if end > k and SECRET_NAME.search(text, k, end):
            secret_names = True
            quote = text[m.end() - 1]
            close = text.find(quote, m.end())
            if close - m.end() >= 4 and "\n" not in text[m.end():close]:
                credential = True
                break

    out.module_docstring = _has_docstring(tree)
    out.defs = classes + functions
    out.documented_defs = documented
    out.symbols = tuple(symbols)
    out.details = tuple(details)
    out.test_markers = tuple(markers)
    out.bases = tuple(bases)
    out.imports = tuple(imports)
    out.renames = tuple(dict.fromkeys(renames))
    out.sensitive = tuple(sorted(sensitive))
    out.secret_key_names = secret_names
    out.credential_literal = credential
    tags: dict[str, object] = {
        "ast_classes": classes,
        "ast_functions": functions,
        "ast_main_guard": any(_is_main_guard(n) for n in tree.body),
        "ast_docstring": out.module_docstring,
        "ast_async": has_async,
    }
    if cli:
        tags["ast_cli"] = sorted(cli)
    if tests:
        tags["ast_test_framework"] = sorted(tests)
    if sensitive:
        tags["ast_sensitive"] = sorted(sensitive)
    out.tags = tags
    return out
