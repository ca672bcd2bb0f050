"""Which key signs this station's journal: the key in force (the rows that name it:
`station.shared.keychain`), the endorsements `station key rotate` keeps beside the key,
and what a station journals before its first row so that its own key signs what follows
(an unsigned journal gets a key only by `station journal adopt`: `Journal.adopt`).

A key appears only through those rows: a journal signed by one key never continues under
another without the old key's word, and a signed journal never continues unsigned.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import orjson

from station.live.journal.errors import JournalError
from station.shared.keychain import NAMING, ROTATED, SIGNED, Endorsement, key_named, named
from station.shared.rows import Pending, notice
from station.shared.signing import PublicKey, SigningError, SigningKey

#: The mode of the endorsements file: public (signatures only), written by the key's owner.
ENDORSEMENTS_MODE = 0o644


def read_endorsements(path: Path) -> list[Endorsement]:
    """The endorsements kept beside the key (`<signing_key>.rotations`, one JSON object a
    line); none if there is no such file. SigningError names a line that cannot be read."""
    try:
        text = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise SigningError(f"cannot read the key rotations {path}: {exc.strerror}") from None
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            body = orjson.loads(line)
            found.append(
                Endorsement(
                    PublicKey.from_text(body["old"]),
                    PublicKey.from_text(body["new"]),
                    str(body["endorsement"]),
                )
            )
        except (orjson.JSONDecodeError, KeyError, TypeError, SigningError):
            raise SigningError(f"{path}: line {number} is not a key rotation") from None
    return found


def add_endorsement(path: Path, endorsement: Endorsement) -> None:
    """Append `endorsement` to the file at `path` (made if new), synced."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, ENDORSEMENTS_MODE)
    with os.fdopen(fd, "ab") as f:
        f.write(endorsement.line())
        f.flush()
        os.fsync(f.fileno())


def in_force(db: sqlite3.Connection) -> tuple[PublicKey, int] | None:
    """The key the journal open on `db` is signed with now, and the row that named it;
    None for an unsigned journal. JournalError for a row naming a key that cannot be read."""
    sql = (
        "SELECT seq, event FROM journal WHERE kind = 'notice' AND "
        "json_extract(event, '$.message') IN (?, ?, ?) ORDER BY seq DESC"
    )
    for seq, text in db.execute(sql, NAMING):
        try:
            key = key_named(orjson.loads(text))
        except SigningError as exc:
            raise JournalError(
                f"row {seq} names a signing key that cannot be read: {exc}"
            ) from None
        if key is not None:
            return key, seq
    return None


def handover(
    journal: tuple[PublicKey, int] | None,
    key: SigningKey | None,
    endorsements: Sequence[Endorsement],
    where: Path,
    rotations: Path | None,
    config: str = "FILE",
) -> list[Pending]:
    """What a station with `key` journals before its first row of its own on the journal
    at `where`, signed with `journal` (its key in force and the row that named it): a
    `signing key rotated` notice per key handed over (from `endorsements`, read from
    `rotations`). JournalError when `key` may not continue the journal: none for a signed
    journal, another key than its own that no endorsement leads to, or a key for an
    unsigned journal: a journal is never moved from unsigned to signed silently (issue 32:
    whoever rewrites a journal as if it had never been signed would have it signed anew);
    `station journal adopt` (`config`: the config file it names) does it, explicitly."""
    if key is None:
        if journal is None:
            return []
        signed_by, since = journal
        raise JournalError(
            f"the journal {where} is signed (key {signed_by.fingerprint}, since row {since}) "
            "but [journal] signing_key is empty: a signed journal is never continued unsigned; "
            "give signing_key the station's key again"
        )
    if journal is None:
        raise JournalError(
            f"the journal {where} was written unsigned, and [journal] signing_key gives key "
            f"{key.public.fingerprint}: a station never signs an unsigned journal's "
            "continuation by itself (its rows could be anyone's). If these rows are the "
            "table's true record (check them: `station journal verify`, and against the "
            f"floor if there is one), adopt them under the key: `station journal adopt "
            f"--config {config}` (it journals what it adopted); else give the key a new "
            "journal ([journal] path), or empty signing_key"
        )
    current, since = journal
    notices: list[Pending] = []
    seen = {current}
    while current != key.public:
        step = next((e for e in endorsements if e.old == current and e.valid), None)
        if step is None or step.new in seen:
            held = f" in {rotations}" if rotations is not None else ""
            raise JournalError(
                f"the journal {where} is signed with key {current.fingerprint} (since row "
                f"{since}), but [journal] signing_key is key {key.public.fingerprint}, and no "
                f"endorsement by the journal's key leads to it{held}: change keys with "
                "`station key rotate` (which has the old key endorse the new one), or give "
                "signing_key the journal's key back"
            )
        notices.append(
            notice(
                "station",
                "station",
                ROTATED,
                old_key=named(step.old),
                signing_key=named(step.new),
                endorsement=step.signature,
            )
        )
        current = step.new
        seen.add(current)
    return notices


def adopted_through(db: sqlite3.Connection) -> int:
    """The last row an explicit adoption (`station journal adopt`: a `journal signed`
    notice saying what it adopted) took under a key; 0 if none. A restore accepts those
    rows unsigned, as the operator did."""
    sql = (
        "SELECT event FROM journal WHERE kind = 'notice' AND "
        "json_extract(event, '$.message') = ? ORDER BY seq LIMIT 1"
    )
    found = db.execute(sql, (SIGNED,)).fetchone()
    if found is None:
        return 0
    rows = orjson.loads(found[0]).get("adopted", {}).get("rows")
    if isinstance(rows, list) and len(rows) == 2 and isinstance(rows[1], int):
        return rows[1]
    return 0


def named_in(db: sqlite3.Connection) -> dict[str, PublicKey]:
    """Every key the journal's notices name (signed, rotated to), by fingerprint."""
    sql = (
        "SELECT event FROM journal WHERE kind = 'notice' AND "
        "json_extract(event, '$.signing_key') IS NOT NULL"
    )
    found = (_named_key(text) for (text,) in db.execute(sql))
    return {key.fingerprint: key for key in found if key is not None}


def _named_key(text: str) -> PublicKey | None:
    """The key a row's event text names, None if none (or one that cannot be read)."""
    try:
        return key_named(orjson.loads(text))
    except (orjson.JSONDecodeError, SigningError):
        return None
