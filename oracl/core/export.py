"""The canonical export ``weighted_graph_index.json``: ``{"schema": header, "nodes": […],
"edges": […]}`` as bytes that depend only on the graph (sorted keys, compact separators,
UTF-8, nodes by id, edges by canonical key, floats rounded to ``FLOAT_DIGITS``).

>>> canonical_bytes({"b": 0.1 + 0.2, "a": [1, -0.0]})
b'{"a":[1,0.0],"b":0.3}'
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

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


def edge_sort_key(e: Mapping[str, Any]) -> tuple[str, str, str, str, str]:
    return (e["source"], e["source_fragment"], e["target"], e["target_fragment"], e["relation"])


def r9(x: float) -> float:
    """A float as the export stores it (``FLOAT_DIGITS`` decimals, no negative zero)."""
    r = round(x, FLOAT_DIGITS)
    return 0.0 if r == 0 else r


# The symbol graph is the export's largest part (millions of rows on a large tree): it is
# stored as rows of values under one list of field names, not as objects repeating them.
SYMBOL_NODE_FIELDS = ("id", "name", "qualified", "kind", "language", "path", "start", "end", "signature", "doc",
                      "exported")
SYMBOL_EDGE_FIELDS = ("source", "target", "relation", "confidence", "resolution", "candidates", "lines")


def pack_symbols(nodes: list[dict[str, Any]], edges: list[dict[str, Any]]) -> dict[str, Any]:
    """The export's ``symbols`` section of the symbol graph's rows.

    >>> pack_symbols([{"id": "a#f", "name": "f", "qualified": "f", "kind": "function", "language": "python",
    ...                "path": "a", "start": 1, "end": 2, "signature": "def f()", "doc": "", "exported": True}],
    ...              [])["nodes"]
    [['a#f', 'f', 'f', 'function', 'python', 'a', 1, 2, 'def f()', '', True]]
    """
    return {"node_fields": list(SYMBOL_NODE_FIELDS), "edge_fields": list(SYMBOL_EDGE_FIELDS),
            "nodes": [[n[k] for k in SYMBOL_NODE_FIELDS] for n in nodes],
            "edges": [[e[k] for k in SYMBOL_EDGE_FIELDS] for e in edges]}


def unpack_symbols(doc: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(nodes, edges) of an export's ``symbols`` section as objects (empty for an export
    made before the symbol graph)."""
    sym = doc.get("symbols") or {}
    nf, ef = sym.get("node_fields", SYMBOL_NODE_FIELDS), sym.get("edge_fields", SYMBOL_EDGE_FIELDS)
    return ([dict(zip(nf, row, strict=True)) for row in sym.get("nodes", [])],
            [dict(zip(ef, row, strict=True)) for row in sym.get("edges", [])])


def export_bytes(header: dict[str, Any], nodes: Sequence[Mapping[str, Any]],
                 edges: Sequence[Mapping[str, Any]], symbols: dict[str, Any] | None = None,
                 symbols_section: bytes | None = None, events: bytes | None = None) -> bytes:
    """The export's bytes. ``nodes`` and ``edges`` must already hold rounded floats (the
    weighting phase emits them so, and the Kùzu bundle is loaded from the same rows);
    walking 100k+ rows again to round them would cost seconds. ``symbols`` is the symbol
    graph as ``pack_symbols`` makes it (sorted and rounded by its phase), or
    ``symbols_section`` the bytes of that value already encoded (the per-file segments of
    a selective rebuild, joined): ``symbols`` sorts last, so the bytes are spliced in.
    ``events``: phase 6's section as canonical bytes (design §5d; joined from per-file
    groups, kept between builds), when the vault holds events: spliced in as they are."""
    doc: dict[str, Any] = {"schema": rounded(header), "nodes": sorted(nodes, key=lambda n: n["id"]),
                           "edges": sorted(edges, key=edge_sort_key)}
    if events is not None:  # phase 6's event nodes and their edges, per file (sorted by their phase)
        doc["events"] = orjson.Fragment(events)
    if symbols_section is not None:
        head = orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)
        return b"".join((memoryview(head)[:-1], b',"symbols":', symbols_section, b"}"))
    doc["symbols"] = symbols if symbols is not None else pack_symbols([], [])
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
