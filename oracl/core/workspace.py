"""Reading the indexed tree on behalf of a reader (and of the build), treating the disk as
hostile.

A path named by a build is resolved to its real path, which must lie under the root's
real path; the file is then opened component by component from the root with
``O_NOFOLLOW`` (a symlink swapped in after the check is never followed), with
``O_NONBLOCK`` (a FIFO never blocks the open), and checked to be a regular file on the
opened descriptor. Only what is needed is read: a line range stops at its last line, a
digest streams. Anything else is an ``UnsafePathError``, at once. Every line served is
redacted (``oracl.core.secrets``): the file may hold a secret the build never saw.

>>> ws = Workspace(Path("repo"))                       # doctest: +SKIP
>>> ws.read_lines("pkg/auth.py", 1, 3)                 # doctest: +SKIP
(['import hashlib', '', 'def sign(data):'], False)
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat as stat_mod
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from oracl.core.errors import UnsafePathError
from oracl.core.secrets import Redactor, join_split_lines, redact_text, suffix_of

CHUNK = 1 << 20
MAX_LINE = 1 << 20  # a longer line is quoted up to here
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
REDACTED_CACHE_CHARS = 32 << 20


class TextLru:
    """Texts by key up to ``limit`` characters, least recently used first out (the newest
    is kept even alone over the bound); one lock, since a reader's threads share it."""

    def __init__(self, limit: int) -> None:
        self.limit, self.size = limit, 0
        self._texts: OrderedDict[Hashable, str] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> str | None:
        with self._lock:
            text = self._texts.get(key)
            if text is not None:
                self._texts.move_to_end(key)
            return text

    def put(self, key: Hashable, text: str) -> None:
        with self._lock:
            old = self._texts.pop(key, None)
            self.size += len(text) - (len(old) if old is not None else 0)
            self._texts[key] = text
            while self.size > self.limit and len(self._texts) > 1:
                self.size -= len(self._texts.popitem(last=False)[1])

    def keys(self) -> list[Hashable]:
        with self._lock:
            return list(self._texts)


# the texts ``read_text`` gave, redacted, by the file they were read from as its
# descriptor's stat names it (device, inode, size, mtime and ctime: any write moves the
# ctime) with the limit and the suffix the redaction used. A long-lived reader (``oracl
# watch`` and MCP beside it, ``Memory``) opens a snapshot per build, and each query read its
# best candidates again and scanned them for secrets: ~50 ms of a search on sympy
_REDACTED = TextLru(REDACTED_CACHE_CHARS)


class Workspace:
    """The tree under ``root``, opened only for regular files inside it."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.real = os.path.realpath(root)

    def resolve(self, rel: str) -> str:
        """The real path of ``rel`` relative to the root's real path; UnsafePathError when
        it lies outside the root. FileNotFoundError when it does not exist."""
        if not rel or "\0" in rel or os.path.isabs(rel):
            raise UnsafePathError(f"{rel[:80]!r} is not a path inside the root")
        real = os.path.realpath(os.path.join(self.real, rel))
        inside = os.path.relpath(real, self.real)
        if inside == "." or inside == ".." or inside.startswith(".." + os.sep):
            raise UnsafePathError(f"{rel} resolves outside the root ({real}); refused")
        if not os.path.lexists(real):
            raise FileNotFoundError(rel)
        return inside

    def open_fd(self, rel: str) -> tuple[int, os.stat_result]:
        """A read-only descriptor of the regular file ``rel`` and its stat (from the
        descriptor). FileNotFoundError when it is gone; UnsafePathError for anything
        that is not a regular file inside the root; OSError for other read failures."""
        parts = self.resolve(rel).split(os.sep)
        fd = os.open(self.real, _DIR_FLAGS)
        try:
            for part in parts[:-1]:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = nxt
            try:
                ffd = os.open(parts[-1], _FILE_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno == errno.ELOOP:  # swapped for a symlink since it was resolved
                    raise UnsafePathError(f"{rel} is no longer a regular file inside the root; refused") from None
                if exc.errno == errno.ENXIO:  # a socket cannot be opened
                    mode = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False).st_mode
                    raise UnsafePathError(f"{rel} is a {_kind(mode)}, not a regular file; refused") from None
                raise
        except NotADirectoryError:
            raise UnsafePathError(f"{rel}: a folder on its path was swapped for something else; refused") from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UnsafePathError(f"{rel}: a folder on its path was swapped for a symlink; refused") from None
            raise
        finally:
            os.close(fd)
        st = os.fstat(ffd)
        if not stat_mod.S_ISREG(st.st_mode):
            os.close(ffd)
            raise UnsafePathError(f"{rel} is a {_kind(st.st_mode)}, not a regular file; refused")
        return ffd, st

    @contextmanager
    def open(self, rel: str) -> Iterator[tuple[BinaryIO, os.stat_result]]:
        fd, st = self.open_fd(rel)
        with os.fdopen(fd, "rb") as fh:
            yield fh, st

    def read_head(self, rel: str, limit: int) -> bytes:
        """At most ``limit`` leading bytes of ``rel``."""
        with self.open(rel) as (fh, _):
            return fh.read(limit)

    def read_text(self, rel: str, limit: int) -> str:
        """The first ``limit`` bytes of ``rel`` as text, secrets redacted (the same file
        unchanged since: the text redacted before, ``_REDACTED``)."""
        suffix = suffix_of(rel)
        with self.open(rel) as (fh, st):
            key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, limit, suffix)
            text = _REDACTED.get(key)
            if text is not None:
                return text
            raw = fh.read(limit)
        text = redact_text(raw.decode("utf-8", "replace"), suffix)
        _REDACTED.put(key, text)
        return text

    def sha256(self, rel: str) -> str:
        """The SHA-256 of ``rel``, streamed (never loaded whole)."""
        with self.open(rel) as (fh, _):
            return hashlib.file_digest(fh, "sha256").hexdigest()

    def read_lines(self, rel: str, start: int, end: int) -> tuple[list[str], int, str, os.stat_result]:
        """Lines ``start``..``end`` (1-based, inclusive) of ``rel`` with their secrets
        redacted, the file's line count, the SHA-256 of the whole file and its stat –
        streamed, so a line range of a 200 MB file holds only its lines."""
        out: list[str] = []
        redactor = Redactor(suffix_of(rel))  # every line from the first: a key block spans lines
        newlines = 0
        last = b"\n"
        seen = 0  # lines split off so far, while the range is still being collected
        before = ""  # the line before the range: a token split over two lines starts there
        pending = b""
        h = hashlib.sha256()
        with self.open(rel) as (fh, st):
            for chunk in iter(lambda: fh.read(CHUNK), b""):
                h.update(chunk)
                newlines += chunk.count(b"\n")
                last = chunk[-1:]
                if seen >= end:
                    continue  # past the range: only the digest and the count need the bytes
                *lines, pending = (pending + chunk).split(b"\n")
                for raw in lines[: max(0, end - seen)]:
                    seen += 1
                    if seen >= start:
                        out.append(redactor.line(_text(raw))[0])
                    else:
                        before = _text(raw)
                        redactor.skip(before)  # only a key block's state matters before the range
                if len(pending) > MAX_LINE:  # a giant line: keep its head, find its end
                    pending = pending[:MAX_LINE]
            if pending and seen < end and seen + 1 >= start:
                out.append(redactor.line(_text(pending))[0])  # a last line without a newline
        total = newlines + (1 if last != b"\n" else 0)
        # a token split over two lines' literals, the line before the range included
        out = join_split_lines([before, *out])[1:] if start > 1 else join_split_lines(out)
        return out, total, h.hexdigest(), st


def _kind(mode: int) -> str:
    if stat_mod.S_ISFIFO(mode):
        return "FIFO"
    if stat_mod.S_ISSOCK(mode):
        return "socket"
    if stat_mod.S_ISCHR(mode) or stat_mod.S_ISBLK(mode):
        return "device"
    return "folder" if stat_mod.S_ISDIR(mode) else "special file"


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace").removesuffix("\r")
