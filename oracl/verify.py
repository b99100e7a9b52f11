"""``oracl verify``: checks the latest build and fails closed.

``verify`` checks, in order: LATEST names a bundle whose manifest matches its files; the
export matches its ``.sha256`` and is the export LATEST names; the signature (when there
is one, when a key is configured, or when one is required); and the Kùzu bundle's counts
and per-node checksums against the export. Each failure is one sentence with its own
exit code (see ``oracl.errors``).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson

from oracl.errors import (
    BundleMismatchError,
    DigestError,
    LatestError,
    NoBuildError,
    VaultError,
)
from oracl.export import sha256_file
from oracl.sign import VerifyKeys, verify_signature
from oracl.vault import EXPORT, Vault


def _latest_bundle(vault: Vault) -> tuple[dict[str, Any], Path, dict[str, Any]]:
    try:
        latest = vault.read_latest()
    except NoBuildError:
        raise
    except VaultError as exc:
        raise LatestError(str(exc)) from None
    bundle = vault.bundle(str(latest.get("bundle", latest["build_id"])))
    if not bundle.is_dir():
        raise LatestError(f"LATEST.json names the bundle {bundle.name}, which is missing")
    try:
        raw = (bundle / "manifest.json").read_bytes()
        manifest = orjson.loads(raw)
        files = manifest["files"]
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError):
        raise LatestError(f"the manifest of bundle {bundle.name} is missing or unreadable") from None
    if latest.get("manifest_sha256") not in (None, hashlib.sha256(raw).hexdigest()):
        raise LatestError(f"the manifest of bundle {bundle.name} does not match the digest LATEST.json records")
    if manifest.get("build_id") != latest["build_id"]:
        raise LatestError(f"the manifest of bundle {bundle.name} names another build")
    for name, digest in sorted(files.items()):
        path = bundle / name
        if not path.is_file():
            raise LatestError(f"bundle {bundle.name} lacks {name}, which its manifest lists")
        if sha256_file(path) != digest:
            raise LatestError(f"{name} in bundle {bundle.name} does not match its manifest")
    return latest, bundle, manifest


def _read_sidecar(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None


def check_export(vault: Vault, keys: VerifyKeys, *, require_signature: bool) -> tuple[bytes, list[str]]:
    """Digest and signature of the vault's export; returns its bytes and what was checked."""
    try:
        data = vault.export.read_bytes()
    except FileNotFoundError:
        raise NoBuildError(f"no export in {vault.dir}: run `oracl build {vault.root}` first") from None
    side = _read_sidecar(vault.dir / (EXPORT + ".sha256"))
    if side is None:
        raise DigestError(f"{EXPORT}.sha256 is missing")
    digest = hashlib.sha256(data).hexdigest()
    if side.split()[0:1] != [digest]:
        raise DigestError(f"{EXPORT} does not match its .sha256 digest")
    checked = [f"digest: sha256 {digest[:16]}… matches {EXPORT}.sha256"]
    sig = _read_sidecar(vault.dir / (EXPORT + ".sig"))
    checked.append(verify_signature(data, sig, keys, required=require_signature))
    return data, checked


def verify(root: Path, *, public_key_file: Path | None = None, require_signature: bool = False) -> list[str]:
    """Verify the latest build of ``root``; returns one line per check that passed."""
    from oracl.store import DB_FILE, Store, close

    vault = Vault(Path(root))
    keys = VerifyKeys.from_env(public_key_file)
    latest, bundle, manifest = _latest_bundle(vault)
    checked = [f"latest: {latest['build_id']}; manifest matches its {len(manifest['files'])} files"]
    data, more = check_export(vault, keys, require_signature=require_signature)
    checked += more
    digest = hashlib.sha256(data).hexdigest()
    if manifest.get("export_sha256") != digest or latest.get("export_sha256") != digest:
        raise LatestError("the vault's export is not the export of the bundle LATEST names")
    doc = orjson.loads(data)
    nodes = doc["nodes"]
    arts = {n["id"]: n["checksum"] for n in nodes if n["kind"] == "artifact"}
    hubs = sum(1 for n in nodes if n["kind"] == "hub")
    n_belongs = sum(1 for e in doc["edges"] if e["relation"] == "belongs_to")
    n_links = len(doc["edges"]) - n_belongs
    store = Store.open(bundle / DB_FILE, read_only=True)
    try:
        counts = {
            "artifacts": store.rows("MATCH (a:Artifact) RETURN count(a) AS n")[0]["n"],
            "hubs": store.rows("MATCH (h:Hub) RETURN count(h) AS n")[0]["n"],
            "links": store.rows("MATCH ()-[l:Link]->() RETURN count(l) AS n")[0]["n"],
            "belongs": store.rows("MATCH ()-[b:BelongsTo]->() RETURN count(b) AS n")[0]["n"],
        }
        expected = {"artifacts": len(arts), "hubs": hubs, "links": n_links, "belongs": n_belongs}
        for key, want in expected.items():
            if counts[key] != want:
                raise BundleMismatchError(f"the bundle holds {counts[key]} {key}, the export {want}")
        rows = store.rows("MATCH (a:Artifact) RETURN a.id AS id, a.checksum AS checksum")
    finally:
        close(bundle / DB_FILE)
    bad = [r["id"] for r in rows if arts.get(r["id"]) != r["checksum"]]
    if bad:
        raise BundleMismatchError(f"{len(bad)} artifact checksum(s) in the bundle disagree with the export")
    checked.append(f"bundle: {counts['artifacts']} artifacts, {counts['hubs']} hubs, "
                   f"{counts['links'] + counts['belongs']} edges and every artifact checksum match the export")
    return checked
