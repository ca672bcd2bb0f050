"""A table's epochs in the floor archive: the stretches of its journal between two restores
made without the floor, each kept whole.

Why: a station restored from a backup without the rows after it (`station journal
restore` with no `--from-floor`) numbers its next rows again from the backup's end, in a
new epoch (`journal restored`). Its rows then come to the floor with seqs the archive has
already: row 301 of the new epoch is not row 301 of the old one. Such a row links to an
archived row (its `prev_hash` is the archive's row 300), so the archive knows it for a
branch: it holds it and every row after it (`branches`, `follows`), raises an `epoch`
alert, and waits for a supervisor (`accept-chain`, which names the epoch). Accepted
(`begin`), the archived rows from the branch on move, whole and with their signatures,
to `superseded` under the epoch they belonged to (nothing archived is lost or
overwritten), and the table's rows go on from the branch in the new epoch.

The archive's `row` table is always the table's chain as its station's journal now has
it (what `station journal verify --against-floor` and `restore --from-floor` read); the
`epoch` table says where each epoch after the first began.

Only a branch whose first row is an epoch's notice (`journal restored`, or `journal
discontinuity`: a station that found its own journal rolled back or cut), signed by the
table's key when the floor knows one, can become an epoch. Any other branch is a journal
rolled back or cut without `journal restore` (or rows the key signed before, republished
with the table's broker login to cover one up): a ROLLBACK, held for good (`rollback`),
which no supervisor can accept as an epoch (issue 32).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

import orjson

from station.floor.arrival import FloorRow
from station.floor.said import Said
from station.floor.tip import Tip
from station.shared.rows import GENESIS

#: The notices that begin a station's epoch (`station.live.journal.epoch.RESTORED`,
#: `DISCONTINUITY`: a restore, and a station that found its own journal rolled back or
#: cut; the floor never imports the live station, a test keeps them the same).
RESTORED = "journal restored"
DISCONTINUITY = "journal discontinuity"
EPOCH_NOTICES = (RESTORED, DISCONTINUITY)

EPOCH_TABLE = """
    CREATE TABLE epoch (
        table_id TEXT NOT NULL,
        number INTEGER NOT NULL,
        from_seq INTEGER NOT NULL,
        hash TEXT NOT NULL,
        station_epoch INTEGER,
        decision INTEGER REFERENCES decision (id),
        PRIMARY KEY (table_id, number)
    ) WITHOUT ROWID
"""
SUPERSEDED_TABLE = """
    CREATE TABLE superseded (
        table_id TEXT NOT NULL,
        epoch INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        ts TEXT NOT NULL,
        source TEXT NOT NULL,
        actor TEXT NOT NULL,
        kind TEXT NOT NULL,
        event TEXT NOT NULL,
        verdict TEXT,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL,
        received TEXT NOT NULL,
        signature TEXT,
        PRIMARY KEY (table_id, epoch, seq)
    ) WITHOUT ROWID
"""


@dataclass(frozen=True, slots=True)
class Epoch:
    """An epoch of a table after its first: where it began and who accepted it."""

    table: str
    number: int
    from_seq: int
    hash: str
    #: The station's own number of the epoch (its `journal restored` notice), if known.
    station_epoch: int | None
    decision: int | None

    def to_api(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "from_seq": self.from_seq,
            "hash": self.hash,
            "station_epoch": self.station_epoch,
            "decision": self.decision,
        }


def current(db: sqlite3.Connection, table: str) -> int:
    """The table's epoch now (1 until a supervisor accepted another)."""
    found = db.execute("SELECT max(number) FROM epoch WHERE table_id = ?", (table,)).fetchone()
    return int(found[0] or 1)


def epochs_of(db: sqlite3.Connection, table: str) -> list[Epoch]:
    """The table's epochs after its first, oldest first."""
    cur = db.execute(
        "SELECT table_id, number, from_seq, hash, station_epoch, decision FROM epoch "
        "WHERE table_id = ? ORDER BY number",
        (table,),
    )
    return [Epoch(*r) for r in cur]


def archived_hash(db: sqlite3.Connection, table: str, seq: int) -> str | None:
    """The hash of the table's archived row `seq` (GENESIS before the first)."""
    if seq == 0:
        return GENESIS
    found = db.execute(
        "SELECT hash FROM row WHERE table_id = ? AND seq = ?", (table, seq)
    ).fetchone()
    return None if found is None else str(found[0])


def branches(db: sqlite3.Connection, row: FloorRow) -> bool:
    """Whether `row`, which the archive has another row at, links to the archived row
    before it: the first row of a new epoch (never row 1: a restore keeps the first row,
    a journal that starts again at row 1 is another journal)."""
    return row.seq >= 2 and archived_hash(db, row.table, row.seq - 1) == row.prev_hash


def follows(db: sqlite3.Connection, row: FloorRow) -> str | None:
    """What `row` links to among the held branches: "epoch" (a row of a new epoch held
    for a supervisor), "rollback" (of a rolled-back journal), None: neither."""
    found = db.execute(
        "SELECT reason FROM held WHERE table_id = ? AND seq = ? AND hash = ? "
        "AND reason IN ('epoch', 'rollback') LIMIT 1",
        (row.table, row.seq - 1, row.prev_hash),
    ).fetchone()
    return None if found is None else str(found[0])


def begins_epoch(row: FloorRow) -> bool:
    """Whether the row is a notice that begins an epoch (a restore's, a station's own
    discontinuity's): the only first row of a branch that may become an epoch. Its
    signature is the caller's check (`keys.check_row`, before this)."""
    if row.kind != "notice" or not any(n in row.event for n in EPOCH_NOTICES):
        return False
    return orjson.loads(row.event).get("message") in EPOCH_NOTICES


def superseded_has(db: sqlite3.Connection, table: str, seq: int, digest: str) -> bool:
    """Whether the row is archived in an earlier epoch (the broker sent it again)."""
    found = db.execute(
        "SELECT 1 FROM superseded WHERE table_id = ? AND seq = ? AND hash = ?",
        (table, seq, digest),
    ).fetchone()
    return found is not None


def station_epoch(row: FloorRow) -> int | None:
    """The station's number of the epoch its notice begins (`begins_epoch`)."""
    if not begins_epoch(row):
        return None
    number = orjson.loads(row.event).get("epoch")
    return number if isinstance(number, int) and not isinstance(number, bool) else None


def branch_words(row: FloorRow, head_seq: int, number: int) -> Said:
    """The `epoch` alert's words: row `seq`, an epoch's notice, branches off the archive."""
    station = station_epoch(row)
    message = orjson.loads(row.event).get("message")
    said = "" if station is None else f" (the station's epoch {station}, `{message}`)"
    why = (
        "the table's journal was restored from a backup without the floor's rows"
        if message == RESTORED
        else "the table's station found its journal rolled back or cut and began a new "
        "epoch (`journal discontinuity`): find out who changed its files"
    )
    words = (
        f"row {row.seq} follows archived row {row.seq - 1} but is not the archived row "
        f"{row.seq}: {why}{said}; it would begin epoch {number} of the table. Its rows are "
        f"held until a supervisor accepts the new chain; rows {row.seq}-{head_seq} of epoch "
        f"{number - 1} stay archived"
    )
    figures = {
        "seq": row.seq,
        "prev": row.seq - 1,
        "head": head_seq,
        "number": number,
        "before": number - 1,
    }
    code = "epoch_restored" if message == RESTORED else "epoch_discontinuity"
    return Said(code, words, figures)


def rollback_words(row: FloorRow, head_seq: int) -> Said:
    """The ROLLBACK alert's words: row `seq` branches off the archive and begins no epoch."""
    words = (
        f"row {row.seq} follows archived row {row.seq - 1} but is not the archived row "
        f"{row.seq}, and it is no `journal restored` or `journal discontinuity` notice: the "
        "table's journal was rolled back or cut without `station journal restore` (its "
        "station numbers rows the floor archived again, with other contents), or old rows "
        "were republished with the table's broker login. Its rows are held, never archived, "
        f"and cannot be accepted as an epoch; rows {row.seq}-{head_seq} stay archived. Stop "
        "the table, find out who changed its journal, and put it back with `station journal "
        "restore BACKUP --from-floor URL`"
    )
    return Said("rollback", words, {"seq": row.seq, "prev": row.seq - 1, "head": head_seq})


def begin(db: sqlite3.Connection, row: FloorRow, number: int, decision: int | None) -> int:
    """Begin epoch `number` of the table at `row` (inside the archive's transaction): the
    archived rows from its seq on move to `superseded` under the epoch before, whole with
    their signatures; returns how many moved."""
    table, seq = row.table, row.seq
    moved = db.execute(
        "INSERT INTO superseded SELECT r.table_id, ?, r.seq, r.ts, r.source, r.actor, r.kind, "
        "r.event, r.verdict, r.prev_hash, r.hash, r.received, s.signature FROM row r "
        "LEFT JOIN signature s ON s.table_id = r.table_id AND s.seq = r.seq "
        "WHERE r.table_id = ? AND r.seq >= ?",
        (number - 1, table, seq),
    ).rowcount
    db.execute("DELETE FROM signature WHERE table_id = ? AND seq >= ?", (table, seq))
    db.execute("DELETE FROM row WHERE table_id = ? AND seq >= ?", (table, seq))
    db.execute(
        "INSERT INTO epoch VALUES (?, ?, ?, ?, ?, ?)",
        (table, number, seq, row.hash, station_epoch(row), decision),
    )
    return moved


def tip_up_to(db: sqlite3.Connection, table: str, seq: int) -> Tip:
    """The table's tip once its archive ends at row `seq` (read from its rows)."""
    tip = Tip()
    for found in db.execute(
        "SELECT seq, hash, kind, event, verdict FROM row WHERE table_id = ? AND seq <= ? "
        "ORDER BY seq",
        (table, seq),
    ):
        tip = tip.after(*found)
    return tip
