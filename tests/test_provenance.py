"""The provenance chain end to end: signing, verify failing closed, snapshots, health,
locks, and builds killed with SIGKILL at several points (real processes)."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from oracl.builder.orchestrator import build
from oracl.bundle.provenance import health_trend, read_health
from oracl.core.errors import BuildLockedError
from oracl.core.sign import keygen
from oracl.core.vault import Vault

from .conftest import ORACL, run_cli, write_tree

SMALL = {"buffer_pool_bytes": 64 << 20, "workers": 1}


@pytest.fixture
def keys(tmp_path: Path) -> tuple[Path, Path]:
    return keygen(tmp_path / "keys")


def signed_env(priv: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORACL_") or k == "ORACL_HOME"}
    env["ORACL_ED25519_PRIVATE_KEY"] = str(priv)
    return env


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("ORACL_") or k == "ORACL_HOME"}


def test_signed_build_verifies_and_tampering_fails(sample_repo: Path, keys) -> None:  # type: ignore[no-untyped-def]
    priv, pub = keys
    r = run_cli("build", str(sample_repo), "-q", "--workers", "1", env=signed_env(priv))
    assert r.returncode == 0, r.stderr
    vault = sample_repo / ".oracl"
    assert (vault / "export.idx.sig").read_text().startswith("ed25519:")
    assert "BEGIN PRIVATE KEY" not in "".join(p.read_text(errors="ignore") for p in vault.rglob("*")
                                              if p.is_file() and p.stat().st_size < 1 << 20)
    ok = run_cli("verify", str(sample_repo), "--public-key", str(pub), env=clean_env())
    assert ok.returncode == 0, ok.stderr
    assert "ok\tbundle signature: ed25519, valid\n" in ok.stdout and "ok\tsignature: ed25519, valid\n" in ok.stdout
    assert "ok\tserved: 7 artifacts, 4 hubs, 20 edges, 6 symbols and 1 call edges match the export\n" in ok.stdout
    # without any key the signed export cannot be checked: fail closed
    nokey = run_cli("verify", str(sample_repo), env=clean_env())
    assert nokey.returncode == 12
    # a wrong public key
    _, other_pub = keygen(sample_repo.parent / "other")
    wrong = run_cli("verify", str(sample_repo), "--public-key", str(other_pub), env=clean_env())
    assert (wrong.returncode, wrong.stderr.strip()) == (
        12, "Error: the Ed25519 signature does not match the bundle's manifest")


def flip_byte(path: Path, offset: int = 40) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(("target", "code", "message"), [
    ("export", 11, "Error: export.idx does not match its .sha256 digest"),
    ("signature", 12, "Error: the Ed25519 signature does not match the export"),
    ("manifest", 15, "Error: the manifest of bundle"),
])
def test_one_flipped_byte_fails_verify(sample_repo: Path, keys, target: str, code: int, message: str) -> None:  # type: ignore[no-untyped-def]
    priv, pub = keys
    assert run_cli("build", str(sample_repo), "-q", "--workers", "1", env=signed_env(priv)).returncode == 0
    vault = Vault(sample_repo)
    bundle = vault.bundle(vault.read_latest()["bundle"])
    if target == "export":
        # a private copy first: the top-level export is a hard link to the bundle's
        data = vault.export_index.read_bytes()
        vault.export_index.unlink()
        vault.export_index.write_bytes(data)
        flip_byte(vault.export_index)
    elif target == "signature":
        sig = vault.dir / "export.idx.sig"
        text = sig.read_text()
        sig.unlink()
        head, b64 = text.split(":", 1)
        sig.write_text(head + ":" + ("A" if b64[0] != "A" else "B") + b64[1:])
    else:
        flip_byte(bundle / "manifest.json", 2)
    r = run_cli("verify", str(sample_repo), "--public-key", str(pub), env=clean_env())
    assert r.returncode == code
    assert r.stderr.strip().startswith(message)


def test_bundle_content_mismatch_and_missing_bundle(sample_repo: Path) -> None:
    build(sample_repo, **SMALL)
    (sample_repo / "pkg" / "extra.py").write_text("X = 1\n")
    build(sample_repo, **SMALL)
    vault = Vault(sample_repo)
    bundles = sorted(p for p in vault.mirror.iterdir() if p.is_dir())
    old, new = bundles[-2], bundles[-1]
    # put the previous build's database into the latest bundle and re-seal its manifest
    (new / "graph.kuzu").write_bytes((old / "graph.kuzu").read_bytes())
    from oracl.bundle.provenance import flip_latest, write_manifest

    manifest = orjson.loads((new / "manifest.json").read_bytes())
    digest = write_manifest(new, manifest["build_id"], manifest["export_root"], manifest["counts"])
    r = run_cli("verify", str(sample_repo), env=clean_env())
    assert r.returncode == 15 and "does not match the digest LATEST.json records" in r.stderr
    flip_latest(vault, manifest["build_id"], manifest["export_root"], "t", digest)
    r = run_cli("verify", str(sample_repo), env=clean_env())
    assert (r.returncode, r.stderr.strip()) == (14, "Error: the bundle holds 7 artifacts, the export 8")
    import shutil

    shutil.rmtree(new)
    r = run_cli("verify", str(sample_repo), env=clean_env())
    assert r.returncode == 15 and "which is missing" in r.stderr


def test_require_signature(built_sample) -> None:  # type: ignore[no-untyped-def]
    root, _ = built_sample
    r = run_cli("verify", str(root), "--require-signature", env=clean_env())
    assert (r.returncode, r.stderr.strip()) == (13, "Error: the bundle's manifest has no signature (.sig)")


def test_hmac_signing(sample_repo: Path) -> None:
    env = {**clean_env(), "ORACL_HMAC_KEY": "team-secret"}
    assert run_cli("build", str(sample_repo), "-q", "--workers", "1", env=env).returncode == 0
    assert (sample_repo / ".oracl" / "export.idx.sig").read_text().startswith("hmac-sha256:")
    assert run_cli("verify", str(sample_repo), env=env).returncode == 0
    assert run_cli("verify", str(sample_repo), env={**env, "ORACL_HMAC_KEY": "wrong"}).returncode == 12


def test_snapshots_rotate_and_health_history(sample_repo: Path) -> None:
    (sample_repo / ".oracl.toml").write_text("snapshots = 2\n")
    ids = []
    for i in range(3):
        (sample_repo / f"note_{i}.md").write_text("# n\n")
        ids.append(build(sample_repo, **SMALL).build_id)
    snaps = sorted(p.name for p in (sample_repo / ".oracl" / "snapshots").iterdir())
    assert snaps == ids[1:]
    for snap in snaps:
        assert (sample_repo / ".oracl" / "snapshots" / snap / "export.idx.sha256").is_file()
    rows = read_health(Vault(sample_repo))
    assert [r["build_id"] for r in rows] == ids
    assert [r["counts"]["artifacts"] for r in rows] == [9, 10, 11]
    assert set(rows[0]) >= {"counts", "mu", "sigma", "orphans", "dropped", "parse_errors", "seconds",
                            "bundle_bytes"}
    assert [t["flagged"] for t in health_trend(rows, threshold=0.2)] == [False, False, False]
    trend = health_trend(rows, threshold=0.1)  # 9 → 10 is +11 %, 10 → 11 is +10 % (not more)
    assert [t["flagged"] for t in trend] == [False, True, False]
    assert trend[1]["moved"]["artifacts"] == pytest.approx(1 / 9)
    out = run_cli("health", str(sample_repo), "--threshold", "0.05", env={**os.environ, "COLUMNS": "200"})
    assert out.returncode == 0 and "artifacts +11%" in out.stdout
    # without --threshold, [tool.oracl] health_threshold is the default (0.2 flags nothing here)
    as_json = orjson.loads(run_cli("health", str(sample_repo), "--json").stdout)
    assert [t["flagged"] for t in as_json] == [False, False, False]
    (sample_repo / ".oracl.toml").write_text("snapshots = 2\nhealth_threshold = 0.1\n")
    as_json = orjson.loads(run_cli("health", str(sample_repo), "--json").stdout)
    assert [t["flagged"] for t in as_json] == [False, True, False]


def test_second_build_is_refused_while_one_runs(sample_repo: Path) -> None:
    vault = sample_repo / ".oracl"
    vault.mkdir()
    fd = os.open(vault / "build.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with pytest.raises(BuildLockedError, match="another oracl build is running"):
            build(sample_repo, **SMALL)
    finally:
        os.close(fd)


def test_a_bundle_held_by_a_reader_is_not_pruned(sample_repo: Path) -> None:
    first = build(sample_repo, **SMALL).build_id
    reader = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from oracl.read.snapshot import Snapshot; "
         "s = Snapshot.open(sys.argv[1]); print('open', flush=True); time.sleep(60)", str(sample_repo)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert reader.stdout is not None and reader.stdout.readline().strip() == "open"
        build(sample_repo, full=True, **SMALL)
        build(sample_repo, full=True, **SMALL)  # keep=2 would prune `first`, but a reader holds it
        names = {p.name for p in (sample_repo / ".oracl" / "mirror").iterdir()}
        assert first in names
    finally:
        reader.kill()
        reader.wait()
        assert reader.stdout is not None
        reader.stdout.close()
    build(sample_repo, full=True, **SMALL)
    assert first not in {p.name for p in (sample_repo / ".oracl" / "mirror").iterdir()}


@pytest.mark.parametrize("mode", ["--full", "--selective"])
@pytest.mark.parametrize("point", ["read", "copy", "flip"])
def test_sigkill_during_a_build_leaves_the_previous_one_whole(tmp_path: Path, point: str, mode: str) -> None:
    """Killed while reading, after a COPY, or before LATEST flips – a full build, or a
    selective one patching a copy of the previous database: the previous build is whole."""
    root = write_tree(tmp_path / "r", {f"pkg/m{i}.py": f"import pkg.m{i - 1}\n" if i else "" for i in range(300)})
    first = run_cli("build", str(root), "-q", "--workers", "2", env=clean_env())
    assert first.returncode == 0, first.stderr
    (root / "pkg" / "new.py").write_text("import pkg.m1\n")
    extra = ["--full"] if mode == "--full" else []
    crashed = run_cli("build", str(root), "-q", "--workers", "2", *extra, env={**clean_env(), "ORACL_FAULT": point})
    assert crashed.returncode == -9
    ok = run_cli("verify", str(root), env=clean_env())
    assert ok.returncode == 0, ok.stderr
    stats = orjson.loads(run_cli("stats", str(root), "--json", env=clean_env()).stdout)
    assert stats["artifacts"] == 300 and stats["notices"] == []
    again = run_cli("build", str(root), "-q", "--workers", "2", env=clean_env())
    assert again.returncode == 0, again.stderr
    assert orjson.loads(run_cli("stats", str(root), "--json", env=clean_env()).stdout)["artifacts"] == 301
    assert not list((root / ".oracl" / "mirror").glob("*.tmp"))


@pytest.mark.parametrize("point", ["copy", "flip"])
def test_sigkill_during_a_patched_symbol_graph_leaves_the_previous_one_whole(tmp_path: Path, point: str) -> None:
    """A body edit patches the symbol tables of a copy of the previous database in place:
    killed after a COPY, after the patch or before LATEST flips, the previous build is
    whole, verify passes, and the next build patches again from it."""
    files = {f"pkg/m{i}.py": f"from pkg.m{max(i - 1, 0)} import f{max(i - 1, 0)}\n\n\ndef f{i}():\n    return 1\n"
             for i in range(200)}
    root = write_tree(tmp_path / "r", files)
    old = time.time_ns() - 86_400 * 10**9  # dated a day back: never "racily clean", so never read again
    for rel in files:
        os.utime(root / rel, ns=(old, old))
    assert run_cli("build", str(root), "-q", "--workers", "2", env=clean_env()).returncode == 0
    (root / "pkg" / "m7.py").write_text(files["pkg/m7.py"].replace("return 1", "return f6() + f6()"))
    os.utime(root / "pkg" / "m7.py", ns=(old + 10**9, old + 10**9))
    crashed = run_cli("build", str(root), "-q", "--workers", "2", env={**clean_env(), "ORACL_FAULT": point})
    assert crashed.returncode == -9
    assert run_cli("verify", str(root), env=clean_env()).returncode == 0
    callers = orjson.loads(run_cli("callers", "f6", "-r", str(root), "--json", env=clean_env()).stdout)
    assert [c["id"] for c in callers["callers"]] == []  # the previous build: nothing calls f6 yet
    again = run_cli("build", str(root), "--json", "--workers", "2", env=clean_env())
    report = orjson.loads(again.stdout)
    assert report["symbols_mode"] == \
        "symbols: the rows of 1 changed file made again, the others reused; the name tables read back", report["mode"]
    callers = orjson.loads(run_cli("callers", "f6", "-r", str(root), "--json", env=clean_env()).stdout)
    assert [c["id"] for c in callers["callers"]] == ["pkg/m7.py#f7"]
    assert run_cli("verify", str(root), env=clean_env()).returncode == 0
    assert not list((root / ".oracl" / "mirror").glob("*.tmp"))


def test_truncated_latest_fails_open_and_verify_fails_closed(built_sample) -> None:  # type: ignore[no-untyped-def]
    root, _ = built_sample
    latest = root / ".oracl" / "mirror" / "LATEST.json"
    latest.write_bytes(latest.read_bytes()[:10])
    v = run_cli("verify", str(root), env=clean_env())
    assert v.returncode == 15 and v.stderr.startswith("Error: ") and len(v.stderr.strip().splitlines()) == 1
    s = run_cli("stats", str(root), "--json", env=clean_env())
    assert s.returncode == 0, s.stderr
    assert "rebuilt bundle" in s.stderr and orjson.loads(s.stdout)["artifacts"] == 7
    assert run_cli("verify", str(root), env=clean_env()).returncode == 0


def test_missing_bundle_without_export_says_run_build(built_sample) -> None:  # type: ignore[no-untyped-def]
    root, report = built_sample
    import shutil

    shutil.rmtree(report.bundle_path)
    for name in ("export.idx", "export.idx.sha256"):
        (root / ".oracl" / name).unlink()
    s = run_cli("stats", str(root), env=clean_env())
    assert s.returncode == 7
    assert s.stderr.strip().endswith(f"there is no export to rebuild it from; run `oracl build {root}`")


def test_reader_never_sees_an_error_or_a_mix_during_builds(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "r", {f"pkg/m{i}.py": f"import pkg.m{i - 1}\n" if i else "" for i in range(400)})
    assert run_cli("build", str(root), "-q", env=clean_env()).returncode == 0
    code = ("import sys, time, orjson\n"
            "from oracl import Memory\n"
            "end = time.time() + float(sys.argv[2]); out = []\n"
            "mem = Memory.open(sys.argv[1])\n"
            "while time.time() < end:\n"
            "    s = mem.stats()\n"
            "    out.append([s['build_id'], s['artifacts'], s['edges']])\n"
            "print(orjson.dumps(out).decode())\n")
    reader = subprocess.Popen([sys.executable, "-c", code, str(root), "12"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=clean_env())
    builds = []
    deadline = time.time() + 10
    i = 0
    while time.time() < deadline:
        (root / "pkg" / f"extra_{i}.py").write_text("import pkg.m1\n")
        i += 1
        r = subprocess.run([ORACL, "build", str(root), "--json", "-q"], capture_output=True, text=True,
                           env=clean_env())
        assert r.returncode == 0, r.stderr
        builds.append(orjson.loads(r.stdout))
    out, err = reader.communicate(timeout=120)
    assert reader.returncode == 0, err
    seen = orjson.loads(out)
    assert len(seen) > 10 and len(builds) >= 2
    truth = {b["build_id"]: (b["files_indexed"], b["counts"]["edges"]) for b in builds}
    for build_id, artifacts, edges in seen:
        if build_id in truth:  # every answer is exactly one build's numbers
            assert (artifacts, edges) == truth[build_id]
    assert len({s[0] for s in seen}) >= 2  # the reader moved on to newer builds


PUBLISH_POINTS = ["sealed", "flip", "flipped", "published export.idx",
                  "published export.idx.sha256", "published export.idx.sig",
                  "published"]


@pytest.mark.parametrize("point", PUBLISH_POINTS)
def test_sigkill_at_each_step_of_publish_leaves_verify_passing(tmp_path: Path, keys, point: str) -> None:  # type: ignore[no-untyped-def]
    """The bundle LATEST flips to holds its export and sidecars; the top-level copy is
    replaced file by file after the flip, so a kill between any two steps leaves a vault
    that verifies (signed, so the .sig is one of the steps), and the next build mends it."""
    priv, pub = keys
    root = write_tree(tmp_path / "r", {"pkg/a.py": "def f():\n    return 1\n", "pkg/b.py": "import pkg.a\n"})
    env = signed_env(priv)
    assert run_cli("build", str(root), "-q", "--workers", "1", env=env).returncode == 0
    (root / "pkg" / "c.py").write_text("import pkg.b\n")
    crashed = run_cli("build", str(root), "-q", "--workers", "1", env={**env, "ORACL_FAULT": point})
    assert crashed.returncode == -9, crashed.stderr
    v = run_cli("verify", str(root), "--public-key", str(pub), "--json", env=clean_env())
    assert v.returncode == 0, v.stderr
    lines = orjson.loads(v.stdout)["checks"]
    behind = any("still an earlier build's" in line for line in lines)
    assert behind == (point.startswith("published ") and point != "published export.idx.sig"
                      or point == "flipped"), lines
    again = run_cli("build", str(root), "-q", "--workers", "1", env=env)
    assert again.returncode == 0, again.stderr
    v2 = run_cli("verify", str(root), "--public-key", str(pub), "--json", env=clean_env())
    assert v2.returncode == 0 and "still an earlier" not in v2.stdout, v2.stdout


def test_a_forged_top_level_export_that_matches_its_own_digest_fails(built_sample) -> None:  # type: ignore[no-untyped-def]
    import hashlib

    root, _ = built_sample
    top = root / ".oracl" / "export.idx"
    forged = top.read_bytes().replace(b'"nodes"', b'"nodes" ', 1)
    top.unlink()  # a new file: the bundle's hard-linked copy stays as it was
    top.write_bytes(forged)
    (root / ".oracl" / "export.idx.sha256").unlink()
    (root / ".oracl" / "export.idx.sha256").write_text(
        hashlib.sha256(forged).hexdigest() + "  export.idx\n")
    v = run_cli("verify", str(root), env=clean_env())
    assert (v.returncode, v.stderr.strip()) == (
        15, "Error: the vault's top-level export.idx is neither LATEST's nor an earlier build's")
