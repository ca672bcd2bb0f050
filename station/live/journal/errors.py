"""What the journal raises, each with a message saying what to do.

A journal that cannot be opened or continued stops the station (`JournalError`); one that
cannot be opened or written *now* (a full or read-only disk, the file deleted under the
station) is waited out (`JournalUnopenable`, `JournalUnavailable`).
"""

from __future__ import annotations

#: How every "cannot be written" message ends: what was refused was never answered ok.
UNAVAILABLE_TAIL = (
    "nothing answered was lost; events are refused meanwhile, and a table in play comes back "
    "suspended"
)


class JournalError(Exception):
    """The journal cannot be opened or continued; the message says what to do."""


class JournalUnopenable(JournalError):
    """The journal cannot be opened now for a reason that may pass (its disk is full or
    read-only): a station waits it out; a command stops, saying what to do."""


class JournalUnavailable(Exception):
    """The journal cannot be written now (disk full, read-only, an I/O error, the file
    deleted under the station): nothing of the failed commit is in it, and writing may
    work again later. The message says what to do."""
