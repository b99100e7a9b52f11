"""The ``oracl`` console script. ``oracl --version`` is answered here, before the CLI
(typer, click, rich) is imported: a version check costs a bare interpreter's start and
little more. A read-only command goes to the answer helper of a running ``watch`` or
``serve`` when there is one (``oracl.face.answer``); everything else, and every command
without a helper, to ``oracl.face.cli.main``."""

from __future__ import annotations

import os
import sys


def installed_version(dist: str) -> str | None:
    """The version of the distribution ``dist`` as installed on ``sys.path`` (the name of
    its ``.dist-info`` folder), without ``importlib.metadata`` (~17 ms of imports)."""
    prefix = dist.replace("-", "_").lower() + "-"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            low = name.lower()
            if low.startswith(prefix) and low.endswith(".dist-info"):
                return name[len(prefix):-len(".dist-info")]
    return None


def version_text() -> str:
    """``oracl --version``: this package, the export schema, and the engine it pins."""
    from oracl.core.version import SCHEMA_VERSION, __version__

    engine = installed_version("kuzu") or "not installed"
    return f"oracl {__version__} (export schema {SCHEMA_VERSION}, kuzu {engine}, python {sys.version.split()[0]})"


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        sys.stdout.write(version_text() + "\n")
        sys.stdout.flush()
        return
    from oracl.face.answer import ask

    code = ask(sys.argv[1:])  # a running watch or serve answers, when one can
    if code is not None:
        sys.exit(code)
    from oracl.face.cli import main as cli_main

    cli_main()
