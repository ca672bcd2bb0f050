"""What a store's path holds, read before SQLite may write a byte of it.

The station's files (the journal, the floor archive, the protection index) are SQLite
databases stamped with an `application_id` in their header. A store opens only a new file
(none, or an empty one) or one stamped as its own: any other file is refused and left as
it was. So the file is read first as plain bytes, or through SQLite as an immutable file
(no lock, no side file), because even a read through an ordinary connection may change it
(a hot journal rolled back, a WAL checkpointed into it, `-wal` and `-shm` files added).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

#: The application ids of the station's files ("BACC", "BFLR", "BPRO").
JOURNAL = 0x42414343
ARCHIVE = 0x42464C52
PROTECTION_INDEX = 0x4250524F
#: Each one's name, for what a refused file is.
NAMES = {
    JOURNAL: "a station journal",
    ARCHIVE: "a floor archive",
    PROTECTION_INDEX: "a protection index",
}
#: How every SQLite database begins; its 100-byte header holds `user_version` at byte 60
#: and `application_id` at byte 68 (big-endian).
MAGIC = b"SQLite format 3\x00"
HEADER_BYTES = 100
#: What a SQLite file may hold, as a refusal names it.
KINDS = {"table": "tables", "view": "views", "index": "indexes", "trigger": "triggers"}


@dataclass(frozen=True, slots=True)
class Found:
    """A file that is not new: its stamps and what it holds, as SQLite would read them."""

    sqlite: bool
    application_id: int = 0
    user_version: int = 0
    #: Its tables, views, indexes and triggers, (type, name) in that order.
    objects: tuple[tuple[str, str], ...] = ()

    def words(self) -> str:
        """What the file is, for the message that refuses it."""
        if not self.sqlite:
            return "not a SQLite database"
        name = NAMES.get(self.application_id)
        if name is not None:
            return name
        parts = [
            f"{plural} {', '.join(n for t, n in self.objects if t == kind)}"
            for kind, plural in KINDS.items()
            if any(t == kind for t, _ in self.objects)
        ]
        if self.application_id:
            parts.append(f"application_id {self.application_id:#010x}")
        if self.user_version:
            parts.append(f"user_version {self.user_version}")
        return "another program's SQLite database: " + ("; ".join(parts) or "nothing in it")


def found_at(path: Path) -> Found | None:
    """What is at `path`; None if there is nothing to lose there (no file, or an empty
    one): a new store. Nothing is written, locked or added beside it. A file SQLite
    cannot read for another reason than its not being a database raises what SQLite
    raised (a disk's error is not a foreign file)."""
    try:
        with open(path, "rb") as file:
            header = file.read(HEADER_BYTES)
    except FileNotFoundError:
        return None
    if not header:
        if not _live_wal(path):
            return None
    elif len(header) < HEADER_BYTES or not header.startswith(MAGIC):
        return Found(sqlite=False)
    try:
        with reading(path) as db:
            app_id = db.execute("PRAGMA application_id").fetchone()[0]
            version = db.execute("PRAGMA user_version").fetchone()[0]
            listed = db.execute(
                "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
            ).fetchall()
    except sqlite3.DatabaseError as exc:  # any other error is the caller's (a disk's)
        if getattr(exc, "sqlite_errorcode", None) != sqlite3.SQLITE_NOTADB:
            raise
        return Found(sqlite=False)
    objects = tuple(sorted(((str(t), str(n)) for t, n in listed), key=_by_kind))
    return Found(True, int(app_id), int(version), objects)


def _by_kind(entry: tuple[str, str]) -> tuple[int, str]:
    kind, name = entry
    return (list(KINDS).index(kind) if kind in KINDS else len(KINDS), name)


def foreign(path: Path, application_id: int) -> Found | None:
    """What is at `path` if a store whose files are stamped `application_id` must refuse
    it; None if it may open it (a new file, or one of its own)."""
    found = found_at(path)
    if found is None or (found.sqlite and found.application_id == application_id):
        return None
    return found


@contextlib.contextmanager
def reading(path: Path) -> Iterator[sqlite3.Connection]:
    """A connection that reads the SQLite file at `path` and writes nothing: immutable (no
    lock, no side file, no hot journal rolled back) unless a WAL with pages is beside it
    (the newest pages, the stamps among them, may be there only): then read-only, through
    the `-shm` already beside it."""
    how = "mode=ro" if _live_wal(path) else "mode=ro&immutable=1"
    db = sqlite3.connect(f"{path.resolve().as_uri()}?{how}", uri=True)
    try:
        yield db
    finally:
        db.close()


def _live_wal(path: Path) -> bool:
    """Whether a WAL with pages and its `-shm` are beside `path` (as a killed writer leaves
    them): SQLite reads the file's newest pages from there."""
    wal = path.with_name(path.name + "-wal")
    shm = path.with_name(path.name + "-shm")
    try:
        return wal.stat().st_size > 0 and shm.is_file()
    except OSError:
        return False
