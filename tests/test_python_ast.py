from __future__ import annotations

from oracl.builder.extractors.python_ast import analyze_python

SOURCE = '''"""Module doc."""
import subprocess
import argparse
from .sibling import thing, other
from hashlib import sha256

class Client:
    """A client."""
    def send(self, x):
        return eval(x)

    async def fetch(self):
        pass

if True:
    def guarded():
        """Doc."""

password = "hunter22"

if __name__ == "__main__":
    guarded()
'''


def test_symbols_with_line_ranges() -> None:
    a = analyze_python(SOURCE)
    assert a.symbols == (("Client", "class", 7, 13), ("Client.send", "method", 9, 10),
                         ("Client.fetch", "method", 12, 13), ("guarded", "function", 16, 17))


def test_structural_tags() -> None:
    a = analyze_python(SOURCE)
    assert a.tags == {"ast_classes": 1, "ast_functions": 3, "ast_main_guard": True, "ast_docstring": True,
                      "ast_async": True, "ast_cli": ["argparse"],
                      "ast_sensitive": ["crypto", "eval", "subprocess"]}
    assert (a.defs, a.documented_defs, a.module_docstring) == (4, 2, True)


def test_imports_keep_level_names_and_lines() -> None:
    a = analyze_python(SOURCE)
    assert a.imports == (("subprocess", (), 0, 2, 2), ("argparse", (), 0, 3, 3),
                         ("sibling", ("thing", "other"), 1, 4, 4), ("hashlib", ("sha256",), 0, 5, 5))


def test_secrets_are_named_never_copied() -> None:
    a = analyze_python(SOURCE)
    assert a.secret_key_names and a.credential_literal
    assert "hunter22" not in repr(a)


def test_secret_from_environment_is_not_a_literal() -> None:
    a = analyze_python("import os\napi_key = os.environ['API_KEY']\nf(token='')\n")
    assert a.secret_key_names and not a.credential_literal


def test_syntax_error_is_tagged() -> None:
    a = analyze_python("def broken(:\n")
    assert a.tags == {"ast_error": True}
    assert a.syntax_error.startswith("SyntaxError")
    assert a.symbols == ()


def test_test_framework_tag() -> None:
    assert analyze_python("import pytest\n").tags["ast_test_framework"] == ["pytest"]
