"""How much the floor archive holds of a table that its key did not sign (issue 32,
attack 7): at most `[floor] held_rows` rows; what comes past that is not stored, only
counted (`dropped`), with one HELD_FULL alert while it is open.

Why a bound, and why on those rows only: a table's broker login can publish as many
distinct junk messages as it likes (forged rows, messages that are not rows, rows of
another key), and each one the archive held would stay in it for good, so one login
could grow the floor's disk without end. A row the table's key signed is always kept:
only the station's key makes one, so there are only as many as the station signed,
and it may be a new epoch or a rollback a supervisor must decide. So junk never pushes
out a row of the station's, and a flood costs the floor at most `held_rows` rows a
table. Every function works inside the caller's transaction (the archive's writer).
"""

from __future__ import annotations

import sqlite3

#: The default bound a table (`[floor] held_rows`): above what an honest table holds
#: unsigned for a supervisor (a first-use key's rows before it is accepted, an unsigned
#: station's broken chain: a shoe is about 490 rows, so about 20 shoes), far below what
#: fills a disk (about 10 MB a table at 1 KB a row).
HELD_ROWS = 10_000

#: Schema 5: which held rows the table's key signed (never bound, never dropped), and
#: an index to count the others fast.
HELD_SIGNED = "ALTER TABLE held ADD COLUMN signed INTEGER NOT NULL DEFAULT 0"
HELD_UNSIGNED_INDEX = "CREATE INDEX held_unsigned ON held (table_id) WHERE signed = 0"
#: Schema 5: per table, the rows not kept because its bound was full, and when.
DROPPED_TABLE = """
    CREATE TABLE dropped (
        table_id TEXT PRIMARY KEY,
        rows INTEGER NOT NULL,
        first TEXT NOT NULL,
        last TEXT NOT NULL
    ) WITHOUT ROWID
"""


def room(db: sqlite3.Connection, table: str, bound: int) -> bool:
    """Whether the table holds fewer than `bound` rows its key did not sign."""
    found: int = db.execute(
        "SELECT count(*) FROM held WHERE table_id = ? AND signed = 0", (table,)
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


def full_words(table: str, bound: int) -> str:
    """The HELD_FULL alert's words."""
    return (
        f"table {table}'s archive holds {bound} rows its key did not sign (forged, "
        "malformed, of an unknown key: the most [floor] held_rows keeps); more such rows "
        "are not stored, only counted on the table's line (dropped). Someone floods the "
        "table's subject with its broker login: change that login's password (the broker's "
        "config) and find who had it. Rows the table's key signed are still kept and "
        "archived"
    )
