"""When the journal's disk fails: what it means for the operator, and what the station can
still learn of its file.

A full or read-only disk is a state that passes once someone acts, so its message says
what to do; any other failure names the disk to check. Every "cannot be written" message
ends with `UNAVAILABLE_TAIL`: what was refused was never answered ok.

SQLite does not always say "full" of a full disk: a journal in WAL mode opened on one
fails with "disk I/O error" (it cannot size its `-shm` file), so an I/O error is taken
for a full disk when a small synced write beside the journal (`probe`) finds no room.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

from station.live.journal.errors import UNAVAILABLE_TAIL
from station.shared.rows import GENESIS

#: The size of the write `probe` tries: what the journal needs beyond a commit's own pages
#: (SQLite's `-shm` is 32 KiB).
PROBE_BYTES = 64 * 1024
#: SQLite's primary result codes that may hide a full disk: SQLITE_IOERR, SQLITE_CANTOPEN.
IO_ERRORS = (10, 14)


def unwritable(exc: BaseException, path: Path) -> str:
    """What a failed write of the journal at `path` means for the operator: what to do,
    and that nothing answered was lost (a failed commit leaves nothing half-written)."""
    what = disk_condition(exc, path)
    if what is None:
        what = f"{exc}; check the disk holding {path.resolve().parent}"
    return f"the journal cannot be written: {what} — {UNAVAILABLE_TAIL}"


def disk_condition(exc: BaseException, path: Path) -> str | None:
    """What to do if `exc` comes of a disk that is full or read-only (a state that passes
    once someone acts), in words; None for any other error."""
    folder = path.resolve().parent
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    err = getattr(exc, "errno", None)
    if primary == 13 or err in (errno.ENOSPC, errno.EDQUOT):  # SQLITE_FULL
        return f"disk full; free space on {folder}"
    if primary == 8 or err == errno.EROFS or _read_only(folder):  # SQLITE_READONLY
        return f"the disk is read-only; make {folder} writable again"
    if primary in IO_ERRORS and _full(path):
        return f"disk full; free space on {folder}"
    return None


def probe(path: Path) -> None:
    """Write `PROBE_BYTES` beside the journal at `path`, synced, then remove them: OSError
    (ENOSPC, EROFS, ...) if its disk cannot take them now."""
    probe = path.with_name(path.name + ".probe")
    fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        left = memoryview(bytes(PROBE_BYTES))
        while left:  # a nearly full disk takes part of a write, then refuses the rest
            left = left[os.write(fd, left) :]
        os.fsync(fd)
    finally:
        os.close(fd)
        os.unlink(probe)


def _full(path: Path) -> bool:
    """Whether the disk of the journal at `path` has no room for `probe`."""
    try:
        probe(path)
    except OSError as exc:
        return exc.errno in (errno.ENOSPC, errno.EDQUOT)
    return False


def _read_only(folder: Path) -> bool:
    """Whether `folder` is on a file system mounted read-only (SQLite then says only
    "unable to open database file" of a new journal)."""
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def last_row_of(path: Path) -> tuple[int, str] | None:
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


def held_open(path: Path) -> str | None:
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
