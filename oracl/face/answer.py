"""Warm answers: while ``oracl watch`` or ``oracl serve`` runs, a helper process of theirs
keeps the root's build open and answers the CLI's read-only commands over a local socket,
so that ``oracl query`` in a shell costs an interpreter's start and the answer, not the
imports and the opening of the database. Without a helper the CLI answers alone; the
output and the exit code are the same either way.

* **Where**: ``$XDG_RUNTIME_DIR/oracl/`` or ``/tmp/oracl-UID/`` (made mode 0700; a folder
  another user owns, or one others may enter, is never used), one socket per root named by
  the SHA-256 of the root's real path.
* **Who**: the helper answers only a peer of its own user (``SO_PEERCRED``), and the
  client talks only to a socket its own user owns.
* **What**: only the commands in ``COMMANDS`` (they read the build), never one that reads
  stdin, asks for help, or names a different ``ORACL_*`` setting than the helper's;
  anything else, a helper that does not answer within ``CONNECT_SECONDS`` or dies
  mid-answer, and the client answers alone.
* **How**: the request is the argv, the current folder, the terminal variables and
  whether stdout and stderr are terminals; the helper runs ``oracl.face.cli.run`` on them
  with its stdout and stderr bound to buffers that say what the client's streams are, and
  sends back ``(exit code, stdout bytes, stderr bytes)``.

This module is imported by the console script before anything else: the client half uses
the standard library only.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import stat
import struct
import sys

COMMANDS = frozenset({"query", "trace", "related", "hub", "show", "fragment", "symbols", "callers", "callees",
                      "impact", "stats"})
TERMINAL = ("TERM", "COLORTERM", "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE",
            "TTY_COMPATIBLE", "TTY_INTERACTIVE")
CONNECT_SECONDS = 0.5   # a helper that has not accepted by then is not waited for
ANSWER_SECONDS = 120.0  # nor one that has not answered by then
MAX_REQUEST = 1 << 20
MAX_SOCKET_PATH = 107   # sun_path holds 108 bytes with its NUL: a longer XDG_RUNTIME_DIR means no helper
VERSION = 1


def _settings() -> dict[str, str]:
    """The ``ORACL_*`` variables (they change what an answer is): client and helper must agree."""
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith("ORACL_") and k != "ORACL_WARM"}


def terminal_session() -> str:
    """The CLI's session (design §9): the terminal it runs in (the first of stdin, stdout and
    stderr that is one), else its parent process (a shell, an agent's runner), with the
    user: commands typed in one terminal share a session, and a learner splits a session
    where it pauses for longer than its window. ``ORACL_SESSION`` overrides it."""
    given = os.environ.get("ORACL_SESSION", "")
    if given:
        return given
    where = ""
    for fd in (0, 1, 2):
        try:
            where = os.ttyname(fd)
            break
        except OSError:
            continue
    key = f"{os.getuid()}:{where or 'ppid=' + str(os.getppid())}"
    return "t" + hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:15]


def socket_dir() -> str | None:
    """The per-user folder of the sockets, made if missing; None when it is not safely ours."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    base = os.path.join(runtime, "oracl") if runtime and os.path.isabs(runtime) else f"/tmp/oracl-{os.getuid()}"
    try:
        os.mkdir(base, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        st = os.lstat(base)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    return base


def socket_path(root: str) -> str | None:
    folder = socket_dir()
    if folder is None:
        return None
    name = hashlib.sha256(os.path.realpath(root).encode("utf-8", "surrogateescape")).hexdigest()[:32]
    path = os.path.join(folder, name + ".sock")
    return path if len(path.encode("utf-8", "surrogateescape")) <= MAX_SOCKET_PATH else None


def _root_of(args: list[str]) -> str | None:
    """The root the CLI would answer from: ``-r DIR`` / ``--root DIR`` / ``--root=DIR``
    before a ``--``, else the nearest folder at or above the current one that holds a
    vault."""
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if arg in ("-r", "--root") and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("--root="):
            return arg[len("--root="):]
    here = os.path.abspath(os.getcwd())
    while True:
        if os.path.isdir(os.path.join(here, ".oracl")):
            return here
        up = os.path.dirname(here)
        if up == here:
            return None
        here = up


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            raise ConnectionError("the other side closed the socket")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _peer_uid(sock: socket.socket) -> int:
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


# ---- the client (the console script) -----------------------------------------------------

def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):
        return False


def ask(args: list[str]) -> int | None:
    """The exit code of ``oracl ARGS`` answered by a helper, its output written to this
    process's stdout and stderr; None when no helper can answer (nothing written then)."""
    if (os.environ.get("ORACL_WARM", "") == "0" or not args or args[0] not in COMMANDS
            or any(a in ("-", "-h", "--help") for a in args)):
        return None
    root = _root_of(args[1:])
    path = socket_path(root) if root is not None else None
    if path is None:
        return None
    try:
        st = os.lstat(path)
        if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.getuid():
            return None
    except OSError:
        return None
    env = {k: os.environ[k] for k in TERMINAL if k in os.environ}
    tty = [_isatty(sys.stdout), _isatty(sys.stderr)]
    if tty[0] and "COLUMNS" not in env:  # the helper has no terminal: tell it this one's size
        try:
            size = os.get_terminal_size(sys.stdout.fileno())
            env["COLUMNS"], env["LINES"] = str(size.columns), str(size.lines)
        except (OSError, ValueError):
            pass
    request = json.dumps({"v": VERSION, "argv": args, "cwd": os.getcwd(), "env": env, "tty": tty,
                          "settings": _settings(), "session": terminal_session()}).encode("utf-8", "surrogateescape")
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(CONNECT_SECONDS)
            sock.connect(path)
            if _peer_uid(sock) != os.getuid():
                return None
            sock.sendall(struct.pack(">I", len(request)) + request)
            sock.settimeout(ANSWER_SECONDS)
            code, count = struct.unpack(">iI", _recv_exact(sock, 8))
            if code == -1:  # the helper declines: answer alone
                return None
            chunks = []
            for _ in range(count):
                side, n = struct.unpack(">BQ", _recv_exact(sock, 9))
                chunks.append((side, _recv_exact(sock, n)))
    except (OSError, ConnectionError, struct.error):
        return None
    # in the order the CLI wrote them: on one terminal, stdout and stderr interleave as they would alone
    for side, data in chunks:
        stream = sys.stderr if side else sys.stdout
        stream.buffer.write(data)
        stream.flush()
    return code


# ---- the helper ----------------------------------------------------------------------------

class _Bytes:
    def __init__(self, side: int, chunks: list[tuple[int, bytes]]) -> None:
        self._side, self._chunks = side, chunks

    def write(self, data: bytes) -> int:
        self._chunks.append((self._side, bytes(data)))
        return len(data)

    def flush(self) -> None:
        pass


class _Stream:
    """A text stream that appends what is written to ``chunks`` as ``(side, bytes)`` (0
    stdout, 1 stderr: the order of both) and says whether it is a terminal."""

    def __init__(self, side: int, tty: bool, chunks: list[tuple[int, bytes]]) -> None:
        self.buffer = _Bytes(side, chunks)
        self._tty = tty
        self.encoding = "utf-8"
        self.errors = "surrogateescape"

    def write(self, text: str) -> int:
        self.buffer.write(text.encode("utf-8", "surrogateescape"))
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return self._tty

    def writable(self) -> bool:
        return True


def _answer(root: str, request: dict[str, object]) -> tuple[int, list[tuple[int, bytes]]]:
    """Run the CLI on ``request`` in this process, as the client would have: (exit code,
    what it wrote, in order); exit code -1 declines."""
    from oracl.face import cli

    argv = request.get("argv")
    session = request.get("session")
    env = request.get("env")
    tty = request.get("tty")
    cwd = request.get("cwd")
    if (request.get("v") != VERSION or not isinstance(argv, list) or not all(isinstance(a, str) for a in argv)
            or not argv or argv[0] not in COMMANDS or not isinstance(env, dict) or not isinstance(cwd, str)
            or not isinstance(tty, list) or len(tty) != 2 or request.get("settings") != _settings()
            or not isinstance(session, str)):
        return -1, []
    saved_env = {k: os.environ.get(k) for k in TERMINAL}
    saved = (sys.stdout, sys.stderr, sys.stdin)
    try:
        os.chdir(cwd)
    except OSError:
        return -1, []
    import io

    warm = cli.WARM.get(root)
    if warm is not None:  # alone, the CLI walks the tree for every answer: so does the helper
        from oracl.read.status import FRESHNESS

        warm.snapshot()[0].memo.forget(FRESHNESS)
    chunks: list[tuple[int, bytes]] = []
    out, err = _Stream(0, bool(tty[0]), chunks), _Stream(1, bool(tty[1]), chunks)
    try:
        for k in TERMINAL:
            value = env.get(k)
            if isinstance(value, str):
                os.environ[k] = value
            else:
                os.environ.pop(k, None)
        sys.stdout, sys.stderr, sys.stdin = out, err, io.StringIO()
        try:
            code = cli.run(list(argv), session=session)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:  # noqa: BLE001 – the traceback the CLI alone would print
            import traceback

            traceback.print_exc()
            code = 1
    finally:
        sys.stdout, sys.stderr, sys.stdin = saved
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        os.chdir(root)
    return code, chunks


def _handle(conn: socket.socket, root: str) -> None:
    conn.settimeout(2.0)
    if _peer_uid(conn) != os.getuid():
        return
    (n,) = struct.unpack(">I", _recv_exact(conn, 4))
    if n > MAX_REQUEST:
        return
    try:
        request = json.loads(_recv_exact(conn, n).decode("utf-8", "surrogateescape"))
    except ValueError:
        return
    code, chunks = _answer(root, request) if isinstance(request, dict) else (-1, [])
    conn.settimeout(30.0)
    conn.sendall(b"".join([struct.pack(">iI", code, len(chunks)),
                           *(struct.pack(">BQ", side, len(data)) + data for side, data in chunks)]))


def _alive(path: str) -> bool:
    """Whether a helper answers on ``path`` already (a second watch or serve of the root)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.settimeout(CONNECT_SECONDS)
            probe.connect(path)
            return True
    except OSError:
        return False


def _warm(root: str) -> object | None:
    """The root's Memory, opened and its engine and full-text index touched once (an
    unlogged search), registered for ``cli._memory``; None while there is no build."""
    from oracl.face import cli, definitions_now
    from oracl.read.memory import Memory
    from oracl.read.query import run

    try:
        memory = Memory.open(root, repair=cli._repair, reread=definitions_now)
        snap, _ = memory.snapshot()
        run.search(snap, "oracl", limit=1, log=False)
    except Exception:  # noqa: BLE001 – no build yet, or a damaged one: every answer is the CLI's own
        return None
    cli.WARM[root] = memory
    return memory


def helper_main() -> None:
    """``python -I -c … ROOT PARENT`` (``start_helper``): answer until the parent is gone."""
    import signal

    from oracl.core.children import die_with_parent

    root, parent = os.path.realpath(sys.argv[1]), int(sys.argv[2])
    die_with_parent(parent)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # the socket goes with the helper
    path = socket_path(root)
    if path is None or _alive(path):
        return
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    os.chdir(root)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        listener.bind(path)
    except OSError:
        listener.close()
        return  # (another helper won the path): the CLI answers, warm from that one or alone
    finally:
        os.umask(old)
    listener.listen(16)
    listener.settimeout(1.0)
    mine = os.lstat(path).st_ino
    memory = _warm(root)
    try:
        while os.getppid() == parent:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                if memory is None:
                    memory = _warm(root)
                try:
                    _handle(conn, root)
                except (OSError, ConnectionError, struct.error):
                    continue
    finally:
        listener.close()
        try:
            if os.lstat(path).st_ino == mine:
                os.unlink(path)
        except OSError:
            pass
        if memory is not None:
            memory.close()  # type: ignore[attr-defined]


def start_helper(root: object) -> object | None:
    """Start the answer helper of ``root`` beside a long-running ``watch`` or ``serve``
    (a fresh interpreter: the watcher's builds fork, and no process that forks may hold an
    open database). Returns the process, or None when it cannot start."""
    import subprocess

    from oracl.core.children import python_command

    if os.environ.get("ORACL_WARM", "") == "0":
        return None
    cmd = python_command("from oracl.face.answer import helper_main\nhelper_main()", str(root), str(os.getpid()))
    try:
        return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    except OSError:
        return None
