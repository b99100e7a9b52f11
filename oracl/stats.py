"""``oracl stats``: the latest build's counts, read from its Kùzu bundle (opened read-only)
and its export header."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from oracl.errors import NoBuildError, VaultError
from oracl.vault import Vault


def open_latest(root: Path, notices: list[str] | None = None):  # type: ignore[no-untyped-def]
    """(Store opened read-only on the bundle LATEST names, the LATEST record).

    Reads fail open: when LATEST or its bundle is missing or unreadable and a verified
    export exists, the bundle is rebuilt from the export (a line goes to ``notices``);
    without an export the user is told to run ``oracl build``."""
    from oracl import provenance
    from oracl.store import DB_FILE, Store, close
    from oracl.vault import check_root

    check_root(Path(root))
    vault = Vault(Path(root))
    problem = ""
    try:
        latest = vault.read_latest()
        bundle = vault.bundle(str(latest.get("bundle", latest["build_id"])))
        if not (bundle / DB_FILE).is_file():
            problem = f"the bundle {bundle.name} named by LATEST.json is missing"
    except NoBuildError:
        if not vault.export.is_file():
            raise
        problem = "LATEST.json is missing"
    except VaultError as exc:
        problem = str(exc).split(";")[0]
    if problem:
        from oracl.verify import rebuild_bundle

        if not vault.export.is_file():
            raise VaultError(f"{problem} and there is no export to rebuild it from; run `oracl build {root}`")
        build_id = rebuild_bundle(Path(root))
        if notices is not None:
            notices.append(f"{problem}; rebuilt bundle {build_id} from the verified export")
        latest = vault.read_latest()
        bundle = vault.bundle(str(latest["bundle"]))
    provenance.hold_bundle(bundle)
    store = Store.open(bundle / DB_FILE, read_only=True)
    for other in [p for p in vault.mirror.iterdir() if p != bundle] if vault.mirror.is_dir() else []:
        close(other / DB_FILE)
        provenance.release_bundle(other)
    return store, latest


def read_header(root: Path, bundle: str | None = None) -> dict[str, Any]:
    """The schema header of an export: the given bundle's (so a reader never mixes two
    builds), else the vault's."""
    vault = Vault(Path(root))
    path = vault.bundle(bundle) / vault.export.name if bundle else vault.export
    if bundle and not path.is_file():
        path = vault.export
    return vault.read_json(path)["schema"]


def stats(root: Path) -> dict[str, Any]:
    """Counts of the latest build: artifacts, hubs (members, mean priority, top member),
    edges by relation, μ and σ."""
    notices: list[str] = []
    store, latest = open_latest(Path(root), notices)
    header = read_header(Path(root), str(latest.get("bundle", latest["build_id"])))
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
        "notices": notices,
    }
