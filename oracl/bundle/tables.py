"""The Arrow tables a bundle is loaded from, derived from the weighted graph's rows (the
same rows the export is made of, so the bundle is a view of the export), and the spool
the full-text rows stream to while files are read."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from operator import itemgetter
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa

from oracl.core.export import SYMBOL_EDGE_FIELDS, SYMBOL_NODE_FIELDS, pack_symbols
from oracl.core.records import text_key

CONTENT_SCHEMA = pa.schema([("path", pa.string()), ("text", pa.string())])


class ContentSpool:
    """Full-text rows streamed to an Arrow IPC file while Phase 1 reads, so no more than
    one batch of file bodies is held in memory; the loader memory-maps it back."""

    def __init__(self, path: Path, batch_rows: int = 2000) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._writer = pa.ipc.new_file(str(path), CONTENT_SCHEMA)
        self._rows: list[tuple[str, str]] = []
        self._batch = batch_rows
        self.count = 0
        self.text_bytes = 0

    def add(self, path: str, text: str) -> None:
        self._rows.append((path, text))
        self.text_bytes += len(text)
        if len(self._rows) >= self._batch:
            self._flush()

    def _flush(self) -> None:
        if self._rows:
            cols = list(zip(*self._rows, strict=True))
            self._writer.write_batch(pa.record_batch([pa.array(c, pa.string()) for c in cols],
                                                     schema=CONTENT_SCHEMA))
            self.count += len(self._rows)
            self._rows = []

    def close(self) -> None:
        self._flush()
        self._writer.close()

    def table(self) -> pa.Table:
        return pa.ipc.open_file(pa.memory_map(str(self.path))).read_all()


def _ts(iso: str) -> datetime:
    return datetime.fromisoformat(iso[:-1])  # "…Z"; fromisoformat is ~20× faster than strptime


def _column(rows: Iterable[Mapping[str, Any]], key: str) -> list[Any]:
    return [r.get(key) for r in rows]


def _text(values: list[Any]) -> pa.Array:
    """A string column. (Typed: pyarrow's type inference tries importing an optional
    module, ``dateutil``, each time it runs; where that is absent each try costs ~0.1 ms,
    a few milliseconds a resident build.)"""
    return pa.array(values, pa.string())


def _columns(rows: Sequence[Any], *keys: str | int) -> list[list[Any]]:
    """The columns ``keys`` of rows that all carry them: names of mappings, or indexes of
    packed rows (one C loop a column)."""
    return [list(map(itemgetter(key), rows)) for key in keys]


# the parts of a priority's detail the repository determines: derived when read, never stored
DERIVED_DETAIL = ("base", "association", "delta")


def stored_detail(detail: Mapping[str, Any]) -> dict[str, Any]:
    """A node's priority detail as its row stores it: what the file and its edges determine
    (the components but freshness, the multipliers, the role)."""
    out = {k: v for k, v in detail.items() if k not in DERIVED_DETAIL}
    out["components"] = {b: c for b, c in detail["components"].items() if b != "freshness"}
    return out


def artifact_table(nodes: Sequence[Mapping[str, Any]], stored: Mapping[str, Any]) -> pa.Table:
    """``stored``: each path's stored terms (``weigh.Stored``)."""
    arts = [n for n in nodes if n["kind"] == "artifact"]
    tags = [n["tags"] for n in arts]
    detail = [stored_detail(n["priority_detail"]) for n in arts]
    own = [stored[n["path"]] for n in arts]
    return pa.table({
        "path": _text(_column(arts, "path")), "id": _text(_column(arts, "id")),
        "checksum": _text(_column(arts, "checksum")), "file_type": _text(_column(arts, "file_type")),
        "size_bytes": pa.array(_column(arts, "size_bytes"), pa.int64()),
        "created_at": pa.array([_ts(n["created_at"]) for n in arts], pa.timestamp("us")),
        "modified_at": pa.array([_ts(n["modified_at"]) for n in arts], pa.timestamp("us")),
        "domain": _text([t.get("domain") for t in tags]), "component": _text([t.get("component") for t in tags]),
        "lifecycle": _text([t.get("lifecycle") for t in tags]),
        "classification": _text([t.get("classification") for t in tags]),
        "content_type": _text([t.get("content_type") for t in tags]),
        "format": _text([t.get("format") for t in tags]),
        "placeholder": pa.array([bool(t.get("placeholder")) for t in tags], pa.bool_()),
        "parse_status": _text(_column(arts, "parse_status")),
        "tags": _text([orjson.dumps(t, option=orjson.OPT_SORT_KEYS).decode() for t in tags]),
        "p_sum": pa.array([o.p_sum for o in own], pa.float64()),
        "p_mult": pa.array([o.p_mult for o in own], pa.float64()),
        "fresh_e": pa.array([o.fresh_e for o in own], pa.float64()),
        "m_role": pa.array([o.m_role for o in own], pa.float64()),
        "association": pa.array([o.assoc for o in own], pa.float64()),
        "degree": pa.array([o.degree for o in own], pa.int64()),
        "link_count": pa.array(_column(arts, "link_count"), pa.int64()),
        "backrefs": pa.array(_column(arts, "backrefs"), pa.int64()),
        "usage": pa.array(_column(arts, "usage"), pa.int64()),
        "line_count": pa.array(_column(arts, "line_count"), pa.int64()),
        "name": _text([n["path"].rsplit("/", 1)[-1] for n in arts]),
        "symbols": _text([orjson.dumps(n["symbols"]).decode() for n in arts]),
        "headings": _text([orjson.dumps(n["headings"]).decode() for n in arts]),
        "detail": _text([orjson.dumps(d, option=orjson.OPT_SORT_KEYS).decode() for d in detail]),
        "history": _text([n.get("history", "") for n in arts]),
    })


# the artifact columns the database keeps in ArtifactText, a row appended when one moves
# (schema/001_nodes.cypher says why): the artifact table's other columns stay in Artifact
TEXT_COLUMNS = ("id", "checksum", "tags", "symbols", "headings", "detail", "history")


def split_artifacts(tables: Mapping[str, Any]) -> dict[str, Any]:
    """``tables`` with its ``artifacts`` table (``artifact_table``'s columns) split as a
    full build loads it: ``artifacts`` (Artifact's columns, ``text_n`` 0) and
    ``artifact_text`` (the key, the path, ``n`` 0 and ``TEXT_COLUMNS``). A table already
    split, or none, is left as it is."""
    out = dict(tables)
    arts = out.get("artifacts")
    if arts is None or "artifact_text" in out:
        return out
    names = arts.column_names
    paths = arts.column("path").to_pylist()
    zeros = pa.array([0] * len(paths), pa.int64())
    out["artifacts"] = arts.select([c for c in names if c not in TEXT_COLUMNS]).append_column("text_n", zeros)
    text = pa.table({"key": pa.array([text_key(p, 0) for p in paths], pa.string()), "path": arts.column("path"),
                     "n": zeros})
    for c in TEXT_COLUMNS:
        if c in names:
            text = text.append_column(c, arts.column(c))
    out["artifact_text"] = text
    return out


def history_table(nodes: Sequence[Mapping[str, Any]]) -> pa.Table:
    """The History rows: each artifact's past commit subjects, where it has any (as a
    full build loads them: ``fts_rows``)."""
    arts = [n for n in nodes if n["kind"] == "artifact" and n.get("history")]
    return fts_rows(pa.table({"path": pa.array([n["path"] for n in arts], pa.string()),
                              "text": pa.array([n["history"] for n in arts], pa.string())}), 0)


def fts_rows(table: pa.Table, n: int) -> pa.Table:
    """Full-text rows (``path``, ``text``) as a full-text table holds them: keyed
    ``path + '|' + n``, numbered ``n``, live (schema/001_nodes.cypher)."""
    paths = table.column("path").to_pylist()
    return pa.table({"key": pa.array([f"{p}|{n}" for p in paths], pa.string()),
                     "path": table.column("path"), "n": pa.array([n] * len(paths), pa.int64()),
                     "live": pa.array([True] * len(paths), pa.bool_()), "text": table.column("text")})


def hub_table(nodes: Sequence[Mapping[str, Any]], stored: Mapping[str, Any]) -> pa.Table:
    hubs = [n for n in nodes if n["kind"] == "hub"]
    return pa.table({
        "id": _text(_column(hubs, "id")), "domain": _text([h["tags"]["domain"] for h in hubs]),
        "association": pa.array([stored[h["id"]].assoc for h in hubs], pa.float64()),
        "degree": pa.array([stored[h["id"]].degree for h in hubs], pa.int64()),
    })


def link_tables(edges: Sequence[Mapping[str, Any]], endpoints: Sequence[tuple[str, str]],
                rank_raw: Sequence[float]) -> tuple[pa.Table, pa.Table]:
    """The Link and BelongsTo tables; ``endpoints`` gives each edge row's (source path,
    target path or hub id) and ``rank_raw`` its raw rank R, in the same order as ``edges``."""
    rows = list(zip(edges, zip(endpoints, rank_raw, strict=True), strict=True))
    links = [(e, ends) for e, (ends, _) in rows if e["relation"] != "belongs_to"]
    belongs = [(e, ends) for e, (ends, _) in rows if e["relation"] == "belongs_to"]
    links_r = [r for e, (_, r) in rows if e["relation"] != "belongs_to"]
    belongs_r = [r for e, (_, r) in rows if e["relation"] == "belongs_to"]
    link_tbl = pa.table({
        "from": _text([ends[0] for _, ends in links]), "to": _text([ends[1] for _, ends in links]),
        "relation": _text([e["relation"] for e, _ in links]),
        "confidence": pa.array([e["metadata"]["confidence"] for e, _ in links], pa.float64()),
        "relation_weight": pa.array([e["relation_weight"] for e, _ in links], pa.float64()),
        "rank_raw": pa.array(links_r, pa.float64()),
        "source_fragment": _text([e["source_fragment"] for e, _ in links]),
        "target_fragment": _text([e["target_fragment"] for e, _ in links]),
        "producer": _text([e["metadata"]["producer"] for e, _ in links]),
        "provider": _text([e["metadata"]["provider"] for e, _ in links]),
    })
    belongs_tbl = pa.table({
        "from": _text([ends[0] for _, ends in belongs]), "to": _text([ends[1] for _, ends in belongs]),
        "confidence": pa.array([e["metadata"]["confidence"] for e, _ in belongs], pa.float64()),
        "relation_weight": pa.array([e["relation_weight"] for e, _ in belongs], pa.float64()),
        "rank_raw": pa.array(belongs_r, pa.float64()),
    })
    return link_tbl, belongs_tbl


def symbol_tables(nodes: list[dict[str, Any]], edges: list[dict[str, Any]]) -> dict[str, pa.Table]:
    """The Symbol, SymbolName, Defines, Contains, Calls, Inherits and References tables of
    the symbol graph's rows as objects (``unpack_symbols`` of an export)."""
    packed = pack_symbols(nodes, edges)
    return packed_symbol_tables(packed["nodes"], packed["edges"])


_N = {k: i for i, k in enumerate(SYMBOL_NODE_FIELDS)}
_E = {k: i for i, k in enumerate(SYMBOL_EDGE_FIELDS)}


def name_keys(name: str, qualified: str, kind: str) -> tuple[str, ...]:
    """The SymbolName keys a symbol is found by: its qualified name and (but a module's) its
    name, lower-cased — ``symbol_names``' rule, for one symbol."""
    q = qualified.lower()
    if kind == "module":
        return (q,)
    n = name.lower()
    return (q,) if n == q else (q, n)


def symbol_names(nodes: Sequence[Sequence[Any]]) -> dict[str, list[str]]:
    """SymbolName's rows of packed symbol rows: key → the ids found by it, in row order.
    A symbol is found by its name and its qualified name, lower-cased (a module by its
    qualified name only)."""
    i_id, i_name, i_qualified, i_kind = _N["id"], _N["name"], _N["qualified"], _N["kind"]
    names: dict[str, list[str]] = {}
    for n in nodes:  # (no set a row: 219k symbols at 20k files)
        sid, qualified = n[i_id], n[i_qualified].lower()
        held = names.get(qualified)
        if held is None:
            names[qualified] = [sid]
        else:
            held.append(sid)
        if n[i_kind] != "module":
            name = n[i_name].lower()
            if name != qualified:
                held = names.get(name)
                if held is None:
                    names[name] = [sid]
                else:
                    held.append(sid)
    return names


def lines_text(lines: Sequence[int]) -> str:
    """A call edge's lines as ``Calls.lines`` holds them: the text of the list, which
    readers decode in Python (``orjson.loads``: the engine's ``CAST(e.lines AS INT64[])``
    gave ``[]`` on real tables).

    >>> lines_text([6, 12]), lines_text([])
    ('[6,12]', '[]')
    """
    return "[" + ",".join(str(int(n)) for n in lines) + "]"


def packed_symbol_tables(nodes: Sequence[Sequence[Any]], edges: Sequence[Sequence[Any]]) -> dict[str, pa.Table]:
    """The Symbol, SymbolName, Defines, Contains, Calls, Inherits and References tables of
    the symbol graph's rows packed as the export holds them (``pack_symbols``: one list a
    row, in ``SYMBOL_NODE_FIELDS`` / ``SYMBOL_EDGE_FIELDS`` order)."""
    names = symbol_names(nodes)
    by: dict[str, list[Sequence[Any]]] = {r: [] for r in ("calls", "contains", "inherits", "references")}
    i_relation = _E["relation"]
    for e in edges:
        by["inherits" if e[i_relation] == "implements" else e[i_relation]].append(e)
    ints, floats, strings = pa.int64(), pa.float64(), pa.string()
    (ids, short, qualified, kind, language, path, start, end, signature, doc, exported) = _columns(
        nodes, *(_N[k] for k in ("id", "name", "qualified", "kind", "language", "path", "start", "end", "signature",
                                 "doc", "exported")))
    symbols = pa.table({
        "id": pa.array(ids, strings), "name": pa.array(short, strings), "qualified": pa.array(qualified, strings),
        "kind": pa.array(kind, strings), "language": pa.array(language, strings), "path": pa.array(path, strings),
        "start_line": pa.array(start, ints), "end_line": pa.array(end, ints),
        "signature": pa.array(signature, strings), "doc": pa.array(doc, strings),
        "exported": pa.array(exported, pa.bool_())})

    def rel(rows: list[Sequence[Any]], extra: tuple[tuple[str, str, pa.DataType], ...] = (),
            line: bool = False, lines: bool = False) -> pa.Table:
        cols = _columns(rows, _E["source"], _E["target"], *(_E[key] for key, _, _ in extra))
        if lines:  # a call's lines as the text of their list (Calls.lines is a STRING: schema/002_rels.cypher)
            cols[-1] = [lines_text(v) for v in cols[-1]]
        table = {"from": pa.array(cols[0], strings), "to": pa.array(cols[1], strings),
                 **{name: pa.array(col, kind) for (_, name, kind), col in zip(extra, cols[2:], strict=True)}}
        if line:  # an inherits or references edge has one line: its first (none for line 0)
            i_lines = _E["lines"]
            table["line"] = pa.array([e[i_lines][0] if e[i_lines] else None for e in rows], ints)
        return pa.table(table)

    scored = (("confidence", "confidence", floats), ("resolution", "resolution", strings),
              ("candidates", "candidates", ints))
    return {
        "symbols": symbols,
        "symbol_names": pa.table({"key": _text(list(names)), "ids": pa.array(list(names.values()), pa.list_(pa.string()))}),
        "defines": pa.table({"from": symbols.column("path"), "to": symbols.column("id")}),
        "contains": rel(by["contains"]),
        "calls": rel(by["calls"], (*scored, ("lines", "lines", strings)), lines=True),
        "inherits": rel(by["inherits"], (("relation", "relation", strings), *scored), line=True),
        "references": rel(by["references"], scored, line=True),
    }
