"""The fan-out: every committed batch to every WebSocket listener, without waiting for any.

The writer hands each committed batch over once (`publish`, a queue put); a task of its own
serializes it once (`Broadcast`) and queues the same bytes for every listener's bounded
queue (`Subscriber`). A listener that falls too far behind is dropped (1013), so a slow
dashboard costs neither the writer's time nor the station's memory. Once a batch of rows is
in the listeners' queues, `sent` is called (the floor publisher's wake).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from station.core.snapshot import TableSnapshot
from station.shared.rows import Row

log = logging.getLogger("station.live.service")

#: A WebSocket listener further behind than this many messages or bytes is closed (1013).
SUBSCRIBER_BACKLOG = 10_000
SUBSCRIBER_BACKLOG_BYTES = 16 * 1024 * 1024
TOO_FAR_BEHIND = "too far behind: reconnect with ?after=SEQ"

#: What the fan-out sends of a batch: its rows, the snapshot after them, the reader's
#: status and the journal's (both read when the batch was committed).
Published = tuple[list[Row], TableSnapshot, dict[str, Any], dict[str, Any]]


def published(
    snapshot: TableSnapshot, reader: dict[str, Any], journal: dict[str, Any]
) -> dict[str, Any]:
    """A `state` as `/api/state` and the WebSocket show it: the snapshot, with the reader's
    status and the journal's."""
    state = snapshot.to_dict()  # a fresh dict each time: ours to add to
    state["reader"], state["journal"] = reader, journal
    return state


@dataclass(frozen=True, slots=True)
class Broadcast:
    """One committed batch as every listener gets it: its `row` messages then one `state`
    (or a `state` alone: the journal cannot be written), serialized once by the fan-out
    and shared (not copied) by every subscriber's queue."""

    seq: int  # the batch's last row (a state alone: its snapshot's seq)
    messages: tuple[str, ...]
    #: The same messages as WebSocket text frames (RFC 6455, server to client: unmasked,
    #: uncompressed), identical for every client: one write per client sends the batch.
    frames: bytes
    size: int  # the messages' bytes (UTF-8), what a queue's byte bound counts
    #: False: a `state` alone, no rows (the journal cannot be written: every listener
    #: hears it, whatever seq it subscribed at).
    rows: bool = True

    @classmethod
    def of(cls, seq: int, messages: list[bytes], rows: bool = True) -> Broadcast:
        frames = b"".join(map(text_frame, messages))
        texts = tuple(m.decode() for m in messages)
        return cls(seq, texts, frames, sum(map(len, messages)), rows)


def text_frame(payload: bytes) -> bytes:
    """One final, unmasked WebSocket text frame (RFC 6455 section 5.2)."""
    n = len(payload)
    if n < 126:
        head = bytes((0x81, n))
    elif n < 1 << 16:
        head = bytes((0x81, 126)) + n.to_bytes(2, "big")
    else:
        head = bytes((0x81, 127)) + n.to_bytes(8, "big")
    return head + payload


class Subscriber:
    """One WebSocket listener's bounded queue. `put` never waits: a listener that falls
    more than `max_messages` messages or `max_bytes` bytes behind is dropped (its queue
    emptied, `closed` set to 1013), so a slow client costs neither the writer's time nor
    the station's memory (the batches are shared: a queue holds references). The
    WebSocket handler takes everything queued at once."""

    __slots__ = (
        "_wake",
        "after",
        "closed",
        "deliver",
        "max_bytes",
        "max_messages",
        "messages",
        "pending",
        "size",
    )

    def __init__(
        self,
        after: int,
        max_messages: int = SUBSCRIBER_BACKLOG,
        max_bytes: int = SUBSCRIBER_BACKLOG_BYTES,
    ) -> None:
        #: Rows up to this seq were committed before it subscribed (its backfill has them).
        self.after = after
        self.max_messages = max_messages
        self.max_bytes = max_bytes
        self.pending: list[Broadcast] = []
        self.messages = 0  # messages in `pending`
        self.size = 0  # their bytes
        #: (WebSocket close code, reason) once it must end; no more batches are queued.
        self.closed: tuple[int, str] | None = None
        #: Set by its handler: deliver a batch now if that needs no wait, else False.
        self.deliver: Callable[[Broadcast], bool] | None = None
        self._wake: asyncio.Future[None] | None = None

    def put(self, batch: Broadcast) -> None:
        # Rows it has (its backfill) are not sent again; a state alone is, unless it is of
        # a snapshot older than its own.
        stale = batch.seq <= self.after if batch.rows else batch.seq < self.after
        if self.closed is not None or stale:
            return
        # Its handler idle (waiting in `take`, holding nothing): hand the batch to the
        # client at once if that needs no wait, sparing a task switch per client.
        idle = self._wake is not None and not self.pending
        if idle and self.deliver is not None and self.deliver(batch):
            return
        if (
            self.messages + len(batch.messages) > self.max_messages
            or self.size + batch.size > self.max_bytes
        ):
            self.close(1013, TOO_FAR_BEHIND)
            return
        self.pending.append(batch)
        self.messages += len(batch.messages)
        self.size += batch.size
        self._set()

    def close(self, code: int, reason: str, *, drop: bool = True) -> None:
        """End it with `code`: at once (`drop`), or after what is queued (a stop)."""
        if self.closed is None:
            self.closed = (code, reason)
        if drop:
            self.pending, self.messages, self.size = [], 0, 0
        self._set()

    async def take(self) -> list[Broadcast]:
        """Wait for batches and take all queued; [] once closed (see `closed`)."""
        while not self.pending and self.closed is None:
            self._wake = asyncio.get_running_loop().create_future()
            try:
                await self._wake
            finally:
                self._wake = None
        batches, self.pending, self.messages, self.size = self.pending, [], 0, 0
        return batches

    def _set(self) -> None:
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)


class FanOut:
    """The listeners and the task that serves them, in subscription order (a dict: the
    first to subscribe is served first)."""

    def __init__(self, sent: Callable[[], None]) -> None:
        """`sent`: called once a batch of rows is in every listener's queue."""
        self.subscribers: dict[Subscriber, None] = {}
        self._sent = sent
        #: The writer's one hand-off per committed batch (None: stop); a batch of no rows:
        #: the journal cannot be written (its state says so).
        self._batches: asyncio.Queue[Published | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="fan-out")

    async def stop(self) -> None:
        """Send every batch handed over so far, then close every listener (1001)."""
        if self._task is not None:
            self._batches.put_nowait(None)
            await self._task

    def publish(
        self,
        rows: list[Row],
        snapshot: TableSnapshot,
        reader: dict[str, Any],
        journal: dict[str, Any],
    ) -> None:
        """A committed batch (or a state alone: `rows` empty), from the writer: one put."""
        self._batches.put_nowait((rows, snapshot, reader, journal))

    def subscribe(self, after: int) -> Subscriber:
        """A listener for every batch committed after row `after` (the rows up to it are
        the listener's backfill, read from the journal)."""
        sub = Subscriber(after, SUBSCRIBER_BACKLOG, SUBSCRIBER_BACKLOG_BYTES)
        self.subscribers[sub] = None
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        self.subscribers.pop(sub, None)

    async def _run(self) -> None:
        """Serialize each committed batch once and queue it for every listener, without
        waiting for any: off the writer's path (it only hands the batch over)."""
        while True:
            batch = await self._batches.get()
            if batch is None:
                for sub in list(self.subscribers):
                    sub.close(1001, "the station is stopping", drop=False)
                return
            rows, snapshot, reader, journal = batch
            try:
                parts = [orjson.dumps({"type": "row", **row.to_api()}) for row in rows]
                state = published(snapshot, reader, journal)
                parts.append(orjson.dumps({"type": "state", "state": state}))
                message = Broadcast.of(snapshot.seq, parts, rows=bool(rows))
            except Exception:  # a bug: no listener may miss these rows unknowingly
                first = snapshot.seq - len(rows) + 1
                log.exception(
                    "rows %d-%d (a state alone if none) not broadcast", first, snapshot.seq
                )
                for sub in list(self.subscribers):
                    sub.close(1011, "internal error: reconnect with ?after=SEQ", drop=False)
                    self.unsubscribe(sub)
                self._sent()
                continue
            for sub in list(self.subscribers):
                try:
                    sub.put(message)
                except Exception:  # one client's failure must not cost the others theirs
                    log.exception("a WebSocket listener failed; it is closed")
                    sub.close(1011, "internal error: reconnect with ?after=SEQ")
                if sub.closed is not None:  # e.g. too far behind: its handler closes it
                    self.unsubscribe(sub)
            if rows:
                self._sent()
