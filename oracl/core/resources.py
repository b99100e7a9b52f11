"""Where the ``.cypher`` folders are: inside an installed wheel (``oracl/_data/…``) or
beside the package in a checkout / editable install."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

_PKG = Path(__file__).resolve().parents[1]  # the package folder (oracl/), above core/
_NAME = re.compile(r"^//\s*name:\s*(\S+)", re.M)
# ``/*=priority(a)*/``: a derived value (oracl/core/derive.py) of the row bound to ``a``
_DERIVED = re.compile(r"/\*=(\w+)\((\w+)\)\*/")


@cache
def data_dir(kind: str) -> Path:
    """``schema``, ``cypher`` or ``loaders``."""
    for candidate in (_PKG / "_data" / kind, _PKG.parent / kind):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"ORACL's {kind}/ folder is missing from this installation")


def statements(text: str) -> list[str]:
    """Split a .cypher file into statements on ``;`` at a line end; ``//`` comment lines dropped."""
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    return [s.strip() for s in re.split(r";\s*(?:\n|$)", body) if s.strip()]


@cache
def schema_statements() -> tuple[str, ...]:
    out: list[str] = []
    for f in sorted(data_dir("schema").glob("*.cypher")):
        out.extend(statements(f.read_text("utf-8")))
    return tuple(out)


@cache
def loader_statements(name: str) -> tuple[str, ...]:
    return tuple(statements((data_dir("loaders") / f"{name}.cypher").read_text("utf-8")))


@cache
def query(name: str) -> str:
    """The one statement of ``cypher/<name>.cypher``, each ``/*=priority(a)*/``,
    ``/*=delta(a)*/``, ``/*=density(a)*/`` and ``/*=rank(l)*/`` replaced by the expression
    that derives it from the row's stored columns and the build's terms (parameters)."""
    from oracl.core.derive import CYPHER

    text = (data_dir("cypher") / f"{name}.cypher").read_text("utf-8")
    text = _DERIVED.sub(lambda m: CYPHER[m.group(1)](m.group(2)), text)
    stmts = statements(text)
    if len(stmts) != 1:
        raise ValueError(f"cypher/{name}.cypher must hold exactly one statement")
    return stmts[0]


@cache
def query_params(name: str) -> frozenset[str]:
    """The ``$parameters`` the statement of ``cypher/<name>.cypher`` uses."""
    return frozenset(re.findall(r"\$([A-Za-z_]\w*)", query(name)))
