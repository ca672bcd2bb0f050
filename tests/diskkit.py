"""Disks that fail, for the tests of a journal that cannot be written: a real small one (a
tmpfs of a given size, and a file that fills it), and a journal connection whose commits
fail with a given SQLite error (as on a full, read-only or broken disk)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from station.live.journal import Journal


@contextmanager
def small_disk(tmp_path: Path, size: str) -> Iterator[Path]:
    """A tmpfs of `size` mounted in `tmp_path` (skips where mounting is not permitted)."""
    where = tmp_path / "disk"
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(folder: Path) -> Path:
    """A file that takes every free byte of `folder`'s disk."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        chunk = 1 << 16
        while chunk:
            try:
                os.write(fd, bytes(chunk))
            except OSError:
                chunk //= 2
    finally:
        os.close(fd)
    return filler


class FailingDb:
    """The journal's connection, whose COMMIT fails with `error` (SQLite rolls the
    transaction back itself, as on a full disk)."""

    def __init__(self, db: sqlite3.Connection, error: sqlite3.Error) -> None:
        self.db = db
        self.error = error

    @property
    def in_transaction(self) -> bool:
        return self.db.in_transaction

    def execute(self, sql: str, *args: Any) -> Any:
        if sql == "COMMIT":
            self.db.execute("ROLLBACK")
            raise self.error
        return self.db.execute(sql, *args)

    def executemany(self, sql: str, rows: Any) -> Any:
        return self.db.executemany(sql, rows)

    def close(self) -> None:
        self.db.close()


def sqlite_error(message: str, code: int) -> sqlite3.Error:
    error = sqlite3.OperationalError(message)
    error.sqlite_errorcode = code
    return error


def disk_full() -> sqlite3.Error:
    """What SQLite raises of a commit on a full disk."""
    return sqlite_error("database or disk is full", sqlite3.SQLITE_FULL)


@contextmanager
def failing_commits(journal: Journal | None, error: sqlite3.Error) -> Iterator[None]:
    """Every commit of `journal` (a running station's) fails with `error` inside the
    block; its own connection is back afterwards, whatever the block did."""
    assert journal is not None
    real = journal._db
    journal._db = FailingDb(real, error)  # type: ignore[assignment]
    try:
        yield
    finally:
        journal._db = real


def padded_void() -> dict[str, Any]:
    """A `void` carrying 4 KB of padding: a few of them fill what a full disk's journal
    still has room for."""
    return {"type": "void", "pad": "p" * 4000}


def until_refused(post: Callable[[], httpx.Response], tries: int = 200) -> httpx.Response:
    """`post` until the station refuses it (the WAL has some room left in its last pages
    after the disk is full); the last answer."""
    answer = post()
    for _ in range(tries):
        if answer.status_code != 200:
            break
        answer = post()
    return answer
