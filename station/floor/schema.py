"""The floor archive's file: its tables, made in a new file, checked in one it is given,
brought up from an older station's schema, and the lock that makes one floor service its
only writer.

Why apart from the archive: what the file must be before a row is taken (ours, not a
station journal or another program's database; not newer than this station; not in use)
is decided once, at the start; the archive's checks of rows come after. A file that is
not new and not stamped as an archive is refused before SQLite (or the lock) touches it,
so it is left as it was, byte for byte, with nothing added beside it.
"""

from __future__ import annotations

import fcntl
import logging
import os
import sqlite3
from pathlib import Path

from station.floor.decisions import COLUMNS, KINDS_3, decision_table
from station.floor.epochs import EPOCH_TABLE, SUPERSEDED_TABLE
from station.floor.holding import DROPPED_TABLE, HELD_SIGNER, HELD_SIGNER_INDEX
from station.floor.keys import KEY_TABLE
from station.floor.tip import Tip
from station.shared import schema_versions, stamps

log = logging.getLogger("station.floor.archive")

#: SQLite's `application_id` of a floor archive ("BFLR"): a station journal or another
#: program's database given as `[archive] path` is refused, not taken over.
APPLICATION_ID = stamps.ARCHIVE
SCHEMA_VERSION = schema_versions.ARCHIVE
#: The first schema; `UPGRADES` brings it to `SCHEMA_VERSION`.
SCHEMA = (
    """
    CREATE TABLE row (
        table_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        ts TEXT NOT NULL,
        source TEXT NOT NULL,
        actor TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('event', 'notice')),
        event TEXT NOT NULL,
        verdict TEXT,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL,
        received TEXT NOT NULL,
        PRIMARY KEY (table_id, seq)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE held (
        id INTEGER PRIMARY KEY,
        table_id TEXT NOT NULL,
        seq INTEGER,
        hash TEXT,
        reason TEXT NOT NULL CHECK (reason IN ('gap', 'chain', 'altered', 'conflict',
                                               'malformed')),
        body BLOB NOT NULL,
        received TEXT NOT NULL,
        UNIQUE (table_id, seq, hash)
    )
    """,
    """
    CREATE TABLE alert (
        id INTEGER PRIMARY KEY,
        table_id TEXT NOT NULL,
        seq INTEGER,
        kind TEXT NOT NULL,
        message TEXT NOT NULL,
        raised TEXT NOT NULL,
        resolved TEXT
    )
    """,
    "CREATE INDEX alert_open ON alert (table_id, kind) WHERE resolved IS NULL",
)
#: The decision table of schema 2 (schema 3 rebuilds it: `decisions.decision_table`).
DECISION_TABLE_2 = """
    CREATE TABLE decision (
        id INTEGER PRIMARY KEY,
        table_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('acknowledge', 'accept_gap', 'accept_chain')),
        alert_id INTEGER,
        from_seq INTEGER,
        to_seq INTEGER,
        hash TEXT,
        actor TEXT NOT NULL,
        role TEXT NOT NULL,
        reason TEXT NOT NULL,
        decided TEXT NOT NULL
    )
"""
#: Each row's signature (schema 3), beside the row: the row table keeps the journal's
#: columns, so an archive of schema 2 takes signatures without being rewritten.
SIGNATURE_TABLE = """
    CREATE TABLE signature (
        table_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        signature TEXT NOT NULL,
        PRIMARY KEY (table_id, seq)
    ) WITHOUT ROWID
"""
#: The held rows of schema 3: rows forged (`forged`), waiting for a key a supervisor
#: accepts (`key`) or for a new epoch to be accepted (`epoch`).
HELD_TABLE = """
    CREATE TABLE held_3 (
        id INTEGER PRIMARY KEY,
        table_id TEXT NOT NULL,
        seq INTEGER,
        hash TEXT,
        reason TEXT NOT NULL CHECK (reason IN ('gap', 'chain', 'altered', 'conflict',
                                               'malformed', 'forged', 'key', 'epoch')),
        body BLOB NOT NULL,
        received TEXT NOT NULL,
        UNIQUE (table_id, seq, hash)
    )
"""
#: The held rows of schema 4: and the rows of a rolled-back journal (`rollback`).
HELD_TABLE_4 = HELD_TABLE.replace("held_3", "held_4").replace(
    "'epoch')", "'epoch',\n                                               'rollback')"
)
#: The last heartbeat believed of each table (schema 4): a replayed or older one is
#: refused across restarts of the floor service (`station.floor.beats`).
HEARTBEAT_TABLE = """
    CREATE TABLE heartbeat (
        table_id TEXT PRIMARY KEY,
        ts TEXT NOT NULL,
        seq INTEGER NOT NULL,
        hash TEXT NOT NULL,
        received TEXT NOT NULL
    ) WITHOUT ROWID
"""
#: Each schema version's statements from the one before (2: decisions and tips; 3: table
#: keys, signatures, epochs, and the held rows and decisions they bring; 4: the rows of a
#: rolled-back journal held, a supervisor's `set_key`, the last heartbeat believed; 5:
#: which key signed each held row, and the rows not kept past `[floor] held_rows`:
#: `held`; rows held before it count as unsigned: kept, and counted against the bound; 6:
#: each alert's language-free code and figures, `station.floor.said`: older alerts have
#: none and are shown as their message).
UPGRADES: dict[int, tuple[str, ...]] = {
    2: (
        DECISION_TABLE_2,
        "ALTER TABLE alert ADD COLUMN acknowledged INTEGER REFERENCES decision (id)",
        "ALTER TABLE alert ADD COLUMN resolved_by INTEGER REFERENCES decision (id)",
        """
        CREATE TABLE tip (
            table_id TEXT PRIMARY KEY,
            seq INTEGER NOT NULL,
            hash TEXT NOT NULL,
            created_seq INTEGER,
            shoe_seq INTEGER,
            shoes INTEGER NOT NULL
        ) WITHOUT ROWID
        """,
    ),
    3: (
        KEY_TABLE,
        SIGNATURE_TABLE,
        EPOCH_TABLE,
        SUPERSEDED_TABLE,
        HELD_TABLE,
        "INSERT INTO held_3 SELECT id, table_id, seq, hash, reason, body, received FROM held",
        "DROP TABLE held",
        "ALTER TABLE held_3 RENAME TO held",
        decision_table("decision_3", KINDS_3),
        f"INSERT INTO decision_3 ({COLUMNS}) SELECT {COLUMNS} FROM decision",
        "DROP TABLE decision",
        "ALTER TABLE decision_3 RENAME TO decision",
    ),
    4: (
        HELD_TABLE_4,
        "INSERT INTO held_4 SELECT id, table_id, seq, hash, reason, body, received FROM held",
        "DROP TABLE held",
        "ALTER TABLE held_4 RENAME TO held",
        decision_table("decision_4"),
        f"INSERT INTO decision_4 ({COLUMNS}, epoch) SELECT {COLUMNS}, epoch FROM decision",
        "DROP TABLE decision",
        "ALTER TABLE decision_4 RENAME TO decision",
        HEARTBEAT_TABLE,
    ),
    5: (HELD_SIGNER, HELD_SIGNER_INDEX, DROPPED_TABLE),
    6: ("ALTER TABLE alert ADD COLUMN code TEXT", "ALTER TABLE alert ADD COLUMN params TEXT"),
}


class ArchiveError(Exception):
    """The archive cannot be opened; the message says what to do."""


def open_archive(path: Path) -> tuple[sqlite3.Connection, int]:
    """The archive's writer connection (WAL, `synchronous=FULL`) and its lock, held until
    `unlock`; `ArchiveError` saying what to do if the file cannot be the archive."""
    lock: int | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _check_file(path)
        lock = _take_lock(path)
        db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        _adopt(db, path)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
    except (OSError, sqlite3.Error) as exc:
        unlock(lock)
        raise ArchiveError(
            f"cannot open the floor archive {path}: {exc}; check [archive] path and "
            "that its folder is writable"
        ) from exc
    except ArchiveError:
        unlock(lock)
        raise
    return db, lock


def unlock(lock: int | None) -> None:
    """Let another floor service have the archive (None: no lock taken)."""
    if lock is not None:
        os.close(lock)


def read_tips(db: sqlite3.Connection) -> dict[str, Tip]:
    """table -> its tip, as the file has them."""
    return {r[0]: Tip(*r[1:]) for r in db.execute("SELECT * FROM tip ORDER BY table_id")}


def write_tips(db: sqlite3.Connection, tips: dict[str, Tip]) -> None:
    """Store these tables' tips (inside the caller's transaction)."""
    db.executemany(
        "INSERT OR REPLACE INTO tip VALUES (?, ?, ?, ?, ?, ?)",
        [(t, p.seq, p.hash, p.created_seq, p.shoe_seq, p.shoes) for t, p in tips.items()],
    )


def _take_lock(path: Path) -> int:
    """Be the archive's one writer: a second floor service on the same file would
    archive with heads of its own and stops at once instead."""
    lock = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        unlock(lock)
        raise ArchiveError(
            f"another floor service is using the archive {path}; stop it first, or "
            "give this one its own [archive] path"
        ) from None
    return lock


def _check_file(path: Path) -> None:
    """`ArchiveError` unless the file at `path` is new (none, or empty) or stamped as a
    floor archive; read before SQLite opens it."""
    found = stamps.foreign(path, APPLICATION_ID)
    if found is not None:
        raise ArchiveError(
            f"{path} is not a floor archive ({found.words()}); it was left untouched: give "
            "[archive] path a file of its own (a new archive starts in a missing or empty "
            "file)"
        )


def _adopt(db: sqlite3.Connection, path: Path) -> None:
    """Make the schema in a new file; refuse a file that is not a floor archive, or of a
    newer station; upgrade one of an older station."""
    app_id = db.execute("PRAGMA application_id").fetchone()[0]
    version = db.execute("PRAGMA user_version").fetchone()[0]
    tables = [n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    nothing = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
    if (app_id, version) == (0, 0) and nothing:
        db.execute("BEGIN IMMEDIATE")
        for sql in SCHEMA:
            db.execute(sql)
        for version in range(2, SCHEMA_VERSION + 1):
            for sql in UPGRADES[version]:
                db.execute(sql)
        db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.execute("COMMIT")
        return
    if app_id != APPLICATION_ID:
        db.close()
        what = f"tables {', '.join(sorted(tables))}" if tables else f"application_id {app_id}"
        raise ArchiveError(
            f"{path} is not a floor archive ({what}); it was left untouched: give "
            "[archive] path a file of its own"
        )
    if version > SCHEMA_VERSION:
        db.close()
        raise ArchiveError(
            f"the floor archive {path} has schema {version}, written by a newer "
            f"station (this one knows up to {SCHEMA_VERSION}); upgrade the station"
        )
    if version < SCHEMA_VERSION:
        _upgrade(db, path, version)


def _upgrade(db: sqlite3.Connection, path: Path, version: int) -> None:
    """Bring an archive of an older station to this schema, in one transaction (the
    tips of schema 2 from every row: once, at the first start of this version)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        for step in range(version + 1, SCHEMA_VERSION + 1):
            for sql in UPGRADES[step]:
                db.execute(sql)
            if step == 2:
                tips: dict[str, Tip] = {}
                for table, seq, digest, kind, event, verdict in db.execute(
                    "SELECT table_id, seq, hash, kind, event, verdict FROM row "
                    "ORDER BY table_id, seq"
                ):
                    tips[table] = tips.get(table, Tip()).after(seq, digest, kind, event, verdict)
                write_tips(db, tips)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    log.warning("the floor archive %s: schema %d upgraded to %d", path, version, SCHEMA_VERSION)
