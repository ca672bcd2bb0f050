"""The head anchor (`<journal>.head`): the last row the station committed, signed.

Why: a journal cut short (its last rows deleted) or put back from an older copy still has
a valid hash chain, and every row in it is one the station's key really signed. Only what
the station last said of its own end tells: after each commit it rewrites the anchor with
the journal's id, its epoch, the last seq and hash, signed with the station's key (issue
32). At start (`integrity`) a journal shorter than its anchor, or whose row at the
anchor's seq has another hash, or a signed journal whose anchor is missing, unsigned or
signed by a key the journal does not name, is a discontinuity; and the anchor is the
station's last verified point: the rows up to it need only their hashes recomputed, the
signatures are checked after it.

The file is fixed-size (`SIZE` bytes, a JSON object padded with spaces), rewritten in
place (one `pwrite`) so that the writer's lock on it (`flock`) is never lost. A station
before issue 32 wrote `<seq> <hash>` alone (`legacy`): read, but never believed of a
signed journal except at the first start after the upgrade.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from station.shared.signing import PublicKey, SigningKey

#: The anchor file's size: a JSON object, padded with spaces, then a newline.
SIZE = 512
#: What the anchor's signed body says it is (never mistaken for a floor message).
KIND = "journal head anchor"


@dataclass(frozen=True, slots=True)
class Anchor:
    """What the anchor says: the journal, its epoch, the last seq and hash; who signed."""

    seq: int
    hash: str
    journal: str = ""
    epoch: str = ""
    key: str | None = None  # the signing key's fingerprint (None: unsigned)
    signature: str | None = None
    legacy: bool = False  # `<seq> <hash>` of a station before issue 32

    def body(self) -> dict[str, Any]:
        """The signed body (`signature` left out by `canonical`)."""
        return {
            "type": KIND,
            "journal": self.journal,
            "epoch": self.epoch,
            "seq": self.seq,
            "hash": self.hash,
            "key": self.key,
        }

    def signed_by(self, key: PublicKey) -> bool:
        """Whether `key` signed this anchor."""
        return (
            not self.legacy
            and self.key == key.fingerprint
            and key.verify_message(self.body(), self.signature)
        )


class Unreadable(ValueError):
    """The anchor file holds something that is not an anchor."""


def encode(seq: int, h: str, journal: str, epoch: str, key: SigningKey | None) -> bytes:
    """The anchor's bytes (`SIZE` of them), signed with `key` if there is one."""
    anchor = Anchor(seq, h, journal, epoch, None if key is None else key.public.fingerprint)
    body = anchor.body()
    body["signature"] = None if key is None else key.sign_message(body)
    text = orjson.dumps(body, option=orjson.OPT_SORT_KEYS)
    return text.ljust(SIZE - 1) + b"\n"


def parse(data: bytes) -> Anchor:
    """The anchor in `data`; `Unreadable` if it is none."""
    text = data.strip()
    if text.startswith(b"{"):
        try:
            body = orjson.loads(text)
            return Anchor(
                int(body["seq"]),
                str(body["hash"]),
                str(body["journal"]),
                str(body["epoch"]),
                None if body.get("key") is None else str(body["key"]),
                None if body.get("signature") is None else str(body["signature"]),
            )
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            raise Unreadable("not an anchor") from None
    try:
        seq_text, h = text.decode("ascii").split()
        return Anchor(int(seq_text), h, legacy=True)
    except (UnicodeDecodeError, ValueError):
        raise Unreadable("not an anchor") from None


def read(path: Path) -> Anchor | None:
    """The anchor at `path`; None if there is none (no file, or an empty one, as a new
    journal's lock file is); `Unreadable` if it holds something else."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    if not data.strip():
        return None
    return parse(data)
