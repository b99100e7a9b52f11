"""Sign and verify the export's bytes and the bundle's manifest (design §7).

``.sig`` holds ``ed25519:<base64 signature>`` when ``ORACL_ED25519_PRIVATE_KEY`` is set
(PEM, or base64 of the 32-byte seed), else ``hmac-sha256:<hex>`` when ``ORACL_HMAC_KEY``
is set, else nothing (the build says the export is unsigned). The signature is over the
export bytes themselves, so anyone can check it with the ``cryptography`` library alone:

>>> from cryptography.hazmat.primitives.serialization import load_pem_public_key
>>> pub = load_pem_public_key(open("oracl_ed25519.pub", "rb").read())   # doctest: +SKIP
>>> pub.verify(base64.b64decode(sig.split(":", 1)[1]), export_bytes)     # doctest: +SKIP
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from oracl.core.errors import ConfigError, SignatureError, SignatureMissingError

PRIVATE_ENV = "ORACL_ED25519_PRIVATE_KEY"
PUBLIC_ENV = "ORACL_ED25519_PUBLIC_KEY"
HMAC_ENV = "ORACL_HMAC_KEY"


def _key_text(value: str) -> str:
    """An environment value may be the key itself or a path to a file holding it."""
    if "\n" not in value and len(value) < 4096 and not value.startswith("-----"):
        p = Path(value).expanduser()
        try:
            if p.is_file():
                return p.read_text()
        except OSError:
            pass
    return value


def _load_key(value: str, source: str, pem: Any, raw: Any, kind: type, what: str) -> Any:
    """A key from PEM text, or from base64 of its 32 raw bytes; ConfigError otherwise."""
    text = _key_text(value).strip()
    try:
        if text.startswith("-----BEGIN"):
            key = pem(text.encode())
            if not isinstance(key, kind):
                raise ConfigError(f"{source} is not an Ed25519 {what}")
            return key
        data = base64.b64decode(text, validate=True)
        if len(data) != 32:
            raise ValueError
        return raw(data)
    except (ValueError, binascii.Error, TypeError):
        raise ConfigError(f"{source} is neither an Ed25519 PEM {what} nor base64 of its 32 bytes") from None


def load_private_key(value: str) -> Ed25519PrivateKey:
    """PEM (PKCS8) or base64 of the 32-byte seed."""
    return _load_key(value, PRIVATE_ENV, lambda b: serialization.load_pem_private_key(b, password=None),
                     Ed25519PrivateKey.from_private_bytes, Ed25519PrivateKey, "private key")


def load_public_key(value: str, source: str = PUBLIC_ENV) -> Ed25519PublicKey:
    """PEM (SubjectPublicKeyInfo) or base64 of the 32 raw bytes."""
    return _load_key(value, source, serialization.load_pem_public_key, Ed25519PublicKey.from_public_bytes,
                     Ed25519PublicKey, "public key")


def sign(data: bytes, env: dict[str, str] | None = None) -> str | None:
    """The ``.sig`` text for ``data``, or None when no key is configured."""
    env = dict(os.environ) if env is None else env
    if env.get(PRIVATE_ENV):
        sig = load_private_key(env[PRIVATE_ENV]).sign(data)
        return "ed25519:" + base64.b64encode(sig).decode()
    if env.get(HMAC_ENV):
        return "hmac-sha256:" + hmac.new(env[HMAC_ENV].encode(), data, hashlib.sha256).hexdigest()
    return None


@dataclass(frozen=True, slots=True)
class VerifyKeys:
    """What verification may use: an Ed25519 public key and/or an HMAC key."""

    public_key: Ed25519PublicKey | None = None
    hmac_key: bytes | None = None

    @property
    def configured(self) -> bool:
        return self.public_key is not None or self.hmac_key is not None

    @classmethod
    def from_env(cls, public_key_file: Path | None = None, env: dict[str, str] | None = None) -> VerifyKeys:
        env = dict(os.environ) if env is None else env
        pub = None
        if public_key_file is not None:
            try:
                pub = load_public_key(public_key_file.read_text(), str(public_key_file))
            except OSError as exc:
                raise ConfigError(f"cannot read the public key {public_key_file}: {exc.strerror}") from None
        elif env.get(PUBLIC_ENV):
            pub = load_public_key(env[PUBLIC_ENV])
        elif env.get(PRIVATE_ENV):
            pub = load_private_key(env[PRIVATE_ENV]).public_key()
        hk = env.get(HMAC_ENV)
        return cls(pub, hk.encode() if hk else None)


def verify_signature(data: bytes, sig_text: str | None, keys: VerifyKeys, *, required: bool,
                     what: str = "the export") -> str:
    """Check ``sig_text`` over ``data`` (``what`` names it in messages); returns what was
    checked, raises SignatureError or SignatureMissingError. Fails closed: an unknown
    algorithm or a key that cannot check the signature is a failure, never a pass."""
    if sig_text is None:
        if required or keys.configured:
            raise SignatureMissingError(f"{what} has no signature (.sig) but a key is configured"
                                        if keys.configured else f"{what} has no signature (.sig)")
        return f"signature: none ({what} is unsigned, no key configured)"
    algo, _, value = sig_text.strip().partition(":")
    if algo == "ed25519":
        if keys.public_key is None:
            raise SignatureError(f"{what} is Ed25519-signed but no public key was given "
                                 f"(--public-key or {PUBLIC_ENV})")
        try:
            keys.public_key.verify(base64.b64decode(value, validate=True), data)
        except (InvalidSignature, binascii.Error, ValueError):
            raise SignatureError(f"the Ed25519 signature does not match {what}") from None
        return "signature: ed25519, valid"
    if algo == "hmac-sha256":
        if keys.hmac_key is None:
            raise SignatureError(f"{what} is HMAC-signed but {HMAC_ENV} is not set")
        expected = hmac.new(keys.hmac_key, data, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, value.strip()):
            raise SignatureError(f"the HMAC-SHA256 signature does not match {what}")
        return "signature: hmac-sha256, valid"
    raise SignatureError(f"the signature uses an unknown algorithm {algo[:40]!r}")


def keygen(out: Path) -> tuple[Path, Path]:
    """Write ``oracl_ed25519.pem`` (private, mode 0600) and ``oracl_ed25519.pub`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    key = Ed25519PrivateKey.generate()
    priv_path, pub_path = out / "oracl_ed25519.pem", out / "oracl_ed25519.pub"
    if priv_path.exists():
        raise ConfigError(f"{priv_path} already exists; not overwriting a key")
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    fd = os.open(priv_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(pem)
    pub_path.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                      serialization.PublicFormat.SubjectPublicKeyInfo))
    return priv_path, pub_path
