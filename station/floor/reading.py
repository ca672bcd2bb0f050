"""Reading the floor archive: a table's rows (its chain as its station's journal now has
it, with the rows' signatures), its held rows and alerts, the supervisors' decisions, and
a check of a table's archived chain.

Why apart from the archive's writing: the floor view, the API and the tests read; only
the consumer's commits and the supervisors' decisions write (`archive`), in turns on the
same connection, so a read the API makes from a thread of its own waits for the writer's
lock (`read_rows`, `decisions`).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from typing import Any

from station.floor.alerts import ALERTS_KEPT, Alert, read_alerts
from station.floor.arrival import FloorRow
from station.floor.decisions import Decision, read_decisions
from station.floor.holding import read_dropped
from station.shared.rows import GENESIS

#: A row as `rows` reads it: the journal's columns, then its signature.
ROW_COLUMNS = (
    "r.table_id, r.seq, r.ts, r.source, r.actor, r.kind, r.event, r.verdict, r.prev_hash, "
    "r.hash, s.signature FROM row r LEFT JOIN signature s "
    "ON s.table_id = r.table_id AND s.seq = r.seq"
)


class ArchiveReader:
    """What the archive's connection reads."""

    _db: sqlite3.Connection
    _writing: threading.Lock

    def tables(self) -> list[str]:
        """Every table the archive has heard of (rows, held rows or alerts)."""
        cur = self._db.execute(
            "SELECT table_id FROM tip UNION SELECT table_id FROM held "
            "UNION SELECT table_id FROM alert ORDER BY 1"
        )
        return [t for (t,) in cur]

    def decisions(self, table: str | None = None) -> list[Decision]:
        """The supervisors' decisions (of one table), oldest first: between two
        transactions (the API asks from a thread of its own)."""
        with self._writing:
            if table is None:
                return read_decisions(self._db)
            return read_decisions(self._db, "table_id = ?", (table,))

    def rows(self, table: str, after: int = 0, limit: int | None = None) -> Iterator[FloorRow]:
        """A table's archived rows with seq > after, in order, with their signatures (its
        chain as its station's journal now has it: the current epoch's)."""
        sql = f"SELECT {ROW_COLUMNS} WHERE r.table_id = ? AND r.seq > ? ORDER BY r.seq"
        args: tuple[Any, ...] = (table, after)
        if limit is not None:
            sql += " LIMIT ?"
            args = (table, after, limit)
        for r in self._db.execute(sql, args).fetchall():
            yield FloorRow(*r)

    def read_rows(self, table: str, after: int, limit: int) -> list[FloorRow]:
        """`rows`, between two transactions (the API asks from a thread of its own)."""
        with self._writing:
            return list(self.rows(table, after, limit))

    def row(self, table: str, seq: int) -> FloorRow | None:
        found = self._db.execute(
            f"SELECT {ROW_COLUMNS} WHERE r.table_id = ? AND r.seq = ?", (table, seq)
        ).fetchone()
        return None if found is None else FloorRow(*found)

    def count(self, table: str) -> int:
        found: int = self._db.execute(
            "SELECT count(*) FROM row WHERE table_id = ?", (table,)
        ).fetchone()[0]
        return found

    def held_counts(self) -> dict[str, int]:
        """Held rows per table."""
        cur = self._db.execute("SELECT table_id, count(*) FROM held GROUP BY table_id")
        return {t: n for t, n in cur}

    def forged_counts(self) -> dict[str, int]:
        """Rows held as forged per table (not signed by the table's key)."""
        cur = self._db.execute(
            "SELECT table_id, count(*) FROM held WHERE reason = 'forged' GROUP BY table_id"
        )
        return {t: n for t, n in cur}

    def dropped_counts(self) -> dict[str, int]:
        """Rows not kept per table, its bound of held rows full (`holding`)."""
        return read_dropped(self._db)

    def new_epochs(self) -> dict[str, int]:
        """Per table: the first row of a new epoch held for a supervisor."""
        cur = self._db.execute(
            "SELECT h.table_id, min(h.seq) FROM held h LEFT JOIN tip t "
            "ON t.table_id = h.table_id WHERE h.reason = 'epoch' AND h.seq <= coalesce(t.seq, 0) "
            "GROUP BY h.table_id"
        )
        return {t: n for t, n in cur}

    def waiting(self) -> dict[str, tuple[int | None, int | None]]:
        """Per table with held rows: its first row held behind a gap, and its first held
        for a broken chain (None: none), past its last archived row."""
        found: dict[str, tuple[int | None, int | None]] = {}
        for table, gap, chain in self._db.execute(
            "SELECT h.table_id, min(CASE h.reason WHEN 'gap' THEN h.seq END), "
            "min(CASE h.reason WHEN 'chain' THEN h.seq END) FROM held h "
            "LEFT JOIN tip t ON t.table_id = h.table_id "
            "WHERE h.seq > coalesce(t.seq, 0) GROUP BY h.table_id"
        ):
            found[table] = (gap, chain)
        return found

    def alerts(self, limit: int = ALERTS_KEPT) -> list[Alert]:
        """The newest alerts, newest first: every open one, and resolved ones up to `limit`
        in all."""
        return read_alerts(self._db, limit)

    def verify(self, table: str) -> list[str]:
        """Check a table's archived chain from its first row (problems in words): where a
        supervisor accepted a gap or a new chain, from the accepted row on."""
        problems: list[str] = []
        accepted = {
            (d.to_seq + 1 if d.kind == "accept_gap" else d.from_seq, d.hash): d
            for d in self.decisions(table)
            if d.kind != "acknowledge" and d.to_seq is not None
        }
        prev, expected = GENESIS, 1
        for row in self.rows(table):
            decision = accepted.get((row.seq, row.hash))
            gap_ok = decision is not None and decision.kind == "accept_gap"
            if row.seq != expected and not (gap_ok and decision and decision.from_seq == expected):
                problems.append(f"row {row.seq}: expected row {expected}")
            if row.prev_hash != prev and decision is None:
                problems.append(f"row {row.seq}: prev_hash does not match row {row.seq - 1}")
            if not row.hash_ok():
                problems.append(f"row {row.seq}: its hash does not match its contents")
            prev, expected = row.hash, row.seq + 1
        return problems
