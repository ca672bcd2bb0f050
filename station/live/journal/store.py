"""The journal's storage: the one writer's file, opened, started, appended to, and waited
out when its disk fails.

Why SQLite in WAL mode with `synchronous=FULL`: a commit is on disk when `append` returns,
so a verdict that was published (answered, broadcast, posted) can never be lost, even by
a power cut; WAL lets readers (`/api/journal`, `station journal export`) read while the
writer commits. After each commit the writer rewrites the head anchor (`<path>.head`: the
journal, its epoch, the last seq and hash, signed: `anchor`; the live writer at the event
loop's next turn, once the batch is broadcast: `append(anchor=False)`) that `verify` checks the
chain reaches and the next start checks the journal against (`integrity`). The webhook
events a commit owes are sealed to their rows (`owed`). A station with a key signs
every row it appends (one Ed25519 signature of the row's hash, which binds every row
before it, so whoever holds the public key checks each row on its own; `keys` says which
key may continue the journal).

When the journal cannot be written (disk full, read-only, an I/O error, the file deleted
or replaced under the station: `check_file`), `append` raises `JournalUnavailable` with a
message saying what to do; nothing of that commit is in the file, and the service waits
it out (`probe`, `resync`, then it commits again). At start the same disk is waited out
before the first row (`JournalUnopenable`: the file cannot be opened, or `check_room`
finds no room). An event that cannot be stored as JSON at all is `Unstorable`
(`event_text`), asked before the table decides it. A file that is not a station journal
is refused before SQLite opens it (`schema.check_file`).
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from station.core.table import Table
from station.live.journal import anchor as anchors
from station.live.journal import disk, integrity, keys
from station.live.journal import owed as owing
from station.live.journal.epoch import EPOCH_NOTICES, Epoch, discontinuity_notice, epoch_of
from station.live.journal.errors import (
    UNAVAILABLE_TAIL,
    JournalError,
    JournalUnavailable,
    JournalUnopenable,
)
from station.live.journal.reads import JournalReading
from station.live.journal.schema import (
    INSERT,
    SCHEMA_VERSION,
    OutboxEntry,
    adopt,
    check_file,
    transaction,
)
from station.live.journal.table import (
    settings_of,
    table_settings,
)
from station.shared.keychain import SIGNED, Endorsement
from station.shared.keychain import named as name_of
from station.shared.rows import (
    CREATED,
    GENESIS,
    VERDICT_KEYS,
    Pending,
    Row,
    dumps,
    notice,
    now_ts,
    row_hash,
)
from station.shared.signing import PublicKey, SigningKey

log = logging.getLogger("station.live.journal")

OWE = "INSERT OR IGNORE INTO outbox (endpoint, seq, id, body, seal) VALUES (?, ?, ?, ?, ?)"
SETTLE = "DELETE FROM outbox WHERE endpoint = ? AND id = ?"


class Journal(JournalReading):
    """The journal file. Not thread-safe: the service uses it from one thread at a time."""

    def __init__(self, path: str | os.PathLike[str], create: bool = True) -> None:
        self.path = Path(path)
        self.head_path = self.path.with_name(self.path.name + ".head")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            check_file(self.path)  # first: a file refused is left as it was
            target = self.path if create else f"{self.path.resolve().as_uri()}?mode=rw"
            self._db = sqlite3.connect(
                target, isolation_level=None, check_same_thread=False, uri=not create
            )
            self.migrated_from = adopt(self._db, self.path)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
        except (OSError, sqlite3.Error) as exc:
            with contextlib.suppress(AttributeError, sqlite3.Error):
                self._db.close()
            what = disk.disk_condition(exc, self.path)
            if what is not None:
                raise JournalUnopenable(f"the journal cannot be opened: {what}") from exc
            raise JournalError(
                f"cannot open the journal {self.path}: {exc}; check [journal] "
                "path and that the directory is writable"
            ) from exc
        last = self._db.execute(
            "SELECT seq, hash FROM journal ORDER BY seq DESC LIMIT 1"
        ).fetchone()
        self.last_seq: int = last[0] if last else 0
        self.last_hash: str = last[1] if last else GENESIS
        self._head_fd: int | None = None
        #: An `append(anchor=False)` left the head anchor behind the last row.
        self._anchor_behind = False
        self._closed = False
        #: The station's key, once `start` took it: every row appended is signed with it.
        self._key: SigningKey | None = None
        self._epoch: Epoch | None = None
        #: What the start found if the journal is not the one the station last signed.
        self.discontinuity: integrity.Discontinuity | None = None
        st = os.stat(self.path)
        #: The file written to (device, inode): a journal deleted or replaced under the
        #: station is noticed before the next commit (`check_file`).
        self._identity = (st.st_dev, st.st_ino)

    @contextlib.contextmanager
    def _committing(self) -> Iterator[sqlite3.Connection]:
        """A write transaction whose disk failure is `JournalUnavailable` (what to do)."""
        try:
            with transaction(self._db) as db:
                yield db
        except (sqlite3.Error, OSError) as exc:
            raise JournalUnavailable(self.unwritable(exc)) from exc

    def close(self) -> None:
        self.write_anchor()
        self._closed = True
        if self._head_fd is not None:
            os.close(self._head_fd)
            self._head_fd = None
        self._db.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(
        self,
        table_id: str,
        table: Table,
        key: SigningKey | None = None,
        endorsements: Sequence[Endorsement] = (),
        rotations: Path | None = None,
        config: str = "FILE",
        anchored: bool = True,
    ) -> None:
        """Become the journal's one writer (an exclusive lock on the head anchor, so a
        second station on the same file stops at once), then write the `journal created`
        row if the journal is new (naming `key`, if any), else check that the table
        settings are the ones the journal was written with, that the chain and the
        signatures hold (`integrity`: JournalError refuses the start), and that `key` may
        continue it (`keys.handover`: what it journals first; `endorsements`, read from
        `rotations`, lead from the journal's key to a rotated one). A journal that is not
        the one the station last signed (its head anchor) is a discontinuity: journaled
        before anything else, in a new epoch (`discontinuity`). `anchored=False`: a restore's
        staged copy, whose anchor `verify` checked already (every signature is checked).
        `config`: the config file, named in the commands a refusal gives. From here every
        row is signed with `key`."""
        self._lock()
        settings = table_settings(table_id, table)
        first = self.settings()
        if first is None:
            self._key = key
            named = {} if key is None else {"signing_key": name_of(key.public)}
            created = [notice("station", "station", CREATED, table=settings, **named)]
            left = self._anchor_left()
            if left is not None:  # the journal file is gone, its anchor is not
                self.discontinuity = integrity.Discontinuity(
                    f"the journal {self.path} is new, but its head anchor says row "
                    f"{left.seq} was committed: the journal was deleted",
                    {"seq": left.seq, "hash": left.hash, "epoch": left.epoch or None},
                    {"last_seq": 0, "last_hash": GENESIS},
                )
                created.append(discontinuity_notice(2, **self.discontinuity.details()))
            self.append(created)
            return
        self._check_settings(first, settings)
        in_force = keys.in_force(self._db)
        checked = integrity.check(
            self._db,
            self.path,
            self.head_path if anchored else None,
            None if key is None else key.public,
            upgraded=self.migrated_from is not None and self.migrated_from < 4,
            config=config,
        )
        first_rows = keys.handover(in_force, key, endorsements, self.path, rotations, config)
        self._key = key
        found = checked.discontinuity
        if found is not None:
            self.discontinuity = found
            number = epoch_of(self._db)
            log.error("journal %s: a discontinuity: %s", self.path, found.reason)
            first_rows.insert(
                0,
                discontinuity_notice(
                    (number.number if number is not None else 1) + 1, **found.details()
                ),
            )
        if self.migrated_from is not None:
            migrated = notice(
                "station",
                "station",
                "journal migrated",
                from_schema=self.migrated_from,
                to_schema=SCHEMA_VERSION,
            )
            first_rows.append(migrated)
        if first_rows:
            self.append(first_rows)
        for pending in first_rows:  # what the journal now says of its keys, in the log too
            event = pending.event
            new, old = event.get("signing_key"), event.get("old_key")
            if isinstance(new, dict):
                was = f" (endorsed by key {old['fingerprint']})" if isinstance(old, dict) else ""
                log.warning(
                    "journal %s: %s: from now on signed with key %s%s",
                    self.path,
                    event.get("message"),
                    new.get("fingerprint"),
                    was,
                )

    def adopt(self, table_id: str, table: Table, key: SigningKey, by: str) -> Row:
        """Adopt the unsigned journal under `key` (`station journal adopt`): its chain and
        every verdict checked, then a `journal signed` notice that names the key and says
        what it adopted (rows 1..N, their head hash, who, when), signed by `key`; every row
        after it too. JournalError: the journal is signed already, does not hold together,
        or its anchor says `key` signed it before (it was rewritten unsigned)."""
        self._lock()
        first = self.settings()
        if first is None:
            raise JournalError(f"{self.path} has no row: a new journal needs no adoption")
        self._check_settings(first, table_settings(table_id, table))
        in_force = keys.in_force(self._db)
        if in_force is not None:
            raise JournalError(
                f"the journal {self.path} is signed already (key {in_force[0].fingerprint}, "
                f"since row {in_force[1]}): there is nothing to adopt"
            )
        head = self._anchor_left()
        if head is not None and head.signature is not None and head.signed_by(key.public):
            raise JournalError(
                f"the head anchor {self.head_path} says key {key.public.fingerprint} signed "
                f"this journal up to row {head.seq}, but no row of it is signed now: it was "
                "rewritten unsigned; do not adopt it: restore it with `station journal "
                "restore` (a backup, or --from-floor)"
            )
        report = self.verify()
        if not report.ok:
            raise JournalError(
                f"the journal {self.path} does not verify, so it is not adopted: "
                + "; ".join(report.problems)
            )
        self._key = key
        adopted = {
            "rows": [1, self.last_seq],
            "head_hash": self.last_hash,
            "by": by,
            "at": now_ts(),
            "command": "station journal adopt",
        }
        rows = [
            notice("station", "station", SIGNED, signing_key=name_of(key.public), adopted=adopted)
        ]
        if self.migrated_from is not None:
            rows.append(
                notice(
                    "station",
                    "station",
                    "journal migrated",
                    from_schema=self.migrated_from,
                    to_schema=SCHEMA_VERSION,
                )
            )
        return self.append(rows)[0]

    def _lock(self) -> None:
        """The writer's lock: an exclusive lock on the head anchor."""
        self._open_head()
        assert self._head_fd is not None
        try:
            fcntl.flock(self._head_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise JournalError(
                f"another station is writing to the journal {self.path}; "
                "stop it first, or give this one its own [journal] path"
            ) from None

    def _anchor_left(self) -> anchors.Anchor | None:
        """The anchor as found (None: none, or not one)."""
        try:
            return anchors.read(self.head_path)
        except anchors.Unreadable:
            return None

    def _check_settings(self, first: dict[str, Any], settings: dict[str, Any]) -> None:
        if (game := settings_of(first)["game"]) != settings["game"]:
            raise JournalError(
                f"the journal {self.path} is the record of a {game} table, but the config "
                f"says [table] game = {settings['game']!r}: a journal holds one game, so "
                f"give the new game a new journal file ([journal] path), or set [table] "
                f"game = {game!r} back to go on with this one"
            )
        if settings_of(first) != settings:
            raise JournalError(
                f"the journal {self.path} belongs to table {first}, but the config says "
                f"{settings}: use the same [table] settings, or a new [journal] path for a "
                "new table"
            )

    @property
    def signed_by(self) -> PublicKey | None:
        """The public key of the rows this station appends (None: it writes unsigned)."""
        return None if self._key is None else self._key.public

    @property
    def epoch(self) -> Epoch:
        """The journal's identity and epoch, which every id the station hands out carries
        (`epoch`); JournalError for a journal with no row yet (not started)."""
        if self._epoch is None:
            self._epoch = epoch_of(self._db)
            if self._epoch is None:
                raise JournalError(f"{self.path} has no row yet: start it first")
        return self._epoch

    # -- writing -------------------------------------------------------------------------

    def append(
        self,
        pending: list[Pending],
        outbox: Callable[[list[Row]], list[OutboxEntry]] | None = None,
        settled: Sequence[tuple[str, str]] = (),
        *,
        anchor: bool = True,
    ) -> list[Row]:
        """Commit rows in one transaction (durable when this returns), in order; with them
        the webhook events they cause (`outbox`, made from the rows) and the deletion of
        those delivered since the last commit (`settled`: (endpoint, id) pairs).
        `anchor=False`: the head anchor is left for `write_anchor` (the live writer calls it
        once the rows are broadcast: the anchor may lag the rows, never lead them); `close`
        writes it if it is still behind."""
        rows: list[Row] = []
        seq, prev = self.last_seq, self.last_hash
        key = self._key
        params = []
        for p in pending:
            seq += 1
            event = dict(p.event)
            verdict = None if p.verdict is None else {k: p.verdict[k] for k in VERDICT_KEYS}
            text = dumps(event) if p.text is None else p.text
            verdict_text = None if verdict is None else dumps(verdict)
            h = row_hash(seq, p.ts, p.source, p.actor, p.kind, text, verdict_text, prev)
            signature = None if key is None else key.sign_row(h)
            params.append(
                (seq, p.ts, p.source, p.actor, p.kind, text, verdict_text, prev, h, signature)
            )
            rows.append(
                Row(seq, p.ts, p.source, p.actor, p.kind, event, verdict, prev, h, signature)
            )
            prev = h
            if event.get("message") in EPOCH_NOTICES:  # a new epoch: read it again when asked
                self._epoch = None
        if not params:
            return rows
        self.check_file()
        with self._committing() as db:
            db.executemany(INSERT, params)
            if outbox is not None:
                hashes = {row.seq: row.hash for row in rows}
                db.executemany(OWE, [self._sealed(e, hashes[e[1]]) for e in outbox(rows)])
            if settled:
                db.executemany(SETTLE, settled)
        self.last_seq, self.last_hash = seq, prev
        if anchor:
            self._write_head(seq, prev)
        else:
            self._anchor_behind = True
        return rows

    def write_anchor(self) -> None:
        """Bring the head anchor up to the last committed row if an `append(anchor=False)`
        left it behind (one write for any number of such commits); else nothing."""
        if self._anchor_behind and not self._closed:
            self._write_head(self.last_seq, self.last_hash)

    def _open_head(self) -> None:
        if self._head_fd is None:
            self._head_fd = os.open(self.head_path, os.O_RDWR | os.O_CREAT, 0o644)

    def _write_head(self, seq: int, h: str) -> None:
        """The head anchor (`anchor`: journal, epoch, seq, hash, signed with the station's
        key): fixed-size, rewritten in place after each commit. It is written
        after the commit, so it can lag the database (a crash in between) but never lead it;
        a failure to write it is only logged (the rows are committed: a lagging anchor is
        what `verify` allows, and the next commit writes it again)."""
        self._anchor_behind = False
        try:
            self._open_head()
            assert self._head_fd is not None
            epoch = self.epoch
            data = anchors.encode(seq, h, epoch.journal, epoch.mark, self._key)
            os.pwrite(self._head_fd, data, 0)
        except OSError as exc:
            log.warning(
                "the head anchor %s was not updated to row %d: %s", self.head_path, seq, exc
            )

    # -- the webhook outbox ---------------------------------------------------------------

    def owed(self) -> list[OutboxEntry]:
        """The webhook events not yet delivered, in journal order (unchecked: what is sent
        again is `owed_checked`'s)."""
        return [(e, s, i, b) for e, s, i, b, _seal in self.owed_sealed()]

    def owed_sealed(self) -> list[owing.Sealed]:
        """The webhook events not yet delivered, each with its seal, in journal order."""
        sql = "SELECT endpoint, seq, id, body, seal FROM outbox ORDER BY seq, rowid"
        return [
            (str(e), int(s), str(i), bytes(b), None if seal is None else str(seal))
            for e, s, i, b, seal in self._db.execute(sql)
        ]

    def owed_checked(self, table_id: str) -> tuple[list[OutboxEntry], list[owing.Refused]]:
        """The webhook events owed that may be sent again (sealed by the station to a row
        of the journal, their bodies the rows'), and those refused (`owed.check`)."""
        named = keys.named_in(self._db)
        if self._key is not None:
            named[self._key.public.fingerprint] = self._key.public
        signed = bool(named)

        def row_at(seq: int) -> Row | None:
            return next(self.rows(after=seq - 1, limit=1), None) if seq >= 1 else None

        return owing.check(self.owed_sealed(), row_at, named.values(), signed, self.epoch, table_id)

    def owe(self, entries: Sequence[OutboxEntry]) -> None:
        """Record webhook events owed for rows already committed (an alert, a suspension
        announced again), durably, each sealed to its row."""
        if not entries:
            return
        seqs = sorted({e[1] for e in entries})
        marks = ",".join("?" * len(seqs))
        hashes = dict(
            self._db.execute(f"SELECT seq, hash FROM journal WHERE seq IN ({marks})", seqs)
        )
        self._outbox_write(OWE, [self._sealed(e, hashes.get(e[1], GENESIS)) for e in entries])

    def owe_sealed(self, entries: Sequence[owing.Sealed]) -> None:
        """Record webhook events owed as another journal sealed them (a restore carries
        over what the journal it replaces still owed: its seals checked at start)."""
        self._outbox_write(OWE, entries)

    def _sealed(self, entry: OutboxEntry, row_hash: str) -> owing.Sealed:
        return (*entry, owing.seal(self._key, entry, row_hash))

    def adopted_through(self) -> int:
        """The last row `station journal adopt` took unsigned under a key (0: none)."""
        return keys.adopted_through(self._db)

    def settle(self, done: Sequence[tuple[str, str]]) -> None:
        """Forget delivered webhook events ((endpoint, id) pairs)."""
        self._outbox_write(SETTLE, done)

    def _outbox_write(self, sql: str, params: Sequence[tuple[Any, ...]]) -> None:
        if not params:
            return
        with self._committing() as db:
            db.executemany(sql, params)

    # -- when the disk fails -------------------------------------------------------------

    def unwritable(self, exc: BaseException) -> str:
        """What a failed write means for the operator: what to do, and that nothing
        answered was lost (a failed commit leaves nothing half-written)."""
        return disk.unwritable(exc, self.path)

    def check_file(self) -> None:
        """`JournalUnavailable` if the journal's file was deleted or replaced under the
        station: SQLite would go on writing to the deleted file, lost at the next start."""
        try:
            st = os.stat(self.path)
            present = (st.st_dev, st.st_ino) == self._identity
        except OSError:
            present = False
        if present:
            return
        with contextlib.suppress(sqlite3.Error):  # the WAL's rows into the deleted file,
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # so a copy of it is whole
        held = disk.held_open(self.path)
        how = f" (this station still holds it open: `cp {held} {self.path}` restores it)"
        raise JournalUnavailable(
            f"the journal file {self.path} was deleted or replaced while the station was "
            f"running; restore it{how if held else ' from a backup'} and the station "
            f"continues by itself; it never starts a new journal on its own — "
            f"{UNAVAILABLE_TAIL}"
        )

    def probe(self) -> None:
        """`JournalUnavailable` unless the journal's folder takes a small synced write and
        the journal file is the one this station writes (a restored copy of it is taken
        back). Cheap: the writer calls it before it tries to commit again."""
        self.check_file_or_reopen()
        try:
            disk.probe(self.path)
        except OSError as exc:
            raise JournalUnavailable(self.unwritable(exc)) from exc

    def check_room(self) -> None:
        """`JournalUnopenable` (the journal closed) unless its disk takes a small synced
        write now: SQLite opens a journal left with its `-wal` and `-shm` on a full disk and
        fails only at its first commit, so a start waits here, as for a journal it cannot
        open at all, and its first rows (`start`, the restart) find room."""
        try:
            disk.probe(self.path)
        except OSError as exc:
            self.close()
            what = disk.disk_condition(exc, self.path)
            if what is None:
                what = f"{exc}; check the disk holding {self.path.resolve().parent}"
            raise JournalUnopenable(f"the journal cannot be opened: {what}") from exc

    def check_file_or_reopen(self) -> None:
        """`check_file`, but if a file is back at the journal's path (the operator restored
        it) and it ends with exactly the row this station committed last, continue on it.
        It is first read as an immutable file (no lock, no WAL: the station's own WAL and
        shared memory still belong to the deleted file), and only then opened to write."""
        try:
            self.check_file()
            return
        except JournalUnavailable:
            if not self.path.is_file() or self.path.stat().st_size == 0:
                raise
        last = disk.last_row_of(self.path)
        if last != (self.last_seq, self.last_hash):
            ends = "cannot be read" if last is None else f"ends at row {last[0]}"
            raise JournalUnavailable(
                f"the file now at {self.path} is not this station's journal as it was (it "
                f"{ends}; this station committed up to row {self.last_seq}); restore the "
                f"station's own journal there — {UNAVAILABLE_TAIL}"
            )
        with contextlib.suppress(sqlite3.Error):
            self._db.close()
        if self._head_fd is not None:
            os.close(self._head_fd)  # releases the writer's lock on the old anchor: take it anew
            self._head_fd = None
        try:
            restored = Journal(self.path, create=False)
            self._db, self._identity = restored._db, restored._identity
            self._open_head()
            assert self._head_fd is not None
            fcntl.flock(self._head_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except (JournalError, OSError) as exc:
            raise JournalUnavailable(
                f"the restored journal {self.path} cannot be opened to write ({exc}) — "
                f"{UNAVAILABLE_TAIL}"
            ) from None
        self._write_head(self.last_seq, self.last_hash)
        log.warning("the journal %s was restored; continuing on it", self.path)

    def resync(self) -> None:
        """Read the last committed row back from the file (after a failed commit, whose
        outcome SQLite reports but an I/O error may blur). Fewer or other rows than this
        station committed cannot be waited out: `JournalError` (the station stops)."""
        try:
            last = self._db.execute(
                "SELECT seq, hash FROM journal ORDER BY seq DESC LIMIT 1"
            ).fetchone()
        except sqlite3.Error as exc:
            raise JournalUnavailable(self.unwritable(exc)) from exc
        seq, h = (last[0], last[1]) if last else (0, GENESIS)
        if seq < self.last_seq or (seq == self.last_seq and h != self.last_hash):
            raise JournalError(
                f"{self.path}: the journal ends at row {seq}, but this station committed up "
                f"to row {self.last_seq} (hash {self.last_hash[:12]}…); rows were removed or "
                "changed: run `station journal verify` and restore it from a backup"
            )
        self.last_seq, self.last_hash = seq, h
