"""The public key of each table: what the floor checks its rows, heartbeats and alerts with,
and how the floor comes to trust it.

Why: a table's broker login sits on its dealer PC, so whoever holds it can publish rows,
heartbeats and alerts in the table's name; only the station's Ed25519 signature shows
that the station wrote them. The floor trusts a table's key because:
- the config names it (`[[table]] public_key`: the output of `station key show`); or
- the station named it on first use (its journal's first row, or a `journal signed`
  notice) and a supervisor accepted it on the floor view, its fingerprint compared with
  the station's (`station key show` prints it); until then the table's rows are held;
- the key the floor trusted handed over to it (`signing key rotated`, endorsed by the
  old key: `station key rotate`).
A table whose station has no key (the demo, an older station) is archived unsigned, as
before, and shown so.

`check_row` decides each row against the table's key as the archive has it, as
`station.shared.keychain.check` does for a whole journal: from the row that names a key
on, each row must be signed by the key in force. A key the config names (or a supervisor
set) covers its table from row 1: an unsigned row, or one that names no key, is forged,
never "the unsigned beginning" (issue 32: with the table's broker login, unsigned rows
published before the station's first one would be archived as its journal). Only a key
named on first use and accepted may follow rows archived unsigned before it. Kept in the archive's
`table_key` table (one row per table), written in the archive's transactions.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import orjson

from station.floor.arrival import FloorRow
from station.floor.said import Said
from station.shared.keychain import ROTATED, key_named
from station.shared.signing import PublicKey, SigningError

KEY_TABLE = """
    CREATE TABLE table_key (
        table_id TEXT PRIMARY KEY,
        public_key TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('trusted', 'pending')),
        origin TEXT NOT NULL,
        since_seq INTEGER,
        anchor TEXT,
        decision INTEGER REFERENCES decision (id)
    ) WITHOUT ROWID
"""
#: How the floor came to a key (`TableKey.origin`); SET: a supervisor gave it (`set_key`).
CONFIG, FIRST_USE, ACCEPTED, ROTATION = "config", "first use", "accepted", "rotation"
SET = "set by a supervisor"
#: The origins of a key that covers its table from row 1: no unsigned beginning under it.
FROM_ROW_1 = (CONFIG, SET)
#: What `check_row` finds of a row.
OK, FORGED, PENDING = "ok", "forged", "pending"


@dataclass(frozen=True, slots=True)
class TableKey:
    """A table's key as the floor holds it: trusted, or named by the station and waiting
    for a supervisor (pending)."""

    table: str
    key: PublicKey | None  # None: pending, but the rows name no key (set it in the config)
    state: str  # "trusted" or "pending"
    origin: str
    #: The archived row that named it (None: none yet: a key from the config or accepted
    #: before the row that names it is archived).
    since_seq: int | None = None
    #: The key the config names, which rotations lead from (None: not from the config).
    anchor: PublicKey | None = None
    #: The supervisor's decision that accepted it.
    decision: int | None = None

    @property
    def trusted(self) -> PublicKey | None:
        """The key, if the floor trusts it (None: none, or pending)."""
        return self.key if self.state == "trusted" else None

    @property
    def fingerprint(self) -> str | None:
        return None if self.key is None else self.key.fingerprint

    def to_api(self) -> dict[str, Any]:
        return {
            "fingerprint": self.fingerprint,
            "public_key": None if self.key is None else self.key.text,
            "state": self.state,
            "origin": self.origin,
            "since_seq": self.since_seq,
        }


@dataclass(frozen=True, slots=True)
class Checked:
    """What `check_row` found: ok, forged (why) or pending (held for a supervisor); and
    the table's key after the row (a key named, a hand-over), None: unchanged."""

    verdict: str
    words: Said | None = None
    key: TableKey | None = None


def read_keys(db: sqlite3.Connection) -> dict[str, TableKey]:
    """table -> its key, as the archive has them."""
    found = {}
    for table, text, state, origin, since, anchor, decision in db.execute(
        "SELECT table_id, public_key, state, origin, since_seq, anchor, decision FROM table_key"
    ):
        key = PublicKey.from_text(text) if text else None
        held = PublicKey.from_text(anchor) if anchor else None
        found[table] = TableKey(table, key, state, origin, since, held, decision)
    return found


def write_key(db: sqlite3.Connection, key: TableKey) -> None:
    """Store a table's key (inside the caller's transaction)."""
    db.execute(
        "INSERT OR REPLACE INTO table_key VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            key.table,
            "" if key.key is None else key.key.text,
            key.state,
            key.origin,
            key.since_seq,
            None if key.anchor is None else key.anchor.text,
            key.decision,
        ),
    )


def configured(
    db: sqlite3.Connection, table: str, key: PublicKey, held: TableKey | None
) -> TableKey | None:
    """The table's key once the config names `key` (None: what the archive holds stands:
    the same key, or one the table's archived rows handed over to from it)."""
    trusted = held is not None and held.state == "trusted"
    if trusted and held is not None and key in (held.key, held.anchor):
        return None
    if trusted and _named_in(db, table, key):
        return None
    return TableKey(table, key, "trusted", CONFIG, None, key)


def _named_in(db: sqlite3.Connection, table: str, key: PublicKey) -> bool:
    """Whether an archived row of the table names `key` (the floor followed the table's
    key from it, by endorsed rotations)."""
    found = db.execute(
        "SELECT 1 FROM row WHERE table_id = ? AND kind = 'notice' AND "
        "json_extract(event, '$.signing_key.public_key') = ? LIMIT 1",
        (table, key.text),
    ).fetchone()
    return found is not None


def _named(row: FloorRow) -> tuple[PublicKey | None, dict[str, Any]]:
    """The key a notice row names (None: none) and its event; SigningError if it names
    one that cannot be read."""
    if row.kind != "notice" or "signing_key" not in row.event:
        return None, {}
    event = orjson.loads(row.event)
    return key_named(event), event


def check_row(table: str, held: TableKey | None, row: FloorRow) -> Checked:
    """Whether the row is the station's, by the table's key `held` (None: none known)."""
    try:
        named, event = _named(row)
    except SigningError as exc:
        words = f"row {row.seq} names a signing key that cannot be read ({exc})"
        return Checked(FORGED, Said("forged_bad_key", words, {"seq": row.seq, "detail": str(exc)}))
    if held is None:
        return _first_use(table, named, row)
    if held.state == "pending":  # nothing is trusted yet: every row waits, and is checked
        return Checked(PENDING, _pending_words(row.seq, held))  # once the key is accepted
    key = held.key
    assert key is not None
    if named is not None and named != key:
        if event.get("message") != ROTATED:
            words = (
                f"row {row.seq} names key {named.fingerprint}, but the table's key is "
                f"{key.fingerprint}: a new key takes over only by a rotation the old key "
                "endorses (`station key rotate`)"
            )
            figures = {"seq": row.seq, "named": named.fingerprint, "fp": key.fingerprint}
            return Checked(FORGED, Said("forged_other_key", words, figures))
        if not key.verify_endorsement(named, event.get("endorsement")):
            words = (
                f"row {row.seq} hands the table over to key {named.fingerprint} without the "
                f"endorsement of its key {key.fingerprint}"
            )
            figures = {"seq": row.seq, "named": named.fingerprint, "fp": key.fingerprint}
            return Checked(FORGED, Said("forged_handover", words, figures))
        if not named.verify_row(row.hash, row.signature):
            return Checked(FORGED, _not_signed(row, named))
        return Checked(OK, key=TableKey(table, named, "trusted", ROTATION, row.seq, held.anchor))
    if row.signature is None and named is None and held.since_seq is None:
        if held.origin not in FROM_ROW_1:  # first use: rows before its first key
            return Checked(OK)
        return Checked(FORGED, _unsigned_words(row, held))
    if not key.verify_row(row.hash, row.signature):
        return Checked(FORGED, _not_signed(row, key))
    if named is not None and held.since_seq is None:
        return Checked(OK, key=replace(held, since_seq=row.seq))
    return Checked(OK)


def _first_use(table: str, named: PublicKey | None, row: FloorRow) -> Checked:
    """A row of a table whose key the floor does not know yet."""
    if row.signature is None:
        if named is not None:
            words = f"row {row.seq} names key {named.fingerprint} but is unsigned"
            figures = {"seq": row.seq, "fp": named.fingerprint}
            return Checked(FORGED, Said("forged_named_unsigned", words, figures))
        return Checked(OK)  # an unsigned journal: archived as such
    if named is None:
        pending = TableKey(table, None, "pending", FIRST_USE)
        return Checked(PENDING, _pending_words(row.seq, pending), pending)
    if not named.verify_row(row.hash, row.signature):
        return Checked(FORGED, _not_signed(row, named))
    pending = TableKey(table, named, "pending", FIRST_USE)
    return Checked(PENDING, _pending_words(row.seq, pending), pending)


def named_key(row: FloorRow) -> PublicKey | None:
    """The key a row names and is signed by (None: it names none, one that cannot be
    read, or its signature is not that key's): what a supervisor may give its table."""
    try:
        named, _ = _named(row)
    except SigningError:
        return None
    if named is None or not named.verify_row(row.hash, row.signature):
        return None
    return named


def _unsigned_words(row: FloorRow, held: TableKey) -> Said:
    config = held.origin == CONFIG
    where = "the floor's config names" if config else "a supervisor set"
    assert held.key is not None
    words = (
        f"row {row.seq} is unsigned, but {where} the table's key {held.key.fingerprint}, "
        "which covers the table from row 1: not written by its station (forged with the "
        "table's broker login?); it is held, never archived"
    )
    code = "forged_config" if config else "forged_set"
    return Said(code, words, {"seq": row.seq, "fp": held.key.fingerprint})


def _not_signed(row: FloorRow, key: PublicKey) -> Said:
    unsigned = row.signature is None
    what = "is unsigned" if unsigned else "has a signature that does not verify"
    words = (
        f"row {row.seq} {what} with the table's key {key.fingerprint}: not written by its "
        "station (forged with the table's broker login, or changed on the way); it is held, "
        "never archived"
    )
    code = "forged_unsigned" if unsigned else "forged_bad_signature"
    return Said(code, words, {"seq": row.seq, "fp": key.fingerprint})


def _pending_words(seq: int, pending: TableKey) -> Said:
    if pending.key is None:
        words = (
            f"row {seq} is signed, but the floor knows no key of this table and its rows name "
            "none: a supervisor sets the key `station key show` prints at the table (set-key), "
            "or give [[table]] public_key; its rows are held until then"
        )
        return Said("key_unknown", words, {"seq": seq})
    words = (
        f"the table's station names key {pending.key.fingerprint} (first use): compare it "
        "with `station key show` at the table, then accept it on the floor view; its rows "
        f"from row {seq} are held until then"
    )
    return Said("key_named", words, {"seq": seq, "fp": pending.key.fingerprint})


def trusted_keys(keys: Mapping[str, TableKey]) -> dict[str, PublicKey]:
    """table -> the key the floor checks its heartbeats and alerts with."""
    return {t: k.key for t, k in keys.items() if k.state == "trusted" and k.key is not None}
