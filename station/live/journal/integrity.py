"""The journal checked at start, before the station signs anything new (issue 32).

Why: an insider who can write the journal file and restart the service must not get the
station to sign new rows after rows it never wrote (two rows swapped, a row edited), nor
to go on in the same epoch on a journal cut short or put back from an older copy (the
game server would get the same ids with other bodies).

What is checked, in order:
1. the hash chain from row 1 (seqs in order, each row's hash of its own text, each
   `prev_hash` the row before's): cheap, every start;
2. the head anchor (`anchor`): the station's signed word of the last row it committed,
   its last verified point. The rows up to it are bound by the chain to the hash it
   signed, so only the rows after it need their signatures checked (a lagging anchor
   after a crash, or rows someone appended); the first start after the upgrade, and any
   start after a discontinuity, checks every signature;
3. the signatures after that point, with the keys the journal names (`keychain`).

A broken chain or a row whose signature does not verify refuses the start
(`JournalError`, naming `station journal verify` and `journal restore`). A journal shorter
than its anchor, or whose row at the anchor's seq has another hash, or a signed journal
whose anchor is missing, unsigned or signed by a key the journal does not name, is a
**discontinuity** (`Discontinuity`): the station journals it and begins a new epoch
(`epoch.discontinuity_notice`), so no id and no round key is ever given twice. The anchor
is only rewritten after that notice is committed: a restart never heals what it found.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from station.live.journal import anchor as anchors
from station.live.journal.errors import JournalError
from station.shared.keychain import ROTATED, key_named
from station.shared.rows import GENESIS, row_hash
from station.shared.signing import PublicKey, SigningError

ROWS = (
    "SELECT seq, ts, source, actor, kind, event, verdict, prev_hash, hash, signature "
    "FROM journal ORDER BY rowid"
)
#: The rows that name a key.
NAMING = "kind = 'notice' AND json_extract(event, '$.signing_key') IS NOT NULL"
#: What the signature walk reads: the rows naming a key (the key in force), every row
#: after the last verified point.
SIGNATURES = (
    "SELECT seq, ts, source, actor, kind, event, verdict, prev_hash, hash, signature "
    f"FROM journal WHERE seq > ? OR ({NAMING}) ORDER BY seq"
)


@dataclass(frozen=True, slots=True)
class Discontinuity:
    """What the start found of a journal that is not the one the station last signed."""

    reason: str  # in words
    anchor: dict[str, Any] | None  # what the anchor said (seq, hash, epoch), if anything
    journal: dict[str, Any]  # what the journal holds (last seq and hash, hash at that seq)

    def details(self) -> dict[str, Any]:
        """What the `journal discontinuity` notice says of it."""
        return {"found": self.reason, "anchor": self.anchor, "journal": self.journal}


@dataclass(frozen=True, slots=True)
class Checked:
    """What the start check found: from which row it checked signatures, and whether the
    journal is the one the station last signed."""

    signatures_from: int  # the first row whose signature was checked (last + 1: none)
    discontinuity: Discontinuity | None


def _refuse(path: Path, seq: int, what: str, config: str) -> JournalError:
    return JournalError(
        f"{path}: row {seq}: {what}; the station does not start on a journal changed since "
        f"it wrote it (and signs nothing after it): run `station journal verify --config "
        f"{config}` to see every problem, and put the journal back with `station journal "
        f"restore BACKUP --config {config}` (a backup, or --from-floor)"
    )


def check(
    db: sqlite3.Connection,
    path: Path,
    head_path: Path | None,
    configured: PublicKey | None,
    upgraded: bool,
    config: str = "FILE",
) -> Checked:
    """Check the journal open on `db` (at `path`, anchor at `head_path`) as the station
    does before it signs anything new. `configured`: the station's key; `upgraded`: the
    journal was written by a station that did not sign its anchor (migrated at this
    open), so an unsigned anchor is believed once; `head_path` None: no anchor to hold
    it to (a restore's staged copy, whose anchor `verify` checked): every signature is
    checked, nothing is a discontinuity. JournalError refuses the start."""
    prev, expected = GENESIS, 1
    for seq, ts, source, actor, kind, event, verdict, prev_hash, h, _sig in db.execute(ROWS):
        if seq != expected:
            raise _refuse(
                path, seq, f"expected row {expected} here (rows deleted or reordered)", config
            )
        if prev_hash != prev:
            what = "its prev_hash is not the row before's hash (rows moved, deleted or changed)"
            raise _refuse(path, seq, what, config)
        if row_hash(seq, ts, source, actor, kind, event, verdict, prev_hash) != h:
            raise _refuse(
                path, seq, "its hash does not match its contents (the row was edited)", config
            )
        prev, expected = h, seq + 1
    named = _keys(db)
    last = (expected - 1, prev)

    def hash_at(seq: int) -> str | None:
        found = db.execute("SELECT hash FROM journal WHERE seq = ?", (seq,)).fetchone()
        return None if found is None else str(found[0])

    if head_path is None:
        _signatures(db.execute(SIGNATURES, (0,)), 0, path, config)
        return Checked(1, None)
    found = _against_anchor(last, hash_at, head_path, named, configured, bool(named), upgraded)
    verified = 0
    if found is None and not upgraded:
        try:
            head = anchors.read(head_path)
        except anchors.Unreadable:
            head = None
        if head is not None and not head.legacy and head.signature is not None:
            verified = head.seq  # bound by the chain to the hash the station signed
    _signatures(db.execute(SIGNATURES, (verified,)), verified, path, config)
    return Checked(verified + 1, found)


def _keys(db: sqlite3.Connection) -> dict[str, PublicKey]:
    """Every key the journal's rows name, by fingerprint."""
    found: dict[str, PublicKey] = {}
    for (event,) in db.execute(f"SELECT event FROM journal WHERE {NAMING}"):
        try:
            key = key_named(orjson.loads(event))
        except (orjson.JSONDecodeError, SigningError):
            continue  # said by the signature walk
        if key is not None:
            found[key.fingerprint] = key
    return found


def _against_anchor(
    last: tuple[int, str],
    hash_at: Callable[[int], str | None],
    head_path: Path,
    named: dict[str, PublicKey],
    configured: PublicKey | None,
    signed: bool,
    upgraded: bool,
) -> Discontinuity | None:
    """The journal against its anchor: None if the anchor vouches for it (or, for an
    unsigned journal, nothing contradicts it)."""
    last_seq, last_hash = last
    journal: dict[str, Any] = {"last_seq": last_seq, "last_hash": last_hash}
    try:
        head = anchors.read(head_path)
    except anchors.Unreadable:
        if not signed:
            return None
        return Discontinuity(f"the head anchor {head_path} is unreadable", None, journal)
    if head is None:
        if signed and not upgraded:
            what = f"the head anchor {head_path} is missing (a signed journal always has one)"
            return Discontinuity(what, None, journal)
        return None
    said = {"seq": head.seq, "hash": head.hash, "epoch": head.epoch or None, "key": head.key}
    if signed and not (upgraded and (head.legacy or head.signature is None)):
        keys = dict(named)
        if configured is not None:
            keys[configured.fingerprint] = configured
        key = keys.get(head.key or "")
        if head.legacy or head.signature is None:
            return Discontinuity(
                f"the head anchor {head_path} is not signed (a signed journal's always is)",
                said,
                journal,
            )
        if key is None or not head.signed_by(key):
            who = f"key {head.key}" if key is None else f"a signature key {head.key} never made"
            return Discontinuity(
                f"the head anchor {head_path} is signed by {who}, not by a key of the journal",
                said,
                journal,
            )
    if head.seq > last_seq:
        return Discontinuity(
            f"the journal ends at row {last_seq}, but the station last committed row "
            f"{head.seq} (its head anchor): rows were removed, or an older copy put back "
            "without `station journal restore`",
            said,
            journal,
        )
    if head.seq >= 1 and (there := hash_at(head.seq)) != head.hash:
        journal["hash_at_anchor"] = there
        return Discontinuity(
            f"row {head.seq} has another hash than the one the station committed there (its "
            "head anchor): the journal was replaced by another copy without `station journal "
            "restore`",
            said,
            journal,
        )
    return None


def _signatures(rows: Iterable[Any], verified: int, path: Path, config: str) -> None:
    """Every signature after row `verified` checked with the key in force there (the keys
    follow from the naming rows, each hand-over endorsed by the key before it)."""
    key: PublicKey | None = None
    for seq, _ts, _src, _actor, kind, event, _v, _p, h, signature in rows:
        if kind == "notice" and "signing_key" in event:
            try:
                body = orjson.loads(event)
                new = key_named(body)
            except (orjson.JSONDecodeError, SigningError) as exc:
                raise _refuse(
                    path, seq, f"it names a key that cannot be read ({exc})", config
                ) from None
            if new is not None and new != key:
                if seq > verified and key is not None:
                    if body.get("message") != ROTATED:
                        what = (
                            f"it names key {new.fingerprint} while the journal is signed "
                            f"by {key.fingerprint}"
                        )
                        raise _refuse(path, seq, what, config)
                    if not key.verify_endorsement(new, body.get("endorsement")):
                        what = (
                            f"its hand-over to key {new.fingerprint} is not endorsed by "
                            f"{key.fingerprint}"
                        )
                        raise _refuse(path, seq, what, config)
                key = new
        if key is None or seq <= verified:
            continue
        if not key.verify_row(h, signature):
            what = "it has no signature" if signature is None else "its signature does not verify"
            raise _refuse(
                path,
                seq,
                f"{what} with key {key.fingerprint} (written or changed without the station's key)",
                config,
            )
