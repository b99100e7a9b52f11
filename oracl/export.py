"""The canonical export ``weighted_graph_index.json``: ``{"schema": header, "nodes": […],
"edges": […]}`` as bytes that depend only on the graph (sorted keys, compact separators,
UTF-8, nodes by id, edges by canonical key, floats rounded to ``FLOAT_DIGITS``).

>>> canonical_bytes({"b": 0.1 + 0.2, "a": [1, -0.0]})
b'{"a":[1,0.0],"b":0.3}'
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

SCHEMA_VERSION = "wtls-1.0"
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


def export_document(header: dict[str, Any], nodes: list[dict[str, Any]],
                    edges: list[dict[str, Any]]) -> dict[str, Any]:
    return {"schema": header, "nodes": sorted(nodes, key=lambda n: n["id"]),
            "edges": sorted(edges, key=edge_sort_key)}


def export_bytes(header: dict[str, Any], nodes: list[dict[str, Any]],
                 edges: list[dict[str, Any]]) -> bytes:
    return canonical_bytes(export_document(header, nodes, edges))


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
