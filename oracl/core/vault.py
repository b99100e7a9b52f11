"""The vault (``.oracl/`` under the indexed root): its paths and atomic writes.

Every write goes to a temp file in the same folder and is moved into place with
``os.replace``, so a reader sees the old file or the new one, never half of one.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import stat
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from oracl.core.errors import NoBuildError, RootError, VaultError

VAULT = ".oracl"
EXPORT = "weighted_graph_index.json"   # the canonical export's name: `oracl export` writes it on demand
EXPORT_INDEX = "export.idx"     # a bundle's export: its header and the digest of each part (core/parts.py)
PARTS_DIR = "parts"             # the vault's content-addressed parts of every kept export
# the files of a bundle (named here so callers need not import the engine or the build)
DB_FILE = "graph.kuzu"
HEADER_FILE = "header.json"     # the build's header: parameters, counts, commit (what readers use)
STAT_FILE = "stat.bin"          # path → size, mtime, checksum, ctime (what `oracl status` compares)
EVENTS_FILE = "events/events.jsonl"   # what oracl ingest stored (the vault's; phase 6 reads it)
EVENTS_BUNDLE_FILE = "events.json"   # the event nodes and edges a build took (what readers use)
EVENTS_INDEX_FILE = "events.index.json"  # where each file's events sit in events.json and events.jsonl (what the next build reuses)
LEARN_DECISIONS = "learn/decisions.jsonl"  # oracl learn accept / reject, one line per decision
LEARNED_FILE = "learned.json"   # the learned terms and associations the build merged (what the query plane reads)
SYMBOLS_FILE = "symbols.seg"    # the symbol graph's export rows, per file (what a selective build reuses)
FACTS_FILE = "facts.bin"        # every file's Phase 1 facts (what a selective build reuses)
INTERFACE_FILE = "interface.json"  # the packages a build provides and requires, and its imports of them (a workspace's joins)
MANIFEST = "manifest.json"      # the SHA-256 of every other file of the bundle
MANIFEST_SIG = "manifest.json.sig"  # the signature of the manifest (when a key is configured)
# what a reader may be handed to rebuild a missing or damaged bundle: (root, the problem) →
# (the new build id, what the export was checked with); the face passes the bundle plane's
Repair = Callable[[Path, str], tuple[str, str]]
READERS_LOCK = "readers.lock"   # shared-locked by every snapshot reading the bundle
LEARNED_KIND = "learned:"       # + the file's name: what a learned file's seal binds it to (core.seal)
LATEST_KIND = "latest"          # what the seal of LATEST.json binds it to (core.seal)


_BUNDLE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class Vault:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.dir = root / VAULT

    @property
    def export_index(self) -> Path:
        """The top-level copy of the latest bundle's export index (a hard link)."""
        return self.dir / EXPORT_INDEX

    @property
    def parts(self) -> Path:
        return self.dir / PARTS_DIR

    @property
    def mirror(self) -> Path:
        return self.dir / "mirror"

    @property
    def latest(self) -> Path:
        return self.mirror / "LATEST.json"

    def bundle(self, build_id: str) -> Path:
        """The folder of a bundle; a name that could leave ``mirror/`` (read from a
        LATEST.json that may be hostile) is a VaultError."""
        if not _BUNDLE_NAME.fullmatch(build_id) or ".." in build_id:
            raise VaultError(f"LATEST.json names the bundle {build_id[:60]!r}, which is not a bundle name")
        return self.mirror / build_id

    def create(self) -> None:
        """The vault folder, with a ``.gitignore`` of ``*`` so that git ignores the vault
        (itself included) without the repository's own ``.gitignore`` naming it. Every
        folder a build writes in is checked first: none may be a symbolic link (``no_links``)."""
        make_dirs(self.dir)
        for sub in ("mirror", "edits", "events", "learn", "logs", "snapshots", PARTS_DIR):
            no_links(self.dir / sub)
        ignore = self.dir / ".gitignore"
        if not ignore.exists():
            atomic_write(ignore, b"# written by oracl: the vault is a build output, never committed\n*\n")

    def read_json(self, path: Path) -> Any:
        """A vault JSON file; NoBuildError when it is missing, VaultError when unreadable."""
        try:
            return orjson.loads(read_control(path))
        except FileNotFoundError:
            raise NoBuildError(f"no build in {self.dir}: run `oracl build {self.root}` first") from None
        except (OSError, orjson.JSONDecodeError):
            raise VaultError(f"{path} is unreadable or truncated; run `oracl build` again") from None

    def read_latest(self) -> dict:
        """The LATEST pointer; NoBuildError when there is none or when this user's ORACL did
        not write it (a vault that came with the tree, design §11), VaultError when unreadable."""
        from oracl.core.seal import read_sealed

        data = self.read_json(self.latest)
        if read_sealed(self.latest, LATEST_KIND) is None:
            raise NoBuildError(f"{self.latest} was not written by your oracl (it came with the tree, or "
                               f"the vault key changed), so it is not trusted: run `oracl build {self.root}`")
        if not isinstance(data, dict) or "build_id" not in data:
            raise VaultError(f"{self.latest} does not name a build; run `oracl build` again")
        return data


MAX_CONTROL_BYTES = 256 << 20  # a vault control file (LATEST, a journal, a learned file) is far smaller


def read_control(path: Path, limit: int = MAX_CONTROL_BYTES) -> bytes:
    """A vault control file's bytes, read as the tree's files are: the last component is
    not followed when it is a symlink, nothing blocks, only a regular file is read, and at
    most ``limit`` bytes (a vault that came with the tree can hold a link to /dev/zero or a
    FIFO where LATEST.json should be). FileNotFoundError when missing, OSError otherwise."""
    with open_regular(path) as fh:
        if os.fstat(fh.fileno()).st_size > limit:
            raise OSError(f"{path} is over {limit} bytes")
        return fh.read(limit + 1)[:limit]


def open_regular(path: Path) -> Any:
    """A vault file opened for reading (binary) only when it is a regular file: the last
    component is not followed when it is a link, and nothing blocks. OSError otherwise
    (FileNotFoundError when missing)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    fh = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        fh.close()
        raise OSError(f"{path} is not a regular file")
    return fh


def json_or_none(path: Path, error: type[Exception]) -> Any:
    """The JSON of a vault file a person may edit (the learned files, the proposals): None
    when it does not exist, ``error`` naming the file when it is not readable JSON."""
    try:
        return orjson.loads(read_control(path))
    except FileNotFoundError:
        return None
    except (OSError, orjson.JSONDecodeError) as exc:
        raise error(f"{path.name} is not readable JSON ({exc}); it was left as it is") from None


def no_links(path: Path) -> None:
    """VaultError when ``path`` or a folder between it and the vault (``.oracl`` included)
    is a symbolic link: a vault that came with the tree can hold ``.oracl/events ->
    ~/.ssh`` or ``LATEST.json -> ~/.bashrc``, and nothing the vault writes may land outside
    it. A few ``lstat`` calls, nothing more."""
    parts = path.parts
    if VAULT not in parts:
        return
    start = len(parts) - 1 - parts[::-1].index(VAULT)
    for i in range(start, len(parts)):
        here = Path(*parts[: i + 1])
        try:
            st = os.lstat(here)
        except FileNotFoundError:
            return
        if stat.S_ISLNK(st.st_mode):
            raise VaultError(f"{here} is a symbolic link (it came with the tree?); the vault writes nothing "
                             "through it: remove it")


def make_dirs(folder: Path) -> None:
    """``folder`` made when missing, with no symbolic link on its way inside the vault."""
    no_links(folder)
    folder.mkdir(parents=True, exist_ok=True)
    no_links(folder)


def atomic_write(path: Path, data: bytes, durable: bool = True) -> None:
    """``data`` at ``path``, whole or not at all: a temporary file beside it (made new,
    never through whatever stood at its name), renamed over it (a link that stood at
    ``path`` is replaced, never followed). The folders on the way may not be links.
    ``durable=False``: not synced to the disk first (a cache whose loss after a power cut
    only costs a full build: the facts shards; 256 fsyncs cost 0.14 s here against 0.09 s)."""
    make_dirs(path.parent)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)  # never written through: whatever stood there (a planted link) goes
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        if durable:
            os.fsync(fh.fileno())
    os.replace(tmp, path)


def append_fd(path: Path) -> int:
    """A descriptor appending to a vault log (events, the health history, decisions, the
    usage logs), made when missing. A symbolic link or anything but a regular file standing
    there came with the tree (this user's oracl writes none): it is removed, never written
    through, and the log starts again. The caller closes the descriptor."""
    make_dirs(path.parent)
    flags = os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    for _ in range(3):
        try:
            fd = os.open(path, flags | os.O_CREAT, 0o644)
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENXIO):  # a link; a FIFO nobody reads
                raise
            os.unlink(path)
            continue
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
        os.close(fd)
        os.unlink(path)
    raise VaultError(f"{path} keeps being replaced by something that is not a regular file; nothing was appended")


def fsync_dir(directory: Path) -> None:
    """Make a folder's entries (a rename into it) durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """An exclusive lock on ``folder/.lock`` (the folder made when missing): one writer of
    the folder's files at a time (ingest, learn, an agent's edit); the next one waits."""
    make_dirs(folder)
    fd = os.open(folder / ".lock", os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def check_root(root: Path) -> None:
    """RootError unless ``root`` is an existing directory."""
    try:
        st = os.stat(root)
    except FileNotFoundError:
        raise RootError(f"root {str(root)!r} does not exist") from None
    except OSError as exc:
        raise RootError(f"root {str(root)!r} cannot be read: {exc.strerror}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise RootError(f"root {str(root)!r} is not a directory")
    if not os.access(root, os.R_OK | os.X_OK):
        raise RootError(f"root {str(root)!r} cannot be read: permission denied")


def new_build_id(now: datetime) -> str:
    """A bundle's name: the build's UTC time to the microsecond and the builder's pid."""
    return now.strftime("%Y%m%dT%H%M%S") + f"{now.microsecond:06d}Z-{os.getpid() % 100000:05d}"


IDENTITY = "identity:"  # how a manifest names a file sealed by what it is on this disk, not by a digest


def file_identity(path: Path) -> str:
    """A database's seal in its bundle's manifest: its size and mtime (to the nanosecond).
    Any write to the file after the seal moves its mtime, so a damaged database is found
    without reading it (hashing a 300 MB database cost every rebuild ~0.2–0.5 s), and a
    vault copied with its times (``cp -a``, ``rsync -t``) still matches; what the file
    holds is checked by ``oracl verify`` against the signed export, row by row."""
    st = os.stat(path, follow_symlinks=False)
    if not stat.S_ISREG(st.st_mode):
        raise OSError(f"{path} is not a regular file")
    return f"{IDENTITY}{st.st_size}:{st.st_mtime_ns}"


def file_matches(path: Path, recorded: str) -> bool:
    """Whether ``path`` is the file a manifest entry names: by identity for one sealed so
    (``file_identity``), else by its SHA-256."""
    try:
        if recorded.startswith(IDENTITY):
            return file_identity(path) == recorded
        from oracl.core.export import sha256_file

        return sha256_file(path) == recorded
    except OSError:
        return False
