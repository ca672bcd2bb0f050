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
  that is not a journal row: held for good, the alert stays open for a supervisor;
- a row its station did not sign (`keys`: not signed by the table's key, though its
  hash may be right): held as forged, never archived, alerted once (FORGED_ROW) and
  counted; the station's own rows go on around it;
- a signed row of a table whose key the floor does not know yet (first use): held until a
  supervisor accepts the key the station named (`accept_key`), then checked with it;
- a row that branches off an archived row (a station restored without its floor, in a
  new epoch: `epochs`): held with the rows after it until a supervisor accepts the new
  chain, which begins the table's next epoch; the rows it replaces stay archived.

What a table's trusted key did not sign is held up to `held_rows` rows a table (`holding`;
as many again of rows signed by a first-use key waiting for a supervisor): past that it
is not stored, only counted, with one HELD_FULL alert, so one login's flood of junk
cannot grow the archive without end; what the trusted key signed is always held.

Only a supervisor lets a table go on past a gap or a broken chain (`accept_gap`,
`accept_chain`, see `decisions`), trusts a key on first use (`accept_key`), or
acknowledges an alert; `supervision` checks and records each decision, in one of this
archive's transactions, and the chain is checked from the accepted row on.

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
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from station.floor import holding, keys, supervision
from station.floor.alerts import (
    FORGED_MESSAGE,
    NEW_KEY,
    raise_once,
    resolve,
)
from station.floor.arrival import Arrival
from station.floor.beats import Believed, read_believed, write_believed
from station.floor.committed import Committed, Heads
from station.floor.decisions import Decision, checked_reason
from station.floor.keys import TableKey, read_keys
from station.floor.said import Said
from station.floor.schema import open_archive, read_tips, unlock, write_tips
from station.floor.taking import Taking
from station.floor.tip import Tip
from station.shared.rows import now_ts
from station.shared.signing import PublicKey

log = logging.getLogger("station.floor.archive")

#: What the archive hands its callers (`Committed` is made here, kept in its own module).
__all__ = ["Archive", "Committed", "Heads"]


class Archive(Taking):
    """The archive file. One writer connection, one transaction at a time (the consumer's
    commits and the supervisors' decisions take turns under `_writing`); what it reads
    is `ArchiveReader`'s."""

    def __init__(self, path: str | os.PathLike[str], held_rows: int = holding.HELD_ROWS) -> None:
        self.path = Path(path)
        #: The most rows a table's key did not sign the archive holds of it (`holding`).
        self.held_rows = held_rows
        self._db, lock = open_archive(self.path)
        self._lock: int | None = lock
        self._writing = threading.Lock()
        #: Inside a transaction: the tips as they will be, and the tables whose tip moved.
        self._tips_now: dict[str, Tip] = {}
        self._touched: set[str] = set()
        self._keys_now: dict[str, TableKey] = {}
        #: table -> its tip (its last archived row, its settings' and latest shoe's rows),
        #: one row per table: what the start reads instead of every row.
        self.tips: dict[str, Tip] = read_tips(self._db)
        #: table -> (seq, hash) of its last archived row.
        self.heads: Heads = {t: (p.seq, p.hash) for t, p in self.tips.items()}
        #: table -> its public key as the floor holds it (`keys`).
        self.keys: dict[str, TableKey] = read_keys(self._db)
        #: table -> its last signed heartbeat the floor believed (`beats`).
        self.believed: dict[str, Believed] = read_believed(self._db)

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
            self._keys_now = dict(self.keys)
            db.execute("BEGIN IMMEDIATE")
            try:
                work(heads, now_ts(), done)
                write_tips(db, {t: self._tips_now[t] for t in self._touched})
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            self.heads, self.tips, self.keys = heads, self._tips_now, self._keys_now
            done.seconds = time.perf_counter() - started
            done.held_counts = self.held_counts()
            done.waiting = self.waiting() if done.held_counts else {}
            done.new_epochs = self.new_epochs() if done.held_counts else {}
            done.forged = self.forged_counts() if done.held_counts else {}
            done.dropped = self.dropped_counts()
            done.keys = self.keys
            done.alerts = self.alerts()
        for alert in done.raised:
            log.error("floor alert: table %s: %s", alert.table, alert.message)
        return done

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
            if accepted.epoch is None:
                self._go_on(accepted, heads, now, done)
            else:
                self._new_epoch(accepted, heads, now, done)

        return self._decided(self._transaction(decide))

    def accept_key(
        self, table: str, fingerprint: str, by: str, role: str, reason: str
    ) -> Committed:
        """Trust the key the table's station named on first use (`fingerprint`, as the
        floor view shows it); its held rows are checked with it and taken."""
        reason = checked_reason(reason)

        def decide(heads: Heads, now: str, done: Committed) -> None:
            decision, key = supervision.accept_key(
                self._db, self._keys_now, table, fingerprint, by, role, reason, now
            )
            self._keyed(decision, key, heads, now, done)

        return self._decided(self._transaction(decide))

    def set_key(self, table: str, key: PublicKey, by: str, role: str, reason: str) -> Committed:
        """Trust `key` (the one its station shows) as the table's, from row 1, instead of
        the key its first row named (someone else's) or none, without a restart; its rows
        held for a key are checked with it: the station's taken, the others forged."""
        reason = checked_reason(reason)

        def decide(heads: Heads, now: str, done: Committed) -> None:
            decision, trusted = supervision.set_key(
                self._db, self._keys_now, table, key, by, role, reason, now
            )
            self._keyed(decision, trusted, heads, now, done)

        return self._decided(self._transaction(decide))

    def _keyed(
        self,
        decision: Decision,
        key: TableKey,
        heads: Heads,
        now: str,
        done: Committed,
    ) -> None:
        """A key a supervisor trusted: the table's rows held for a key taken again."""
        done.decision = decision
        self._set_key(key)
        done.resolved += resolve(self._db, key.table, NEW_KEY, now, decision)
        self._retake(key.table, "key", heads, now, done)

    def trust(self, configured: Mapping[str, PublicKey]) -> Committed:
        """The keys the config names (`[[table]] public_key`), trusted from now on (a
        table's key the archive followed through a rotation from the configured one
        stands); rows held for a key are checked with it and taken."""

        def work(heads: Heads, now: str, done: Committed) -> None:
            for table, key in configured.items():
                before = self._keys_now.get(table)
                changed = keys.configured(self._db, table, key, before)
                if changed is None:
                    continue
                if before is not None and before.state == "trusted":
                    log.warning(
                        "table %s: the config names key %s, the archive trusted %s: the "
                        "config's key is the table's from now on",
                        table,
                        key.fingerprint,
                        before.fingerprint,
                    )
                self._set_key(changed)
                done.resolved += resolve(self._db, table, NEW_KEY, now)
                self._retake(table, "key", heads, now, done)

        return self._transaction(work)

    def forged_message(self, table: str, words: Said, kind: str = FORGED_MESSAGE) -> Committed:
        """A heartbeat or an alert in the table's name that its station did not sign
        (FORGED_MESSAGE), or a signed heartbeat sent again (STALE_HEARTBEAT): alerted,
        once while the alert is open."""

        def work(heads: Heads, now: str, done: Committed) -> None:
            done.alerted(raise_once(self._db, table, None, kind, words, now))

        return self._transaction(work)

    def believe(self, table: str, beat: Believed) -> None:
        """Keep the table's last heartbeat believed (its own small transaction, durable
        when this returns): a floor restarted later refuses it and older ones."""
        db = self._db
        with self._writing:
            db.execute("BEGIN IMMEDIATE")
            try:
                write_believed(db, table, beat, now_ts())
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            self.believed[table] = beat

    @staticmethod
    def _decided(done: Committed) -> Committed:
        assert done.decision is not None
        log.warning("floor decision: table %s: %s", done.decision.table, done.decision.words())
        return done
