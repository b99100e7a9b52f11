"""``oracl export``: the latest build's canonical export, written on demand.

A bundle keeps its export as an index over parts (``core/parts.py``, design §7); this
assembles the canonical bytes (``weighted_graph_index.json``: what a full build's export
writer gives, byte for byte) from them. The index is checked against the root
``LATEST.json`` records for the build, and each part against its digest as it is read,
before a byte reaches the destination: to a file, the bytes are written beside it and
renamed into place only when every check passed (an existing file is never left
half-written); to a stream, the export is assembled and checked whole first. A mismatch is
a ``DigestError`` (exit code 11), as in ``oracl verify``. The snapshot's reader lock keeps
the bundle from being pruned, and so its parts, while it is read.

>>> with Snapshot.open(root) as snap:                          # doctest: +SKIP
...     export_to(snap, Path("graph.json")).root == snap.latest["export_root"]
True
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from oracl.core.errors import ConfigError, DigestError
from oracl.core.parts import assemble, decode_index, store_of
from oracl.core.vault import EXPORT_INDEX
from oracl.read.snapshot import Snapshot


@dataclass(frozen=True, slots=True)
class Exported:
    build_id: str
    root: str             # the SHA-256 of the export's index (what LATEST and the signature cover)
    sha256: str           # the SHA-256 of the bytes written
    bytes: int
    path: str | None      # the file written, None for a stream
    signature: str | None  # the bundle's signature file of the index, when it has one

    def to_json(self) -> dict[str, object]:
        return {"build_id": self.build_id, "root": self.root, "sha256": self.sha256, "bytes": self.bytes,
                "path": self.path, "signature": self.signature}


def _pieces(snap: Snapshot) -> tuple[str, Iterator[bytes]]:
    """(the root, the export's bytes in pieces), the index checked against LATEST's root."""
    try:
        index = (snap.bundle / EXPORT_INDEX).read_bytes()
    except OSError:
        raise DigestError(f"build {snap.build_id} has no export index: run `oracl build`") from None
    root = hashlib.sha256(index).hexdigest()
    want = str(snap.latest.get("export_root", ""))
    if root != want:
        raise DigestError(f"the export of build {snap.build_id} does not match the root LATEST.json records "
                          f"({root[:16]}… ≠ {want[:16]}…); nothing was written: run `oracl verify` and "
                          "`oracl repair`")
    return root, assemble(store_of(snap.vault.dir), decode_index(index))


def export_to(snap: Snapshot, dest: Path | None, stream: BinaryIO | None = None) -> Exported:
    """Write ``snap``'s export to the file ``dest`` (atomically), or to ``stream`` when
    ``dest`` is None; the index and every part are checked first."""
    sig = snap.bundle / (EXPORT_INDEX + ".sig")
    signature = str(sig) if sig.is_file() else None
    root, pieces = _pieces(snap)
    h = hashlib.sha256()
    if dest is None:
        if stream is None:
            raise ConfigError("export needs a file or a stream to write to")
        data = b"".join(pieces)  # every part checked before the first byte goes out
        h.update(data)
        stream.write(data)
        stream.flush()
        return Exported(snap.build_id, root, h.hexdigest(), len(data), None, signature)
    dest = Path(dest)
    if dest.is_dir():
        raise ConfigError(f"'{dest}' is a directory: name the file to write the export to")
    if not dest.parent.is_dir():
        raise ConfigError(f"'{dest.parent}' does not exist: the export's file must be in an existing folder")
    tmp = dest.with_name(f".{dest.name}.tmp{os.getpid()}")
    n = 0
    try:
        with open(tmp, "wb") as fh:
            for piece in pieces:
                h.update(piece)
                fh.write(piece)
                n += len(piece)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, dest)
    finally:
        if tmp.exists():
            tmp.unlink()
    return Exported(snap.build_id, root, h.hexdigest(), n, str(dest), signature)
