"""ParsedQuery → (Cypher text, parameters). Pure: no database here.

User text only ever travels in parameters. The Cypher text is a named template from
``cypher/`` plus predicates chosen from ``PREDICATES``, a fixed table of static snippets;
nothing the user typed is ever spliced into the statement.

>>> c = compile_query(parse("auth domain:core -legacy"), limit=10)
>>> c.template, sorted(c.params)
('search_fts', ['domains', 'exclude', 'k', 'q'])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from oracl.core.resources import query
from oracl.read.query.parse import ParsedQuery, exclusion_pattern

# the only Cypher fragments a query can add; each binds exactly one parameter
PREDICATES: dict[str, str] = {
    "domains": "a.domain IN $domains",
    "content_types": "a.content_type IN $content_types",
    "formats": "a.format IN $formats",
    "lifecycles": "a.lifecycle IN $lifecycles",
    "since": "a.modified_at >= $since",
    "exclude": "NOT regexp_matches(lower(a.path), $exclude)",
}
NODE_EXCLUDE = "NOT regexp_matches(lower(hit_path), $exclude)"  # on the full-text hits, before the join
FAST_MATCH: dict[str, str] = {
    "path": "a.path = $value",
    "filename": "a.name = $value",
    "file": "(a.path = $value OR a.name = $value)",
    "prefix": "starts_with(a.path, $value)",
}
CANDIDATES_MIN = 200


@dataclass(frozen=True, slots=True)
class CompiledQuery:
    template: str
    cypher: str
    params: dict[str, Any]


def _filters(pq: ParsedQuery, skip: tuple[str, ...] = ()) -> tuple[str, dict[str, Any]]:
    f = pq.filters
    # beside event:, since: dates the events (run.event_filter), not the files
    values: dict[str, Any] = {"domains": list(f.domains), "content_types": list(f.content_types),
                              "formats": list(f.formats), "lifecycles": list(f.lifecycles),
                              "since": None if f.events else f.since, "exclude": exclusion_pattern(pq.exclusions)}
    used = {k: v for k, v in values.items() if v}
    return "".join(f" AND {PREDICATES[k]}" for k in PREDICATES if k in used and k not in skip), used


def compile_query(pq: ParsedQuery, limit: int = 10) -> CompiledQuery:
    """The general path: full-text candidates (or the filtered wildcard) with filters."""
    if pq.wildcard:
        where, params = _filters(pq)
        params["limit"] = int(limit)
        return CompiledQuery("search_wildcard", query("search_wildcard").replace(" /*AND_FILTERS*/", where), params)
    where, params = _filters(pq, skip=("exclude",))
    node_where = f" AND {NODE_EXCLUDE}" if "exclude" in params else ""
    params["q"] = pq.fts_text
    params["k"] = max(CANDIDATES_MIN, 20 * int(limit))
    text = query("search_fts").replace(" /*NODE_FILTERS*/", node_where).replace(" /*AND_FILTERS*/", where)
    return CompiledQuery("search_fts", text, params)


def compile_fast(pq: ParsedQuery, limit: int = 10) -> CompiledQuery:
    """The fast path of a file:/filename:/path:/prefix: directive."""
    assert pq.fast is not None
    directive, value = pq.fast
    where, params = _filters(pq)
    params["value"] = value.lstrip("./") if directive != "filename" else value
    params["limit"] = int(limit)
    text = query("search_fast").replace("/*MATCH*/", FAST_MATCH[directive]).replace(" /*AND_FILTERS*/", where)
    return CompiledQuery("search_fast", text, params)
