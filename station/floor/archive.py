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

from station.floor import epochs, holding, keys, rowwords, supervision
from station.floor.alerts import (
    EPOCH,
    FORGED_MESSAGE,
    FORGED_ROW,
    HELD_FULL,
    NEW_KEY,
    ROLLBACK,
    gap_words,
    raise_alert,
    raise_once,
    resolve,
    station_alert,
)
from station.floor.arrival import Arrival, FloorRow, Malformed, parse_row
from station.floor.beats import Believed, read_believed, write_believed
from station.floor.committed import Committed, Heads
from station.floor.decisions import Decision, checked_reason
from station.floor.keys import Checked, TableKey, read_keys, write_key
from station.floor.reading import ArchiveReader
from station.floor.said import Said
from station.floor.schema import open_archive, read_tips, unlock, write_tips
from station.floor.tip import Tip
from station.shared.rows import GENESIS, now_ts
from station.shared.signing import PublicKey

log = logging.getLogger("station.floor.archive")

#: What the archive hands its callers (`Committed` is made here, kept in its own module).
__all__ = ["Archive", "Committed", "Heads"]


class Archive(ArchiveReader):
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
                rowwords.malformed(exc),
            )
            return
        table, seq, body = row.table, row.seq, arrival.body
        head_seq, head_hash = heads.get(table, (0, GENESIS))
        if seq <= head_seq:
            self._behind(row, body, head_seq, received, done)
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
                rowwords.altered(seq),
            )
            return
        checked = self._check(row)
        if checked.verdict == keys.FORGED:
            self._forged(row, body, received, done, checked)
            return
        if checked.verdict == keys.PENDING:
            self._pending(row, body, received, done, checked)
            return
        signer = self._signer(row, checked)
        branch = epochs.follows(self._db, row)  # a later row of a held branch
        if branch is not None:
            kind = EPOCH if branch == "epoch" else ROLLBACK
            self._held(
                done, table, seq, row.hash, branch, body, received, kind, None, signer=signer
            )
            return
        if seq > head_seq + 1:
            words = gap_words(head_seq, seq)
            self._held(
                done, table, seq, row.hash, "gap", body, received, "gap", words, signer=signer
            )
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
                rowwords.chain(seq, head_seq, row.prev_hash, head_hash),
                signer=signer,
            )
            return
        self._archive(row, heads, received, done, checked.key)
        self._release(table, heads, received, done)

    def _behind(
        self, row: FloorRow, body: bytes, head_seq: int, received: str, done: Committed
    ) -> None:
        """A row at a seq the archive has passed: the same row again (nothing to do), a
        forged one, the first row of a new epoch (or one after it), a row of an accepted
        gap come late, or another row at that seq (a journal changed or replaced)."""
        table, seq, db = row.table, row.seq, self._db
        have = epochs.archived_hash(db, table, seq)
        if have == row.hash or epochs.superseded_has(db, table, seq, row.hash):
            done.duplicates += 1
            return
        signer = holding.UNSIGNED
        if row.hash_ok():
            checked = self._check(row)
            if checked.verdict == keys.FORGED:
                self._forged(row, body, received, done, checked)
                return
            signer = self._signer(row, checked)
            if have is not None and epochs.branches(db, row):
                self._branch(row, body, head_seq, received, done, signer)
                return
            branch = None if have is None else epochs.follows(db, row)
            if branch is not None:  # a later row of a branch held already (alerted)
                kind = EPOCH if branch == "epoch" else ROLLBACK
                self._held(
                    done, table, seq, row.hash, branch, body, received, kind, None, signer=signer
                )
                return
        late = None if have is not None else supervision.accepted_gap(db, table, seq)
        if late is not None:  # the archive went on without it
            words = supervision.late_words(seq, late)
            self._held(
                done, table, seq, row.hash, "conflict", body, received, "late", words, signer=signer
            )
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
            rowwords.conflict(seq, row.hash, have),
            signer=signer,
        )

    def _branch(
        self,
        row: FloorRow,
        body: bytes,
        head_seq: int,
        received: str,
        done: Committed,
        signer: int,
    ) -> None:
        """A row (its station's, by the table's key) that branches off an archived row:
        a new epoch held for a supervisor if it is an epoch's notice (a restore's, a
        station's own discontinuity's), else a ROLLBACK held for good (issue 32: a journal
        rolled back or cut without `journal restore`, or its old rows republished)."""
        table, seq = row.table, row.seq
        if epochs.begins_epoch(row):
            number = epochs.current(self._db, table) + 1
            words = epochs.branch_words(row, head_seq, number)
            self._held(
                done, table, seq, row.hash, "epoch", body, received, EPOCH, words, signer=signer
            )
            return
        words = epochs.rollback_words(row, head_seq)
        # Each rollback its own alert when the table's key signed it (a second one after
        # an acknowledged first must be seen too); one at a time for an unsigned table,
        # whose rows anyone with its login can make.
        each = self._keys_now.get(table) is not None and row.signature is not None
        self._held(
            done,
            table,
            seq,
            row.hash,
            "rollback",
            body,
            received,
            ROLLBACK,
            words,
            each,
            signer=signer,
        )

    def _check(self, row: FloorRow) -> Checked:
        """The row against its table's key (`keys.check_row`)."""
        return keys.check_row(row.table, self._keys_now.get(row.table), row)

    def _signer(self, row: FloorRow, checked: Checked) -> int:
        """Who signed the row (`holding`): the key the floor trusts for its table (`checked`
        ok: a row only its station makes, held past `held_rows`), the key its station
        named on first use (waiting for a supervisor), or neither."""
        key = self._keys_now.get(row.table)
        if key is None or key.key is None or row.signature is None:
            return holding.UNSIGNED
        if key.trusted is not None:
            return holding.TRUSTED if checked.verdict == keys.OK else holding.UNSIGNED
        return (
            holding.PENDING_KEY if key.key.verify_row(row.hash, row.signature) else holding.UNSIGNED
        )

    def _set_key(self, key: TableKey) -> None:
        """A table's key as it is from now on (inside a transaction)."""
        write_key(self._db, key)
        self._keys_now[key.table] = key

    def _forged(
        self, row: FloorRow, body: bytes, received: str, done: Committed, checked: Checked
    ) -> None:
        """A row its station did not sign: held, counted, alerted (once while open)."""
        words = checked.words or rowwords.unsigned(row.seq)
        self._held(done, row.table, row.seq, row.hash, "forged", body, received, FORGED_ROW, words)

    def _pending(
        self, row: FloorRow, body: bytes, received: str, done: Committed, checked: Checked
    ) -> None:
        """A signed row of a table whose key waits for a supervisor (first use)."""
        if checked.key is not None and row.table not in self._keys_now:
            self._set_key(checked.key)
        said = checked.words or rowwords.KEY_WAITS
        signer = self._signer(row, checked)
        self._held(
            done, row.table, row.seq, row.hash, "key", body, received, NEW_KEY, said, signer=signer
        )

    def _archive(
        self,
        row: FloorRow,
        heads: Heads,
        received: str,
        done: Committed,
        key: TableKey | None = None,
    ) -> None:
        """Archive the row (inside a transaction): its table's head and tip move on (and
        its key, if the row names or hands over to one: `key`), and a station's
        game-protection notice becomes a floor alert."""
        tip = self._tips_now.get(row.table, Tip())
        self._tips_now[row.table] = tip.after(row.seq, row.hash, row.kind, row.event, row.verdict)
        self._touched.add(row.table)
        if key is not None:
            self._set_key(key)
        if row.signature is not None:
            self._db.execute(
                "INSERT OR REPLACE INTO signature VALUES (?, ?, ?)",
                (row.table, row.seq, row.signature),
            )
        self._db.execute(
            "INSERT INTO row (table_id, seq, ts, source, actor, kind, event, verdict, "
            "prev_hash, hash, received) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
        message: Said | None,
        every: bool = False,
        *,
        signer: int = holding.UNSIGNED,
    ) -> None:
        """Keep a row that cannot be archived, and say so (an alert of `kind`, unless one
        is open for the table already: a replaced journal sends hundreds of rows that do
        not fit; the first says it, the held rows count the rest; `every`: an alert for
        each such row). Nothing if it is held already (sent again). A row its table's
        trusted key did not sign (`signer`) is not stored once the table holds
        `held_rows` rows of that signer: counted instead (`_dropped`)."""
        if seq is None:  # SQLite's UNIQUE lets NULLs repeat: look for the same body
            same = self._db.execute(
                "SELECT 1 FROM held WHERE table_id = ? AND seq IS NULL AND body = ?",
                (table, body),
            ).fetchone()
            if same is not None:
                return
        if not holding.room(self._db, table, signer, self.held_rows):
            if seq is None or not holding.is_held(self._db, table, seq, digest):
                self._dropped(table, signer, received, done)
            return
        cur = self._db.execute(
            "INSERT OR IGNORE INTO held (table_id, seq, hash, reason, body, received, signer) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (table, seq, digest, reason, body, received, signer),
        )
        if cur.rowcount == 1:
            done.held += 1
            if message is not None and every:
                done.alerted(raise_alert(self._db, table, seq, kind, message, received))
            elif message is not None:  # none: a row held behind one already alerted
                done.alerted(raise_once(self._db, table, seq, kind, message, received))

    def _dropped(self, table: str, signer: int, received: str, done: Committed) -> None:
        """A row of the table's not stored, its bound full: counted, alerted once while
        the alert is open (a flood sends thousands; the count on the table's line says
        how many)."""
        holding.count_dropped(self._db, table, received)
        words = holding.full_words(table, signer, self.held_rows)
        done.alerted(raise_once(self._db, table, None, HELD_FULL, words, received))

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
                said = rowwords.chain_after_gap(row.seq, head_seq)
                done.alerted(raise_once(self._db, table, row.seq, "chain", said, received))
                break
            checked = self._check(row)  # again: a key may have changed meanwhile
            if checked.verdict != keys.OK:
                forged = checked.verdict == keys.FORGED
                reason, kind = ("forged", FORGED_ROW) if forged else ("key", NEW_KEY)
                self._db.execute(  # no longer a row the trusted key signed
                    "UPDATE held SET reason = ?, signer = ? WHERE id = ?",
                    (reason, holding.UNSIGNED, held_id),
                )
                words = checked.words or rowwords.unsigned(row.seq)
                done.alerted(raise_once(self._db, table, row.seq, kind, words, received))
                break
            self._db.execute("DELETE FROM held WHERE id = ?", (held_id,))
            self._archive(row, heads, received, done, checked.key)
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

    def _retake(self, table: str, reason: str, heads: Heads, now: str, done: Committed) -> None:
        """The table's rows held for `reason` taken again, in order, as if they came now
        (a key trusted, a new epoch begun)."""
        held = self._db.execute(
            "SELECT id, body FROM held WHERE table_id = ? AND reason = ? ORDER BY seq, id",
            (table, reason),
        ).fetchall()
        for held_id, body in held:
            self._db.execute("DELETE FROM held WHERE id = ?", (held_id,))
            done.held -= 1
            self._take(Arrival(table, body), heads, now, done)

    def _new_epoch(
        self, accepted: supervision.Accepted, heads: Heads, now: str, done: Committed
    ) -> None:
        """Begin the table's next epoch at the accepted row: the archived rows from its
        seq on move to the epoch before (`epochs.begin`), the table's archive goes on from
        the row before it, the accepted row and the epoch's held rows are taken."""
        row, decision = accepted.row, accepted.decision
        assert accepted.epoch is not None
        self._db.execute("DELETE FROM held WHERE id = ?", (accepted.held_id,))
        done.decision = decision
        moved = epochs.begin(self._db, row, accepted.epoch, decision.id)
        tip = epochs.tip_up_to(self._db, row.table, row.seq - 1)
        self._tips_now[row.table] = tip
        self._touched.add(row.table)
        heads[row.table] = (tip.seq, tip.hash)
        done.epochs_begun[row.table] = row.seq
        log.warning(
            "table %s: epoch %d begins at row %d; %d archived rows kept under epoch %d",
            row.table,
            accepted.epoch,
            row.seq,
            moved,
            accepted.epoch - 1,
        )
        self._archive(row, heads, now, done, self._check(row).key)
        done.resolved += resolve(self._db, row.table, EPOCH, now, decision)
        self._retake(row.table, "epoch", heads, now, done)
        self._release(row.table, heads, now, done)

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
