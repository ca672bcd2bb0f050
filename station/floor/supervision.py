"""A supervisor's decisions, as the floor archive takes them (`Archive` inherits these
methods; `decisions` says what each means and how it is recorded).

Apart from the archive's checks of what arrives, but in the same transactions (the
archive's `_transaction`, one at a time with the consumer's commits): a decision either
is recorded whole with what it lets in, or refused (`DecisionRefused`) with nothing done.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING

from station.floor.decisions import (
    Decision,
    DecisionRefused,
    checked_reason,
    read_decisions,
)

if TYPE_CHECKING:
    from station.floor.archive import Committed, FloorRow

log = logging.getLogger("station.floor.archive")

#: Each table's last archived row: seq and hash.
Heads = dict[str, tuple[int, str]]


class Supervised:
    """The decisions' methods of the archive."""

    if TYPE_CHECKING:  # the archive's own, which these methods use
        _db: sqlite3.Connection

        def _transaction(self, work: Callable[[Heads, str, Committed], None]) -> Committed: ...
        def _held_row(
            self, table: str, seq: int, reason: str, digest: str | None
        ) -> tuple[FloorRow, int]: ...
        def _insert(self, row: FloorRow, received: str) -> None: ...
        def _station_protection(self, row: FloorRow, received: str, done: Committed) -> None: ...
        def _release(self, table: str, heads: Heads, received: str, done: Committed) -> None: ...
        def _gap_alert(
            self, done: Committed, table: str, head_seq: int, seq: int, received: str
        ) -> None: ...
        def _alert(
            self,
            done: Committed,
            table: str,
            seq: int | None,
            kind: str,
            message: str,
            raised: str,
        ) -> None: ...
        def _hold(
            self,
            table: str,
            seq: int | None,
            digest: str | None,
            reason: str,
            body: bytes,
            received: str,
        ) -> bool: ...

    def _late(
        self, table: str, seq: int, digest: str, body: bytes, received: str, done: Committed
    ) -> bool:
        """A row of a gap a supervisor accepted as missing, come after all: held (the
        archive went on without it), with an alert saying so. False: not such a row."""
        found = read_decisions(
            self._db,
            "table_id = ? AND kind = 'accept_gap' AND ? BETWEEN from_seq AND to_seq",
            (table, seq),
        )
        if not found:
            return False
        accepted = found[0]
        if self._hold(table, seq, digest, "conflict", body, received):
            done.held += 1
            self._alert(
                done,
                table,
                seq,
                "late",
                f"row {seq} came after {accepted.by} accepted rows {accepted.from_seq}-"
                f"{accepted.to_seq} as missing ({accepted.decided}); it is held, not archived",
                received,
            )
        return True

    def acknowledge(self, alert_id: int, by: str, role: str, reason: str) -> Committed:
        """Record that `by` has seen the alert and deals with it (it stays open, in the
        history); `DecisionRefused` for an alert that is not there or not open."""
        reason = checked_reason(reason)

        def decide(heads: dict[str, tuple[int, str]], now: str, done: Committed) -> None:
            found = self._db.execute(
                "SELECT table_id, resolved, acknowledged FROM alert WHERE id = ?", (alert_id,)
            ).fetchone()
            if found is None:
                raise DecisionRefused(
                    404, f"no alert {alert_id} in the archive: see GET /api/floor/alerts"
                )
            table, resolved, acknowledged = found
            if resolved is not None:
                raise DecisionRefused(
                    409, f"alert {alert_id} was resolved at {resolved}: nothing to acknowledge"
                )
            if acknowledged is not None:
                [earlier] = read_decisions(self._db, "id = ?", (acknowledged,))
                raise DecisionRefused(
                    409,
                    f"alert {alert_id} was acknowledged by {earlier.by} at {earlier.decided} "
                    "already",
                )
            decision = self._decide(
                table, "acknowledge", alert_id, None, None, None, by, role, reason, now
            )
            self._db.execute(
                "UPDATE alert SET acknowledged = ? WHERE id = ?", (decision.id, alert_id)
            )
            done.decision = decision

        return self._decided(self._transaction(decide))

    def accept_gap(
        self,
        table: str,
        from_seq: int,
        to_seq: int,
        by: str,
        role: str,
        reason: str,
        digest: str | None = None,
    ) -> Committed:
        """Let the table's archive go on past its gap: rows `from_seq`-`to_seq` (which
        must be the gap the archive has now) are recorded as missing, the next held row
        is taken (`digest`: which one, if several are held), and the chain is checked
        from it on."""
        reason = checked_reason(reason)

        def decide(heads: dict[str, tuple[int, str]], now: str, done: Committed) -> None:
            self._known(table, heads)
            head_seq = heads.get(table, (0, ""))[0]
            after = self._db.execute(  # rows of a replaced journal may be held below
                "SELECT min(seq) FROM held WHERE table_id = ? AND reason = 'gap' AND seq > ?",
                (table, head_seq + 1),
            ).fetchone()[0]
            if after is None:
                raise DecisionRefused(
                    409,
                    f"table {table} has no gap: its archive ends at row {head_seq} and no row "
                    "waits behind a gap",
                )
            gap = (head_seq + 1, after - 1)
            if (from_seq, to_seq) != gap:
                raise DecisionRefused(
                    409,
                    f"no such gap: table {table}'s gap is rows {gap[0]}-{gap[1]} (the archive "
                    f"ends at row {head_seq}, row {after} waits); accept that one",
                )
            row, held_id = self._held_row(table, after, "gap", digest)
            decision = self._decide(
                table, "accept_gap", None, from_seq, to_seq, row.hash, by, role, reason, now
            )
            self._go_on(table, row, held_id, heads, now, done, decision, "gap")

        return self._decided(self._transaction(decide))

    def accept_chain(
        self, table: str, seq: int, by: str, role: str, reason: str, digest: str | None = None
    ) -> Committed:
        """Take the held row `seq` that does not link to the archive's last row as the
        start of a new chain (`digest`: which one, if several rows `seq` are held); the
        chain is checked from it on."""
        reason = checked_reason(reason)

        def decide(heads: dict[str, tuple[int, str]], now: str, done: Committed) -> None:
            self._known(table, heads)
            head_seq = heads.get(table, (0, ""))[0]
            broken = sorted(
                s
                for (s,) in self._db.execute(
                    "SELECT DISTINCT seq FROM held WHERE table_id = ? AND reason = 'chain'",
                    (table,),
                )
            )
            if not broken:
                raise DecisionRefused(
                    409, f"table {table} has no broken chain: no row is held for one"
                )
            if seq != head_seq + 1 or seq not in broken:
                held = ", ".join(map(str, broken))
                raise DecisionRefused(
                    409,
                    f"no such broken chain: table {table}'s archive ends at row {head_seq}; the "
                    f"row held for a broken chain is {held}; accept row {head_seq + 1} if it "
                    "is held, else the gap first",
                )
            row, held_id = self._held_row(table, seq, "chain", digest)
            decision = self._decide(
                table, "accept_chain", None, seq, seq, row.hash, by, role, reason, now
            )
            self._go_on(table, row, held_id, heads, now, done, decision, "chain")

        return self._decided(self._transaction(decide))

    def _known(self, table: str, heads: dict[str, tuple[int, str]]) -> None:
        if table in heads:
            return
        held = self._db.execute("SELECT 1 FROM held WHERE table_id = ? LIMIT 1", (table,))
        if held.fetchone() is None:
            known = ", ".join(sorted(heads)[:20]) or "none yet"
            raise DecisionRefused(
                404,
                f"unknown table {table!r}: the archive has no row of it (its tables: {known}); "
                "see GET /api/floor/tables",
            )

    def _decide(
        self,
        table: str,
        kind: str,
        alert_id: int | None,
        from_seq: int | None,
        to_seq: int | None,
        digest: str | None,
        by: str,
        role: str,
        reason: str,
        now: str,
    ) -> Decision:
        cur = self._db.execute(
            "INSERT INTO decision (table_id, kind, alert_id, from_seq, to_seq, hash, actor, "
            "role, reason, decided) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (table, kind, alert_id, from_seq, to_seq, digest, by, role, reason, now),
        )
        assert cur.lastrowid is not None
        return Decision(
            cur.lastrowid, table, kind, alert_id, from_seq, to_seq, digest, by, role, reason, now
        )

    def _go_on(
        self,
        table: str,
        row: FloorRow,
        held_id: int,
        heads: dict[str, tuple[int, str]],
        now: str,
        done: Committed,
        decision: Decision,
        kind: str,
    ) -> None:
        """Take the accepted row, then every held row that follows it; resolve the table's
        open alerts of `kind` (and its gap alerts once no row waits behind a gap)."""
        self._db.execute("DELETE FROM held WHERE id = ?", (held_id,))
        self._insert(row, now)
        heads[table] = (row.seq, row.hash)
        done.accepted.append(row)
        done.decision = decision
        self._station_protection(row, now, done)
        for (alert_id,) in self._db.execute(
            "SELECT id FROM alert WHERE table_id = ? AND kind = ? AND resolved IS NULL",
            (table, kind),
        ).fetchall():
            self._db.execute(
                "UPDATE alert SET resolved = ?, resolved_by = ? WHERE id = ?",
                (now, decision.id, alert_id),
            )
            done.resolved.append(alert_id)
        self._release(table, heads, now, done)
        waiting = self._db.execute(
            "SELECT min(seq) FROM held WHERE table_id = ? AND reason = 'gap' AND seq > ?",
            (table, heads[table][0]),
        ).fetchone()[0]
        if waiting is not None:  # another gap further on: an alert of its own
            self._gap_alert(done, table, heads[table][0], waiting, now)

    def _decided(self, done: Committed) -> Committed:
        assert done.decision is not None
        log.warning("floor decision: table %s: %s", done.decision.table, done.decision.words())
        return done
