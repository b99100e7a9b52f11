"""Warm answers (oracl.face.answer): with the answer helper of a running watch or serve,
the CLI's read-only commands print byte for byte what they print alone, with the same
exit code, on a pipe and on a terminal; the client never imports the CLI then; a socket
that is not safely the user's, a helper with other settings, a dead helper: the CLI
answers alone. Real processes, a real socket, a real build."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from oracl.builder.orchestrator import build
from oracl.core.errors import QueryError
from oracl.face import answer

from .conftest import ORACL, run_tty, write_tree

FILES = {
    "pkg/auth.py": '"""Signing helpers."""\n\n\ndef sign(data):\n    """Sign data."""\n    return helper(data)\n',
    "pkg/util.py": "def helper(x):\n    return x\n",
    "pkg/use.py": "from pkg.auth import sign\n\n\ndef run():\n    return sign(b'x')\n",
    "docs/guide.md": "# Guide\nSee [auth](../pkg/auth.py).\n",
}


@pytest.fixture
def run_dir(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """XDG_RUNTIME_DIR for this test alone (short: a socket's path holds 107 bytes)."""
    folder = tempfile.mkdtemp(prefix="oracl-t", dir="/tmp")
    monkeypatch.setenv("XDG_RUNTIME_DIR", folder)
    yield Path(folder)
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def warm(tmp_path: Path, run_dir: Path):  # type: ignore[no-untyped-def]
    """A built repository and its answer helper, sockets under a folder of this test's own."""
    root = write_tree(tmp_path / "repo", FILES)
    old = time.time_ns() - 86_400 * 10**9
    for rel in FILES:
        os.utime(root / rel, ns=(old, old))
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    helper = answer.start_helper(root)
    assert helper is not None
    _wait_for(root, helper)
    yield root, helper
    helper.terminate()  # type: ignore[attr-defined]
    helper.wait(timeout=30)  # type: ignore[attr-defined]


def _wait_for(root: Path, helper: Any) -> None:
    path = answer.socket_path(str(root))
    assert path is not None
    deadline = time.monotonic() + 60
    while not answer._alive(path):
        assert helper.poll() is None, "the helper ended"
        assert time.monotonic() < deadline, "the helper never listened"
        time.sleep(0.05)


def _cli(args: list[str], cwd: Path | None = None, **env: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``oracl ARGS``; a search's own latency, the one
    figure that differs from run to run, is blanked."""
    r = subprocess.run([ORACL, *args], capture_output=True, text=True, cwd=cwd, timeout=120,
                       env={**os.environ, **env})
    return r.returncode, re.sub(r'"latency_ms": [0-9.]+', '"latency_ms": _', r.stdout), r.stderr


def _tty(*args: str, **kw: Any) -> tuple[int, str]:
    """``run_tty``, a search's latency (· N ms, and the padding after it) blanked."""
    code, shown = run_tty(*args, **kw)
    return code, re.sub(r"· [0-9]+ ms *", "· _ ms", shown)


def _used_the_helper(args: list[str], **env: str) -> bool:
    """Whether ``oracl ARGS`` was answered without importing the CLI (``-X importtime``)."""
    code = "import sys; sys.argv = ['oracl', *sys.argv[1:]]; from oracl.face.launch import main; main()"
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", code, *args], capture_output=True, text=True,
                       timeout=120, env={**os.environ, **env})
    return " oracl.face.cli" not in r.stderr


def test_warm_answers_equal_the_cli_alone_on_a_pipe(warm) -> None:  # type: ignore[no-untyped-def]
    root, _ = warm
    r = str(root)
    for args in (["query", "signing", "helpers", "-r", r], ["query", "sign", "-data", "--json", "-r", r],
                 ["callers", "helper", "-r", r], ["callers", "helper", "--json", "-r", r],
                 ["show", "pkg/auth.py", "-r", r], ["symbols", "sign", "-r", r], ["stats", "-r", r],
                 ["callers", "no_such_name", "-r", r],        # an error: one line, its exit code
                 ["query", "--no-such-option", "x", "-r", r],  # a usage error: exit 2
                 ["trace", "pkg/use.py", "-r", r]):
        alone = _cli(args, ORACL_WARM="0")
        assert _cli(args) == alone, args
    assert alone[0] == 0 and "pkg/use.py" in alone[1]
    code, out, err = _cli(["callers", "no_such_name", "-r", r])
    assert (code, out, len(err.splitlines())) == (QueryError.exit_code, "", 1) and err.startswith("Error: no symbol")
    assert _cli(["query", "--no-such-option", "x", "-r", r])[0] == 2
    assert _used_the_helper(["query", "signing", "-r", r])
    assert not _used_the_helper(["query", "signing", "-r", r], ORACL_WARM="0")
    assert not _used_the_helper(["query", "-h"])  # help, stdin and writing commands are never sent


def test_warm_answers_equal_the_cli_alone_on_a_terminal_and_from_a_subfolder(warm) -> None:  # type: ignore[no-untyped-def]
    root, _ = warm
    env = {**os.environ}
    for args in (["query", "signing", "helpers"], ["callers", "helper"], ["stats"]):
        alone = _tty(*args, cwd=root / "pkg", env={**env, "ORACL_WARM": "0"})
        assert _tty(*args, cwd=root / "pkg", env=env) == alone, args
        assert alone[0] == 0
    code, shown = _tty("query", "signing", cwd=root / "pkg", env=env, cols=60)
    assert (code, shown) == _tty("query", "signing", cwd=root / "pkg", env={**env, "ORACL_WARM": "0"}, cols=60)
    assert code == 0 and "using the build of" in shown  # the notice the nearest-build lookup gives
    table = [line for line in shown.splitlines() if line[:1] in "┏┃┡│└"]
    assert table and all(len(line) <= 60 for line in table)  # drawn for the client's terminal
    assert _cli(["query", "signing"], cwd=root / "pkg") == _cli(["query", "signing"], cwd=root / "pkg",
                                                                  ORACL_WARM="0")


def test_other_settings_an_unsafe_folder_or_a_dead_helper_mean_answering_alone(  # type: ignore[no-untyped-def]
        warm, tmp_path: Path, run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, helper = warm
    args = ["query", "signing", "-r", str(root)]
    # another ORACL_* setting than the helper's: it declines, the CLI answers alone
    assert not _used_the_helper(args, ORACL_SEARCH_LOG="0")
    assert _cli(args, ORACL_SEARCH_LOG="0") == _cli(args, ORACL_SEARCH_LOG="0", ORACL_WARM="0")
    # a socket folder that others may enter is never used, by the client or a helper
    loose = tmp_path / "loose"
    (loose / "oracl").mkdir(parents=True)
    (loose / "oracl").chmod(0o755)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(loose))
    assert answer.socket_dir() is None and answer.socket_path(str(root)) is None
    assert answer.ask(args) is None
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(run_dir))
    # killed without a word: its socket stays, the CLI answers alone, a new helper takes the path
    helper.send_signal(signal.SIGKILL)
    helper.wait(timeout=30)
    path = answer.socket_path(str(root))
    assert path is not None and os.path.exists(path)
    assert _cli(args) == _cli(args, ORACL_WARM="0") and not _used_the_helper(args)
    second = answer.start_helper(root)
    assert second is not None
    try:
        _wait_for(root, second)
        assert _used_the_helper(args)
    finally:
        second.terminate()  # type: ignore[attr-defined]
        second.wait(timeout=30)  # type: ignore[attr-defined]
    assert not os.path.exists(path)  # a helper that is told to stop takes its socket with it


def test_watch_answers_warm_while_it_runs(tmp_path: Path, run_dir: Path) -> None:
    root = write_tree(tmp_path / "repo", FILES)
    watcher = subprocess.Popen([ORACL, "watch", str(root), "--poll", "--interval", "0.2", "--settle", "0.2"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert watcher.stdout is not None
        built = re.compile(r"^\S+ build \d")  # "HH:MM:SS build <id>  <mode> …"
        while not built.match(line := watcher.stdout.readline()):  # the first build (there was none)
            assert line, watcher.stderr.read() if watcher.stderr else ""
        path = answer.socket_path(str(root))
        assert path is not None
        deadline = time.monotonic() + 60
        while not _used_the_helper(["callers", "helper", "-r", str(root)]):
            assert time.monotonic() < deadline, "the watch's helper never answered"
            time.sleep(0.2)
        (root / "pkg" / "more.py").write_text("from pkg.util import helper\n\n\ndef more():\n    return helper(2)\n")
        while not built.match(line := watcher.stdout.readline()):
            assert line
        args = ["callers", "helper", "--json", "-r", str(root)]
        assert _cli(args) == _cli(args, ORACL_WARM="0") and "pkg/more.py#more" in _cli(args)[1]
    finally:
        watcher.send_signal(signal.SIGINT)
        watcher.communicate(timeout=60)
    assert not os.path.exists(path)


def test_a_warm_answer_logs_under_its_clients_session(warm) -> None:  # type: ignore[no-untyped-def]
    """The helper answers many terminals: each search and follow-up is logged under the
    session of the client that asked (its terminal, here its parent: this process)."""
    from oracl.core import telemetry

    root, _ = warm
    assert _used_the_helper(["query", "signing", "helpers", "-r", str(root)])
    assert _used_the_helper(["show", "pkg/auth.py", "-r", str(root)])
    searched = list(telemetry.lines(root / ".oracl", "search_history.jsonl"))[-1]
    used = list(telemetry.lines(root / ".oracl", "usage.jsonl"))[-1]
    assert searched["session_id"] == used["session_id"] and used["session_id"].startswith("t")
    assert used["path"] == "pkg/auth.py" and used["query"] == "signing helpers" and used["rank"] is not None
    assert not _used_the_helper(["show", "pkg/use.py", "-r", str(root)], ORACL_SESSION="other")
    # another setting: answered alone, under the session it names (which joins no search)
    other = list(telemetry.lines(root / ".oracl", "usage.jsonl"))[-1]
    assert (other["session_id"], other["query"]) == ("other", None)
