from __future__ import annotations

import base64
import os
import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from oracl.core.errors import ConfigError, SignatureError, SignatureMissingError
from oracl.core.sign import VerifyKeys, keygen, sign, verify_signature

DATA = b'{"schema":{},"nodes":[],"edges":[]}'


def seed_b64(key: Ed25519PrivateKey) -> str:
    return base64.b64encode(key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                              serialization.NoEncryption())).decode()


def test_keygen_writes_a_private_key_only_its_owner_reads(tmp_path: Path) -> None:
    priv, pub = keygen(tmp_path)
    assert stat.S_IMODE(os.stat(priv).st_mode) == 0o600
    assert pub.read_text().startswith("-----BEGIN PUBLIC KEY-----")
    with pytest.raises(ConfigError, match="already exists"):
        keygen(tmp_path)


def test_ed25519_pem_verifies_with_cryptography_alone(tmp_path: Path) -> None:
    priv, pub = keygen(tmp_path)
    sig = sign(DATA, {"ORACL_ED25519_PRIVATE_KEY": priv.read_text()})
    assert sig is not None and sig.startswith("ed25519:")
    public = serialization.load_pem_public_key(pub.read_bytes())
    public.verify(base64.b64decode(sig.split(":", 1)[1]), DATA)  # raises if wrong


def test_base64_seed_and_key_file_path(tmp_path: Path) -> None:
    key = Ed25519PrivateKey.generate()
    a = sign(DATA, {"ORACL_ED25519_PRIVATE_KEY": seed_b64(key)})
    (tmp_path / "k").write_text(seed_b64(key))
    b = sign(DATA, {"ORACL_ED25519_PRIVATE_KEY": str(tmp_path / "k")})
    assert a == b  # Ed25519 signatures are deterministic
    keys = VerifyKeys(public_key=key.public_key())
    assert verify_signature(DATA, a, keys, required=True) == "signature: ed25519, valid"


def test_hmac_only_when_no_private_key() -> None:
    sig = sign(DATA, {"ORACL_HMAC_KEY": "s3cret"})
    assert sig is not None and sig.startswith("hmac-sha256:")
    assert sign(DATA, {}) is None
    keys = VerifyKeys(hmac_key=b"s3cret")
    assert verify_signature(DATA, sig, keys, required=False) == "signature: hmac-sha256, valid"
    with pytest.raises(SignatureError, match="HMAC-SHA256 signature does not match"):
        verify_signature(DATA, sig, VerifyKeys(hmac_key=b"other"), required=False)


def test_fails_closed() -> None:
    key, other = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    sig = sign(DATA, {"ORACL_ED25519_PRIVATE_KEY": seed_b64(key)})
    with pytest.raises(SignatureError, match="does not match"):
        verify_signature(DATA, sig, VerifyKeys(public_key=other.public_key()), required=False)
    with pytest.raises(SignatureError, match="does not match"):
        verify_signature(DATA + b" ", sig, VerifyKeys(public_key=key.public_key()), required=False)
    with pytest.raises(SignatureError, match="no public key was given"):
        verify_signature(DATA, sig, VerifyKeys(), required=False)
    with pytest.raises(SignatureError, match="unknown algorithm 'rsa'"):
        verify_signature(DATA, "rsa:AAAA", VerifyKeys(public_key=key.public_key()), required=False)
    with pytest.raises(SignatureMissingError, match="a key is configured"):
        verify_signature(DATA, None, VerifyKeys(public_key=key.public_key()), required=False)
    with pytest.raises(SignatureMissingError):
        verify_signature(DATA, None, VerifyKeys(), required=True)
    assert verify_signature(DATA, None, VerifyKeys(), required=False).startswith("signature: none")


def test_bad_key_material_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="neither an Ed25519 PEM private key nor base64"):
        sign(DATA, {"ORACL_ED25519_PRIVATE_KEY": "not-a-key"})
