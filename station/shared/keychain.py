"""The chain of keys that sign a journal: the rows that name a key, one key's hand-over to
the next, and every row's signature checked against them. Both programs read it: the
live station (`station journal verify`) and, holding a table's public key, the floor.

Every row of a signed journal carries the station's Ed25519 signature of its hash (which
binds every row before it). The key is named in a row that key signs itself:
- the first row (`journal created`) of a journal started with a key;
- a `journal signed` notice, when a journal written unsigned gets a key;
- a `signing key rotated` notice, which also carries the old key's endorsement of the new
  one (`station key rotate` makes it while the old key is at hand, then destroys the old
  key; the station journals it at its next start).
So the key in force at any row follows from the rows before it, and whoever trusts one
key of that chain checks every row (`check`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from station.shared.rows import CREATED
from station.shared.signing import PublicKey, SigningError

#: The notice of a journal written unsigned that gets a key.
SIGNED = "journal signed"
#: The notice of one key handing over to the next.
ROTATED = "signing key rotated"
#: The rows that name a key (in their `signing_key`).
NAMING = (CREATED, SIGNED, ROTATED)


def named(key: PublicKey) -> dict[str, str]:
    """How a row names a key: its fingerprint and its text (`station key show`)."""
    return {"fingerprint": key.fingerprint, "public_key": key.text}


@dataclass(frozen=True, slots=True)
class Endorsement:
    """The old key's word that the new one follows it (`station key rotate`)."""

    old: PublicKey
    new: PublicKey
    signature: str

    @property
    def valid(self) -> bool:
        return self.old.verify_endorsement(self.new, self.signature)

    def line(self) -> bytes:
        body = {"old": self.old.text, "new": self.new.text, "endorsement": self.signature}
        return orjson.dumps(body) + b"\n"


def key_named(event: Mapping[str, Any]) -> PublicKey | None:
    """The key a notice's event names (see NAMING), None if it names none; SigningError if
    it names one that cannot be read."""
    if event.get("type") != "notice" or event.get("message") not in NAMING:
        return None
    key = event.get("signing_key")
    if key is None:
        return None
    if not isinstance(key, Mapping) or not isinstance(key.get("public_key"), str):
        raise SigningError("its signing_key is not a key")
    return PublicKey.from_text(key["public_key"])


@dataclass(slots=True)
class SignatureReport:
    """What `check` found of a journal's signatures against a key the verifier trusts."""

    trusted: PublicKey
    signed: int = 0  # rows whose signature verified
    unsigned: int = 0  # rows before the first key was named (bound by the later signatures)
    by_trusted: int = 0  # rows signed by the trusted key itself
    keys: list[str] = field(default_factory=list)  # fingerprints, in the order named
    problem: str | None = None  # the first row that does not verify, in words

    @property
    def ok(self) -> bool:
        return self.problem is None


def check(
    rows: Iterable[tuple[int, str, str, str, str | None]], trusted: PublicKey
) -> SignatureReport:
    """Check every signature of a journal's rows (`seq, kind, event text, hash,
    signature`, in order) against the keys they name, the first named or endorsed from one
    to the next; at least one row must be signed by `trusted` itself, which then vouches for
    every row before it (through the hash chain) and for the keys endorsed after it. Stops
    at the first row that does not verify and names it."""
    report = SignatureReport(trusted)
    key: PublicKey | None = None
    first_signed: int | None = None
    for seq, kind, text, row_hash, signature in rows:
        if kind == "notice":
            try:
                event = orjson.loads(text)
                new = key_named(event)
            except (orjson.JSONDecodeError, SigningError) as exc:
                report.problem = f"row {seq}: it names a signing key that cannot be read ({exc})"
                return report
            if new is not None and new != key:
                if key is not None and event.get("message") != ROTATED:
                    report.problem = (
                        f"row {seq}: it names key {new.fingerprint} while the journal is "
                        f"signed by {key.fingerprint} (a new key takes over only by a "
                        "rotation the old key endorses)"
                    )
                    return report
                if key is not None and not key.verify_endorsement(new, event.get("endorsement")):
                    report.problem = (
                        f"row {seq}: its hand-over to key {new.fingerprint} is not endorsed by "
                        f"the key before it ({key.fingerprint})"
                    )
                    return report
                key = new
                report.keys.append(new.fingerprint)
        if key is None:
            report.unsigned += 1
            continue
        if not key.verify_row(row_hash, signature):
            what = "has no signature" if signature is None else "its signature does not verify"
            report.problem = (
                f"row {seq}: {what} with key {key.fingerprint} (the row was written or "
                "changed without the station's key)"
            )
            return report
        report.signed += 1
        first_signed = seq if first_signed is None else first_signed
        if key == trusted:
            report.by_trusted += 1
    if report.by_trusted == 0 and first_signed is None:
        report.problem = (
            f"no row is signed by the key given ({trusted.fingerprint}): the journal is "
            "unsigned (no row names a key)"
        )
    elif report.by_trusted == 0:
        report.problem = (
            f"row {first_signed}: signed by key {report.keys[0]}, not by the key given "
            f"({trusted.fingerprint}), and no row is signed by the key given (the journal's "
            f"keys: {', '.join(report.keys)})"
        )
    return report
