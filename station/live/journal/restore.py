"""Restoring a journal from a backup (`station journal restore`): the backup checked, put
in place, and begun in a new epoch, so that nothing is lost and no id is used twice.

The steps, each a function, in the order the command runs them:
1. `stage`: a copy of the backup (SQLite's backup API, so a backup still in WAL mode is
   copied whole) and of its head anchor beside the journal (`<path>.restoring`), checked
   as `station journal verify` checks (chain, anchor, every verdict) and, with a key,
   every signature. The journal in place is not touched until the last step.
2. `from_floor` (with `--from-floor`): the rows after the backup that the floor archive
   holds are appended to the staged copy, each checked (it follows the row before, its
   hash; then the whole copy verified again: every signature, every verdict). A journal
   so made complete (no row known past the floor's last: the journal replaced ends
   there, and so did the station's last heartbeat the floor heard) continues where it
   stopped (`continue_as_is`) and needs no new epoch: its ids are the ones it had.
   Otherwise (no floor, or rows the floor never had):
3. `carry_owed`: the webhook events the replaced journal still owed the game server
   (delivered to nobody yet) go into the copy's outbox, with their own ids: nothing owed
   is lost to the restore.
4. `begin_epoch`: the station's key takes the copy as the station would at start (the
   same table, the key's hand-over, `Journal.start`), and a `journal restored` notice
   begins a new epoch (`epoch`): the rows after the backup are numbered again from its
   end, so every id the station hands out from here names the new epoch.
5. `put_in_place`: the journal there now (with its `-wal`, `-shm` and `.head`) moved aside
   to `<path>.replaced-<time>` (never deleted: it may hold the rows the backup lacks), the
   copy renamed in its place, handed to the journal folder's owner when run as root.

All of it runs while no station writes the journal: the restore holds the head anchor's
lock, which a running station holds too.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from station.core.table import Table
from station.live.journal import reading
from station.live.journal.epoch import Epoch, epoch_of, restored_notice
from station.live.journal.errors import JournalError
from station.live.journal.owed import Sealed
from station.live.journal.schema import INSERT, transaction
from station.live.journal.store import Journal
from station.live.journal.witness import FloorArchive, WitnessError, chained
from station.shared.keychain import Endorsement, SignatureReport
from station.shared.signing import PublicKey, SigningKey

#: The files of a journal at a path: the database, its WAL and shared memory, its anchor.
SUFFIXES = ("", "-wal", "-shm", ".head")


class RestoreRefused(JournalError):
    """The backup cannot be restored as it is (the message and `problems` say why); the
    journal in place was not touched."""

    def __init__(self, message: str, problems: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.problems = list(problems)


def _with(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def _reading(path: Path) -> sqlite3.Connection:
    """A connection that reads the journal file at `path` and writes nothing beside it:
    immutable (no -shm or -wal made next to a backup), unless a WAL with rows not yet in
    the file is there (a copy taken with its -wal, a station that died), which is read."""
    wal = _with(path, "-wal")
    whole = wal.is_file() and wal.stat().st_size > 0
    uri = f"{path.resolve().as_uri()}?mode=ro" + ("" if whole else "&immutable=1")
    return sqlite3.connect(uri, uri=True)


@contextlib.contextmanager
def no_station(path: Path) -> Iterator[None]:
    """Hold the lock a running station holds on the journal's head anchor: a station
    writing the journal at `path` refuses the restore (stop it first), and none can start
    on it meanwhile."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(_with(path, ".head"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise RestoreRefused(
                f"a station is writing the journal {path}: stop it first "
                "(systemctl stop baccarat-station), then restore"
            ) from None
        yield
    finally:
        os.close(fd)


@dataclass(slots=True)
class Staged:
    """The checked copy of a backup beside the journal, open (a backup of an older
    station's schema is migrated on opening, and the station's first rows on it say so)."""

    backup: Path
    journal: Journal  # the copy, `<journal>.restoring`
    rows: int  # the last row of the backup
    epoch: Epoch  # the backup's epoch
    signatures: SignatureReport | None  # None: not checked (no key known)

    @property
    def path(self) -> Path:
        return self.journal.path

    def discard(self) -> None:
        """The copy will not be used: closed and removed, with its files."""
        self.journal.close()
        remove(self.path)


def stage(backup: Path, journal_path: Path, trusted: PublicKey | None) -> Staged:
    """Copy `backup` (and `backup.head`) beside `journal_path` and check the copy: its
    chain, anchor and verdicts, and with `trusted` its signatures. RestoreRefused (the copy
    removed) if it does not pass."""
    if not backup.is_file():
        raise RestoreRefused(f"no backup at {backup}")
    staged = _with(journal_path, ".restoring")
    for suffix in SUFFIXES:  # what a restore that stopped half-way left: ours to remove
        _with(staged, suffix).unlink(missing_ok=True)
    try:
        source = _reading(backup)
    except sqlite3.Error as exc:
        raise RestoreRefused(f"cannot read the backup {backup}: {exc}") from None
    try:
        reading.backup(source, _with(backup, ".head"), staged)
    except sqlite3.Error as exc:
        remove(staged)
        raise RestoreRefused(f"cannot read the backup {backup}: {exc}") from None
    finally:
        source.close()
    try:
        copy = Journal(staged, create=False)
    except JournalError as exc:
        remove(staged)
        raise RestoreRefused(f"the backup {backup}: {exc}") from None
    try:
        report = copy.verify(trusted, copy.adopted_through() + 1)
        epoch = copy.epoch if report.rows else None
    except JournalError as exc:
        copy.close()
        remove(staged)
        raise RestoreRefused(f"the backup {backup}: {exc}") from None
    if not report.ok or epoch is None:
        copy.close()
        remove(staged)
        problems = report.problems or ["it has no row"]
        raise RestoreRefused(f"the backup {backup} does not verify", problems)
    return Staged(backup, copy, report.last_seq, epoch, report.signatures)


@dataclass(frozen=True, slots=True)
class Replaced:
    """What is known of the journal a restore replaces."""

    last_seq: int
    epoch: Epoch | None


def replaced(journal_path: Path) -> Replaced | None:
    """The journal at `journal_path` as it is (read-only, no lock, no WAL of its own), or
    None if there is none or it cannot be read."""
    if not journal_path.is_file() or journal_path.stat().st_size == 0:
        return None
    try:
        db = _reading(journal_path)
        try:
            last = db.execute("SELECT max(seq) FROM journal").fetchone()[0]
            return Replaced(last or 0, epoch_of(db))
        finally:
            db.close()
    except sqlite3.Error:
        return None


@dataclass(frozen=True, slots=True)
class Taken:
    """What the floor archive gave a restore."""

    rows: int  # rows appended after the backup
    last: int  # the restored journal's last row now
    #: The last row the station is known to have had past `last` (the journal replaced,
    #: the station's last heartbeat): rows the floor never had. None: none known.
    missing: int | None

    @property
    def complete(self) -> bool:
        return self.missing is None


def from_floor(
    staged: Staged,
    floor: FloorArchive,
    table_id: str,
    trusted: PublicKey | None,
    before: Replaced | None,
) -> Taken:
    """Append to the staged copy every row the floor archive holds of `table_id` after the
    backup, each checked to follow the one before and to hash to its contents, then check
    the whole copy again as `verify` does (every signature with `trusted`, every verdict).
    RestoreRefused (the copy removed) if the floor cannot be read or its rows do not pass."""
    copy = staged.journal
    try:
        rows = chained(floor.rows(table_id, copy.last_seq), copy.last_seq, copy.last_hash)
        heard = floor.station_seq(table_id)
    except WitnessError as exc:
        staged.discard()
        raise RestoreRefused(f"--from-floor: {exc}") from None
    if rows:
        copy.close()
        db = sqlite3.connect(staged.path, isolation_level=None)
        try:
            with transaction(db):
                db.executemany(INSERT, rows)
        finally:
            db.close()
        staged.journal = copy = Journal(staged.path, create=False)
    report = copy.verify(trusted, copy.adopted_through() + 1)
    if not report.ok:
        staged.discard()
        raise RestoreRefused(
            f"the backup {staged.backup} with the floor's rows after it does not verify",
            report.problems,
        )
    staged.rows, staged.signatures = report.last_seq, report.signatures
    replaced_last = 0
    if before is not None and before.epoch is not None:
        same = before.epoch.journal == staged.epoch.journal  # another journal's says nothing
        replaced_last = before.last_seq if same else 0
    known = max(replaced_last, heard or 0)
    return Taken(len(rows), report.last_seq, known if known > report.last_seq else None)


def continue_as_is(
    staged: Staged,
    table_id: str,
    table: Table,
    key: SigningKey | None,
    endorsements: Sequence[Endorsement] = (),
    rotations: Path | None = None,
) -> None:
    """The station's key takes the complete copy as the station would at start (the same
    table, the key's hand-over: JournalError if it could not), in the epoch it was in;
    the copy closed."""
    copy = staged.journal
    copy.start(table_id, table, key, endorsements, rotations, anchored=False)
    copy.close()


def carry_owed(staged: Staged, journal_path: Path) -> int:
    """Owe in the staged copy the webhook events the journal at `journal_path` still owed
    (read-only; none if it cannot be read); returns how many were not owed already. Their
    ids are their own epoch's, so none is taken for another event."""
    if not journal_path.is_file():
        return 0
    try:
        db = _reading(journal_path)
        try:
            columns = {r[1] for r in db.execute("PRAGMA table_info(outbox)")}
            seal = "seal" if "seal" in columns else "NULL"
            rows = db.execute(
                f"SELECT endpoint, seq, id, body, {seal} FROM outbox ORDER BY seq, rowid"
            )
            owed: list[Sealed] = [
                (str(e), int(s), str(i), bytes(b), None if m is None else str(m))
                for e, s, i, b, m in rows
            ]
        finally:
            db.close()
    except sqlite3.Error:
        return 0
    known = {(endpoint, event_id) for endpoint, _, event_id, _ in staged.journal.owed()}
    fresh = [entry for entry in owed if (entry[0], entry[2]) not in known]
    staged.journal.owe_sealed(fresh)  # their seals are checked when they are sent again
    return len(fresh)


def begin_epoch(
    staged: Staged,
    before: Replaced | None,
    aside: Path | None,
    table_id: str,
    table: Table,
    key: SigningKey | None,
    endorsements: Sequence[Endorsement] = (),
    rotations: Path | None = None,
) -> Epoch:
    """Journal the new epoch at the end of the staged copy, signed by `key` as the station
    would sign (JournalError if the station could not continue the copy: another table,
    another key), and close the copy. Its number is one past the backup's and the replaced
    journal's (if it is the same journal); its mark (what ids carry) is its own row's
    hash."""
    number = staged.epoch.number
    details: dict[str, object] = {"backup": str(staged.backup), "backup_rows": staged.rows}
    if before is not None and before.epoch is not None:
        if before.epoch.journal == staged.epoch.journal:
            number = max(number, before.epoch.number)
            details["rows_not_restored"] = max(before.last_seq - staged.rows, 0)
        details["replaced_rows"] = before.last_seq
    if aside is not None:
        details["replaced"] = str(aside)
    copy = staged.journal
    copy.start(table_id, table, key, endorsements, rotations, anchored=False)
    copy.append([restored_notice(number + 1, **details)])
    epoch = copy.epoch
    copy.close()
    return epoch


def aside_of(journal_path: Path) -> Path:
    """Where the journal a restore replaces is kept: `<path>.replaced-<UTC time>`."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return _with(journal_path, f".replaced-{stamp}")


def put_in_place(staged: Staged, journal_path: Path, aside: Path | None) -> None:
    """Move the journal at `journal_path` (all its files) to `aside` (None: there is no
    journal there), and the staged copy to `journal_path`; as root, the files go to the
    owner of the journal's folder (the station's user)."""
    if aside is not None:
        for suffix in SUFFIXES:
            current = _with(journal_path, suffix)
            if current.exists():
                os.replace(current, _with(aside, suffix))
    for suffix in ("", ".head"):
        moved = _with(staged.path, suffix)
        if moved.exists():
            os.replace(moved, _with(journal_path, suffix))
    for suffix in ("-wal", "-shm"):  # a cleanly closed copy has none; never keep stale ones
        _with(staged.path, suffix).unlink(missing_ok=True)
    folder = journal_path.parent
    if os.geteuid() == 0:
        owner = folder.stat()
        for suffix in ("", ".head"):
            with contextlib.suppress(FileNotFoundError):
                os.chown(_with(journal_path, suffix), owner.st_uid, owner.st_gid)
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove(staged: Path) -> None:
    """A staged copy that will not be used: gone, with its files."""
    for suffix in SUFFIXES:
        _with(staged, suffix).unlink(missing_ok=True)
