"""How a vault proves it is this user's own (design §11, "A vault that came with the tree").

A repository can carry a ``.oracl/`` of its own: committed, unpacked from an archive, or
brought into an existing vault by ``git pull`` (git overwrites ignored files). None of it
is trusted. Every control file ORACL writes and later acts on (the LATEST pointer, an
edit's journal, the learned files, the proposals, each stored event) carries a seal: an
HMAC-SHA256, under a per-user key kept outside every tree, of what the file holds and what
it is (its kind), so a file cannot be moved into another's role.

* The key: 32 random bytes in ``$ORACL_HOME/vault.key`` (default
  ``$XDG_CONFIG_HOME/oracl``, else ``~/.config/oracl``), made on first use, mode 0600 in a
  folder of mode 0700. A key file another user can read or write, or that is not a
  regular file, is refused (``VaultError``) rather than used.
* A JSON control file's seal is a sidecar, ``NAME.seal``: ``{"macs": [new, previous]}``.
  The sidecar is written before the file, holding the MAC of the bytes about to be written
  and of the bytes there now, so a writer killed between the two writes leaves a file that
  still checks (old or new). A file whose sidecar is missing or names neither is not this
  user's: the reader ignores or refuses it by name.
* An event line is sealed in place: the sorted-keys JSON of the row with a last key
  ``"~seal"`` (``~`` sorts after every other key) whose value is the MAC of the line
  without it; a reader checks each line as it reads it, so an append costs one MAC.

>>> k = b"k" * 32
>>> line = seal_line(k, "event", b'{"a":1}')
>>> line
b'{"a":1,"~seal":"defadf27f474e309c75c5b00eb696323979b19f8b2772df2adcce63385d02881"}'
>>> line_sealed(k, "event", line), line_sealed(k, "event", b'{"a":2,' + line[7:])
(True, False)
"""

from __future__ import annotations

import hashlib
import hmac
import os
import stat
from pathlib import Path

import orjson

from oracl.core.errors import VaultError

KEY_FILE = "vault.key"
EVENT_KIND = "event"  # what a stored event line's seal binds it to
SEAL_SUFFIX = ".seal"
_LINE_KEY = b',"~seal":"'
_cached: dict[str, bytes] = {}


def home() -> Path:
    """The user's ORACL folder (outside every indexed tree)."""
    if os.environ.get("ORACL_HOME"):
        return Path(os.environ["ORACL_HOME"])
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "oracl"


def user_key() -> bytes:
    """This user's vault key, made on first use; VaultError when it cannot be kept safely."""
    folder = home()
    path = folder / KEY_FILE
    cached = _cached.get(str(path))
    if cached is not None:
        return cached
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "wb") as fh:
                fh.write(os.urandom(32).hex().encode())
                fh.flush()
                os.fsync(fh.fileno())
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            raw = fh.read(200).strip()
    except OSError as exc:
        raise VaultError(f"the vault key {path} cannot be kept: {exc.strerror or exc}; "
                         "set ORACL_HOME to a folder only you can write") from None
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise VaultError(f"the vault key {path} is not a file only you can read and write "
                         "(chmod 600, owned by you); it was not used")
    try:
        key = bytes.fromhex(raw.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        key = b""
    if len(key) < 32:
        raise VaultError(f"the vault key {path} is not 64 hexadecimal digits; remove it to make a new one")
    _cached[str(path)] = key
    return key


def mac(key: bytes, kind: str, data: bytes) -> str:
    """HMAC-SHA256 of ``kind`` NUL ``data``: what a file holds, bound to what it is."""
    return hmac.new(key, kind.encode() + b"\0" + data, hashlib.sha256).hexdigest()


def sidecar(path: Path) -> Path:
    return path.with_name(path.name + SEAL_SUFFIX)


def seal_next(path: Path, kind: str, data: bytes) -> None:
    """Write ``path``'s sidecar so that both what it holds now and ``data`` check; call it
    right before the write of ``data`` (the vault's ``atomic_write``)."""
    from oracl.core.vault import atomic_write, read_control

    key = user_key()
    macs = [mac(key, kind, data)]
    try:
        now = read_control(path)
    except OSError:
        now = None
    if now is not None and now != data and is_sealed(path, kind, now):
        macs.append(mac(key, kind, now))
    atomic_write(sidecar(path), orjson.dumps({"kind": kind, "macs": macs}))


def is_sealed(path: Path, kind: str, data: bytes) -> bool:
    """Whether ``data`` (read from ``path``) is what this user's ORACL wrote there."""
    from oracl.core.vault import read_control

    try:
        doc = orjson.loads(read_control(sidecar(path), 4096))
    except (OSError, orjson.JSONDecodeError):
        return False
    macs = doc.get("macs") if isinstance(doc, dict) else None
    if not isinstance(macs, list):
        return False
    want = mac(user_key(), kind, data)
    return any(isinstance(m, str) and hmac.compare_digest(m, want) for m in macs[:2])


def write_sealed(path: Path, kind: str, data: bytes) -> None:
    """``atomic_write`` of a control file with its seal (the sidecar first)."""
    from oracl.core.vault import atomic_write

    seal_next(path, kind, data)
    atomic_write(path, data)


def read_sealed(path: Path, kind: str) -> bytes | None:
    """The bytes of a control file when this user's ORACL wrote them; None when the file
    is missing or its seal does not check (a file that came with the tree)."""
    from oracl.core.vault import read_control

    try:
        data = read_control(path)
    except FileNotFoundError:
        return None
    except OSError:  # a link, a FIFO, a device, a file far too large: not ours
        return None
    return data if is_sealed(path, kind, data) else None


def seal_line(key: bytes, kind: str, body: bytes) -> bytes:
    """A JSON object line (``body``, sorted keys, no newline) with its seal as the last key."""
    if not body.endswith(b"}") or body == b"{}":
        raise ValueError("a sealed line is a non-empty JSON object")
    return body[:-1] + _LINE_KEY + mac(key, kind, body).encode() + b'"}'


def line_sealed(key: bytes, kind: str, line: bytes) -> bool:
    """Whether one line (newline allowed) carries the seal of what it holds."""
    line = line.rstrip(b"\r\n")
    at = line.rfind(_LINE_KEY)
    if at < 0 or not line.endswith(b'"}') or len(line) - at != len(_LINE_KEY) + 66:
        return False
    got = line[at + len(_LINE_KEY):-2].decode("ascii", "replace")
    return hmac.compare_digest(got, mac(key, kind, line[:at] + b"}"))
