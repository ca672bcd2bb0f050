"""Ed25519 signatures: who wrote a journal row, a heartbeat or an alert (pyca cryptography).

The hash chain shows that rows follow each other; only a signature shows who wrote them.
Each station has one key pair. The private key is a PEM file (PKCS#8, mode 0600) that only
the service reads; the public key is text anyone may hold (`ed25519:` and the 32 raw bytes
in base64) and is named by its fingerprint (the first 16 bytes of its SHA-256, in hex).

What is signed is always a domain-separated byte string, so a signature of one kind can
never pass for another:
- a journal row: `ROW_DOMAIN` + the row's hash (32 bytes), which binds the row and, through
  `prev_hash`, every row before it;
- a floor message (heartbeat, alert): `MESSAGE_DOMAIN` + the message body as canonical JSON
  (sorted keys, the `signature` key left out);
- a key handing over to the next (`station key rotate`): `ROTATION_DOMAIN` + the old public
  key + the new one (32 bytes each), signed by the old key: its endorsement of the new.

Signatures travel as base64 text. A `SigningKey` never shows its secret: not in `repr`, not
in `str`, not in any message.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

ROW_DOMAIN = b"baccarat-station journal row v1\x00"
MESSAGE_DOMAIN = b"baccarat-station floor message v1\x00"
ROTATION_DOMAIN = b"baccarat-station key rotation v1\x00"
PREFIX = "ed25519:"
#: The key file's permissions: the service's user alone reads it.
KEY_MODE = 0o600


class SigningError(ValueError):
    """A key or signature that cannot be used; the message says what to do."""


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: str, what: str) -> bytes:
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise SigningError(f"{what} is not base64") from None


def canonical(body: Mapping[str, Any]) -> bytes:
    """A message body as it is signed: JSON with sorted keys, without `signature`."""
    return orjson.dumps(
        {k: v for k, v in body.items() if k != "signature"}, option=orjson.OPT_SORT_KEYS
    )


def _row_message(row_hash: str) -> bytes:
    try:
        digest = bytes.fromhex(row_hash)
    except ValueError:
        raise SigningError(f"a row hash is 64 hex digits, got {row_hash[:80]!r}") from None
    if len(digest) != 32:
        raise SigningError(f"a row hash is 64 hex digits, got {row_hash[:80]!r}")
    return ROW_DOMAIN + digest


@dataclass(frozen=True, slots=True)
class PublicKey:
    """A station's public key: what verifies its rows and messages."""

    raw: bytes

    @classmethod
    def from_text(cls, text: str) -> PublicKey:
        """`ed25519:BASE64` (what `station key show` prints); SigningError otherwise."""
        body = text.strip()
        if not body.startswith(PREFIX):
            raise SigningError(
                f"a public key is written {PREFIX}BASE64 (the output of `station key show`), "
                f"got {text[:80]!r}"
            )
        raw = _unb64(body[len(PREFIX) :], "the public key")
        if len(raw) != 32:
            raise SigningError(f"an Ed25519 public key is 32 bytes, this one is {len(raw)}")
        return cls(raw)

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> PublicKey:
        """A public key from a file holding its text (or the private key's PEM file)."""
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise SigningError(f"cannot read the key {path}: {exc.strerror}") from None
        if b"PRIVATE KEY" in data:
            return SigningKey.from_pem(data, str(path)).public
        return cls.from_text(data.decode("ascii", "replace"))

    @property
    def text(self) -> str:
        return PREFIX + _b64(self.raw)

    @property
    def fingerprint(self) -> str:
        """How people and rows name the key: the first 16 bytes of its SHA-256, in hex."""
        return hashlib.sha256(self.raw).hexdigest()[:32]

    def _key(self) -> Ed25519PublicKey:
        return Ed25519PublicKey.from_public_bytes(self.raw)

    def verify_row(self, row_hash: str, signature: str | None) -> bool:
        """Whether `signature` is this key's over the row whose hash is `row_hash`."""
        return self._verify(_row_message(row_hash), signature)

    def verify_message(self, body: Mapping[str, Any], signature: str | None) -> bool:
        """Whether `signature` is this key's over the message `body`."""
        return self._verify(MESSAGE_DOMAIN + canonical(body), signature)

    def verify_endorsement(self, new: PublicKey, signature: str | None) -> bool:
        """Whether `signature` is this key's endorsement of `new` (`SigningKey.endorse`)."""
        return self._verify(ROTATION_DOMAIN + self.raw + new.raw, signature)

    def _verify(self, message: bytes, signature: str | None) -> bool:
        if not isinstance(signature, str):
            return False
        try:
            self._key().verify(_unb64(signature, "the signature"), message)
        except (InvalidSignature, SigningError):
            return False
        return True

    def __str__(self) -> str:
        return self.text


class SigningKey:
    """A station's private key. It signs; it is never shown."""

    __slots__ = ("_key", "public")

    def __init__(self, key: Ed25519PrivateKey) -> None:
        self._key = key
        raw = key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        self.public = PublicKey(raw)

    @classmethod
    def generate(cls) -> SigningKey:
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_pem(cls, data: bytes, where: str = "the key") -> SigningKey:
        try:
            key = serialization.load_pem_private_key(data, password=None)
        except (ValueError, TypeError):
            raise SigningError(
                f"{where} is not an unencrypted PEM private key (make one with `station key init`)"
            ) from None
        if not isinstance(key, Ed25519PrivateKey):
            raise SigningError(f"{where} is not an Ed25519 key (make one with `station key init`)")
        return cls(key)

    @classmethod
    def load(cls, path: str | os.PathLike[str], config: str = "FILE") -> SigningKey:
        """The private key at `path`; SigningError names the file and what to do (with
        the station's config file, `config`, in the command it names)."""
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise SigningError(
                f"cannot read the signing key {path}: {exc.strerror} (make one with "
                f"`station key init --config {config}`)"
            ) from None
        return cls.from_pem(data, str(path))

    @classmethod
    def load_handed_over(
        cls,
        path: str | os.PathLike[str],
        credential: str,
        environ: Mapping[str, str] = os.environ,
        config: str = "FILE",
    ) -> SigningKey:
        """The station's key as the installed unit hands it over: the systemd credential
        named `credential` if systemd gave one ($CREDENTIALS_DIRECTORY), else the file at
        `path`. The station and its publisher's process read it alike through here."""
        folder = environ.get("CREDENTIALS_DIRECTORY")
        if credential and folder:
            handed = Path(folder) / credential
            if handed.is_file():
                return cls.load(handed, config)
        return cls.load(path, config)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the key to a new file, mode 0600; an existing file is never overwritten."""
        pem = self._key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, KEY_MODE)
        except FileExistsError:
            raise SigningError(
                f"{path} exists: a signing key is never overwritten (rotate it with "
                "`station key rotate`)"
            ) from None
        except FileNotFoundError:
            folder = Path(path).parent
            raise SigningError(
                f"no folder {folder} for the signing key {path}: make it first (readable by "
                "the station's user only, e.g. `install -d -m 700 " + str(folder) + "`)"
            ) from None
        except OSError as exc:
            raise SigningError(f"cannot write the signing key {path}: {exc.strerror}") from None
        with os.fdopen(fd, "wb") as f:
            f.write(pem)
            f.flush()
            os.fsync(f.fileno())

    def sign_row(self, row_hash: str) -> str:
        """The signature of the row whose hash is `row_hash` (base64)."""
        return _b64(self._key.sign(_row_message(row_hash)))

    def sign_message(self, body: Mapping[str, Any]) -> str:
        """The signature of a floor message's body (base64; `signature` left out)."""
        return _b64(self._key.sign(MESSAGE_DOMAIN + canonical(body)))

    def endorse(self, new: PublicKey) -> str:
        """This key's signature handing over to `new` (base64): a key rotation."""
        return _b64(self._key.sign(ROTATION_DOMAIN + self.public.raw + new.raw))

    def __repr__(self) -> str:
        return f"SigningKey(public={self.public.fingerprint})"

    __str__ = __repr__

    def __reduce__(self) -> Any:  # never pickled (a process boundary would carry it)
        raise TypeError("a signing key is not pickled: hand the process its path")
