"""Signatures: a row or message signed by a key verifies with its public key only, never
with another key, never once changed; the key file is 0600 and never overwritten; the key
never shows itself."""

from __future__ import annotations

import hashlib
import pickle
import stat
from pathlib import Path

import pytest

from station.shared.signing import PublicKey, SigningError, SigningKey


def test_a_signed_row_verifies_with_its_key_only() -> None:
    key, other = SigningKey.generate(), SigningKey.generate()
    row_hash = hashlib.sha256(b"row").hexdigest()
    signature = key.sign_row(row_hash)
    assert key.public.verify_row(row_hash, signature)
    assert not other.public.verify_row(row_hash, signature)
    assert not key.public.verify_row(hashlib.sha256(b"forged").hexdigest(), signature)
    assert not key.public.verify_row(row_hash, None)
    assert not key.public.verify_row(row_hash, "not base64!")


def test_a_message_signature_covers_every_field_but_itself() -> None:
    key = SigningKey.generate()
    body = {"table": "t-1", "seq": 5, "state": "publishing"}
    signature = key.sign_message(body)
    signed = {**body, "signature": signature}
    assert key.public.verify_message(signed, signature)
    assert not key.public.verify_message({**signed, "seq": 6}, signature)
    # a row signature never passes for a message one (domains differ)
    row_hash = hashlib.sha256(b"x").hexdigest()
    assert not key.public.verify_message({"hash": row_hash}, key.sign_row(row_hash))


def test_the_key_file_is_private_and_never_overwritten(tmp_path: Path) -> None:
    key = SigningKey.generate()
    path = tmp_path / "station.key"
    key.save(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with pytest.raises(SigningError, match="never overwritten"):
        SigningKey.generate().save(path)
    again = SigningKey.load(path)
    assert again.public == key.public
    assert PublicKey.read(path) == key.public


def test_public_keys_as_text() -> None:
    key = SigningKey.generate()
    text = key.public.text
    assert text.startswith("ed25519:") and PublicKey.from_text(text) == key.public
    assert len(key.public.fingerprint) == 32
    for bad in ("", "ed25519:", "ed25519:!!!", "rsa:AAAA", "ed25519:" + "A" * 40):
        with pytest.raises(SigningError):
            PublicKey.from_text(bad)


def test_the_key_never_shows_itself(tmp_path: Path) -> None:
    key = SigningKey.generate()
    path = tmp_path / "k"
    key.save(path)
    secret = path.read_text()
    assert "PRIVATE" not in repr(key) and key.public.fingerprint in repr(key)
    assert secret not in str(key)
    with pytest.raises(TypeError):
        pickle.dumps(key)


def test_a_file_that_is_not_a_key_is_refused_with_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "k"
    path.write_text("-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n")
    with pytest.raises(SigningError, match="station key init"):
        SigningKey.load(path)
    with pytest.raises(SigningError, match="cannot read"):
        SigningKey.load(tmp_path / "missing")
