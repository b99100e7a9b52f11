"""``oracl export``: the latest build's canonical export, written on demand.

The bytes are the bundle's own ``weighted_graph_index.json`` (design §7), checked against
the SHA-256 that ``LATEST.json`` records for the build before a byte reaches the
destination: to a file, they are written beside it and renamed into place only when the
digest matches (an existing file is never left half-written); to a stream, the file is
hashed first and copied only when it matches. A mismatch is a ``DigestError`` (exit code
11), as in ``oracl verify``. The snapshot's reader lock keeps the bundle from being pruned
while it is copied.

>>> with Snapshot.open(root) as snap:                          # doctest: +SKIP
...     export_to(snap, Path("graph.json")).sha256 == snap.latest["export_sha256"]
True
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from oracl.core.errors import ConfigError, DigestError
from oracl.core.vault import EXPORT
from oracl.read.snapshot import Snapshot

CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class Exported:
    build_id: str
    sha256: str
    bytes: int
    path: str | None      # the file written, None for a stream
    signature: str | None  # the bundle's signature file beside the export, when it has one

    def to_json(self) -> dict[str, object]:
        return {"build_id": self.build_id, "sha256": self.sha256, "bytes": self.bytes, "path": self.path,
                "signature": self.signature}


def _copy(src: Path, dest: BinaryIO | None) -> tuple[str, int]:
    """(SHA-256, bytes) of ``src``, copied into ``dest`` as it is read (hashed only when None)."""
    h = hashlib.sha256()
    n = 0
    with open(src, "rb") as fh:
        while chunk := fh.read(CHUNK):
            h.update(chunk)
            n += len(chunk)
            if dest is not None:
                dest.write(chunk)
    return h.hexdigest(), n


def _check(snap: Snapshot, digest: str) -> None:
    want = str(snap.latest.get("export_sha256", ""))
    if digest != want:
        raise DigestError(f"the export of build {snap.build_id} does not match the digest LATEST.json records "
                          f"({digest[:16]}… ≠ {want[:16]}…); nothing was written: run `oracl verify` and "
                          "`oracl repair`")


def export_to(snap: Snapshot, dest: Path | None, stream: BinaryIO | None = None) -> Exported:
    """Write ``snap``'s export to the file ``dest`` (atomically), or to ``stream`` when
    ``dest`` is None; the bytes are checked against LATEST's digest first."""
    src = snap.bundle / EXPORT
    sig = snap.bundle / (EXPORT + ".sig")
    signature = str(sig) if sig.is_file() else None
    if dest is None:
        if stream is None:
            raise ConfigError("export needs a file or a stream to write to")
        digest, n = _copy(src, None)
        _check(snap, digest)
        _copy(src, stream)
        stream.flush()
        return Exported(snap.build_id, digest, n, None, signature)
    dest = Path(dest)
    if dest.is_dir():
        raise ConfigError(f"'{dest}' is a directory: name the file to write the export to")
    if not dest.parent.is_dir():
        raise ConfigError(f"'{dest.parent}' does not exist: the export's file must be in an existing folder")
    tmp = dest.with_name(f".{dest.name}.tmp{os.getpid()}")
    try:
        with open(tmp, "wb") as fh:
            digest, n = _copy(src, fh)
            fh.flush()
            os.fsync(fh.fileno())
        _check(snap, digest)
        os.replace(tmp, dest)
    finally:
        if tmp.exists():
            tmp.unlink()
    return Exported(snap.build_id, digest, n, str(dest), signature)
