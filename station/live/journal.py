"""The durable journal: every event and its verdict, hash-chained, in SQLite.

Why SQLite in WAL mode with `synchronous=FULL`: a commit is on disk when `append` returns,
so a verdict that was published (answered, broadcast, posted) can never be lost, even by
a power cut; WAL lets readers (`/api/journal`, `station journal export`) read while the
writer commits.

Rows are `seq, ts, source, actor, kind, event, verdict, prev_hash, hash`. Each row's hash
covers its own fields and the previous row's hash, so an edited, deleted or reordered
row breaks the chain. A deleted *last* row leaves a valid chain, so the writer also keeps
a small head anchor file beside the database (`<path>.head`: the last seq and hash);
`verify` checks that the chain reaches it.

Two kinds of rows:
- `event`: a table event (replay format) and the core's verdict on it.
- `notice`: something the journal must say that is not a table event (reader port
  opened, a webhook given up, the table settings the journal was started with). Its
  `event` is `{"type": "notice", "message": ..., **details}` and its verdict is null. The
  core's replay skips notices and `export` leaves them out, so an export is exactly the
  table's event stream, which `station replay` accepts line for line.

When the journal cannot be written (disk full, read-only, an I/O error, the file deleted
or replaced under the station: `check_file`), `append` raises `JournalUnavailable` with a
message saying what to do; nothing of that commit is in the file, and the service waits
it out (`probe`, `resync`, then it commits again). An event that cannot be stored as JSON
at all is `Unstorable` (`event_text`), asked before the table decides it.

The first row of every journal is the `journal created` notice with the table settings
(id, game, decks, gated, cut_policy, burn); the settings are hash-protected with the rest,
and the service refuses to continue a journal under different settings: under another
game with a message of its own (a journal is one game's record). A journal written before
the cercle games has no game or burn: it is punto banco's, with the burn reveal.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from station.core.table import Table
from station.shared.rows import (
    CREATED,
    GENESIS,
    VERDICT_KEYS,
    Pending,
    Row,
    dumps,
    notice,
    row_hash,
    row_of,
)

log = logging.getLogger("station.live.journal")

SCHEMA = """
CREATE TABLE journal (
    seq INTEGER PRIMARY KEY,
    ts TEXT NOT NULL,
    source TEXT NOT NULL,
    actor TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('event', 'notice')),
    event TEXT NOT NULL,
    verdict TEXT,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
)
"""
#: The game server's webhook events owed: written in the same transaction as the row that
#: caused them, deleted once delivered (or given up, which is journaled). Not part of the
#: record (no hash): the station's outbox, so that a stop or a crash loses no event; the
#: next start sends them again, with the same ids.
OUTBOX = """
CREATE TABLE outbox (
    endpoint TEXT NOT NULL,
    seq INTEGER NOT NULL,
    id TEXT NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (endpoint, id)
)
"""
#: One event owed to one endpoint: (the endpoint's key, the row's seq, the event's id, its
#: body as sent).
OutboxEntry = tuple[str, int, str, bytes]
#: SQLite's `application_id` of a station journal ("BACC"): another program's database
#: given as `[journal] path` is refused instead of taken over.
APPLICATION_ID = 0x42414343
#: The journal's layout, in SQLite's `user_version`. A station refuses a newer one.
SCHEMA_VERSION = 2
#: Explicit migrations: MIGRATIONS[n] are the statements that take schema n to n + 1.
#: 0 is a journal of station 0.1.0: the same table, before files were stamped; 1 had no
#: outbox.
MIGRATIONS: dict[int, tuple[str, ...]] = {0: (), 1: (OUTBOX,)}
COLUMNS = ("seq", "ts", "source", "actor", "kind", "event", "verdict", "prev_hash", "hash")
OWE = "INSERT OR IGNORE INTO outbox (endpoint, seq, id, body) VALUES (?, ?, ?, ?)"
SETTLE = "DELETE FROM outbox WHERE endpoint = ? AND id = ?"
#: How every "cannot be written" message ends: what was refused was never answered ok.
UNAVAILABLE_TAIL = (
    "nothing answered was lost; events are refused meanwhile, and a table in play comes back "
    "suspended"
)
#: The size of the write `Journal.probe` tries before the writer commits again.
PROBE_BYTES = 64 * 1024


class JournalError(Exception):
    """The journal cannot be opened or continued; the message says what to do."""


class JournalUnopenable(JournalError):
    """The journal cannot be opened now for a reason that may pass (its disk is full or
    read-only): a station waits it out; a command stops, saying what to do."""


class JournalUnavailable(Exception):
    """The journal cannot be written now (disk full, read-only, an I/O error, the file
    deleted under the station): nothing of the failed commit is in it, and writing may
    work again later. The message says what to do."""


def table_settings(table_id: str, table: Table) -> dict[str, Any]:
    return {
        "id": table_id,
        "game": table.game.name,
        "decks": table.decks,
        "gated": table.gated,
        "cut_policy": table.cut_policy,
        "burn": table.burn,
    }


#: What a journal made before the cercle games played (its first row has no game, burn).
BEFORE_GAMES = {"game": "punto_banco", "burn": "reveal"}


def settings_of(first: Mapping[str, Any]) -> dict[str, Any]:
    """A journal's recorded table settings; one older than the cercle games gets punto
    banco's game and burn."""
    return {**BEFORE_GAMES, **first}


def table_of(settings: Mapping[str, Any]) -> Table:
    """A fresh table dealt by a journal's recorded settings (`settings_of`)."""
    return Table(
        game=settings["game"],
        decks=settings["decks"],
        gated=settings["gated"],
        cut_policy=settings["cut_policy"],
        burn=settings["burn"],
    )


def _read_only(folder: Path) -> bool:
    """Whether `folder` is on a file system mounted read-only (SQLite then says only
    "unable to open database file" of a new journal)."""
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


class Journal:
    """The journal file. Not thread-safe: the service uses it from one thread at a time."""

    def __init__(self, path: str | os.PathLike[str], create: bool = True) -> None:
        self.path = Path(path)
        self.head_path = self.path.with_name(self.path.name + ".head")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            target = self.path if create else f"{self.path.resolve().as_uri()}?mode=rw"
            self._db = sqlite3.connect(
                target, isolation_level=None, check_same_thread=False, uri=not create
            )
            self.migrated_from = self._adopt()  # first: a foreign file stays untouched
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
        except (OSError, sqlite3.Error) as exc:
            with contextlib.suppress(AttributeError, sqlite3.Error):
                self._db.close()
            what = self._disk_condition(exc)
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
        st = os.stat(self.path)
        #: The file written to (device, inode): a journal deleted or replaced under the
        #: station is noticed before the next commit (`check_file`).
        self._identity = (st.st_dev, st.st_ino)

    def _adopt(self) -> int | None:
        """Make a new file a journal, or check that an existing one is a station journal of
        a schema this station knows, migrating an older one. Returns the schema migrated
        from (None if none was needed)."""
        db = self._db
        app_id = db.execute("PRAGMA application_id").fetchone()[0]
        version = db.execute("PRAGMA user_version").fetchone()[0]
        listed = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        tables = sorted(name for (name,) in listed)
        if app_id == 0 and not tables:  # a new, empty file
            self._migrate([SCHEMA, OUTBOX], SCHEMA_VERSION)
            return None
        legacy = (app_id, version, tables) == (0, 0, ["journal"]) and self._columns() == COLUMNS
        if app_id != APPLICATION_ID and not legacy:
            db.close()
            what = f"tables {', '.join(tables)}" if tables else f"application_id {app_id}"
            raise JournalError(
                f"{self.path} is not a station journal (another program's SQLite database: "
                f"{what}); it was left untouched. Give [journal] path a file of its own"
            )
        if version > SCHEMA_VERSION:
            db.close()
            raise JournalError(
                f"the journal {self.path} has schema {version}, written by a newer station "
                f"(this one knows up to {SCHEMA_VERSION}); upgrade the station, or restore "
                "the journal from a backup made by this version"
            )
        for step in range(version, SCHEMA_VERSION):
            self._migrate(list(MIGRATIONS[step]), step + 1)
        return version if version < SCHEMA_VERSION else None

    def _columns(self) -> tuple[str, ...]:
        return tuple(r[1] for r in self._db.execute("PRAGMA table_info(journal)"))

    def _migrate(self, statements: list[str], to_version: int) -> None:
        """Run `statements` and stamp the file with `to_version`, in one transaction."""
        with self._transaction() as db:
            for sql in statements:
                db.execute(sql)
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            db.execute(f"PRAGMA user_version = {int(to_version)}")

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: committed when the block ends, rolled back if it
        raises."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:  # a failed COMMIT may have rolled back already
                db.execute("ROLLBACK")
            raise

    @contextlib.contextmanager
    def _committing(self) -> Iterator[sqlite3.Connection]:
        """A write transaction whose disk failure is `JournalUnavailable` (what to do)."""
        try:
            with self._transaction() as db:
                yield db
        except (sqlite3.Error, OSError) as exc:
            raise JournalUnavailable(self.unwritable(exc)) from exc

    def close(self) -> None:
        if self._head_fd is not None:
            os.close(self._head_fd)
            self._head_fd = None
        self._db.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing -------------------------------------------------------------------------

    def append(
        self,
        pending: list[Pending],
        outbox: Callable[[list[Row]], list[OutboxEntry]] | None = None,
        settled: Sequence[tuple[str, str]] = (),
    ) -> list[Row]:
        """Commit rows in one transaction (durable when this returns), in order; with them
        the webhook events they cause (`outbox`, made from the rows) and the deletion of
        those delivered since the last commit (`settled`: (endpoint, id) pairs)."""
        rows: list[Row] = []
        seq, prev = self.last_seq, self.last_hash
        params = []
        for p in pending:
            seq += 1
            event = dict(p.event)
            verdict = None if p.verdict is None else {k: p.verdict[k] for k in VERDICT_KEYS}
            text = dumps(event) if p.text is None else p.text
            verdict_text = None if verdict is None else dumps(verdict)
            h = row_hash(seq, p.ts, p.source, p.actor, p.kind, text, verdict_text, prev)
            params.append((seq, p.ts, p.source, p.actor, p.kind, text, verdict_text, prev, h))
            rows.append(Row(seq, p.ts, p.source, p.actor, p.kind, event, verdict, prev, h))
            prev = h
        if not params:
            return rows
        self.check_file()
        with self._committing() as db:
            db.executemany("INSERT INTO journal VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", params)
            if outbox is not None:
                db.executemany(OWE, outbox(rows))
            if settled:
                db.executemany(SETTLE, settled)
        self.last_seq, self.last_hash = seq, prev
        self._write_head(seq, prev)
        return rows

    # -- the webhook outbox ---------------------------------------------------------------

    def owed(self) -> list[OutboxEntry]:
        """The webhook events not yet delivered, in journal order."""
        sql = "SELECT endpoint, seq, id, body FROM outbox ORDER BY seq, rowid"
        return [(str(e), int(s), str(i), bytes(b)) for e, s, i, b in self._db.execute(sql)]

    def owe(self, entries: Sequence[OutboxEntry]) -> None:
        """Record webhook events owed for rows already committed (an alert, a suspension
        announced again), durably."""
        self._outbox_write(OWE, entries)

    def settle(self, done: Sequence[tuple[str, str]]) -> None:
        """Forget delivered webhook events ((endpoint, id) pairs)."""
        self._outbox_write(SETTLE, done)

    def _outbox_write(self, sql: str, params: Sequence[tuple[Any, ...]]) -> None:
        if not params:
            return
        with self._committing() as db:
            db.executemany(sql, params)

    def _write_head(self, seq: int, h: str) -> None:
        """The tail anchor: fixed-size, rewritten in place after each commit. It is written
        after the commit, so it can lag the database (a crash in between) but never lead it;
        a failure to write it is only logged (the rows are committed: a lagging anchor is
        what `verify` allows, and the next commit writes it again)."""
        try:
            self._open_head()
            assert self._head_fd is not None
            os.pwrite(self._head_fd, f"{seq:020d} {h}\n".encode(), 0)
        except OSError as exc:
            log.warning(
                "the head anchor %s was not updated to row %d: %s", self.head_path, seq, exc
            )

    # -- when the disk fails -------------------------------------------------------------

    def unwritable(self, exc: BaseException) -> str:
        """What a failed write means for the operator: what to do, and that nothing
        answered was lost (a failed commit leaves nothing half-written)."""
        what = self._disk_condition(exc)
        if what is None:
            what = f"{exc}; check the disk holding {self.path.resolve().parent}"
        return f"the journal cannot be written: {what} — {UNAVAILABLE_TAIL}"

    def _disk_condition(self, exc: BaseException) -> str | None:
        """What to do if `exc` comes of a disk that is full or read-only (a state that
        passes once someone acts), in words; None for any other error."""
        folder = self.path.resolve().parent
        code = getattr(exc, "sqlite_errorcode", None)
        primary = code & 0xFF if isinstance(code, int) else None
        err = getattr(exc, "errno", None)
        if primary == 13 or err in (errno.ENOSPC, errno.EDQUOT):  # SQLITE_FULL
            return f"disk full; free space on {folder}"
        if primary == 8 or err == errno.EROFS or _read_only(folder):  # SQLITE_READONLY
            return f"the disk is read-only; make {folder} writable again"
        return None

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
        held = _held_open(self.path)
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
        probe = self.path.with_name(self.path.name + ".probe")
        try:
            fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.write(fd, bytes(PROBE_BYTES))
                os.fsync(fd)
            finally:
                os.close(fd)
                os.unlink(probe)
        except OSError as exc:
            raise JournalUnavailable(self.unwritable(exc)) from exc

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
        last = _lastrow_of(self.path)
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

    def _open_head(self) -> None:
        if self._head_fd is None:
            self._head_fd = os.open(self.head_path, os.O_RDWR | os.O_CREAT, 0o644)

    def start(self, table_id: str, table: Table) -> None:
        """Become the journal's one writer (an exclusive lock on the head anchor, so a
        second station on the same file stops at once), then write the `journal created`
        row if the journal is new, else check that the table settings are the ones the
        journal was written with."""
        self._open_head()
        assert self._head_fd is not None
        try:
            fcntl.flock(self._head_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise JournalError(
                f"another station is writing to the journal {self.path}; "
                "stop it first, or give this one its own [journal] path"
            ) from None
        settings = table_settings(table_id, table)
        first = self.settings()
        if first is None:
            self.append([notice("station", "station", CREATED, table=settings)])
        elif (game := settings_of(first)["game"]) != settings["game"]:
            raise JournalError(
                f"the journal {self.path} is the record of a {game} table, but the config "
                f"says [table] game = {settings['game']!r}: a journal holds one game, so "
                f"give the new game a new journal file ([journal] path), or set [table] "
                f"game = {game!r} back to go on with this one"
            )
        elif settings_of(first) != settings:
            raise JournalError(
                f"the journal {self.path} belongs to table {first}, but the config says "
                f"{settings}: use the same [table] settings, or a new [journal] path for a "
                "new table"
            )
        if self.migrated_from is not None:
            migrated = notice(
                "station",
                "station",
                "journal migrated",
                from_schema=self.migrated_from,
                to_schema=SCHEMA_VERSION,
            )
            self.append([migrated])

    def backup(self, dest: str | os.PathLike[str]) -> int:
        """Copy the journal to `dest` (a new file) with SQLite's online backup, consistent
        even while the station commits, and the head anchor to `dest.head`. The anchor is
        read first: it may only lag the copy, never lead it, so the copy verifies. Returns
        the copy's row count."""
        target = Path(dest)
        if target.exists():
            raise JournalError(f"{target} exists already; give a new file for the backup")
        try:
            head = self.head_path.read_bytes()
        except FileNotFoundError:
            head = None
        copy = sqlite3.connect(target)
        try:
            self._db.backup(copy)
            rows: int = copy.execute("SELECT count(*) FROM journal").fetchone()[0]
        finally:
            copy.close()
        if head is not None:
            target.with_name(target.name + ".head").write_bytes(head)
        return rows

    # -- reading -------------------------------------------------------------------------

    def settings(self) -> dict[str, Any] | None:
        """The table settings from the `journal created` row, or None for an empty journal."""
        row = next(self.rows(after=0, limit=1), None)
        if row is None:
            return None
        if row.kind != "notice" or row.event.get("message") != CREATED:
            raise JournalError(
                f"{self.path}: the first row is not the '{CREATED}' notice; "
                "this is not a station journal"
            )
        table = row.event.get("table")
        return table if isinstance(table, dict) else None

    def rows(self, after: int = 0, limit: int | None = None) -> Iterator[Row]:
        """Rows with seq > after, in order (all of them, or at most `limit`)."""
        sql = "SELECT * FROM journal WHERE seq > ? ORDER BY seq"
        args: tuple[int, ...] = (after,)
        if limit is not None:
            sql += " LIMIT ?"
            args = (after, limit)
        for r in self._db.execute(sql, args):
            yield row_of(r)

    def replay_into(self, table: Table) -> Replayed:
        """Apply every event row to `table` (notices skipped), checking that the core still
        decides what the journal says."""
        done = Replayed()
        for row in self.rows():
            if row.kind != "event":
                continue
            decided, cleared, began = table.decide(row.event)
            verdict = dict(decided)
            if row.verdict != verdict:
                raise JournalError(
                    f"{self.path}: row {row.seq}: the rules now decide {dumps(verdict)} but "
                    f"the journal says {dumps(row.verdict)}; run `station journal verify`"
                )
            if began:
                done.suspended_since = row.seq
            elif cleared:
                done.suspended_since = None
            done.events += 1
        return done

    def export(self, sink: BinaryIO, after: int = 0) -> int:
        """Write the table events as replay JSON Lines, each with its `verdict` (the replay
        output's fields less seq) and a `journal` object (seq, ts, source, actor). `station
        replay` accepts the file as is (it ignores the extra keys) and decides the same."""
        count = 0
        for row in self.rows(after=after):
            if row.kind == "event":
                sink.write(export_line(row))
                count += 1
        return count

    def verify(self) -> VerifyReport:
        """Check the chain, the head anchor and that the core's replay agrees with every
        stored verdict. Never raises for a bad journal: the report lists the problems."""
        report = VerifyReport()
        prev, expected_seq = GENESIS, 1
        sql = "SELECT seq, ts, source, actor, kind, event, verdict, prev_hash, hash FROM journal"
        try:
            raw_rows = self._db.execute(sql + " ORDER BY rowid").fetchall()
        except sqlite3.Error as exc:
            report.problems.append(f"cannot read the journal: {exc}")
            return report
        for seq, ts, source, actor, kind, event, verdict, prev_hash, h in raw_rows:
            report.rows += 1
            if seq != expected_seq:
                report.problems.append(
                    f"row {seq}: expected row {expected_seq} here (a row was deleted or the "
                    "rows were reordered)"
                )
            if prev_hash != prev:
                report.problems.append(
                    f"row {seq}: prev_hash does not match the previous "
                    "row's hash (a row before it was deleted, changed or "
                    "moved)"
                )
            if row_hash(seq, ts, source, actor, kind, event, verdict, prev_hash) != h:
                report.problems.append(
                    f"row {seq}: its hash does not match its contents (the row was edited)"
                )
            prev, expected_seq = h, seq + 1
        report.last_seq = raw_rows[-1][0] if raw_rows else 0
        self._verify_head(report, raw_rows)
        if not report.problems:
            self._verify_verdicts(report)
        return report

    def _verify_head(self, report: VerifyReport, raw_rows: list[Any]) -> None:
        try:
            text = self.head_path.read_text()
        except FileNotFoundError:
            if raw_rows:
                report.warnings.append(
                    f"no head anchor {self.head_path}: a deleted last row would not be detected"
                )
            return
        try:
            seq_text, h = text.split()
            head_seq = int(seq_text)
        except ValueError:
            report.problems.append(f"the head anchor {self.head_path} is unreadable")
            return
        hashes = {r[0]: r[8] for r in raw_rows}
        if head_seq not in hashes:
            report.problems.append(
                f"the head anchor says row {head_seq} was committed, but "
                "the journal does not have it (rows were deleted)"
            )
        elif hashes[head_seq] != h:
            report.problems.append(f"row {head_seq}: its hash differs from the head anchor")

    def _verify_verdicts(self, report: VerifyReport) -> None:
        try:
            settings = self.settings()
        except JournalError as exc:
            report.problems.append(str(exc))
            return
        if settings is None:
            return
        try:
            table = table_of(settings_of(settings))
        except (KeyError, TypeError, ValueError) as exc:
            report.problems.append(f"row 1: bad table settings {settings}: {exc}")
            return
        try:
            report.events = self.replay_into(table).events
        except JournalError as exc:
            report.problems.append(str(exc))


def _lastrow_of(path: Path) -> tuple[int, str] | None:
    """The last row's (seq, hash) of the journal file at `path`, read as an immutable file
    (no locks, no WAL), or None if it cannot be read."""
    uri = f"{path.resolve().as_uri()}?mode=ro&immutable=1"
    try:
        db = sqlite3.connect(uri, uri=True)
        try:
            last = db.execute("SELECT seq, hash FROM journal ORDER BY seq DESC LIMIT 1").fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return None
    return (last[0], last[1]) if last else (0, GENESIS)


def _held_open(path: Path) -> str | None:
    """The `/proc/self/fd` link through which this process still holds the deleted file
    `path` (so the operator can copy it back), or None."""
    gone = f"{path.resolve()} (deleted)"
    try:
        for fd in os.listdir("/proc/self/fd"):
            link = f"/proc/{os.getpid()}/fd/{fd}"
            try:
                if os.readlink(f"/proc/self/fd/{fd}") == gone:
                    return link
            except OSError:
                continue
    except OSError:
        return None
    return None


def export_line(row: Row) -> bytes:
    """An event row as a line of `station journal export` (see `Journal.export`)."""
    journal = {"seq": row.seq, "ts": row.ts, "source": row.source, "actor": row.actor}
    return orjson.dumps({**row.event, "journal": journal, "verdict": row.verdict}) + b"\n"


def read_rows(path: str | os.PathLike[str], after: int = 0, limit: int = 100) -> list[Row]:
    """Committed rows from a journal, on a connection of their own (read-only, so they
    never see the writer's transaction and never block it: WAL)."""
    uri = Path(path).resolve().as_uri() + "?mode=ro"
    db = sqlite3.connect(uri, uri=True)
    try:
        cur = db.execute("SELECT * FROM journal WHERE seq > ? ORDER BY seq LIMIT ?", (after, limit))
        return [row_of(r) for r in cur]
    finally:
        db.close()


@dataclass(slots=True)
class Replayed:
    """What a replay found: how many events, and the row that began the suspension."""

    events: int = 0
    suspended_since: int | None = None


@dataclass(slots=True)
class VerifyReport:
    """What `Journal.verify` found."""

    rows: int = 0
    events: int = 0
    last_seq: int = 0
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems
