"""The floor archive: every table's journal rows, as each station committed them, in one
SQLite file (`schema`), each table's hash chain checked on arrival.

Why the checks here: the broker is transport, the journal is the record. A row is taken
into the archive only if its hash matches its contents (by the station's own
`row_hash`) and it links to the archive's last row of its table (`prev_hash`, the next
`seq`). Anything else is *held*: kept whole in `held` with the reason, an alert
(`alerts`) written and logged, never silently accepted and never lost:
- a gap (row N arrives while the archive ends at an earlier row than N - 1): the row is
  held until the missing rows come, then taken in order (its alert is then resolved);
- a broken chain (`prev_hash` not the previous row's hash), a row whose hash does not
  match its contents, a different row under a seq the archive already has, a message
  that is not a journal row: held for good, the alert stays open for a supervisor.

Only a supervisor lets a table go on past a gap or a broken chain (`accept_gap`,
`accept_chain`, see `decisions`), or acknowledges an alert; `supervision` checks and
records each decision, in one of this archive's transactions, and the chain is checked
from the accepted row on.

Idempotent on (table, seq): the same row again (the broker sends again what was fetched
but not acked, e.g. after the service was killed between its commit and its ack) is a
no-op, so each row is archived exactly once. `commit` takes a batch in one transaction
(durable when it returns: WAL, `synchronous=FULL`); the consumer acks only after it.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from station.floor import supervision
from station.floor.alerts import (
    ALERTS_KEPT,
    Alert,
    gap_words,
    raise_once,
    read_alerts,
    resolve,
    station_alert,
)
from station.floor.arrival import Arrival, FloorRow, Malformed, parse_row
from station.floor.decisions import Decision, checked_reason, read_decisions
from station.floor.schema import open_archive, read_tips, unlock, write_tips
from station.floor.tip import Tip
from station.shared.rows import GENESIS, now_ts

log = logging.getLogger("station.floor.archive")

#: Each table's last archived row: seq and hash.
Heads = dict[str, tuple[int, str]]


@dataclass(slots=True)
class Committed:
    """What one `commit` did: the rows taken into the archive (in order, per table), how
    many arrivals were rows the archive had already, and the alerts raised and resolved."""

    accepted: list[FloorRow] = field(default_factory=list)
    duplicates: int = 0
    held: int = 0
    raised: list[Alert] = field(default_factory=list)
    resolved: list[int] = field(default_factory=list)
    #: Seconds the commit took (the transaction, fsync included).
    seconds: float = 0.0
    #: After the commit: held rows per table, and the newest alerts (read in the same
    #: thread as the commit, so readers of the board never touch the writer's connection).
    held_counts: dict[str, int] = field(default_factory=dict)
    alerts: list[Alert] = field(default_factory=list)
    #: Per table with held rows: the first row held behind a gap, and the first held for
    #: a broken chain (None: none), what a supervisor's decision would be about.
    waiting: dict[str, tuple[int | None, int | None]] = field(default_factory=dict)
    #: The supervisor's decision this was (None: a commit of the consumer's).
    decision: Decision | None = None

    def alerted(self, alert: Alert | None) -> None:
        """Count an alert raised in the transaction (None: none was)."""
        if alert is not None:
            self.raised.append(alert)


class Archive:
    """The archive file. One writer connection, one transaction at a time (the consumer's
    commits and the supervisors' decisions take turns under `_writing`)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._db, lock = open_archive(self.path)
        self._lock: int | None = lock
        self._writing = threading.Lock()
        #: Inside a transaction: the tips as they will be, and the tables whose tip moved.
        self._tips_now: dict[str, Tip] = {}
        self._touched: set[str] = set()
        #: table -> its tip (its last archived row, its settings' and latest shoe's rows),
        #: one row per table: what the start reads instead of every row.
        self.tips: dict[str, Tip] = read_tips(self._db)
        #: table -> (seq, hash) of its last archived row.
        self.heads: Heads = {t: (p.seq, p.hash) for t, p in self.tips.items()}

    def close(self) -> None:
        self._db.close()
        unlock(self._lock)
        self._lock = None

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing -------------------------------------------------------------------------

    def commit(self, arrivals: Sequence[Arrival]) -> Committed:
        """Take a batch of arrivals in one transaction (durable when this returns)."""

        def take(heads: Heads, received: str, done: Committed) -> None:
            for arrival in arrivals:
                self._take(arrival, heads, received, done)

        done = self._transaction(take)
        for alert_id in done.resolved:
            log.warning("floor alert %d resolved: the missing rows came", alert_id)
        return done

    def _transaction(self, work: Callable[[Heads, str, Committed], None]) -> Committed:
        """`work(heads, now, done)` in one transaction, the heads and tips it changes kept
        only once it is committed; then the held rows and alerts as they are now."""
        db = self._db
        with self._writing:
            started = time.perf_counter()
            done = Committed()
            heads = dict(self.heads)
            self._tips_now = dict(self.tips)
            self._touched = set()
            db.execute("BEGIN IMMEDIATE")
            try:
                work(heads, now_ts(), done)
                write_tips(db, {t: self._tips_now[t] for t in self._touched})
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            self.heads, self.tips = heads, self._tips_now
            done.seconds = time.perf_counter() - started
            done.held_counts = self.held_counts()
            done.waiting = self.waiting() if done.held_counts else {}
            done.alerts = self.alerts()
        for alert in done.raised:
            log.error("floor alert: table %s: %s", alert.table, alert.message)
        return done

    def _take(self, arrival: Arrival, heads: Heads, received: str, done: Committed) -> None:
        try:
            row = parse_row(arrival.body, arrival.table)
        except Malformed as exc:
            self._held(
                done,
                arrival.table,
                None,
                None,
                "malformed",
                arrival.body,
                received,
                "malformed",
                f"a message that is not a journal row ({exc}); it is held, not archived",
            )
            return
        table, seq, body = row.table, row.seq, arrival.body
        head_seq, head_hash = heads.get(table, (0, GENESIS))
        if seq <= head_seq:
            have = self._db.execute(
                "SELECT hash FROM row WHERE table_id = ? AND seq = ?", (table, seq)
            ).fetchone()
            if have is not None and have[0] == row.hash:
                done.duplicates += 1
                return
            late = None if have is not None else supervision.accepted_gap(self._db, table, seq)
            if late is not None:  # the archive went on without it
                words = supervision.late_words(seq, late)
                self._held(done, table, seq, row.hash, "conflict", body, received, "late", words)
                return
            self._held(
                done,
                table,
                seq,
                row.hash,
                "conflict",
                body,
                received,
                "conflict",
                f"row {seq} arrived again with other contents (hash {row.hash[:12]}…, the "
                f"archive has {have[0][:12] if have else 'none'}…): the table's journal "
                "was changed or replaced; the new row is held, not archived",
            )
            return
        if not row.hash_ok():
            self._held(
                done,
                table,
                seq,
                row.hash,
                "altered",
                body,
                received,
                "altered",
                f"row {seq}: its hash does not match its contents (changed on the way or "
                "in the journal); it is held, not archived",
            )
            return
        if seq > head_seq + 1:
            words = gap_words(head_seq, seq)
            self._held(done, table, seq, row.hash, "gap", body, received, "gap", words)
            return
        if row.prev_hash != head_hash:
            self._held(
                done,
                table,
                seq,
                row.hash,
                "chain",
                body,
                received,
                "chain",
                f"row {seq} does not link to row {head_seq} (its prev_hash "
                f"{row.prev_hash[:12]}… is not {head_hash[:12]}…): the chain is broken; "
                "the row and every later one are held, not archived",
            )
            return
        self._archive(row, heads, received, done)
        self._release(table, heads, received, done)

    def _archive(self, row: FloorRow, heads: Heads, received: str, done: Committed) -> None:
        """Archive the row (inside a transaction): its table's head and tip move on, and a
        station's game-protection notice becomes a floor alert."""
        tip = self._tips_now.get(row.table, Tip())
        self._tips_now[row.table] = tip.after(row.seq, row.hash, row.kind, row.event, row.verdict)
        self._touched.add(row.table)
        self._db.execute(
            "INSERT INTO row VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row.table,
                row.seq,
                row.ts,
                row.source,
                row.actor,
                row.kind,
                row.event,
                row.verdict,
                row.prev_hash,
                row.hash,
                received,
            ),
        )
        heads[row.table] = (row.seq, row.hash)
        done.accepted.append(row)
        done.alerted(station_alert(self._db, row, received))

    def _held(
        self,
        done: Committed,
        table: str,
        seq: int | None,
        digest: str | None,
        reason: str,
        body: bytes,
        received: str,
        kind: str,
        message: str,
    ) -> None:
        """Keep a row that cannot be archived, and say so (an alert of `kind`, unless one
        is open for the table already: a replaced journal sends hundreds of rows that do
        not fit; the first says it, the held rows count the rest). Nothing if it is held
        already (sent again)."""
        if seq is None:  # SQLite's UNIQUE lets NULLs repeat: look for the same body
            same = self._db.execute(
                "SELECT 1 FROM held WHERE table_id = ? AND seq IS NULL AND body = ?",
                (table, body),
            ).fetchone()
            if same is not None:
                return
        cur = self._db.execute(
            "INSERT OR IGNORE INTO held (table_id, seq, hash, reason, body, received) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (table, seq, digest, reason, body, received),
        )
        if cur.rowcount == 1:
            done.held += 1
            done.alerted(raise_once(self._db, table, seq, kind, message, received))

    def _release(self, table: str, heads: Heads, received: str, done: Committed) -> None:
        """Take held rows that now follow the archive's last row (a gap filled)."""
        while True:
            head_seq, head_hash = heads[table]
            held = self._db.execute(
                "SELECT id, body FROM held WHERE table_id = ? AND seq = ? AND reason = 'gap'",
                (table, head_seq + 1),
            ).fetchall()
            if not held:
                break
            # Rows of two journals may wait at one seq: the one that links is taken.
            candidates = [(held_id, parse_row(body, table)) for held_id, body in held]
            linked = [(i, r) for i, r in candidates if r.prev_hash == head_hash]
            held_id, row = (linked or candidates)[0]
            if row.prev_hash != head_hash:
                self._db.execute("UPDATE held SET reason = 'chain' WHERE id = ?", (held_id,))
                words = (
                    f"row {row.seq} (held after a gap) does not link to row {head_seq}: the "
                    "chain is broken; it stays held"
                )
                done.alerted(raise_once(self._db, table, row.seq, "chain", words, received))
                break
            self._db.execute("DELETE FROM held WHERE id = ?", (held_id,))
            self._archive(row, heads, received, done)
        waiting = self._db.execute(
            "SELECT 1 FROM held WHERE table_id = ? AND reason = 'gap' LIMIT 1", (table,)
        ).fetchone()
        if waiting is None:
            done.resolved += resolve(self._db, table, "gap", received)

    # -- a supervisor's decisions (`supervision`) ------------------------------------------

    def acknowledge(self, alert_id: int, by: str, role: str, reason: str) -> Committed:
        """Record that `by` has seen the alert and deals with it (it stays open, in the
        history); `DecisionRefused` for an alert that is not there or not open."""
        reason = checked_reason(reason)

        def decide(heads: Heads, now: str, done: Committed) -> None:
            done.decision = supervision.acknowledge(self._db, alert_id, by, role, reason, now)

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

        def decide(heads: Heads, now: str, done: Committed) -> None:
            accepted = supervision.accept_gap(
                self._db, heads, table, from_seq, to_seq, by, role, reason, digest, now
            )
            self._go_on(accepted, heads, now, done)

        return self._decided(self._transaction(decide))

    def accept_chain(
        self, table: str, seq: int, by: str, role: str, reason: str, digest: str | None = None
    ) -> Committed:
        """Take the held row `seq` that does not link to the archive's last row as the
        start of a new chain (`digest`: which one, if several rows `seq` are held); the
        chain is checked from it on."""
        reason = checked_reason(reason)

        def decide(heads: Heads, now: str, done: Committed) -> None:
            accepted = supervision.accept_chain(
                self._db, heads, table, seq, by, role, reason, digest, now
            )
            self._go_on(accepted, heads, now, done)

        return self._decided(self._transaction(decide))

    def _go_on(
        self, accepted: supervision.Accepted, heads: Heads, now: str, done: Committed
    ) -> None:
        """Take the accepted row, then every held row that follows it; resolve the table's
        open alerts of its kind (and its gap alerts once no row waits behind a gap)."""
        row = accepted.row
        self._db.execute("DELETE FROM held WHERE id = ?", (accepted.held_id,))
        done.decision = accepted.decision
        self._archive(row, heads, now, done)
        done.resolved += resolve(self._db, row.table, accepted.resolves, now, accepted.decision)
        self._release(row.table, heads, now, done)
        head_seq = heads[row.table][0]
        waiting = self._db.execute(
            "SELECT min(seq) FROM held WHERE table_id = ? AND reason = 'gap' AND seq > ?",
            (row.table, head_seq),
        ).fetchone()[0]
        if waiting is not None:  # another gap further on: an alert of its own
            words = gap_words(head_seq, waiting)
            done.alerted(raise_once(self._db, row.table, waiting, "gap", words, now))

    @staticmethod
    def _decided(done: Committed) -> Committed:
        assert done.decision is not None
        log.warning("floor decision: table %s: %s", done.decision.table, done.decision.words())
        return done

    # -- reading -------------------------------------------------------------------------

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
        """A table's archived rows with seq > after, in order."""
        sql = "SELECT * FROM row WHERE table_id = ? AND seq > ? ORDER BY seq"
        args: tuple[Any, ...] = (table, after)
        if limit is not None:
            sql += " LIMIT ?"
            args = (table, after, limit)
        for r in self._db.execute(sql, args).fetchall():
            yield FloorRow(*r[:10])

    def row(self, table: str, seq: int) -> FloorRow | None:
        found = self._db.execute(
            "SELECT * FROM row WHERE table_id = ? AND seq = ?", (table, seq)
        ).fetchone()
        return None if found is None else FloorRow(*found[:10])

    def count(self, table: str) -> int:
        found: int = self._db.execute(
            "SELECT count(*) FROM row WHERE table_id = ?", (table,)
        ).fetchone()[0]
        return found

    def held_counts(self) -> dict[str, int]:
        """Held rows per table."""
        cur = self._db.execute("SELECT table_id, count(*) FROM held GROUP BY table_id")
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
