"""``oracl repair``: rebuild the latest bundle from the export, when LATEST or the bundle it
names is missing or damaged (the readers' fail-open path: ``Snapshot.open(…,
repair=repair_latest)`` calls it, from the main thread only).

The export's index is checked against its ``.sha256`` first and, when a key is configured,
against its signature (a repair never trusts an export it cannot verify), and each part
against its digest; without a key the repair says the export was unsigned. The graph
tables come from the export, the stored terms exactly as the parts keep them; the full-text rows are re-derived
from the files on disk whose checksum still matches the export (the others keep their
path, symbol names and headings only), read through the ``Workspace`` like any reader's.
Serialised with builds by the vault's build lock.

>>> rebuild_bundle(Path("repo"))                                   # doctest: +SKIP
('20261201T001500000000Z-01234-rebuilt', 'the signed export (ed25519, valid)')
"""

from __future__ import annotations

import hashlib
import threading
from datetime import UTC, datetime
from pathlib import Path

from oracl.bundle import provenance, tables
from oracl.bundle.verify import check_export, export_doc
from oracl.bundle.writer import BundleWriter
from oracl.core.errors import (
    BuildLockedError,
    NoBuildError,
    OraclError,
    UnsafePathError,
    VaultError,
)
from oracl.core.export import unpack_symbols
from oracl.core.parts import decode_index, store_of, stored_rows
from oracl.core.parts import stored_terms as parts_terms
from oracl.core.seal import read_sealed
from oracl.core.secrets import is_secret_file, redact_text, suffix_of
from oracl.core.sign import VerifyKeys
from oracl.core.tokens import fts_document
from oracl.core.vault import EXPORT_INDEX, Vault, new_build_id
from oracl.core.workspace import Workspace

REPAIRABLE = ("ok", "syntax_error", "malformed")  # statuses whose body a build indexes


def repair_latest(root: Path, problem: str) -> tuple[str, str]:
    """Rebuild the bundle from the verified export (main thread only, under the vault's
    build lock): the ``Repair`` a reader may be opened with. Returns the new build id and what the export was checked with."""
    vault = Vault(root)
    if not vault.export_index.is_file():
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
        if not keys.configured and read_sealed(vault.dir / (EXPORT_INDEX + ".sha256"),
                                               provenance.EXPORT_DIGEST_KIND) is None:
            raise NoBuildError(f"the export in {vault.dir} was not written by your oracl (it came with the tree, "
                               f"or the vault key changed), so nothing is rebuilt from it: run `oracl build {root}`")
        source = ("the signed export (" + checked[-1].split(": ", 1)[1] + ")" if keys.configured
                  else "the unsigned export (no key configured: its digest matches and your vault key sealed it)")
        doc, _ = export_doc(vault, data)
        header, nodes, edges = doc["schema"], doc["nodes"], doc["edges"]
        store, index = store_of(vault.dir), decode_index(data)
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
            # the stored terms exactly as the build kept them in the parts (in the export's order)
            stored = parts_terms(stored_rows(store, index, "nodes"), lambda n: n.get("path", n["id"]))
            rank_raw = [float(e["~"]) for e in stored_rows(store, index, "edges")]
            links, belongs = tables.link_tables(edges, endpoints, rank_raw)
            writer.write_content(spool.table(), fts=True, pool=cfg.build_buffer_pool(0), threads=cfg.db_threads)
            spool.path.unlink()
            sym_nodes, sym_edges = unpack_symbols(doc)
            writer.load_graph({"artifacts": tables.artifact_table(nodes, stored),
                               "hubs": tables.hub_table(nodes, stored),
                               "history": tables.history_table(nodes),
                               "links": links, "belongs": belongs, **tables.symbol_tables(sym_nodes, sym_edges)})
            writer.link_export_from(vault.dir)
            writer.add_header(header)
            writer.publish(hashlib.sha256(data).hexdigest(), header)
            provenance.prune_parts(vault)
        except BaseException:
            writer.abort()
            raise
        return writer.build_id, source

