"""How much the floor archive holds of a table that its key did not sign (issue 32,
attack 7): at most `[floor] held_rows` rows; what comes past that is not stored, only
counted (`dropped`), with one HELD_FULL alert while it is open.

Why a bound, and why on those rows only: a table's broker login can publish as many
distinct junk messages as it likes (forged rows, messages that are not rows, rows of
another key), and each one the archive held would stay in it for good, so one login
could grow the floor's disk without end. A row the table's trusted key signed is always
kept (`TRUSTED`): only the station's key makes one, so there are only as many as the
station signed, and it may be a new epoch or a rollback a supervisor must decide. A
row signed by the key the table's station named on first use, which waits for a
supervisor (`PENDING_KEY`), has a bound of its own: junk without that signature
(`UNSIGNED`) never pushes out the station's rows waiting for its key to be accepted.
So a flood costs the floor at most `held_rows` rows of each kind a table. Every function
works inside the caller's transaction (the archive's writer).
"""

from __future__ import annotations

import sqlite3

from station.floor.said import Said

#: The default bound a table (`[floor] held_rows`): above what an honest table holds
#: unsigned for a supervisor (a first-use key's rows before it is accepted, an unsigned
#: station's broken chain: a shoe is about 490 rows, so about 20 shoes), and what a disk
#: takes: a few MB a table of row-sized junk, at most 1.3 GB of the largest messages the
#: broker takes (128 KiB).
HELD_ROWS = 10_000

#: Who signed a held row (its `signer`): no key the floor knows, the table's trusted key
#: (never bound), the key its station named on first use, waiting for a supervisor.
UNSIGNED, TRUSTED, PENDING_KEY = 0, 1, 2
#: Schema 5: each held row's signer, and an index to count a table's of each fast.
HELD_SIGNER = "ALTER TABLE held ADD COLUMN signer INTEGER NOT NULL DEFAULT 0"
HELD_SIGNER_INDEX = "CREATE INDEX held_signer ON held (table_id, signer)"
#: Schema 5: per table, the rows not kept because its bound was full, and when.
DROPPED_TABLE = """
    CREATE TABLE dropped (
        table_id TEXT PRIMARY KEY,
        rows INTEGER NOT NULL,
        first TEXT NOT NULL,
        last TEXT NOT NULL
    ) WITHOUT ROWID
"""


def room(db: sqlite3.Connection, table: str, signer: int, bound: int) -> bool:
    """Whether a held row of `signer` may be stored: always for the trusted key's, else
    if the table holds fewer than `bound` rows of that signer."""
    if signer == TRUSTED:
        return True
    found: int = db.execute(
        "SELECT count(*) FROM held WHERE table_id = ? AND signer = ?", (table, signer)
    ).fetchone()[0]
    return found < bound


def is_held(db: sqlite3.Connection, table: str, seq: int | None, digest: str | None) -> bool:
    """Whether this row (table, seq, hash) is held already (sent again: not a new one)."""
    found = db.execute(
        "SELECT 1 FROM held WHERE table_id = ? AND seq IS ? AND hash IS ? LIMIT 1",
        (table, seq, digest),
    ).fetchone()
    return found is not None


def count_dropped(db: sqlite3.Connection, table: str, when: str) -> int:
    """One more row of the table not kept; how many now."""
    db.execute(
        "INSERT INTO dropped VALUES (?, 1, ?, ?) ON CONFLICT (table_id) "
        "DO UPDATE SET rows = rows + 1, last = excluded.last",
        (table, when, when),
    )
    found: int = db.execute("SELECT rows FROM dropped WHERE table_id = ?", (table,)).fetchone()[0]
    return found


def read_dropped(db: sqlite3.Connection) -> dict[str, int]:
    """table -> rows not kept because its bound was full."""
    return {t: n for t, n in db.execute("SELECT table_id, rows FROM dropped ORDER BY table_id")}


def full_words(table: str, signer: int, bound: int) -> Said:
    """The HELD_FULL alert's words, for the kind of rows (`signer`) whose bound is full."""
    pending = signer == PENDING_KEY
    if pending:
        what = (
            "signed by the key its station named on first use, which waits for a supervisor "
            "(accept the key if it is the station's: its rows are then archived; set the "
            "station's own key if it is not)"
        )
    else:
        what = "its key did not sign (forged, malformed, another key's)"
    words = (
        f"table {table}'s archive holds {bound} rows {what}: the most [floor] held_rows "
        "keeps; more such rows are not stored, only counted on the table's line "
        "(dropped). If they are junk, someone floods the table's subject with its broker "
        "login: change that login's password (the broker's config) and find who had it. "
        "Rows the table's trusted key signed are still kept and archived"
    )
    code = "held_full_pending" if pending else "held_full_unsigned"
    return Said(code, words, {"table": table, "bound": bound})
