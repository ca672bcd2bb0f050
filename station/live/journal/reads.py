"""What a journal reads back of itself (`JournalReading`, which `store.Journal` is): its
settings, its rows, their replay, an export, a backup, and `verify`: the journal's reading
side, apart from the one writer's appends, start-up checks and disk watch."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from station.core.table import Table
from station.live.journal import reading
from station.live.journal.table import (
    Replayed,
    replay,
    settings_in,
)
from station.live.journal.verify import VerifyReport, verify_journal
from station.shared.rows import (
    Row,
)
from station.shared.signing import PublicKey


class JournalReading:
    """The reads of an open journal (on the writer's own connection: WAL readers elsewhere
    use `reading` directly)."""

    path: Path
    head_path: Path
    _db: sqlite3.Connection

    def settings(self) -> dict[str, Any] | None:
        """The table settings from the `journal created` row, or None for an empty journal."""
        return settings_in(next(self.rows(limit=1), None), self.path)

    def rows(self, after: int = 0, limit: int | None = None) -> Iterator[Row]:
        """Rows with seq > after, in order (all of them, or at most `limit`)."""
        return reading.rows(self._db, after, limit)

    def replay_into(self, table: Table) -> Replayed:
        """Apply every event row to `table` (notices skipped), checking that the core still
        decides what the journal says."""
        return replay(self.rows(), table, self.path)

    def export(self, sink: BinaryIO, after: int = 0) -> int:
        """Write the table events as replay JSON Lines, each with its `verdict` (the replay
        output's fields less seq) and a `journal` object (seq, ts, source, actor). `station
        replay` accepts the file as is (it ignores the extra keys) and decides the same."""
        return reading.export(self.rows(after=after), sink)

    def backup(self, dest: str | os.PathLike[str]) -> int:
        """Copy the journal to `dest` (a new file) and its head anchor to `dest.head`,
        consistent even while the station commits (`reading.backup`). Returns the copy's
        row count."""
        return reading.backup(self._db, self.head_path, dest)

    def verify(
        self, trusted: PublicKey | None = None, accept_unsigned_before: int = 1
    ) -> VerifyReport:
        """Check the chain, the head anchor and that the core's replay agrees with every
        stored verdict, and with a `trusted` key every signature (`keychain.check`; a row
        not signed by it is a problem unless its seq is below `accept_unsigned_before`).
        Never raises for a bad journal: the report lists the problems."""
        return verify_journal(self._db, self.path, self.head_path, trusted, accept_unsigned_before)
