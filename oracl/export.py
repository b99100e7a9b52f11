"""The canonical export ``weighted_graph_index.json``: ``{"schema": header, "nodes": […],
"edges": […]}`` as bytes that depend only on the graph (sorted keys, compact separators,
UTF-8, nodes by id, edges by canonical key, floats rounded to ``FLOAT_DIGITS``).

>>> canonical_bytes({"b": 0.1 + 0.2, "a": [1, -0.0]})
b'{"a":[1,0.0],"b":0.3}'
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson

SCHEMA_VERSION = "wtls-1.1"  # 1.1: the symbol graph (``symbols``: nodes and edges)
FLOAT_DIGITS = 9


def rounded(value: Any) -> Any:
    if isinstance(value, float):
        r = round(value, FLOAT_DIGITS)
        return 0.0 if r == 0 else r
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [rounded(v) for v in value]
    return value


def canonical_bytes(obj: Any) -> bytes:
    """Deterministic bytes of a JSON value (orjson, sorted keys, rounded floats)."""
    return orjson.dumps(rounded(obj), option=orjson.OPT_SORT_KEYS)


def edge_sort_key(e: dict[str, Any]) -> tuple[str, str, str, str, str]:
    return (e["source"], e["source_fragment"], e["target"], e["target_fragment"], e["relation"])


def r9(x: float) -> float:
    """A float as the export stores it (``FLOAT_DIGITS`` decimals, no negative zero)."""
    r = round(x, FLOAT_DIGITS)
    return 0.0 if r == 0 else r


def export_bytes(header: dict[str, Any], nodes: list[dict[str, Any]],
                 edges: list[dict[str, Any]], symbols: dict[str, list[dict[str, Any]]] | None = None) -> bytes:
    """The export's bytes. ``nodes`` and ``edges`` must already hold rounded floats (the
    weighting phase emits them so, and the Kùzu bundle is loaded from the same rows);
    walking 100k+ rows again to round them would cost seconds. ``symbols`` is the symbol
    graph (``{"nodes": …, "edges": …}``, sorted and rounded by its phase)."""
    doc = {"schema": rounded(header), "nodes": sorted(nodes, key=lambda n: n["id"]),
           "edges": sorted(edges, key=edge_sort_key),
           "symbols": symbols if symbols is not None else {"nodes": [], "edges": []}}
    return orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    """SHA-256 of a file, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
