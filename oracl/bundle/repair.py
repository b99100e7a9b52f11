"""``oracl repair``: rebuild the latest bundle from the export, when LATEST or the bundle it
names is missing or damaged (the readers' fail-open path: ``Snapshot.open(…,
repair=repair_latest)`` calls it, from the main thread only).

The export is checked against its ``.sha256`` first and, when a key is configured, against
its signature (a repair never trusts an export it cannot verify); without a key the repair
says the export was unsigned. The graph tables come from the export; the full-text rows are re-derived
from the files on disk whose checksum still matches the export (the others keep their
path, symbol names and headings only), read through the ``Workspace`` like any reader's.
Serialised with builds by the vault's build lock.

>>> rebuild_bundle(Path("repo"))                                   # doctest: +SKIP
('20261201T001500000000Z-01234-rebuilt', 'the signed export (ed25519, valid)')
"""

from __future__ import annotations

import hashlib
import threading
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from oracl.bundle import provenance, tables
from oracl.bundle.verify import check_export
from oracl.bundle.writer import BundleWriter
from oracl.core.config import NOT_STRUCTURAL
from oracl.core.derive import Stored, Terms, association, fresh_factor, own_sum
from oracl.core.errors import (
    BuildLockedError,
    NoBuildError,
    OraclError,
    UnsafePathError,
    VaultError,
)
from oracl.core.export import unpack_symbols
from oracl.core.seal import read_sealed
from oracl.core.secrets import is_secret_file, redact_text, suffix_of
from oracl.core.sign import VerifyKeys
from oracl.core.tokens import fts_document
from oracl.core.vault import EXPORT, Vault, new_build_id
from oracl.core.workspace import Workspace

REPAIRABLE = ("ok", "syntax_error", "malformed")  # statuses whose body a build indexes


def repair_latest(root: Path, problem: str) -> tuple[str, str]:
    """Rebuild the bundle from the verified export (main thread only, under the vault's
    build lock): the ``Repair`` a reader may be opened with. Returns the new build id and what the export was checked with."""
    vault = Vault(root)
    if not vault.export.is_file():
        raise VaultError(f"{problem} and there is no export to rebuild it from; run `oracl build {root}`")
    if threading.current_thread() is not threading.main_thread():
        raise VaultError(f"{problem}; run `oracl repair {root}`")
    try:
        return rebuild_bundle(root)
    except BuildLockedError:
        raise BuildLockedError(f"{problem}, and another oracl build is running on {vault.dir}: "
                               "run the command again when it has finished") from None
    except OraclError:
        raise


def stored_terms(header: dict[str, Any], nodes: list[dict[str, Any]], edges: list[dict[str, Any]],
                 endpoints: list[tuple[str, str]], association_cap: int) -> tuple[dict[str, Stored], list[float]]:
    """Each node's stored terms and each edge's raw rank, made again from the export (which
    holds the derived values, rounded): the association from the incident weights as the
    build took it (exact), p_sum, the multipliers and the role from the priority detail
    (exact), the degree from the edges (exact), the freshness factor from the modification
    time (to the microsecond the export keeps), and R as association_rank × the largest R
    (within a unit in the last place: what readers derive rounds to the export's value)."""
    incident: dict[str, list[float]] = defaultdict(list)
    degree: Counter[str] = Counter()
    for e, (src, dst) in zip(edges, endpoints, strict=True):
        degree[src] += 1
        degree[dst] += 1
        if e["relation"] not in NOT_STRUCTURAL:
            incident[src].append(e["relation_weight"])
            incident[dst].append(e["relation_weight"])
    out: dict[str, Stored] = {}
    for n in nodes:
        key = n["path"] if n["kind"] == "artifact" else n["id"]
        assoc = association(incident.get(key, []), association_cap)
        if n["kind"] != "artifact":
            out[key] = Stored(0.0, 0.0, 0.0, 0.0, assoc, degree[key])
            continue
        d = n["priority_detail"]
        mtime = datetime.fromisoformat(n["modified_at"].replace("Z", "+00:00"))
        ns = (mtime - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1) * 1000
        out[key] = Stored(own_sum(d["components"]), d["m_cls"] * d["m_sens"], fresh_factor(ns), d["m_role"],
                          assoc, degree[key])
    top = Terms.from_header(header).rank_top
    return out, [e["association_rank"] * top for e in edges]


def rebuild_bundle(root: Path) -> tuple[str, str]:
    """Rebuild a bundle from the export and flip LATEST to it; returns its id and what
    the export was checked with. When a key is configured the export's signature must
    verify (a missing or bad one refuses the repair); without a key the export is only
    checked against its ``.sha256``, and the answer says "unsigned" – anyone who can write
    the vault could have rewritten both."""
    from oracl.core.config import load_config

    vault = Vault(Path(root))
    keys = VerifyKeys.from_env()
    with provenance.build_lock(vault):
        provenance.clean_stale(vault)  # a killed build's leftovers: the next build of any kind
        data, checked = check_export(vault.dir, keys, require_signature=keys.configured)
        if not keys.configured and read_sealed(vault.dir / (EXPORT + ".sha256"), provenance.EXPORT_DIGEST_KIND) is None:
            raise NoBuildError(f"the export in {vault.dir} was not written by your oracl (it came with the tree, "
                               f"or the vault key changed), so nothing is rebuilt from it: run `oracl build {root}`")
        source = ("the signed export (" + checked[-1].split(": ", 1)[1] + ")" if keys.configured
                  else "the unsigned export (no key configured: its digest matches and your vault key sealed it)")
        doc = orjson.loads(data)
        header, nodes, edges = doc["schema"], doc["nodes"], doc["edges"]
        cfg = load_config(Path(root))
        writer = BundleWriter(vault, new_build_id(datetime.now(UTC)) + "-rebuilt")
        try:
            ws = Workspace(root)
            paths = {n["id"]: n["path"] for n in nodes if n["kind"] == "artifact"}
            spool = tables.ContentSpool(writer.staging / "content.arrow")
            for n in nodes:
                if n["kind"] != "artifact":
                    continue
                body = b""
                if n["parse_status"] in REPAIRABLE:
                    try:
                        raw = ws.read_head(n["path"], cfg.max_read_bytes + 1)
                        if hashlib.sha256(raw).hexdigest() == n["checksum"] and not is_secret_file(n["path"]):
                            body = redact_text(raw.decode("utf-8", "replace"), suffix_of(n["path"])).encode()
                    except (OSError, UnsafePathError):
                        pass
                spool.add(n["path"], fts_document(n["path"], (s[0] for s in n["symbols"]),
                                                  (h[0] for h in n["headings"]), body, cfg.fts_body_bytes,
                                                  cfg.fts_tf_cap))
            spool.close()
            endpoints = [(paths[e["source"]], paths.get(e["target"], e["target"])) for e in edges]
            stored, rank_raw = stored_terms(header, nodes, edges, endpoints, cfg.association_cap)
            links, belongs = tables.link_tables(edges, endpoints, rank_raw)
            writer.write_content(spool.table(), fts=True, pool=cfg.build_buffer_pool(spool.text_bytes),
                                 threads=cfg.db_threads)
            spool.path.unlink()
            sym_nodes, sym_edges = unpack_symbols(doc)
            writer.load_graph({"artifacts": tables.artifact_table(nodes, stored),
                               "hubs": tables.hub_table(nodes, stored),
                               "history": tables.history_table(nodes),
                               "links": links, "belongs": belongs, **tables.symbol_tables(sym_nodes, sym_edges)})
            writer.link_export_from(vault.dir)
            writer.add_header(header)
            writer.publish(hashlib.sha256(data).hexdigest(), header)
        except BaseException:
            writer.abort()
            raise
        return writer.build_id, source

