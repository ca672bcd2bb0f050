"""The WebSocket's catch-up from the journal (`WS /api/live?after=SEQ`), bounded in memory
per client and in clients at once.

Why: a viewer that opens the feed from row 0 is sent the whole journal. Read a thousand
rows at a time, with every client at once, 50 viewers of a journal of large rows took
the station from 0.8 to 3.4 GB, and its health check several seconds. So:

- a client's catch-up is read in pages of at most `PAGE_BYTES` of messages (or
  `PAGE_ROWS` rows), on a read-only connection of its own (the writer is never blocked,
  WAL), serialized off the event loop (each event as stored, not parsed); the next page
  is read only once the client's socket has taken the last (its buffer under the
  transport's high-water mark), so a client holds about one page in memory, whatever the
  journal's size;
- at most `[api] max_backfills` clients catch up at once (`Backfills`); the others wait
  their turn, first come first served, and past `[api] backfill_queue` of them waiting a
  new one is refused at the handshake (HTTP 503 with Retry-After). A client that does
  not catch up (`?after=` absent, or at the end) never waits.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import sqlite3
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson

from station.shared.rows import Row, row_of

#: A page of the catch-up: at most this many bytes of messages (a larger row goes alone)
#: and this many rows.
PAGE_BYTES = 1 << 20
PAGE_ROWS = 1000
#: Seconds a client refused for the waiting line is told to wait (`Retry-After`).
RETRY_AFTER = 5


class Backfills:
    """The station's catch-ups: at most `slots` at once, at most `queue` clients waiting
    for a turn, served in the order they came."""

    def __init__(self, slots: int, queue: int) -> None:
        self.slots = slots
        self.queue = queue
        self.running = 0
        self._line: deque[asyncio.Future[None]] = deque()

    @property
    def waiting(self) -> int:
        return len(self._line)

    @property
    def full(self) -> bool:
        """Whether a new client would find neither a turn nor a place in the line."""
        return self.running >= self.slots and len(self._line) >= self.queue

    async def enter(self) -> None:
        """Wait for a turn (then `leave` once done). Cancelled while waiting, the client
        leaves the line; cancelled just as its turn came, the turn passes on."""
        if self.running < self.slots and not self._line:
            self.running += 1
            return
        turn = asyncio.get_running_loop().create_future()
        self._line.append(turn)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self.leave()
            elif turn in self._line:
                self._line.remove(turn)
            raise

    def leave(self) -> None:
        """A catch-up is over: its turn goes to the first client waiting."""
        while self._line:
            turn = self._line.popleft()
            if not turn.done():
                turn.set_result(None)  # `running` unchanged: the turn changes hands
                return
        self.running -= 1

    async def turn_or_gone(self, *gone: asyncio.Future[None]) -> bool:
        """Wait for a turn, or for any of `gone` (the client left, its token was revoked):
        True with a turn (then `leave`), False without."""
        entering = asyncio.ensure_future(self.enter())
        await asyncio.wait({entering, *gone}, return_when=asyncio.FIRST_COMPLETED)
        if not entering.done():
            entering.cancel()
            await asyncio.gather(entering, return_exceptions=True)
        if entering.cancelled():
            return False
        if any(g.done() for g in gone):  # the turn came too late: pass it on
            self.leave()
            return False
        return True


def read_page(
    path: str | os.PathLike[str],
    after: int,
    upto: int,
    max_bytes: int = PAGE_BYTES,
    max_rows: int = PAGE_ROWS,
) -> tuple[list[bytes], int]:
    """The `row` messages (as the fan-out makes them) of the rows after `after` up to
    `upto`, as many as fit `max_bytes` and `max_rows` (at least one), and the last seq
    read. SQLite steps row by row, so no more is read than is sent."""
    uri = Path(path).resolve().as_uri() + "?mode=ro"
    db = sqlite3.connect(uri, uri=True)
    try:
        cursor = db.execute(
            "SELECT * FROM journal WHERE seq > ? AND seq <= ? ORDER BY seq", (after, upto)
        )
        messages: list[bytes] = []
        size, last = 0, after
        for record in cursor:
            row = _unparsed(record)
            message = orjson.dumps({"type": "row", **row.to_api()})
            messages.append(message)
            size += len(message)
            last = row.seq
            if size >= max_bytes or len(messages) >= max_rows:
                break
        cursor.close()
        return messages, last
    finally:
        db.close()


def _unparsed(record: tuple[Any, ...]) -> Row:
    """The row of a stored record with its event left as the stored JSON text (written
    into the message as it is, `orjson.Fragment`): an event is most of a row's bytes, and
    parsing it only to write it again held the interpreter from the event loop."""
    row = row_of((*record[:5], "null", *record[6:]))
    return dataclasses.replace(row, event=orjson.Fragment(record[5]))  # type: ignore[arg-type]


async def catch_up(
    path: str | os.PathLike[str],
    after: int,
    upto: int,
    ready: Callable[[], Awaitable[bool]],
    send: Callable[[list[bytes]], Awaitable[bool]],
) -> bool:
    """Send the rows after `after` up to `upto` in pages: each read (on a thread) once
    `ready` says the client took the last, then `send`. False if either says the client
    is not reading (or gone)."""
    while after < upto:
        if not await ready():
            return False
        messages, last = await asyncio.to_thread(read_page, path, after, upto)
        if not messages:
            return True
        if not await send(messages):
            return False
        after = last
    return True
