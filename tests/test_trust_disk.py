"""A full disk, failed builds and killed builds (design §11): one clear line and an exit
code at any free space, the previous build untouched, the vault's JSON-lines files written
only by a build that publishes, and what a killed build left cleaned by the next build of
any kind. The full disk is a real one: a small tmpfs mounted in a user and mount namespace
of this test's own (``unshare``), so nothing outside it is touched."""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

import orjson

from .conftest import ORACL, SAMPLE, run_cli, write_tree

DISK_FULL = 23


def _in_small_disk(tmp_path: Path, script: str, size_mb: int = 48) -> subprocess.CompletedProcess[str]:
    """``script`` (sh) with ``$D`` a fresh ``size_mb`` MiB tmpfs, in namespaces of its own."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    body = f"set -u\nmount -t tmpfs -o size={size_mb}m tmpfs {mnt}\nD={mnt}\nORACL={ORACL}\n" + textwrap.dedent(script)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORACL_") or k == "ORACL_HOME"}
    return subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", body],
                          capture_output=True, text=True, timeout=600, env=env)


def _fill(leave_kib: int) -> str:
    """sh: fill $D until ``leave_kib`` KiB are free (0: none at all)."""
    return textwrap.dedent(f"""
        free_kib() {{ df -k "$D" | awk 'NR==2 {{print $4}}'; }}
        n=$(( $(free_kib) - {leave_kib} ))
        [ "$n" -gt 0 ] && dd if=/dev/zero of="$D/filler" bs=1024 count="$n" 2>/dev/null
        {"cat /dev/zero > $D/filler2 2>/dev/null" if leave_kib == 0 else ":"}
        echo "free_kib=$(free_kib)"
    """)


def test_a_full_disk_is_one_line_and_an_exit_code_at_any_free_space(tmp_path: Path) -> None:
    src = write_tree(tmp_path / "src", SAMPLE)
    r = _in_small_disk(tmp_path, f"""
        cp -r {src} "$D/repo"
        "$ORACL" build "$D/repo" -q; echo "first=$?"
        echo "# changed" >> "$D/repo/pkg/util.py"
        {_fill(0)}
        "$ORACL" build "$D/repo" -q 2>"$D/../err0"; echo "full0=$?"
        rm -f "$D/filler2"; {_fill(256)}
        "$ORACL" build "$D/repo" -q 2>"$D/../err256"; echo "full256=$?"
        "$ORACL" verify "$D/repo" >/dev/null 2>&1; echo "verify=$?"
        ls "$D/repo/.oracl/mirror" | grep -c '\\.tmp$' | sed 's/^/tmp=/'
        rm -f "$D/filler" "$D/filler2"
        "$ORACL" build "$D/repo" -q; echo "after=$?"
    """)
    status = dict(line.split("=", 1) for line in r.stdout.split() if "=" in line)
    assert status["first"] == "0", r.stderr
    assert int(status["free_kib"]) <= 300  # the second fill left about 256 KiB (the first, none)
    for name in ("err0", "err256"):
        err = (tmp_path / name).read_text().strip()
        assert status["full0" if name == "err0" else "full256"] == str(DISK_FULL), err
        assert err.startswith("Error: no space left on the device that holds ") and "\n" not in err, err
    assert status["verify"] == "0" and status["tmp"] == "0"
    assert status["after"] == "0", r.stderr


def test_a_failed_build_leaves_the_vault_files_of_the_last_published_one(tmp_path: Path) -> None:
    from oracl.builder.orchestrator import build
    from oracl.core.errors import ConfigError

    root = write_tree(tmp_path / "repo", {**SAMPLE, "pyproject.toml": '[project]\nname = "pkg"\n[tool.oracl]\njsonl = true\n'})
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    vault = root / ".oracl"
    names = ["index.jsonl", "edges/all_edges.jsonl", "edges/phase2_edges.jsonl", "edges/phase3_edges.jsonl"]
    before = {n: (vault / n).read_bytes() for n in names}
    (root / "pkg" / "new.py").write_text("import pkg.util\n")
    # the build fails after its JSON-lines files are written (the export task refuses)
    r = run_cli("build", str(root), "-q", env={**os.environ, "ORACL_FAULT": "flip"})
    assert r.returncode == -9
    assert {n: (vault / n).read_bytes() for n in names} == before
    assert len(list(vault.glob(".pending-*"))) == 1  # what the killed build wrote waits outside the vault's files
    (root / "pyproject.toml").write_text('[tool.oracl]\njsonl = true\nalpha = "not a number"\n')
    try:
        build(root, buffer_pool_bytes=64 << 20, workers=1)
    except ConfigError:
        pass
    (root / "pyproject.toml").write_text('[project]\nname = "pkg"\n[tool.oracl]\njsonl = true\n')
    assert {n: (vault / n).read_bytes() for n in names} == before
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    rows = [orjson.loads(x) for x in (vault / "index.jsonl").read_bytes().splitlines()]
    assert "pkg/new.py" in {row["path"] for row in rows}
    assert not list(vault.glob(".pending-*")) and not list((vault / "mirror").glob("*.tmp"))


def test_a_killed_builds_staging_is_cleaned_by_the_next_build_even_one_that_fails(tmp_path: Path) -> None:
    from oracl.bundle import provenance
    from oracl.core.vault import Vault

    root = write_tree(tmp_path / "repo", SAMPLE)
    assert run_cli("build", str(root), "-q").returncode == 0
    (root / "pkg" / "new.py").write_text("x = 1\n")
    r = run_cli("build", str(root), "-q", env={**os.environ, "ORACL_FAULT": "copy"})
    assert r.returncode == -9
    mirror = root / ".oracl" / "mirror"
    [first] = [p.name for p in mirror.glob("*.tmp")]
    [pending] = [p.name for p in (root / ".oracl").glob(".pending-*")]
    (root / "pkg" / "bad.py").write_text("y = 2\n")
    again = run_cli("build", str(root), "-q", env={**os.environ, "ORACL_FAULT": "read"})  # killed too, later
    assert again.returncode == -9
    left = [p.name for p in mirror.glob("*.tmp")] + [p.name for p in (root / ".oracl").glob(".pending-*")]
    assert first not in left and pending not in left  # the first kill's leftovers went at the second's start
    assert [n for n in provenance.clean_stale(Vault(root)) if n.endswith(".tmp")] == [n for n in left if n.endswith(".tmp")]
    assert run_cli("verify", str(root)).returncode == 0


def test_a_read_only_vault_is_one_line_and_readers_still_answer(tmp_path: Path) -> None:
    """Issue 48 (LOW): a read-only vault gave tracebacks. Bind-mounted read-only in a mount
    namespace of the test's own: every writer says so in one line (exit 7), every reader
    answers."""
    src = write_tree(tmp_path / "src", SAMPLE)
    assert run_cli("build", str(src), "-q").returncode == 0
    (tmp_path / "disk").mkdir()
    body = textwrap.dedent(f"""
        set -u
        mount --bind {src}/.oracl {src}/.oracl && mount -o remount,bind,ro {src}/.oracl || exit 99
        for c in "query sign" "status" "verify" "show pkg/auth.py"; do
          {ORACL} $c -r {src} >/dev/null 2>&1; echo "reader=$?"
        done
        echo "# changed" >> {src}/pkg/util.py
        for c in "build {src}" "learn -r {src}" "ingest {src}/pkg/util.py -r {src}"; do
          {ORACL} $c >/dev/null 2>>{tmp_path}/err; echo "writer=$?"
        done
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORACL_") or k == "ORACL_HOME"}
    r = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", body],
                       capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode != 99, r.stderr
    rows = [line.split("=") for line in r.stdout.split()]
    assert [v for k, v in rows if k == "reader"] == ["0"] * 4
    assert [v for k, v in rows if k == "writer"] == ["7"] * 3, (tmp_path / "err").read_text()
    err = (tmp_path / "err").read_text().splitlines()
    assert len(err) == 3 and all(line.startswith(f"Error: the vault {src}/.oracl is on a read-only file system")
                                 for line in err), err
