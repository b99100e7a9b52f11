"""The build's per-file work on a Ray cluster (``oracl build --executor ray[=ADDRESS]``).

Phase 1 (read, hash, tag and extract every file) is the only per-file work of a build; it
runs here as Ray tasks over batches of files, whose results stream back to the driver as
each batch finishes (``ray.wait``), in whatever order they come. Everything else, the
global phases, the bundle and the export, runs in the driver exactly as in process: the
export is byte for byte the in-process executor's (a test holds them equal). A task whose
worker dies is run again by Ray (``max_retries``); a batch that raises fails the build
with the batch's error, as a child's would.

The workers read the files themselves: on a cluster, the tree must be at the same path
on every node (a shared filesystem, or a checkout per node), as Ray's own ``working_dir``
would otherwise copy it. ``ADDRESS`` is a running cluster's (``ray start --head`` prints
it, or ``auto``); without one, a local cluster of this machine's cores is started for the
build and stopped after it. Ray is optional: ``pip install 'oracl[ray]'``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from oracl.builder.executor import InProcess, Processes, Task
from oracl.core.children import import_path
from oracl.core.errors import ChildError, ConfigError

R = TypeVar("R")
T = TypeVar("T")
BATCH = 256              # files per task: a task's overhead (~ms) against ~1 ms per file
MAX_RETRIES = 3          # a task whose worker died is run again this many times
CONNECT_TIMEOUT_S = 5    # a head that does not accept a connection in this long is not reachable
FAULT_ENV = "ORACL_FAULT"  # "ray worker": the first attempt of the first batch kills its worker


def _run_batch(fn: Callable[[Any], Any], items: Sequence[Any], marker: str | None) -> list[Any]:
    if marker and os.environ.get(FAULT_ENV) == "ray worker" and not os.path.exists(marker):
        with open(marker, "w"):  # the retry finds it and goes on
            pass
        os._exit(1)  # a worker lost mid-build, the way a node's OOM killer would
    return [fn(item) for item in items]


class RayExecutor(InProcess):
    """``map`` as Ray tasks; ``submit_fresh`` (the full-text index) in a new interpreter, as
    the processes executor does (fork+exec is safe beside Ray's threads); every other task
    in process (a plain fork is not)."""

    kind = "ray"
    distributed = True  # read() hands every file to ``map``, however few

    def __init__(self, address: str | None = None, num_cpus: int | None = None) -> None:
        try:
            import ray
        except ModuleNotFoundError:
            raise ConfigError("--executor ray needs Ray: pip install 'oracl[ray]'") from None
        self._ray = ray
        self._started = False
        self._fresh = Processes()
        if not ray.is_initialized():
            _init(ray, address, num_cpus)
            self._started = True

    def map(self, what: str, fn: Callable[[Any], R], items: Sequence[Any], workers: int,
            init: Callable[[], None] | None = None, batch: int | None = None) -> Iterator[R]:
        del workers, init
        batch = batch or int(os.environ.get("ORACL_RAY_BATCH", BATCH))
        ray = self._ray
        remote = ray.remote(max_retries=MAX_RETRIES, retry_exceptions=False)(_run_batch)
        fn_ref = ray.put(fn)
        marker = os.environ.get("ORACL_FAULT_MARKER")
        pending = [remote.remote(fn_ref, list(items[i:i + batch]), marker if i == 0 else None)
                   for i in range(0, len(items), batch)]
        try:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                try:
                    rows = ray.get(done[0])
                except ray.exceptions.RayTaskError as exc:
                    cause = exc.cause if getattr(exc, "cause", None) is not None else exc
                    from oracl.core import errors

                    known = getattr(errors, type(cause).__name__, None)
                    if isinstance(known, type) and issubclass(known, errors.OraclError):
                        raise known(str(cause)) from None
                    raise ChildError(f"{what} failed on Ray: {type(cause).__name__}: {cause}") from None
                except ray.exceptions.WorkerCrashedError as exc:
                    raise ChildError(f"{what}: a Ray worker died {MAX_RETRIES + 1} times ({exc})") from None
                yield from rows
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)

    def submit_fresh(self, what: str, fn: Callable[..., T], *args: Any) -> Task[T]:
        return self._fresh.submit_fresh(what, fn, *args)

    def join(self, task: Task[T]) -> T:
        if task.pid:  # a fresh interpreter's
            return self._fresh.join(task)
        return super().join(task)

    def close(self) -> None:
        self._fresh.close()
        if self._started and self._ray.is_initialized():
            self._ray.shutdown()
            self._started = False


@contextlib.contextmanager
def _isolated_start(local: bool) -> Iterator[None]:
    """Ray's workers start as the default executor's children do (design §11): Ray puts the
    driver's working directory on every worker's ``sys.path`` (so a ``pyarrow/`` in the tree
    being built would be imported by each worker) and a local cluster's workers inherit
    ``PYTHONPATH``. While Ray starts, the working directory is the folder Ray itself was
    installed in (already on the path) and, for a local cluster, ``PYTHONPATH`` is exactly
    ``import_path()``: this interpreter's path without the working directory."""
    import ray

    here = os.getcwd()
    saved = {k: os.environ.get(k) for k in ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONUSERBASE")}
    os.chdir(os.path.dirname(os.path.dirname(os.path.abspath(ray.__file__))))
    if local:
        os.environ["PYTHONPATH"] = os.pathsep.join(import_path())
        os.environ.pop("PYTHONSTARTUP", None)
        os.environ.pop("PYTHONUSERBASE", None)
    try:
        yield
    finally:
        os.chdir(here)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _init(ray: Any, address: str | None, num_cpus: int | None) -> None:
    """``ray.init``; an ``ADDRESS`` (host:port) that does not accept a connection within
    ``CONNECT_TIMEOUT_S`` is one ``ConfigError``, never a hang."""
    import socket

    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False,
                              "ignore_reinit_error": True}
    if address:
        if address != "auto":
            host, _, port = address.removeprefix("ray://").rpartition(":")
            if not host or not port.isdigit():
                raise ConfigError(f"--executor ray={address}: give HOST:PORT (the head's, `ray start --head` prints it) or auto")
            try:
                socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S).close()
            except OSError as exc:
                raise ConfigError(f"cannot reach the Ray cluster at {address}: {exc.strerror or exc}") from None
        kwargs["address"] = address
    else:
        kwargs["num_cpus"] = num_cpus or os.cpu_count() or 1
        kwargs["_node_ip_address"] = "127.0.0.1"  # a local cluster is this machine's alone
    try:
        with _isolated_start(local=not address):
            ray.init(**kwargs)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise ConfigError(f"cannot reach the Ray cluster at {address or 'a local cluster'}: {first}") from None
