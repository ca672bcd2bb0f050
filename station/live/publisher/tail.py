"""The publisher's own read-only view of the journal file: the committed rows it sends,
and the hashes it checks the stream's last row against.

Why a connection of its own: the journal is in WAL mode, so a reader never blocks the
writer and sees only committed rows; a journal restored under the station is a new file,
so after an error the connection is dropped and opened again (`reopen`).
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from station.shared.rows import GENESIS, Row, row_of

#: Rows read from the journal at a time.
READ_BATCH = 256


class JournalTail:
    """The publisher's own read-only view of the journal file (WAL: it never blocks the
    writer, and sees only committed rows)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            uri = self.path.resolve().as_uri() + "?mode=ro"
            self._db = sqlite3.connect(uri, uri=True, check_same_thread=False)
        return self._db

    def rows(self, after: int, limit: int = READ_BATCH) -> list[Row]:
        cur = self._conn().execute(
            "SELECT * FROM journal WHERE seq > ? ORDER BY seq LIMIT ?", (after, limit)
        )
        return [row_of(r) for r in cur]

    def hash_at(self, seq: int) -> str | None:
        found = self._conn().execute("SELECT hash FROM journal WHERE seq = ?", (seq,)).fetchone()
        return None if found is None else str(found[0])

    def last(self) -> tuple[int, str]:
        found = (
            self._conn()
            .execute("SELECT seq, hash FROM journal ORDER BY seq DESC LIMIT 1")
            .fetchone()
        )
        return (0, GENESIS) if found is None else (int(found[0]), str(found[1]))

    def reopen(self) -> None:
        """Drop the connection (after an error: a journal restored under the station is
        a new file)."""
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None

    close = reopen
