"""Shared fixtures: small repositories written into tmp_path, and a built graph."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from oracl.core.config import Config

ORACL = str(Path(sys.executable).with_name("oracl"))

SAMPLE = {
    "pyproject.toml": '[project]\nname = "pkg"\n',
    "pkg/__init__.py": '"""The package."""\n',
    "pkg/auth.py": (
        '"""Signing helpers."""\n'
        "import hashlib\n"
        "from pkg import util\n"
        "\n"
        "def sign(data):\n"
        '    """Sign data."""\n'
        "    return hashlib.sha256(data).hexdigest()\n"
    ),
    "pkg/util.py": "def helper():\n    # see pkg/auth.py and pkg.auth.sign\n    return 1\n",
    "tests/test_auth.py": "from pkg.auth import sign\n\ndef test_sign():\n    assert sign(b'x')\n",
    "docs/guide.md": "# Guide\nSee [auth](../pkg/auth.py) and [missing](nope.md).\n## Usage\nRun pkg/util.py\n",
    "config.yaml": "entry: pkg.auth:sign\npath: docs/guide.md\n",
}


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                          text=True, env=env).stdout


# what the developer's shell may export that would change what a test sees: ORACL's own
# settings (a signing key signs every build, a fault point kills it) and the terminal's
TERMINAL_VARIABLES = ("TTY_COMPATIBLE", "TTY_INTERACTIVE", "FORCE_COLOR", "NO_COLOR", "CLICOLOR",
                      "CLICOLOR_FORCE", "COLUMNS", "LINES")


@pytest.fixture(scope="session", autouse=True)
def oracl_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's user folder (its vault key seals every vault the tests build), set
    before any fixture builds, module-scoped ones included."""
    home = tmp_path_factory.mktemp("oracl-home")
    os.environ["ORACL_HOME"] = str(home)
    return home


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, oracl_home: Path) -> None:
    """Every test starts without ORACL_* and terminal variables (a test sets what it needs),
    with the session's own ORACL_HOME: never the developer's vault key."""
    for key in list(os.environ):
        if key.startswith("ORACL_") or key in TERMINAL_VARIABLES:
            monkeypatch.delenv(key)
    monkeypatch.setenv("ORACL_HOME", str(oracl_home))


@pytest.fixture
def cfg() -> Config:
    return Config(buffer_pool_bytes=64 << 20, workers=1)


@pytest.fixture
def sample_repo(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "repo", SAMPLE)


@pytest.fixture
def built_sample(sample_repo: Path):  # type: ignore[no-untyped-def]
    from oracl.builder.orchestrator import build

    report = build(sample_repo, buffer_pool_bytes=64 << 20, workers=1)
    return sample_repo, report


def run_cli(*args: str, cwd: Path | None = None, **kw) -> subprocess.CompletedProcess[str]:  # type: ignore[no-untyped-def]
    return subprocess.run([ORACL, *args], capture_output=True, text=True, cwd=cwd, timeout=300, **kw)


def on_latest(fn, root: Path, *args, **kwargs):  # type: ignore[no-untyped-def]
    """``fn(snapshot, *args, **kwargs)`` on a snapshot of the latest build of ``root``."""
    from oracl.read.snapshot import Snapshot

    with Snapshot.open(root) as snap:
        return fn(snap, *args, **kwargs)


def export_of(root: Path, bundle: str | None = None) -> bytes:
    """The canonical export of the latest build of ``root`` (or of ``bundle``), assembled
    from its index and parts as ``oracl export`` does (every part checked)."""
    from oracl.core.parts import latest_export

    return latest_export(root, bundle)


_ANSI = __import__("re").compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def run_tty(*args: str, cols: int = 100, cwd: Path | None = None, env: dict[str, str] | None = None,
            timeout: float = 300) -> tuple[int, str]:
    """``oracl ARGS`` on a real pseudo-terminal ``cols`` columns wide (stdout and stderr
    both): (exit code, what the terminal showed, styles stripped, ``\\r\\n`` as ``\\n``)."""
    import fcntl
    import pty
    import select
    import struct
    import termios
    import time

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))
    environ = {**(env or os.environ), "COLUMNS": str(cols), "TERM": "xterm", "NO_COLOR": "1"}
    environ.pop("TTY_COMPATIBLE", None)
    environ.pop("FORCE_COLOR", None)
    proc = subprocess.Popen([ORACL, *args], stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, cwd=cwd,
                            env=environ, close_fds=True)
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
    code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    text = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
    return code, _ANSI.sub("", text)


def write_learned(path: Path, data: str | bytes) -> None:
    """Write a learned file (or the proposals) by hand and take it as this user's own, as
    `oracl learn trust` does after a person has read it."""
    from oracl.core.seal import write_sealed
    from oracl.core.vault import LEARNED_KIND

    raw = data.encode() if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    write_sealed(path, "proposals" if path.name == "proposals.json" else LEARNED_KIND + path.name, raw)
