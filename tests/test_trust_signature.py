"""The signature covers what is served: a database edited under a re-sealed manifest fails
verify, a repair trusts an export only as far as its signature goes, a replayed older build
is caught by the health history, and a hostile LATEST cannot point outside the vault."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import orjson
import pytest

from oracl.bundle.provenance import flip_latest, write_manifest
from oracl.core.sign import keygen
from oracl.core.vault import Vault
from tests.conftest import SAMPLE, run_cli, write_tree


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORACL_") or k == "ORACL_HOME"}
    return {**env, **extra}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "repo", SAMPLE)


def _build(repo: Path, env: dict[str, str]) -> None:
    r = run_cli("build", str(repo), "-q", "--workers", "1", env=env)
    assert r.returncode == 0, r.stderr


def _tamper_symbol(repo: Path) -> None:
    """What an attacker with write access does: edit a symbol in graph.kuzu, then re-seal
    the manifest and LATEST so every digest matches again."""
    from oracl.core.store import Store, close

    vault = Vault(repo)
    latest = vault.read_latest()
    bundle = vault.bundle(latest["bundle"])
    store = Store.open(bundle / "graph.kuzu", read_only=False, buffer_pool_bytes=64 << 20)
    store.execute("MATCH (a:ArtifactText {path: 'pkg/auth.py'}) SET a.symbols = $s", {"s": '[["evil", "function", 5, 7]]'})
    store.execute("CHECKPOINT")
    close(bundle / "graph.kuzu")
    manifest = orjson.loads((bundle / "manifest.json").read_bytes())
    digest = write_manifest(bundle, manifest["build_id"], manifest["export_root"], manifest["counts"])
    flip_latest(vault, latest["build_id"], latest["export_root"], latest["generated_at"], digest)


def test_a_signed_bundle_edited_under_a_resealed_manifest_fails(repo: Path, tmp_path: Path) -> None:
    priv, pub = keygen(tmp_path / "keys")
    _build(repo, _env(ORACL_ED25519_PRIVATE_KEY=str(priv)))
    ok = run_cli("verify", str(repo), "--require-signature", "--public-key", str(pub), env=_env())
    assert ok.returncode == 0, ok.stderr
    _tamper_symbol(repo)
    shown = orjson.loads(run_cli("show", "pkg/auth.py", "-r", str(repo), "--json", env=_env()).stdout)
    assert shown["artifact"]["symbols"][0][0] == "evil"  # what a reader would serve …
    r = run_cli("verify", str(repo), "--require-signature", "--public-key", str(pub), env=_env())
    assert (r.returncode, r.stderr.strip()) == (12, "Error: the Ed25519 signature does not match the bundle's manifest")


def test_an_unsigned_bundle_edited_fails_the_comparison_with_the_export(repo: Path) -> None:
    _build(repo, _env())
    _tamper_symbol(repo)
    r = run_cli("verify", str(repo), env=_env())
    assert (r.returncode, r.stderr.strip()) == (
        14, "Error: 1 of the bundle's artifacts disagree with the export (first: pkg/auth.py)")


def _forge_export(repo: Path) -> None:
    """Edit the export (a forged part in the store, the index pointing at it) and
    recompute the index's .sha256; drop LATEST so a reader repairs."""
    from oracl.core.parts import store_of

    vault = Vault(repo)
    store = store_of(vault.dir)
    doc = orjson.loads(vault.export_index.read_bytes())
    for part in doc["sections"]["nodes"]:
        rows = orjson.loads(b"[" + store.get(part[0]) + b"]")
        if any(n.get("path") == "pkg/auth.py" for n in rows):
            for n in rows:
                if n.get("path") == "pkg/auth.py":
                    n["symbols"] = [["forged", "function", 5, 7]]
            forged = orjson.dumps(rows, option=orjson.OPT_SORT_KEYS)[1:-1]
            part[:] = [store.put(forged), len(forged)]
    data = orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)
    vault.export_index.unlink()  # a hard link to the bundle's copy: write a new file
    vault.export_index.write_bytes(data)
    side = vault.dir / "export.idx.sha256"
    side.unlink()
    side.write_text(f"{hashlib.sha256(data).hexdigest()}  export.idx\n")
    vault.latest.unlink()


def test_a_repair_trusts_an_export_only_as_far_as_its_signature(repo: Path, tmp_path: Path) -> None:
    priv, pub = keygen(tmp_path / "keys")
    _build(repo, _env())                        # unsigned
    _forge_export(repo)
    keyed = run_cli("query", "sign", "-r", str(repo), env=_env(ORACL_ED25519_PUBLIC_KEY=str(pub)))
    assert (keyed.returncode, keyed.stderr.strip()) == (
        13, "Error: the export has no signature (.sig) but a key is configured")
    assert not Vault(repo).latest.exists()
    plain = run_cli("repair", str(repo), env=_env())  # unsigned, but its digest is no longer the one you sealed
    assert (plain.returncode, plain.stderr.strip()) == (
        4, f"Error: the export in {repo / '.oracl'} was not written by your oracl (it came with the tree, or the "
           f"vault key changed), so nothing is rebuilt from it: run `oracl build {repo}`")
    # a signed build whose export is forged: the repair refuses, LATEST stays missing
    _build(repo, _env(ORACL_ED25519_PRIVATE_KEY=str(priv)))
    _forge_export(repo)
    r = run_cli("repair", str(repo), env=_env(ORACL_ED25519_PUBLIC_KEY=str(pub)))
    assert (r.returncode, r.stderr.strip()) == (12, "Error: the Ed25519 signature does not match the export")
    assert not Vault(repo).latest.exists()


def test_a_replayed_older_build_is_caught_by_the_health_history(repo: Path, tmp_path: Path) -> None:
    priv, pub = keygen(tmp_path / "keys")
    env = _env(ORACL_ED25519_PRIVATE_KEY=str(priv))
    _build(repo, env)
    vault = Vault(repo)
    old_latest = vault.latest.read_bytes()
    old_id = orjson.loads(old_latest)["build_id"]
    old_export = {n: (vault.dir / n).read_bytes() for n in ("export.idx",
                                                            "export.idx.sha256",
                                                            "export.idx.sig")}
    (repo / "pkg" / "new.py").write_text("X = 1\n")
    _build(repo, env)
    new_id = vault.read_latest()["build_id"]
    vault.latest.write_bytes(old_latest)        # put the older, validly signed build back
    for name, data in old_export.items():
        (vault.dir / name).unlink()
        (vault.dir / name).write_bytes(data)
    r = run_cli("verify", str(repo), "--require-signature", "--public-key", str(pub), env=_env())
    assert (r.returncode, r.stderr.strip()) == (
        15, f"Error: LATEST names build {old_id}, but the health history records the later build {new_id}: "
            "an older build was put back (replayed?); run `oracl build`")


def test_one_flipped_byte_in_the_health_history_does_not_fail_verify_for_good(repo: Path) -> None:
    """Issue 48 (LOW): a build id's year flipped 2026 → 2036 made every later verify say an
    older build was put back. Each line is sealed; one that does not check proves nothing."""
    _build(repo, _env())
    health = repo / ".oracl" / "graph_health_history.jsonl"
    raw = health.read_bytes()
    health.write_bytes(raw.replace(b'"build_id":"202', b'"build_id":"203', 1))
    r = run_cli("verify", str(repo), env=_env())
    assert r.returncode == 0, r.stderr
    health.write_bytes(raw + b'{"build_id":"29991231T000000000000Z-00001"}\n')  # a line that came with the tree
    assert run_cli("verify", str(repo), env=_env()).returncode == 0


@pytest.mark.parametrize("name", ["../../../etc", "/etc", "..", "a/../../b"])
def test_a_hostile_latest_cannot_name_a_folder_outside_the_vault(repo: Path, name: str) -> None:
    _build(repo, _env())
    vault = Vault(repo)
    latest = orjson.loads(vault.latest.read_bytes())
    shutil.copytree(vault.bundle(latest["bundle"]), repo / "decoy")
    vault.latest.write_bytes(orjson.dumps({**latest, "bundle": name}))  # unsealed: not even read
    r = run_cli("verify", str(repo), env=_env())
    assert r.returncode == 4 and "was not written by your oracl" in r.stderr
    from oracl.core.seal import write_sealed
    from oracl.core.vault import LATEST_KIND

    write_sealed(vault.latest, LATEST_KIND, orjson.dumps({**latest, "bundle": name}))  # sealed: still refused
    r = run_cli("verify", str(repo), env=_env())
    assert (r.returncode, r.stderr.strip()) == (
        15, f"Error: LATEST.json names the bundle {name!r}, which is not a bundle name")
    q = run_cli("stats", str(repo), env=_env())  # a reader repairs from the export, never opens the decoy
    assert q.returncode == 0, q.stderr
    assert vault.read_latest()["bundle"].endswith("-rebuilt")
