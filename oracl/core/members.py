"""The workspace file: many repositories' vaults named as one memory (design §12).

``oracl-workspace.toml`` (by default in the current folder) lists member repositories, each
a local root holding a vault, with an optional public key its builds must be signed with::

    # ORACL workspace: the repositories queried as one memory. Written by `oracl workspace`;
    # the signature covers every member: an edit by hand makes it fail.
    version = 1

    [[member]]
    name = "lib-auth"
    root = "/src/lib-auth"
    public_key = "/keys/lib-auth.pub"

    [signature]
    value = "ed25519:…"

The signature is over the canonical JSON of ``{"version", "members"}``: Ed25519 or HMAC when
a signing key is configured (``core.sign``), else ``sha256:`` of those bytes, which catches a
damaged or hand-edited file but not a forger (said by ``oracl workspace list``). A file that
does not verify is refused as a whole; a member that cannot be opened is named and skipped
by the reader, the others still answer.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from oracl.core.errors import ConfigError, SignatureError
from oracl.core.sign import VerifyKeys, sign, verify_signature

DEFAULT_FILE = "oracl-workspace.toml"
VERSION = 1
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
MAX_MEMBERS = 1000


@dataclass(frozen=True, slots=True)
class Member:
    name: str
    root: str
    public_key: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "root": self.root, "public_key": self.public_key}


@dataclass(slots=True)
class WorkspaceFile:
    path: Path
    members: list[Member] = field(default_factory=list)
    signature: str = ""

    def body(self) -> bytes:
        return orjson.dumps({"version": VERSION, "members": [m.to_json() for m in self.members]},
                            option=orjson.OPT_SORT_KEYS)

    @classmethod
    def load(cls, path: Path, keys: VerifyKeys | None = None) -> WorkspaceFile:
        """The file, its members checked and its signature verified (``ConfigError`` or
        ``SignatureError`` in one line otherwise)."""
        try:
            doc = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"no workspace file {path} (`oracl workspace add PATH` makes one)") from None
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"{path} is not a readable workspace file ({exc})") from None
        if doc.get("version") != VERSION:
            raise ConfigError(f"{path}: unknown workspace version {doc.get('version')!r} (this ORACL reads {VERSION})")
        raw = doc.get("member", [])
        if not isinstance(raw, list) or len(raw) > MAX_MEMBERS:
            raise ConfigError(f"{path}: [[member]] must be a list of at most {MAX_MEMBERS} tables")
        members = []
        for m in raw:
            if not isinstance(m, dict) or set(m) - {"name", "root", "public_key"} or not isinstance(m.get("name"), str) \
                    or not isinstance(m.get("root"), str) or not isinstance(m.get("public_key", ""), str):
                raise ConfigError(f"{path}: a member needs name and root (text) and may have public_key, nothing else")
            members.append(Member(m["name"], m["root"], m.get("public_key") or None))
        sig = (doc.get("signature") or {}).get("value") if isinstance(doc.get("signature"), dict) else None
        ws = cls(path, members, sig or "")
        ws.verify(keys if keys is not None else VerifyKeys.from_env())
        _unique(members, path)
        return ws

    def verify(self, keys: VerifyKeys) -> str:
        body = self.body()
        what = f"the workspace file {self.path}"
        if not self.signature:
            raise SignatureError(f"{what} has no signature; make it with `oracl workspace add`")
        if self.signature.startswith("sha256:"):
            if self.signature != "sha256:" + hashlib.sha256(body).hexdigest():
                raise SignatureError(f"{what} does not match its digest: it was changed outside `oracl workspace`")
            return "digest: sha256 (no signing key: integrity only)"
        return verify_signature(body, self.signature, keys, required=True, what=what)

    def save(self) -> None:
        from oracl.core.vault import atomic_write

        _unique(self.members, self.path)
        body = self.body()
        self.signature = sign(body) or "sha256:" + hashlib.sha256(body).hexdigest()
        lines = ["# ORACL workspace: the repositories queried as one memory. Written by `oracl workspace`;",
                 "# the signature covers every member: an edit by hand makes it fail.", f"version = {VERSION}", ""]
        for m in self.members:
            lines += ["[[member]]", f"name = {_toml(m.name)}", f"root = {_toml(m.root)}"]
            if m.public_key:
                lines.append(f"public_key = {_toml(m.public_key)}")
            lines.append("")
        lines += ["[signature]", f"value = {_toml(self.signature)}", ""]
        atomic_write(self.path, "\n".join(lines).encode())


def _toml(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return orjson.dumps(text).decode()


def _unique(members: list[Member], path: Path) -> None:
    names: set[str] = set()
    roots: set[str] = set()
    for m in members:
        if not NAME.match(m.name):
            raise ConfigError(f"{path}: member name {m.name[:70]!r} must be letters, digits, '.', '_' or '-'")
        if m.name in names:
            raise ConfigError(f"{path}: two members are named {m.name!r}")
        if m.root in roots:
            raise ConfigError(f"{path}: {m.root} is a member twice")
        names.add(m.name)
        roots.add(m.root)


def add(path: Path, roots: list[Path], name: str | None = None, public_key: Path | None = None) -> WorkspaceFile:
    """Add members (a name from the folder's, unless ``name`` for a single root), signed again."""
    ws = WorkspaceFile.load(path) if path.exists() else WorkspaceFile(path)
    if name is not None and len(roots) != 1:
        raise ConfigError("--name names one member: give one PATH with it")
    for r in roots:
        real = r.expanduser().resolve()
        if not (real / ".oracl").is_dir():
            raise ConfigError(f"{r} holds no build (.oracl/); run `oracl build {r}` first")
        key = str(public_key.expanduser().resolve()) if public_key is not None else None
        ws.members.append(Member(name or real.name, str(real), key))
    ws.save()
    return ws


def remove(path: Path, names: list[str]) -> WorkspaceFile:
    ws = WorkspaceFile.load(path)
    unknown = sorted(set(names) - {m.name for m in ws.members})
    if unknown:
        raise ConfigError(f"no member named {unknown[0]!r} in {path}")
    ws.members = [m for m in ws.members if m.name not in names]
    ws.save()
    return ws
