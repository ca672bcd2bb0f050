"""Reading a journal out, never writing it: its rows, the export of its table events, and
a backup copy of the file.

`read_rows` reads on a connection of its own, read-only, so the API's reads never see the
writer's transaction and never block it (WAL). An export is exactly the table's event
stream (notices left out), which `station replay` accepts line for line.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

import orjson

from station.live.journal.errors import JournalError
from station.shared.rows import Row, row_of


def rows(db: sqlite3.Connection, after: int = 0, limit: int | None = None) -> Iterator[Row]:
    """The journal's rows with seq > after, in order (all of them, or at most `limit`)."""
    sql = "SELECT * FROM journal WHERE seq > ? ORDER BY seq"
    args: tuple[int, ...] = (after,)
    if limit is not None:
        sql += " LIMIT ?"
        args = (after, limit)
    for r in db.execute(sql, args):
        yield row_of(r)


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


def export(journal_rows: Iterable[Row], sink: BinaryIO) -> int:
    """Write the table events among `journal_rows` to `sink` as export lines (`export_line`);
    returns how many."""
    count = 0
    for row in journal_rows:
        if row.kind == "event":
            sink.write(export_line(row))
            count += 1
    return count


def export_line(row: Row) -> bytes:
    """An event row as a line of `station journal export` (see `Journal.export`)."""
    journal = {"seq": row.seq, "ts": row.ts, "source": row.source, "actor": row.actor}
    return orjson.dumps({**row.event, "journal": journal, "verdict": row.verdict}) + b"\n"


def backup(db: sqlite3.Connection, head_path: Path, dest: str | os.PathLike[str]) -> int:
    """Copy the journal open on `db` to `dest` (a new file) with SQLite's online backup,
    consistent even while the station commits, and its head anchor (`head_path`) to
    `dest.head`. The anchor is read first: it may only lag the copy, never lead it, so the
    copy verifies. Returns the copy's row count."""
    target = Path(dest)
    if target.exists():
        raise JournalError(f"{target} exists already; give a new file for the backup")
    if not target.parent.is_dir():  # else SQLite's bare "unable to open database file"
        raise JournalError(f"no folder {target.parent} for the backup: make it first")
    try:
        head = head_path.read_bytes()
    except FileNotFoundError:
        head = None
    copy = sqlite3.connect(target)
    try:
        db.backup(copy)
        count: int = copy.execute("SELECT count(*) FROM journal").fetchone()[0]
    finally:
        copy.close()
    if head is not None:
        target.with_name(target.name + ".head").write_bytes(head)
    return count
