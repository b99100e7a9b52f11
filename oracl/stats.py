"""``oracl stats``: the latest build's counts, read from its Kùzu bundle (opened read-only)
and its export header."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from oracl.errors import VaultError
from oracl.vault import Vault


def open_latest(root: Path):  # type: ignore[no-untyped-def]
    """(Store opened read-only on the bundle LATEST names, the LATEST record)."""
    from oracl.builder import check_root
    from oracl.store import DB_FILE, Store

    check_root(Path(root))
    vault = Vault(Path(root))
    latest = vault.read_latest()
    db = vault.bundle(str(latest["bundle"])) / DB_FILE
    if not db.is_file():
        raise VaultError(f"the bundle {latest['bundle']} named by LATEST.json is missing; run `oracl build` again")
    return Store.open(db, read_only=True), latest


def read_header(root: Path) -> dict[str, Any]:
    """The schema header of the export (parsed fully: the export is one JSON document)."""
    vault = Vault(Path(root))
    return vault.read_json(vault.export)["schema"]


def stats(root: Path) -> dict[str, Any]:
    """Counts of the latest build: artifacts, hubs (members, mean priority, top member),
    edges by relation, μ and σ."""
    store, latest = open_latest(Path(root))
    header = read_header(Path(root))
    links = store.named("count_links_by_relation")
    belongs = store.named("count_belongs")[0]["n"]
    by_relation = {r["relation"]: r["n"] for r in links}
    by_relation["belongs_to"] = belongs
    return {
        "build_id": latest["build_id"],
        "generated_at": header["generated_at"],
        "root": header["root"],
        "source_commit": header.get("source_commit"),
        "artifacts": store.named("count_artifacts")[0]["n"],
        "hubs": store.named("hub_summary"),
        "edges_by_relation": dict(sorted(by_relation.items())),
        "edges": sum(by_relation.values()),
        "mu": header["mu"],
        "sigma": header["sigma"],
        "coverage": header["coverage"],
    }
