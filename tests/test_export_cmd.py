"""``oracl export``: the latest build's canonical export on demand, byte for byte the
bundle's, checked against LATEST's digest before anything is written. Real builds, real
processes."""

from __future__ import annotations

import hashlib
import subprocess

import orjson

from oracl.core.errors import ConfigError, DigestError
from oracl.core.vault import EXPORT, Vault

from .conftest import ORACL, run_cli


def _bundle_export(root) -> bytes:  # type: ignore[no-untyped-def]
    vault = Vault(root)
    return (vault.bundle(vault.read_latest()["bundle"]) / EXPORT).read_bytes()


def test_export_writes_the_bundles_bytes_to_stdout_and_to_a_file(built_sample, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root, report = built_sample
    want = _bundle_export(root)
    digest = hashlib.sha256(want).hexdigest()
    assert digest == report.export_sha256 == Vault(root).read_latest()["export_sha256"]
    r = subprocess.run([ORACL, "export", "-r", str(root)], capture_output=True, timeout=120)
    assert (r.returncode, r.stdout, r.stderr) == (0, want, b"")
    assert set(orjson.loads(r.stdout)) == {"edges", "nodes", "schema", "symbols"}
    out = tmp_path / "graph.json"
    r2 = run_cli("export", str(root), "-o", str(out))
    assert r2.returncode == 0, r2.stderr
    assert out.read_bytes() == want
    assert r2.stdout == (f"wrote {out}: {len(want):,} bytes, sha256 {digest}, build {report.build_id}, unsigned\n")
    r3 = run_cli("export", str(root), "-o", str(out), "--json")
    assert orjson.loads(r3.stdout) == {"build_id": report.build_id, "sha256": digest, "bytes": len(want),
                                       "path": str(out), "signature": None}
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".graph")) == []  # no temporary left


def test_a_damaged_export_writes_nothing_and_exits_11(built_sample, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root, report = built_sample
    vault = Vault(root)
    src = vault.bundle(vault.read_latest()["bundle"]) / EXPORT
    data = bytearray(src.read_bytes())
    data[len(data) // 2] ^= 1
    src.chmod(0o644)
    src.write_bytes(bytes(data))  # (the vault's top-level export is the same file: a hard link)
    got = hashlib.sha256(bytes(data)).hexdigest()
    line = (f"Error: the export of build {report.build_id} does not match the digest LATEST.json records "
            f"({got[:16]}… ≠ {report.export_sha256[:16]}…); nothing was written: run `oracl verify` and "
            "`oracl repair`\n")
    r = subprocess.run([ORACL, "export", "-r", str(root)], capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout, r.stderr) == (DigestError.exit_code, "", line)
    out = tmp_path / "graph.json"
    out.write_text("the previous export\n")
    r2 = run_cli("export", str(root), "-o", str(out))
    assert (r2.returncode, r2.stdout, r2.stderr) == (DigestError.exit_code, "", line)
    assert out.read_text() == "the previous export\n"  # untouched, and no temporary beside it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["graph.json", "repo"]


def test_bad_destinations_are_one_line_each(built_sample, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root, _ = built_sample
    cases = [(["-o", str(tmp_path)], f"Error: '{tmp_path}' is a directory: name the file to write the export to\n"),
             (["-o", str(tmp_path / "no" / "g.json")],
              f"Error: '{tmp_path / 'no'}' does not exist: the export's file must be in an existing folder\n"),
             (["--json"], "Error: --json describes a file written with -o; without -o the export itself is the "
                          "output\n")]
    for args, line in cases:
        r = run_cli("export", str(root), *args)
        assert (r.returncode, r.stdout, r.stderr) == (ConfigError.exit_code, "", line), args
