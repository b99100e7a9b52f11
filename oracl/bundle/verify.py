"""``oracl verify``: checks the latest build and fails closed.

``verify`` checks, in order: LATEST names a bundle whose manifest matches its files; the
manifest's signature (``manifest.json.sig``: it binds the database, the facts, the stat
rows and the header readers read); the export's index matches its ``.sha256`` and is the
export LATEST names, and its own signature; every part it names matches its digest; what readers serve from the Kùzu bundle (header,
artifacts with their checksums, priorities, tags and symbols, hubs, every edge) equals
the export; and no later build than this one is recorded in the health history (a
replayed older build). Signatures are checked when there is one, when a key is
configured, or when one is required. Each failure is one sentence with its own
exit code (see ``oracl.core.errors``).
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from pathlib import Path
from typing import Any

import orjson

from oracl.bundle.provenance import SIDECARS, read_health
from oracl.core.derive import Terms, finish, with_terms
from oracl.core.errors import (
    BundleMismatchError,
    DigestError,
    LatestError,
    NoBuildError,
    VaultError,
)
from oracl.core.export import r9, rounded, unpack_symbols
from oracl.core.parts import assemble_bytes, decode_index, digests, store_of
from oracl.core.sign import VerifyKeys, verify_signature
from oracl.core.vault import EXPORT_INDEX, HEADER_FILE, MANIFEST, MANIFEST_SIG, Vault, file_matches


def _latest_bundle(vault: Vault) -> tuple[dict[str, Any], Path, dict[str, Any]]:
    try:
        latest = vault.read_latest()
    except NoBuildError:
        raise
    except VaultError as exc:
        raise LatestError(str(exc)) from None
    try:
        bundle = vault.bundle(str(latest.get("bundle", latest["build_id"])))
    except VaultError as exc:
        raise LatestError(str(exc)) from None
    if not bundle.is_dir():
        raise LatestError(f"LATEST.json names the bundle {bundle.name}, which is missing")
    try:
        raw = (bundle / MANIFEST).read_bytes()
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
        if not isinstance(digest, str) or not file_matches(path, digest):
            raise LatestError(f"{name} in bundle {bundle.name} does not match its manifest")
    return latest, bundle, manifest


def _read_sidecar(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None


def check_export(folder: Path, keys: VerifyKeys, *, require_signature: bool) -> tuple[bytes, list[str]]:
    """Digest and signature of the export index in ``folder`` (a bundle, or the vault for
    its top-level copy); returns the index's bytes and what was checked (its parts are
    checked against their digests when ``export_doc`` reads them)."""
    try:
        data = (folder / EXPORT_INDEX).read_bytes()
    except FileNotFoundError:
        raise NoBuildError(f"no export in {folder}: run `oracl build` first") from None
    side = _read_sidecar(folder / (EXPORT_INDEX + ".sha256"))
    if side is None:
        raise DigestError(f"{EXPORT_INDEX}.sha256 is missing")
    digest = hashlib.sha256(data).hexdigest()
    if side.split()[0:1] != [digest]:
        raise DigestError(f"{EXPORT_INDEX} does not match its .sha256 digest")
    checked = [f"digest: sha256 {digest[:16]}… matches {EXPORT_INDEX}.sha256 (the export's root)"]
    sig = _read_sidecar(folder / (EXPORT_INDEX + ".sig"))
    checked.append(verify_signature(data, sig, keys, required=require_signature))
    return data, checked


def export_doc(vault: Vault, index: bytes) -> tuple[dict[str, Any], str]:
    """The export an index names, assembled from the vault's parts (each checked against
    its digest: a DigestError names the first that is not), parsed; and a line saying so."""
    idx = decode_index(index)
    store = store_of(vault.dir)
    data = assemble_bytes(store, idx)
    n = len(digests(idx))
    return orjson.loads(data), f"parts: {n} match their digests ({len(data):,} bytes of export)"


def same_export_files(a: Path, b: Path) -> bool:
    """The export's files in ``a`` and ``b`` are the same bytes (or both absent)."""
    for name in SIDECARS:
        pa, pb = a / name, b / name
        if pa.exists() != pb.exists():
            return False
        if pa.exists() and not (os.path.samefile(pa, pb) or pa.read_bytes() == pb.read_bytes()):
            return False
    return True


def _top_level_copy(vault: Vault, bundle: Path, keys: VerifyKeys, require_signature: bool) -> str:
    """The vault's top-level export is LATEST's, or — a publish killed after LATEST
    flipped — file by file either LATEST's or an earlier kept bundle's; anything else is a
    changed copy."""
    if same_export_files(vault.dir, bundle):
        return f"top-level export: the same files as bundle {bundle.name}"
    earlier = [b for b in vault.mirror.iterdir() if b.is_dir() and b.name < bundle.name and
               (b / MANIFEST).is_file()] if vault.mirror.is_dir() else []
    for name in SIDECARS:
        top = vault.dir / name
        if not top.exists():
            continue
        data = top.read_bytes()
        if not any((b / name).is_file() and (b / name).read_bytes() == data for b in [bundle, *earlier]):
            check_export(vault.dir, keys, require_signature=require_signature)  # the specific failure first
            raise LatestError(f"the vault's top-level {name} is neither LATEST's nor an earlier build's")
    return (f"top-level export: still an earlier build's (publishing bundle {bundle.name} was interrupted); "
            "the next build puts LATEST's in place")


def verify(root: Path, *, public_key_file: Path | None = None, require_signature: bool = False) -> list[str]:
    """Verify the latest build of ``root``; returns one line per check that passed."""
    vault = Vault(Path(root))
    keys = VerifyKeys.from_env(public_key_file)
    latest, bundle, manifest = _latest_bundle(vault)
    checked = [f"latest: {latest['build_id']}; manifest matches its {len(manifest['files'])} files"]
    raw_manifest = (bundle / MANIFEST).read_bytes()
    checked.append(verify_signature(raw_manifest, _read_sidecar(bundle / MANIFEST_SIG), keys,
                                    required=require_signature, what="the bundle's manifest").replace(
                                        "signature:", "bundle signature:", 1))
    own = bundle if (bundle / EXPORT_INDEX).is_file() else vault.dir  # a bundle holds its export index
    data, more = check_export(own, keys, require_signature=require_signature)
    checked += more
    digest = hashlib.sha256(data).hexdigest()
    if manifest.get("export_root") != digest or latest.get("export_root") != digest:
        raise LatestError("the vault's export is not the export of the bundle LATEST names")
    if own == bundle:
        checked.append(_top_level_copy(vault, bundle, keys, require_signature))
    doc, parts_line = export_doc(vault, data)
    checked.append(parts_line)
    checked.append(_served_matches(bundle, doc))
    checked.append(_not_replayed(vault, str(latest["build_id"])))
    return checked


def _served_matches(bundle: Path, doc: dict[str, Any]) -> str:
    """What readers serve – the bundle's header, every artifact's path, checksum, priority,
    tags, symbols and headings, every hub, every edge with its weights and fragments, every
    symbol of the symbol graph and every call edge – equals the export (which the signature
    covers)."""
    from oracl.bundle.database import directions_disagree
    from oracl.core.store import Store, close
    from oracl.core.vault import DB_FILE

    try:
        header = orjson.loads((bundle / HEADER_FILE).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        header = None
    if header is not None and rounded(header) != doc["schema"]:
        raise BundleMismatchError("the bundle's header.json disagrees with the export's header")
    nodes = doc["nodes"]
    arts = [n for n in nodes if n["kind"] == "artifact"]
    path_of = {n["id"]: n["path"] for n in arts}
    want_arts = {n["path"]: (n["id"], n["checksum"], n["priority"], _json(n["tags"]), _json(n["symbols"]),
                             _json(n["headings"]), n["parse_status"], n.get("history", "")) for n in arts}
    want_hubs = {n["id"]: (n["association"], n["delta"], n["link_density"]) for n in nodes if n["kind"] == "hub"}
    want_links: Counter[tuple[Any, ...]] = Counter()
    want_belongs: Counter[tuple[Any, ...]] = Counter()
    for e in doc["edges"]:
        src, dst = path_of.get(e["source"], e["source"]), path_of.get(e["target"], e["target"])
        if e["relation"] == "belongs_to":
            want_belongs[(src, dst, e["metadata"]["confidence"], e["relation_weight"], e["association_rank"])] += 1
        else:
            want_links[(src, dst, e["relation"], e["metadata"]["confidence"], e["relation_weight"],
                        e["association_rank"], e["source_fragment"], e["target_fragment"])] += 1
    try:  # the terms readers derive priorities and ranks with (the export's header, which the signature covers)
        terms = Terms.from_header(doc["schema"])
    except (KeyError, TypeError, ValueError):
        raise BundleMismatchError("the export's header has no aggregates to derive priorities from") from None

    def named(name: str) -> list[dict[str, Any]]:
        return finish(store.named(name, with_terms(name, terms, None)), terms)

    def served(row: dict[str, Any], *derived: str) -> tuple[Any, ...]:  # as the export rounds them
        return tuple(r9(v) if k in derived else v for k, v in row.items())

    store = Store.open(bundle / DB_FILE, read_only=True)
    try:
        got_arts = {r["path"]: (r["id"], r["checksum"], r9(r["priority"]), _json(orjson.loads(r["tags"])),
                                r["symbols"], r["headings"], r["parse_status"], r["history"] or "")
                    for r in named("verify_artifacts")}
        got_hubs = {r["id"]: (r9(r["a"]), r9(r["d"]), r9(r["l"])) for r in named("verify_hubs")}
        got_links = Counter(served(r, "rank") for r in named("verify_links"))
        got_belongs = Counter(served(r, "rank") for r in named("verify_belongs"))
        got_symbols = {r["id"]: (r["path"], r["a"], r["b"], r["kind"]) for r in store.named("verify_symbols")}
        got_calls = Counter((r["source"], r["target"], r["confidence"], tuple(orjson.loads(r["lines"] or "[]")))
                            for r in store.named("verify_symbol_calls"))
        # (each relationship table read both ways: the engine can drop one direction's copy)
        split = directions_disagree(store, expected={"Calls": sum(got_calls.values())})
    finally:
        close(bundle / DB_FILE)
    if split:
        raise BundleMismatchError(f"the bundle's relationship tables disagree between their directions: {split}")
    sym_nodes, sym_edges = unpack_symbols(doc)
    want_symbols = {n["id"]: (n["path"], n["start"], n["end"], n["kind"]) for n in sym_nodes}
    want_calls = Counter((e["source"], e["target"], e["confidence"], tuple(e["lines"]))
                         for e in sym_edges if e["relation"] == "calls")
    for what, want, got in (("artifacts", want_arts, got_arts), ("hubs", want_hubs, got_hubs),
                            ("symbols", want_symbols, got_symbols)):
        if len(want) != len(got):
            raise BundleMismatchError(f"the bundle holds {len(got)} {what}, the export {len(want)}")
        bad = sorted(k for k in want if got.get(k) != want[k])
        if bad:
            raise BundleMismatchError(f"{len(bad)} of the bundle's {what} disagree with the export "
                                      f"(first: {bad[0][:120]})")
    for what, want_c, got_c in (("links", want_links, got_links), ("hub memberships", want_belongs, got_belongs),
                                ("call edges", want_calls, got_calls)):
        if want_c != got_c:
            extra = sum((got_c - want_c).values())
            missing = sum((want_c - got_c).values())
            raise BundleMismatchError(f"the bundle's {what} disagree with the export ({extra} not in it, "
                                      f"{missing} missing)")
    return (f"served: {len(got_arts)} artifacts, {len(got_hubs)} hubs, "
            f"{sum(got_links.values()) + sum(got_belongs.values())} edges, {len(got_symbols)} symbols and "
            f"{sum(got_calls.values())} call edges match the export")


def _json(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


TIMESTAMP_CHARS = len("20261201T001500000000Z")


def _not_replayed(vault: Vault, build_id: str) -> str:
    """An older build put back in place of a newer one (a replay: its signature is valid)
    is caught when the health history records a later build."""
    stamp = build_id[:TIMESTAMP_CHARS]  # build ids start with their UTC time, so they sort by it
    later = sorted(str(r.get("build_id")) for r in read_health(vault)
                   if str(r.get("build_id", ""))[:TIMESTAMP_CHARS] > stamp)
    if later:
        raise LatestError(f"LATEST names build {build_id}, but the health history records the later build "
                          f"{later[-1]}: an older build was put back (replayed?); run `oracl build`")
    return "history: no later build than this one is recorded"
