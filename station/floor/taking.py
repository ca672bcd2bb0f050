"""How the floor archive takes a row that arrives (`Taking`, which `archive.Archive` is):
checked against its table's chain, key and epoch, then archived, or held with its reason
and alerted (the archive's docstring says which and why), and the rows held behind it
taken once they follow. Apart from the archive's transactions and the supervisors'
decisions, which call it."""

from __future__ import annotations

import logging

from station.floor import epochs, holding, keys, rowwords, supervision
from station.floor.alerts import (
    EPOCH,
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
from station.floor.committed import Committed, Heads
from station.floor.keys import Checked, TableKey, write_key
from station.floor.reading import ArchiveReader
from station.floor.said import Said
from station.floor.tip import Tip
from station.shared.rows import GENESIS

log = logging.getLogger("station.floor.archive")


class Taking(ArchiveReader):
    """The archive's arrivals, inside one of its transactions (`Archive._transaction`):
    the tips, keys and tables touched as they will be once it commits."""

    held_rows: int
    _tips_now: dict[str, Tip]
    _touched: set[str]
    _keys_now: dict[str, TableKey]

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
