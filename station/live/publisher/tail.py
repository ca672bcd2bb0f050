"""The publisher's own read-only view of the journal file: the committed rows it sends,
the hashes it checks the stream's last row against, and what the journal says that
bears on the stream: the keys that sign it, the epoch it is in and where that epoch
began (a restore's backup, a discontinuity found in the stream), and where the publisher
found a message at its subject that it did not sign.

Why a connection of its own: the journal is in WAL mode, so a reader never blocks the
writer and sees only committed rows; a journal restored under the station is a new file,
so after an error the connection is dropped and opened again (`reopen`).
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from typing import Any

import orjson

from station.live.journal.epoch import DISCONTINUITY, EPOCH_NOTICES, epoch_of
from station.shared.keychain import NAMING, key_named
from station.shared.rows import GENESIS, Row, row_of
from station.shared.signing import PublicKey, SigningError

#: The notice the publisher journals for a message at its subject it did not sign.
FOREIGN = "floor foreign: a message at this table's subject that this station did not sign"

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

    def signed_at(self, seq: int) -> bool:
        """Whether the journal's row `seq` carries a signature (False: unsigned, or none)."""
        found = (
            self._conn().execute("SELECT signature FROM journal WHERE seq = ?", (seq,)).fetchone()
        )
        return found is not None and found[0] is not None

    def epoch_number(self) -> int:
        """The number of the journal's epoch now (1 for one never restored; 0: empty)."""
        epoch = epoch_of(self._conn())
        return 0 if epoch is None else epoch.number

    def epoch_began(self) -> tuple[int, dict[str, Any]] | None:
        """The row and event of the notice that began the journal's epoch (a restore's or
        a discontinuity's; None: the journal is in its first epoch)."""
        sql = (
            "SELECT seq, event FROM journal WHERE kind = 'notice' AND "
            "json_extract(event, '$.message') IN (?, ?) ORDER BY seq DESC LIMIT 1"
        )
        found = self._conn().execute(sql, EPOCH_NOTICES).fetchone()
        if found is None:
            return None
        event = orjson.loads(found[1])
        return int(found[0]), event if isinstance(event, dict) else {}

    def discontinuity_of(self, stream_seq: int, stream_hash: str) -> int | None:
        """The row this station's rows go on after, if the journal holds the publisher's
        discontinuity notice of the stream's message at `stream_seq` with `stream_hash`
        (None: no such notice)."""
        event = self._latest(DISCONTINUITY, stream_seq)
        if event is None or event.get("stream_hash") != stream_hash:
            return None
        after = event.get("resume_after")
        return after if isinstance(after, int) and not isinstance(after, bool) else None

    def last(self) -> tuple[int, str]:
        found = (
            self._conn()
            .execute("SELECT seq, hash FROM journal ORDER BY seq DESC LIMIT 1")
            .fetchone()
        )
        return (0, GENESIS) if found is None else (int(found[0]), str(found[1]))

    def keys(self) -> set[PublicKey]:
        """Every key the journal names (its first, the ones handed over to): what signs
        this station's rows, in this epoch or an earlier one."""
        found = set()
        sql = (
            "SELECT event FROM journal WHERE kind = 'notice' AND "
            "json_extract(event, '$.message') IN (?, ?, ?)"
        )
        for (text,) in self._conn().execute(sql, NAMING):
            with contextlib.suppress(SigningError, orjson.JSONDecodeError):
                key = key_named(orjson.loads(text))
                if key is not None:
                    found.add(key)
        return found

    def foreign_after(self, stream_seq: int) -> int | None:
        """The journal row the publisher had sent last when it found the foreign message
        at stream sequence `stream_seq` (its notice says so), None: not noticed."""
        event = self._latest(FOREIGN, stream_seq)
        after = None if event is None else event.get("after_row")
        return after if isinstance(after, int) and not isinstance(after, bool) else None

    def _latest(self, message: str, stream_seq: int | None = None) -> dict[str, Any] | None:
        """The event of the latest notice `message` (of `stream_seq`, if given)."""
        sql = (
            "SELECT event FROM journal WHERE kind = 'notice' AND "
            "json_extract(event, '$.message') = ?"
        )
        args: tuple[Any, ...] = (message,)
        if stream_seq is not None:
            sql += " AND json_extract(event, '$.stream_seq') = ?"
            args = (message, stream_seq)
        found = self._conn().execute(sql + " ORDER BY seq DESC LIMIT 1", args).fetchone()
        if found is None:
            return None
        event = orjson.loads(found[0])
        return event if isinstance(event, dict) else None

    def reopen(self) -> None:
        """Drop the connection (after an error: a journal restored under the station is
        a new file)."""
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None

    close = reopen
