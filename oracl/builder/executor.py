"""The one owner of a build's child processes.

A build hands its side work (reading files, the full-text index, ranking, writing the
export and the vault's JSON-lines files) to an ``Executor`` and joins it later:

* ``InProcess`` runs every task at once in the calling process: tests, the library
  (``oracl.build``) and long-lived servers, which may hold an engine or threads of their
  own, never fork.
* ``Processes`` (the CLI) runs each task in a forked child that dies with the build, so
  work that only reads the build's rows overlaps the next step on the other core. It
  refuses to fork while this process holds an open database or runs another thread
  (a fork copies neither safely).

One error protocol for both: a task's error is raised by ``join``, never by ``submit``;
an ``OraclError`` comes back as the same class with its message; any other exception is
re-raised as it is in process and becomes a ``ChildError`` naming the task and the
exception's class from a child. ``close`` ends every child still running: a
failed build never waits for its helpers.

>>> ex = InProcess()
>>> task = ex.submit("adding", lambda: 1 + 1)
>>> ex.join(task)
2
"""

from __future__ import annotations

import contextlib
import os
import pickle
import selectors
import signal
import struct
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from oracl.core import errors
from oracl.core.children import die_with_parent
from oracl.core.errors import ChildError, OraclError

T = TypeVar("T")
R = TypeVar("R")
_FRAME = struct.Struct("<Q")


@dataclass(slots=True)
class Task(Generic[T]):
    what: str
    pid: int = 0
    fd: int = -1
    value: Any = None
    error: tuple[str, str] | None = None   # (class name, message) from a child
    raised: BaseException | None = None    # the exception itself, in process
    done: bool = False


def _raise(what: str, cls: str, message: str) -> None:
    known = getattr(errors, cls, None)
    if isinstance(known, type) and issubclass(known, OraclError):
        raise known(message)
    raise ChildError(f"{what} failed: {cls}: {message}")


def _describe(exc: BaseException) -> tuple[str, str]:
    return type(exc).__name__, str(exc)


class InProcess:
    """Every task runs at once, here; nothing is forked."""

    kind = "in-process"

    def submit(self, what: str, fn: Callable[[], T]) -> Task[T]:
        task: Task[T] = Task(what)
        try:
            task.value = fn()
        except Exception as exc:  # noqa: BLE001 – raised by join, as a child's would be
            task.raised = exc
        task.done = True
        return task

    def join(self, task: Task[T]) -> T:
        if task.raised is not None:
            raise task.raised
        return task.value

    def submit_fresh(self, what: str, fn: Callable[..., T], *args: Any) -> Task[T]:
        return self.submit(what, lambda: fn(*args))

    def map(self, what: str, fn: Callable[[Any], R], items: Sequence[Any], workers: int,
            init: Callable[[], None] | None = None) -> Iterator[R]:
        del workers, init
        for item in items:
            yield fn(item)

    def close(self) -> None:
        pass


@dataclass(slots=True)
class Processes:
    """Each task in a forked child; ``map`` over ``workers`` forked readers."""

    kind: str = "processes"
    running: list[Task[Any]] = field(default_factory=list)
    pool: list[tuple[int, int]] = field(default_factory=list)  # (pid, fd) of map workers

    def _check_fork(self, what: str) -> None:
        store = sys.modules.get("oracl.core.store")  # not loaded: no engine can be open
        engines = store.open_engines() if store is not None else []
        if engines:
            raise ChildError(f"{what}: refusing to fork while this process holds an open database "
                             f"({engines[0]}); build with the in-process executor instead")
        if threading.active_count() > 1:
            names = ", ".join(t.name for t in threading.enumerate() if t is not threading.current_thread())
            raise ChildError(f"{what}: refusing to fork while other threads run ({names}); "
                             "build with the in-process executor instead")

    def _fork(self, what: str, body: Callable[[int], None]) -> tuple[int, int]:
        self._check_fork(what)
        read_fd, write_fd = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            code = 1
            try:
                os.close(read_fd)
                die_with_parent(parent)
                body(write_fd)
                code = 0
            finally:
                os._exit(code)
        os.close(write_fd)
        return pid, read_fd

    def submit(self, what: str, fn: Callable[[], T]) -> Task[T]:
        def body(fd: int) -> None:
            try:
                payload = ("ok", fn())
            except BaseException as exc:  # noqa: BLE001 – reported to the parent, which raises it
                payload = ("error", *_describe(exc))
            _write_frame(fd, payload)

        pid, fd = self._fork(what, body)
        task: Task[T] = Task(what, pid, fd)
        self.running.append(task)
        return task

    def submit_fresh(self, what: str, fn: Callable[..., T], *args: Any) -> Task[T]:
        """``fn(*args)`` in a new interpreter (``fn`` a module-level function, ``args``
        picklable): for work whose memory must not sit on a copy of this process's (the
        full-text index holds a buffer pool of its own). Started with fork+exec, which is
        safe beside threads, by an isolated interpreter that cannot import anything from
        the working directory or the tree being indexed (``oracl.core.children``)."""
        import subprocess

        from oracl.core.children import python_command

        cmd = python_command("from oracl.builder.executor import _fresh_main\n_fresh_main()", str(os.getpid()))
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert proc.stdin is not None and proc.stdout is not None
        _write_frame(proc.stdin, (fn.__module__, fn.__qualname__, args))
        proc.stdin.close()
        task: Task[T] = Task(what, proc.pid, os.dup(proc.stdout.fileno()))
        proc.stdout.close()
        proc.returncode = 0  # reaped by join / close with os.waitpid, not by Popen
        self.running.append(task)
        return task

    def join(self, task: Task[T]) -> T:
        if task.raised is not None:  # a task this executor chose to run in process
            raise task.raised
        if not task.done:
            self.running.remove(task)
            with os.fdopen(task.fd, "rb") as fh:
                frame = _read_frame(fh)
            _, status = os.waitpid(task.pid, 0)
            task.done = True
            if frame is None:
                task.error = ("ChildError", f"the process died (wait status {status})")
            elif frame[0] == "ok":
                task.value = frame[1]
            else:
                task.error = (frame[1], frame[2])
        if task.error is not None:
            if task.error[0] == "ChildError":
                raise ChildError(f"{task.what}: {task.error[1]}")
            _raise(task.what, *task.error)
        return task.value

    def map(self, what: str, fn: Callable[[Any], R], items: Sequence[Any], workers: int,
            init: Callable[[], None] | None = None, chunk: int = 64) -> Iterator[R]:
        """``fn`` over ``items`` in ``workers`` forked children (chunk i to worker i mod n);
        results come in the order they are ready."""
        if workers <= 1 or len(items) <= chunk:
            yield from (fn(item) for item in items)
            return
        chunks = [items[i:i + chunk] for i in range(0, len(items), chunk)]
        for w in range(min(workers, len(chunks))):
            def body(fd: int, mine: list[Sequence[Any]] = chunks[w::workers]) -> None:
                if init is not None:
                    init()
                with os.fdopen(fd, "wb", buffering=1 << 20) as out:
                    for part in mine:
                        try:
                            rows = [fn(item) for item in part]
                        except BaseException as exc:  # noqa: BLE001 – reported to the parent
                            _write_frame(out, ("error", *_describe(exc)))
                            return
                        _write_frame(out, ("ok", rows))
            self.pool.append(self._fork(what, body))
        sel = selectors.DefaultSelector()
        readers = {fd: os.fdopen(fd, "rb", buffering=1 << 20) for _, fd in self.pool}
        for fh in readers.values():
            sel.register(fh, selectors.EVENT_READ)
        try:
            while readers:
                for key, _ in sel.select():
                    fh = key.fileobj
                    frame = _read_frame(fh)
                    if frame is None:
                        sel.unregister(fh)
                        fd = fh.fileno()
                        del readers[fd]
                        pid = next(p for p, f in self.pool if f == fd)
                        self.pool.remove((pid, fd))
                        fh.close()
                        _, status = os.waitpid(pid, 0)
                        if status != 0:
                            raise ChildError(f"{what}: a worker died (wait status {status})")
                        continue
                    if frame[0] != "ok":
                        _raise(what, frame[1], frame[2])
                    yield from frame[1]
        finally:
            sel.close()
            for fh in readers.values():
                fh.close()

    def cancel(self, task: Task[Any]) -> None:
        """End ``task``'s child, its answer no longer wanted (``Later``'s, told nothing)."""
        if not task.done and task in self.running:
            self.running.remove(task)
            _kill(task.pid)
            os.close(task.fd)
            task.done = True

    def close(self) -> None:
        """End every child still running (a failed build), and reap them."""
        for task in list(self.running):
            self.running.remove(task)
            _kill(task.pid)
            os.close(task.fd)
        for pid, _fd in list(self.pool):
            _kill(pid)
        self.pool.clear()


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


class Later:
    """What a task forked now is told later, once its parent knows it: a pipe made before
    the fork (``Later()``), whose read end the child takes (``receive``, in the task) and
    whose write end the parent keeps (``tell``: one frame, then closed). Frames are
    length-prefixed, so an end held open by a sibling forked in between never keeps the
    child waiting for an end of file; a child told nothing ends with its parent or with
    ``Processes.cancel``."""

    __slots__ = ("read_fd", "told", "write_fd")

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        self.told = False

    def close(self) -> None:
        """(the parent's) Its end closed without telling: the child gets None."""
        if not self.told:
            self.told = True
            with contextlib.suppress(OSError):
                os.close(self.write_fd)

    def __del__(self) -> None:  # (a build that failed before telling: its end closed all the same)
        self.close()

    def receive(self) -> Any:
        """(the child's) What the parent tells, None when it closed its end first."""
        self.told = True  # (this copy's write end: closed here, never again)
        os.close(self.write_fd)
        with os.fdopen(self.read_fd, "rb") as fh:
            return _read_frame(fh)

    def forked(self) -> None:
        """(the parent's, once the child is forked) Its copy of the read end closed."""
        os.close(self.read_fd)

    def tell(self, payload: Any) -> None:
        """(the parent's) ``payload`` to the child, once; a child that died is not told."""
        if self.told:
            return
        self.told = True
        try:
            _write_frame(self.write_fd, payload)
        except BrokenPipeError:
            pass
        finally:
            os.close(self.write_fd)


def _write_frame(out: Any, payload: Any) -> None:
    data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    blob = _FRAME.pack(len(data)) + data
    if isinstance(out, int):
        view = memoryview(blob)
        while view:
            view = view[os.write(out, view):]
    else:
        out.write(blob)


def _read_frame(fh: Any) -> Any:
    """One frame from a child (pickled by this build's own code), None at end of file."""
    head = fh.read(_FRAME.size)
    if len(head) < _FRAME.size:
        return None
    (n,) = _FRAME.unpack(head)
    data = fh.read(n)
    if len(data) < n:
        return None
    return pickle.loads(data)  # noqa: S301 – written by a fork of this process, never read from disk


def _fresh_main() -> None:
    """``python -I -c … PARENT`` (``Processes.submit_fresh``): run one task sent on stdin,
    answer on stdout."""
    import importlib

    die_with_parent(int(sys.argv[1]))
    stdin = sys.stdin.buffer
    stdout = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything the task prints goes to stderr, never into the answer
    try:
        module, name, args = _read_frame(stdin)
        fn: Any = importlib.import_module(module)
        for part in name.split("."):
            fn = getattr(fn, part)
        payload: Any = ("ok", fn(*args))
    except BaseException as exc:  # noqa: BLE001 – reported to the parent, which raises it
        payload = ("error", *_describe(exc))
    _write_frame(stdout, payload)
    stdout.flush()


def executor(kind: str) -> InProcess | Processes:
    """``in-process``, ``processes``, or ``ray`` / ``ray=ADDRESS`` (``ray_executor``: the
    per-file work as tasks on a Ray cluster)."""
    if kind == "processes":
        return Processes()
    if kind == "in-process":
        return InProcess()
    if kind == "ray" or kind.startswith("ray="):
        from oracl.builder.ray_executor import RayExecutor

        return RayExecutor(kind.partition("=")[2] or None)
    raise errors.ConfigError(f"unknown executor {kind!r}: in-process, processes, ray or ray=ADDRESS")

