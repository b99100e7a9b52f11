"""Each console statement runs in a child that can read the graph and nothing else
(design §11: defence in depth behind the grammar gate of ``oracl.face.readonly``).

The child is an isolated interpreter (``oracl.core.children.python_command``). It loads the
engine, locks itself in, and only then opens the bundle's database read-only (with the
engine's own timeout, its home directory and file search path pointing nowhere):

* **Landlock** (Linux ≥ 5.13, unprivileged): no file or directory may be created,
  written, truncated, removed, renamed or executed anywhere, none read outside the
  bundle's folder, and no TCP port bound or connected — for the child's thread and every
  thread the engine starts after it;
* **rlimits**: address space (``MEMORY_BYTES`` plus the database's reserved range), CPU
  seconds, no file growth (``RLIMIT_FSIZE`` 0), no core dump, few descriptors;
* no new privileges; an empty environment (no home, no temp folder).

The answer comes back as JSON lines, at most ``MAX_ROWS`` rows and ``MAX_BYTES`` bytes.
An engine crash, a runaway query or a child over its memory costs that child only: the
console gets one line (``SandboxError``, exit code 22) and goes on.

>>> sorted(LIMITS)
['cpu_seconds', 'max_bytes', 'max_rows', 'memory_bytes', 'timeout_ms']
"""

from __future__ import annotations

import ctypes
import os
import resource
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

from oracl.core.errors import OraclError, QueryError, SandboxError

LIMITS = {"timeout_ms": 60_000, "cpu_seconds": 70, "memory_bytes": 2 << 30, "max_rows": 100_000,
          "max_bytes": 64 << 20}
POOL_BYTES = 256 << 20
GRACE_SECONDS = 10.0  # past the engine's own timeout, before the child is killed

# Landlock (include/uapi/linux/landlock.h)
_SYS_CREATE, _SYS_ADD, _SYS_RESTRICT = 444, 445, 446
_FS_BITS = {1: 13, 2: 14, 3: 15, 4: 15, 5: 16}  # ABI -> number of filesystem access bits
_PR_SET_NO_NEW_PRIVS = 38
_READ_FILE, _READ_DIR = 1 << 2, 1 << 3
# modules the engine's Python binding imports lazily (parameters, values, results)
_ENGINE_IMPORTS = ("decimal", "datetime", "uuid", "importlib.util", "pyarrow", "numpy", "pandas", "polars",
                   "zoneinfo", "json", "typing_extensions")


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 when it has none."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        abi = int(libc.syscall(_SYS_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(1)))
    except (OSError, AttributeError):
        return 0
    return max(abi, 0)


def _lock_in(readable: Path) -> int:
    """Forbid this process every filesystem access but reading beneath ``readable``, and
    every TCP port, from now on; returns the Landlock ABI used (0: none, rlimits only).

    Landlock binds the calling thread and the threads it starts later, never those that
    run already: this runs before the engine starts its workers."""
    abi = landlock_abi()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    if abi < 1:
        return 0
    fs = (1 << _FS_BITS.get(abi, 16)) - 1
    fields = [fs]
    if abi >= 4:
        fields.append(0b11)  # bind and connect TCP
    if abi >= 6:
        fields.append(0b11)  # abstract unix sockets and signals outside the sandbox
    attr = (ctypes.c_uint64 * len(fields))(*fields)
    fd = libc.syscall(_SYS_CREATE, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0))
    if fd < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    try:
        parent = os.open(readable, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            rule = _PathBeneath(_READ_FILE | _READ_DIR, parent)
            if libc.syscall(_SYS_ADD, ctypes.c_int(fd), ctypes.c_int(1), ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
                raise OSError(ctypes.get_errno(), "landlock_add_rule")
        finally:
            os.close(parent)
        if libc.syscall(_SYS_RESTRICT, ctypes.c_int(fd), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(fd)
    return abi


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _rlimits(limits: dict[str, int], reserved: int) -> None:
    cpu = limits["cpu_seconds"]
    for what, value in ((resource.RLIMIT_CPU, (cpu, cpu + 5)), (resource.RLIMIT_FSIZE, (0, 0)),
                        (resource.RLIMIT_CORE, (0, 0)), (resource.RLIMIT_NOFILE, (64, 64)),
                        (resource.RLIMIT_AS, (reserved + limits["memory_bytes"],) * 2)):
        resource.setrlimit(what, value)


def _reserved_bytes(db: Path) -> int:
    """The address range the engine reserves for the database: a power of two over twice
    its file, at least 1 GiB (``max_db_size``)."""
    size = max(db.stat().st_size * 2, 1 << 30)
    return 1 << (size - 1).bit_length()


def _child_main() -> None:
    """The child: one request on stdin (JSON), JSON lines on stdout."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever else prints goes to stderr
    try:
        request = orjson.loads(sys.stdin.buffer.read())
        from oracl.core.store import open_console  # kuzu loads before the doors close

        for name in _ENGINE_IMPORTS:  # what the engine's binding imports when it first needs it
            try:
                __import__(name)
            except ImportError:
                pass

        db = Path(request["db"])
        reserved = _reserved_bytes(db)
        abi = _lock_in(db.parent)  # before the engine starts a thread: each one is bound too
        run = open_console(db, POOL_BYTES, 1, reserved, request["limits"]["timeout_ms"])
        _rlimits(request["limits"], reserved + POOL_BYTES)
        _stream(out, run(request["statement"], request["params"]), request["limits"], abi)
    except OraclError as exc:
        out.write(orjson.dumps({"error": [type(exc).__name__, str(exc)]}) + b"\n")
    except MemoryError:
        out.write(orjson.dumps({"error": ["SandboxError", "the statement needed more memory than the console "
                                          "allows"]}) + b"\n")
    out.flush()


def _stream(out: Any, result: Any, limits: dict[str, int], abi: int) -> None:
    head: dict[str, Any] = {"columns": result.get_column_names()}
    if abi < 1:
        head["notice"] = ("this kernel has no Landlock: the statement ran under rlimits only, able to read "
                          "what this user can read")
    out.write(orjson.dumps(head) + b"\n")
    rows, size = 0, 0
    batch: list[Any] = []
    while result.has_next():
        if rows >= limits["max_rows"] or size >= limits["max_bytes"]:
            out.write(orjson.dumps({"rows": batch}, default=str) + b"\n")
            out.write(orjson.dumps({"truncated": rows}) + b"\n")
            return
        row = result.get_next()
        line = orjson.dumps(row, default=str)
        size += len(line)
        rows += 1
        batch.append(orjson.loads(line))
        if len(batch) >= 512:
            out.write(orjson.dumps({"rows": batch}) + b"\n")
            batch = []
    out.write(orjson.dumps({"rows": batch}) + b"\n")


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(code).name
    except ValueError:
        return f"signal {code}"


def run_statement(db: Path, statement: str, params: dict[str, Any] | None = None,
                  limits: dict[str, int] | None = None, grace: float = GRACE_SECONDS) -> dict[str, Any]:
    """``statement`` (already through the gate) on the database ``db`` in a sandboxed
    child: ``{"columns", "rows"}`` (and ``"truncated"``: the rows kept, when cut)."""
    from oracl.core.children import python_command

    lim = {**LIMITS, **(limits or {})}
    request = orjson.dumps({"db": str(db), "statement": statement, "params": params or {}, "limits": lim})
    proc = subprocess.Popen(python_command("from oracl.face.sandbox import _child_main\n_child_main()"),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd="/", env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "HOME": "/nonexistent",
                                          "TMPDIR": "/nonexistent"})
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(request)
    proc.stdin.close()
    deadline = time.monotonic() + lim["timeout_ms"] / 1000 + grace
    chunks: list[bytes] = []
    err = b""
    size = 0
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    open_fds = {out_fd, err_fd}  # both pipes drained: a chatty child never blocks (and no file grows)
    try:
        while open_fds:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SandboxError(f"the statement ran past {lim['timeout_ms'] // 1000} s and was stopped")
            ready, _, _ = select.select(list(open_fds), [], [], min(left, 1.0))
            for fd in ready:
                data = os.read(fd, 1 << 20)
                if not data:
                    open_fds.discard(fd)
                elif fd == err_fd:
                    err = (err + data)[-4096:]
                else:
                    size += len(data)
                    if size > lim["max_bytes"] * 2 + (1 << 20):
                        raise SandboxError("the statement's answer grew past the console's limit and was stopped")
                    chunks.append(data)
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    finally:
        proc.stdout.close()
        proc.stderr.close()
    return _answer(b"".join(chunks), code, err)


def _answer(data: bytes, code: int, err: bytes = b"") -> dict[str, Any]:
    lines = [orjson.loads(line) for line in data.splitlines() if line.strip()]
    for line in lines:
        if "error" in line:
            cls, message = line["error"]
            if cls == "SandboxError":
                raise SandboxError(message)
            raise QueryError(str(message).removeprefix("query failed: "))
    if code < 0:
        raise SandboxError(f"the engine stopped on this statement ({_signal_name(-code)}); nothing else was "
                           "affected")
    if code != 0 or not lines or "columns" not in lines[0]:
        last = (err.decode("utf-8", "replace").strip().splitlines() or [""])[-1][:200]
        raise SandboxError(f"the console's child ended without an answer (exit code {code}"
                           + (f": {last}" if last else "") + ")")
    result: dict[str, Any] = {"columns": lines[0]["columns"], "rows": []}
    if "notice" in lines[0]:
        result["notice"] = lines[0]["notice"]
    for line in lines[1:]:
        result["rows"].extend(line.get("rows", []))
        if "truncated" in line:
            result["truncated"] = line["truncated"]
    return result
