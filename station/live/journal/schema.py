"""The journal's file format: its tables, its stamps and the migrations of older files.

A station journal is stamped with SQLite's `application_id` ("BACC") and its layout's
version in `user_version`, so that any other file given as `[journal] path` is refused
untouched (`check_file`, before SQLite opens it: only a new file, a stamped journal or one
of station 0.1.0 is opened), and a journal of an older station is migrated (explicitly,
one schema at a time) before it is written to.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from station.live.journal.errors import JournalError
from station.shared import schema_versions, stamps
from station.shared.rows import GENESIS, row_hash

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
    hash TEXT NOT NULL,
    signature TEXT
)
"""
#: Schema 3: each row's Ed25519 signature of its hash (`station.shared.signing`), null in an
#: unsigned journal and in the rows of an older one. Not covered by the hash, so the chain
#: and every hash written before stay as they were.
SIGNATURE = "ALTER TABLE journal ADD COLUMN signature TEXT"
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
#: Schema 4: each outbox entry's seal, the station's signature binding it to its row
#: (`owed`: its endpoint, seq, id, body and the row's hash), so that an entry someone wrote
#: into the file is never sent (issue 32). Null in an unsigned journal.
SEAL = "ALTER TABLE outbox ADD COLUMN seal TEXT"
#: One event owed to one endpoint: (the endpoint's key, the row's seq, the event's id, its
#: body as sent).
OutboxEntry = tuple[str, int, str, bytes]
#: SQLite's `application_id` of a station journal ("BACC"): any other file given as
#: `[journal] path` is refused instead of taken over.
APPLICATION_ID = stamps.JOURNAL
#: The journal's layout, in SQLite's `user_version`. A station refuses a newer one.
SCHEMA_VERSION = schema_versions.JOURNAL
#: Explicit migrations: MIGRATIONS[n] are the statements that take schema n to n + 1.
#: 0 is a journal of station 0.1.0: the same table, before files were stamped; 1 had no
#: outbox; 2 no signatures; 3 no outbox seals (nor a signed head anchor).
MIGRATIONS: dict[int, tuple[str, ...]] = {0: (), 1: (OUTBOX,), 2: (SIGNATURE,), 3: (SEAL,)}
#: The columns of a journal of station 0.1.0 (schema 0), which is adopted as one.
COLUMNS = ("seq", "ts", "source", "actor", "kind", "event", "verdict", "prev_hash", "hash")
#: How a row is written (schema 3 and on).
INSERT = (
    "INSERT INTO journal (seq, ts, source, actor, kind, event, verdict, prev_hash, hash, "
    "signature) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


@contextlib.contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction: committed when the block ends, rolled back if it raises."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:  # a failed COMMIT may have rolled back already
            db.execute("ROLLBACK")
        raise


def check_file(path: Path) -> None:
    """`JournalError` unless the file at `path` is new (none, or empty), stamped as a
    station journal, or a journal of station 0.1.0; read before SQLite opens it, so a file
    refused is left as it was, byte for byte, with nothing added beside it."""
    found = stamps.foreign(path, APPLICATION_ID)
    if found is None or _legacy(path, found):
        return
    raise JournalError(
        f"cannot open the journal {path}: it is not a station journal ({found.words()}); "
        "it was left untouched: give [journal] path a file of its own (a new journal "
        "starts in a missing or empty file)"
    )


def _legacy(path: Path, found: stamps.Found) -> bool:
    """Whether the unstamped file at `path` is a journal of station 0.1.0: the journal's
    table alone, with that station's columns, and its first row the start of a hash chain
    (a table named like ours is not enough)."""
    if (found.application_id, found.user_version, found.objects) != (0, 0, (("table", "journal"),)):
        return False
    try:
        with stamps.reading(path) as db:
            if _columns(db) != COLUMNS:
                return False
            first = db.execute(f"SELECT {', '.join(COLUMNS)} FROM journal ORDER BY seq LIMIT 1")
            row = first.fetchone()
    except sqlite3.Error:
        return False
    if row is None:
        return False
    seq, ts, source, actor, kind, event, verdict, prev, digest = row
    try:
        linked = row_hash(seq, ts, source, actor, kind, event, verdict, prev)
    except (TypeError, AttributeError):  # not text where the journal keeps text
        return False
    return bool(seq == 1 and prev == GENESIS and linked == digest)


def adopt(db: sqlite3.Connection, path: Path) -> int | None:
    """Make a new file (`db`, open on `path`, which `check_file` let through) a journal, or
    check that an existing one is a station journal of a schema this station knows,
    migrating an older one. Returns the schema migrated from (None if none was needed). A
    file refused is closed untouched."""
    app_id = db.execute("PRAGMA application_id").fetchone()[0]
    version = db.execute("PRAGMA user_version").fetchone()[0]
    listed = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    tables = sorted(name for (name,) in listed)
    nothing = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
    if (app_id, version) == (0, 0) and nothing:  # a new, empty file
        _migrate(db, [SCHEMA, OUTBOX, SEAL], SCHEMA_VERSION)
        return None
    legacy = (app_id, version, tables) == (0, 0, ["journal"]) and _columns(db) == COLUMNS
    if app_id != APPLICATION_ID and not legacy:
        db.close()
        what = f"tables {', '.join(tables)}" if tables else f"application_id {app_id}"
        raise JournalError(
            f"{path} is not a station journal (another program's SQLite database: "
            f"{what}); it was left untouched: give [journal] path a file of its own"
        )
    if version > SCHEMA_VERSION:
        db.close()
        raise JournalError(
            f"the journal {path} has schema {version}, written by a newer station "
            f"(this one knows up to {SCHEMA_VERSION}); upgrade the station, or restore "
            "the journal from a backup made by this version"
        )
    for step in range(version, SCHEMA_VERSION):
        _migrate(db, list(MIGRATIONS[step]), step + 1)
    return version if version < SCHEMA_VERSION else None


def _columns(db: sqlite3.Connection) -> tuple[str, ...]:
    return tuple(r[1] for r in db.execute("PRAGMA table_info(journal)"))


def _migrate(db: sqlite3.Connection, statements: list[str], to_version: int) -> None:
    """Run `statements` and stamp the file with `to_version`, in one transaction."""
    with transaction(db):
        for sql in statements:
            db.execute(sql)
        db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        db.execute(f"PRAGMA user_version = {int(to_version)}")
