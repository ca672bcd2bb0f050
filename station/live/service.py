"""The live station: one writer between every source of events and every listener.

Events come from the reader thread (through `loop.call_soon_threadsafe`), from the API
and from the service itself (`restart` at start, `fault` when the reader crashes). They
all go on one queue. A single task, the writer, takes them off in order, asks the core
(`Table.apply`), commits the events and verdicts to the journal, and only then
publishes: the API's answer (a future), the WebSocket broadcast, the new snapshot, the
webhooks and the shoe's card stop; last, the log lines and metrics (`Observer`). Nothing
else changes table state, so there are no locks and the journal order is the truth.

The writer takes every event already waiting and commits them in one transaction
(group commit), so a burst costs one fsync. The commit runs on the event loop itself:
handing it to a thread measured slower at the tail (two GIL hand-offs per batch, see
`make bench`), and every answer waits for the commit anyway. Start-up work (opening and
replaying the journal) runs on a thread so the API can answer 503 meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from time import perf_counter
from typing import TYPE_CHECKING, Any

import orjson

from drivers.base import CardReader, TableViewSink
from drivers.config import parse_bytes
from drivers.sim.bot import SimReader
from station.core.bounds import clip
from station.core.events import DEMO_BOT_TYPES, READER_TYPES
from station.core.snapshot import TableSnapshot, take
from station.live.config import StationConfig
from station.live.journal import Journal, JournalUnavailable, JournalUnopenable, OutboxEntry
from station.live.observe import Observer, StationCollector
from station.live.protection.monitor import ProtectionMonitor
from station.live.signals import WebhookSender, suspended_fields, table_events
from station.shared.rows import Pending, Row, Unstorable, event_text, notice, now_ts

if TYPE_CHECKING:  # imported when a floor is configured (nats costs start-up time)
    from station.live.publisher.process import FloorProcess

log = logging.getLogger("station.live.service")

MAX_BATCH = 512
#: A WebSocket listener further behind than this many messages or bytes is closed (1013).
SUBSCRIBER_BACKLOG = 10_000
SUBSCRIBER_BACKLOG_BYTES = 16 * 1024 * 1024
TOO_FAR_BEHIND = "too far behind: reconnect with ?after=SEQ"
READER_RESTART_DELAY = 2.0
#: While the journal cannot be written, the writer tries again after this many seconds,
#: doubling up to `RETRY_MAX`.
RETRY_FIRST = 0.25
RETRY_MAX = 5.0


class NotReady(Exception):
    """The service is starting, stopping, failed, or its journal cannot be written now:
    the API answers 503."""


class Refused(Exception):
    """This one event cannot be journaled (it cannot be stored as JSON): the API answers
    422. The refusal is journaled as a notice; the rest of its batch commits."""


@dataclass(slots=True)
class _Outage:
    """A time the journal could not be written: since when, why, and what was refused,
    journaled as a notice when writing works again."""

    since: str
    reason: str
    refused: dict[str, int] = field(default_factory=dict)  # by source


#: What the fan-out sends of a batch: its rows, the snapshot after them, the reader's
#: status and the journal's (both read when the batch was committed).
_Published = tuple[list[Row], TableSnapshot, dict[str, Any], dict[str, Any]]


def published(
    snapshot: TableSnapshot, reader: dict[str, Any], journal: dict[str, Any]
) -> dict[str, Any]:
    """A `state` as `/api/state` and the WebSocket show it: the snapshot, with the reader's
    status and the journal's."""
    state = snapshot.to_dict()  # a fresh dict each time: ours to add to
    state["reader"], state["journal"] = reader, journal
    return state


@dataclass(slots=True)
class _Item:
    pending: Pending
    future: asyncio.Future[Row] | None = None
    bridged: bool = False  # sent by the reader thread (counted for `ReaderBridge.settled`)
    queued: float = field(default_factory=perf_counter)  # for the verdict latency metric


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


class ReaderBridge(TableViewSink):
    """The sink the reader thread talks to: a `drivers.base.TableViewSink` (it also offers
    the table's `view()` and waits for its events to be committed, for the sim bot)."""

    def __init__(self, station: Station, loop: asyncio.AbstractEventLoop, name: str) -> None:
        self._station = station
        self._loop = loop
        self._name = name
        self.posted = 0  # written by the reader thread only

    def event(self, event: dict[str, Any]) -> None:
        self.posted += 1
        # Cut to the bounds every event keeps (a huge or odd `raw` must not cost the card).
        self._call(self._station.reader_event, self._name, clip(event))

    def notice(self, message: str, /, **details: Any) -> None:
        self.posted += 1
        item = _Item(notice("reader", self._name, message, **clip(details)), bridged=True)
        self._call(self._station.put, item)

    def view(self) -> TableSnapshot:
        """The latest committed table state (thread-safe: an immutable value)."""
        return self._station.snapshot

    def settled(self, timeout: float) -> bool:
        """Wait until all this reader sent is committed, and so in `view()` (the sim dealer
        must not act twice on one state). The writer wakes us when it publishes; False on
        timeout, or at once when the station stops or fails."""
        station = self._station
        with station.published:
            station.published.wait_for(
                lambda: station.reader_committed >= self.posted or station.closing, timeout
            )
            return station.reader_committed >= self.posted

    def _call(self, fn: Callable[..., Any], *args: Any) -> None:
        try:
            self._loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:  # the loop is closed: the service has stopped
            log.error("reader %s: report after shutdown not journaled: %r", self._name, args)


class Station:
    """The service: start it in a running event loop, submit events, subscribe."""

    def __init__(self, config: StationConfig, reader: CardReader | None = None) -> None:
        self.config = config
        self.reader = reader
        self.table = config.table.new_table()
        self.journal: Journal | None = None
        self.ready = False
        self.fatal: str | None = None  # cannot go on (a foreign journal, a broken chain)
        #: Why the journal cannot be written now (disk full, read-only, file deleted), or
        #: None: events are refused meanwhile, and the writer recovers by itself.
        self.unavailable: str | None = None
        self._outage: _Outage | None = None
        self.on_fatal: Callable[[str], None] | None = None
        #: Called on the loop with a line for systemd's status when the journal becomes
        #: unavailable and when it is written again.
        self.on_status: Callable[[str], object] | None = None
        self.on_ready: Callable[[], None] | None = None  # called on the loop once ready
        #: Called (with what systemd's status should say) when the station serves but
        #: waits for a journal it cannot open yet (its disk full or read-only).
        self.on_waiting: Callable[[str], None] | None = None
        #: In subscription order (a dict: the first to subscribe is served first).
        self.subscribers: dict[Subscriber, None] = {}
        self.suspended_since: int | None = None
        self.reader_committed = 0  # rows from the reader committed (written by the writer)
        self.snapshot: TableSnapshot = take(self.table, 0, config.table.id, None)
        #: Notified (under its lock) each time the writer publishes a snapshot, and when
        #: the station stops or fails: what `ReaderBridge.settled` waits on.
        self.published = threading.Condition()
        self.webhooks = WebhookSender(
            config.signals, give_up=self._webhook_gave_up, settled=self._settled, owe=self._owe
        )
        #: Webhook events delivered since the last commit: (endpoint, id) pairs deleted
        #: from the outbox with the next commit (no disk write of their own).
        self._delivered: list[tuple[str, str]] = []
        #: Log lines and metrics of committed rows (`station.live.observe`).
        self.observer = Observer(
            config.table.id,
            StationCollector(
                self.reader_status if reader is not None else None,
                lambda: len(self.subscribers),
                self.webhooks.failures,
                config.journal.path,
            ),
        )
        #: The game-protection checks, fed each committed batch (`[protection]`).
        self.protection = ProtectionMonitor(self, NotReady) if config.protection.enabled else None
        self._queue: asyncio.Queue[_Item] = asyncio.Queue()
        self._writer: asyncio.Task[None] | None = None
        #: The writer's one hand-off per committed batch to the fan-out (None: stop); a
        #: batch of no rows: the journal cannot be written (its state says so).
        self._broadcasts: asyncio.Queue[_Published | None] = asyncio.Queue()
        self._fanout: asyncio.Task[None] | None = None
        self._disk = ThreadPoolExecutor(1, thread_name_prefix="journal")
        self._stop_reader = threading.Event()
        self._reader_thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        #: The floor publisher ([floor] url set), told of each commit; None: no floor.
        self.floor: FloorProcess | None = None

    # -- life cycle ----------------------------------------------------------------------

    async def start(self) -> None:
        """Open and replay the journal, journal `restart`, start the reader: then ready."""
        self._loop = asyncio.get_running_loop()
        cfg = self.config
        self.observer.serve(cfg.api.metrics_address)
        journal = await self._open_journal()
        waited, self._outage, self.unavailable = self._outage, None, None
        self.journal = journal
        await self._on_disk(journal.start, cfg.table.id, self.table)
        replayed = await self._on_disk(journal.replay_into, self.table)
        self.suspended_since = replayed.suspended_since
        if self.protection is not None:  # it reads the journal back to here on its thread
            self.protection.start(journal.last_seq)
        self.snapshot = take(
            self.table, journal.last_seq, cfg.table.id, self.suspended_since, self.snapshot
        )
        log.info(
            "journal %s: replayed %d events (last row %d)",
            cfg.journal.path,
            replayed.events,
            journal.last_seq,
        )
        self.webhooks.start()
        await self._send_owed(journal)
        self._start_floor()
        self._fanout = asyncio.create_task(self._fan_out(), name="fan-out")
        self._writer = asyncio.create_task(self._write_loop(), name="writer")
        # The restart row names the paytable in force from now on (the journal's record of
        # what the game server settled on; a new row here would renumber every later one).
        paytable = cfg.table.load_paytable().name
        restart = await self._journal_restart({"type": "restart", "paytable": paytable})
        if (
            restart is not None
            and self.table.suspension is not None
            and self.suspended_since != restart.seq
        ):
            # Suspended before the restart: notices still queued then died with the old
            # process, so say it again (the game server treats ids as idempotent).
            self._signal("suspended", restart)
        if waited is not None:  # after the restart row: the wait before it
            until = now_ts()
            self.post(
                notice(
                    "station",
                    "station",
                    "the journal could not be opened",
                    since=waited.since,
                    until=until,
                    reason=waited.reason,
                )
            )
            log.warning("the journal is open at last (row %d)", journal.last_seq)
        if self.reader is not None:
            self._start_reader(self.reader)
        self.ready = True
        if self.on_ready is not None:
            self.on_ready()

    async def _open_journal(self) -> Journal:
        """The journal, opened (created if new). A disk it cannot be opened on yet (full,
        read-only) is waited out as a running station waits out one it cannot write: the
        station serves, not ready, and says why (`/api/ready`, `/api/health`, systemd's
        status through `on_waiting`), tries again with backoff, and journals the wait once
        it can. Meanwhile no event is taken (not ready) and the reader is not started."""
        delay = RETRY_FIRST
        while True:
            try:
                journal: Journal = await self._on_disk(Journal, self.config.journal.path)
                return journal
            except JournalUnopenable as exc:
                message = str(exc)
                if self.unavailable != message:
                    log.error("%s; the station waits for it", message)
                    if self._outage is None:
                        self._outage = _Outage(now_ts(), message)
                    self.unavailable = message
                    if self.on_waiting is not None:
                        self.on_waiting(f"table {self.config.table.id}: NOT READY: {message}")
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETRY_MAX)

    async def _journal_restart(self, event: dict[str, Any]) -> Row | None:
        """Journal `restart`; None if the journal cannot be written already (the station
        still starts: the writer journals a `fault` once it can, which suspends the table
        just the same)."""
        try:
            restart = await self.submit(event, "station", "station")
        except NotReady:
            if self.unavailable is None:
                raise
            return None
        return restart  # the observer logs it, like every row that needs an operator

    def _start_floor(self) -> None:
        """The floor publisher in a process of its own ([floor] url set; none otherwise).
        It reads the committed journal itself; a notice it journals goes through the
        writer."""
        cfg, loop = self.config, self._loop
        if not cfg.floor.enabled or loop is None:
            return
        from station.live.publisher.process import FloorProcess
        from station.live.publisher.publisher import TableState

        def journal_notice(pending: Pending) -> None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: stopping
                loop.call_soon_threadsafe(self.post, pending)

        self.floor = FloorProcess(
            cfg.floor,
            cfg.table.id,
            cfg.journal.path,
            state=lambda: TableState.of(self.snapshot, self.unavailable),
            journal_notice=journal_notice,
        )
        self.floor.start()

    @property
    def closing(self) -> bool:
        """Stopping or failed: no more commits will come (waiters stop waiting)."""
        return self._stop_reader.is_set() or self.fatal is not None

    def _wake_readers(self) -> None:
        with self.published:
            self.published.notify_all()

    async def stop(self) -> None:
        self.ready = False
        self._stop_reader.set()
        self._wake_readers()
        if self._reader_thread is not None:
            await asyncio.to_thread(self._reader_thread.join, 5.0)
        if self.protection is not None:
            await self.protection.stop()
        if self._writer is not None:
            await self._drain()
            self._writer.cancel()
            await asyncio.gather(self._writer, return_exceptions=True)
        await self.webhooks.stop()
        if self.journal is not None and self._delivered:
            with contextlib.suppress(JournalUnavailable):  # then they are sent again
                await self._on_disk(self.journal.settle, self._delivered)
        if self.floor is not None:  # the last rows if the broker takes them now
            last = self.journal.last_seq if self.journal is not None else 0
            await asyncio.to_thread(self.floor.stop, last)
        if self._fanout is not None:  # after the writer: every committed batch goes out
            self._broadcasts.put_nowait(None)
            await self._fanout
        if self.journal is not None:
            await self._on_disk(self.journal.close)
        self._disk.shutdown(wait=True)
        self.observer.close()

    async def _drain(self) -> None:
        """Let the writer commit what is queued (bounded: a failed writer does not hang)."""
        for _ in range(100):
            if self._queue.empty() or self.fatal:
                return
            await asyncio.sleep(0.01)

    async def _on_disk(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._disk, fn, *args)

    # -- sources -------------------------------------------------------------------------

    async def submit(self, event: dict[str, Any], source: str, actor: str) -> Row:
        """Decide, commit and publish one event; returns its committed row."""
        if self.fatal is not None:
            raise NotReady(self.fatal)
        if self.unavailable is not None:
            self._count_refused(source)
            raise NotReady(self.unavailable)
        future: asyncio.Future[Row] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(_Item(Pending(source, actor, event, verdict=_DECIDE), future))
        return await future

    async def journal_notice(self, pending: Pending) -> Row:
        """Journal a notice of the station's own and wait until it is committed (for what
        is told only after it is journaled: a protection alert's webhook)."""
        if self.fatal is not None:
            raise NotReady(self.fatal)
        if self.unavailable is not None:
            raise NotReady(self.unavailable)
        future: asyncio.Future[Row] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(_Item(pending, future))
        return await future

    def post(self, pending: Pending) -> None:
        """Queue a row without waiting (notices of the service itself)."""
        self._queue.put_nowait(_Item(pending))

    def put(self, item: _Item) -> None:
        self._queue.put_nowait(item)

    def reader_event(self, reader_name: str, event: dict[str, Any]) -> None:
        """An event from the reader thread (called on the loop). A reader may send only the
        vocabulary's reader events; the demo bot (the `sim` driver) also deals and
        supervises."""
        kind = event.get("type")
        allowed = DEMO_BOT_TYPES if isinstance(self.reader, SimReader) else READER_TYPES
        if not isinstance(kind, str) or kind not in allowed:
            row = notice(
                "reader",
                reader_name,
                f"the reader sent a {kind!r} event, which a reader may not send; not applied",
                event=event,
            )
        else:
            actor = str(event.pop("actor", reader_name))
            row = Pending("reader", actor, event, verdict=_DECIDE)
        self.put(_Item(row, bridged=True))

    def reader_status(self) -> dict[str, Any]:
        if self.reader is None:
            return {"driver": "none", "connected": False, "detail": "no reader configured"}
        try:
            return dict(self.reader.status())
        except Exception as exc:  # a driver bug must not break /api/state
            return {
                "driver": getattr(self.reader, "name", "?"),
                "connected": False,
                "detail": f"status failed: {exc}",
            }

    def journal_status(self) -> dict[str, Any]:
        """Whether the journal can be written now; if not, why and since when. While it
        cannot, every event is refused (the shoe's cards too) and nothing is committed, so
        no row would tell a dashboard: its state does."""
        outage = self._outage
        if self.unavailable is None or outage is None:
            return {"writable": True}
        return {"writable": False, "detail": self.unavailable, "since": outage.since}

    def published_state(self) -> dict[str, Any]:
        """The state as the WebSocket and `/api/state` show it: the latest snapshot, the
        reader's status now (a cheap dict from the driver, no I/O), so the dashboard's
        reader field is live after every commit, a reader notice included, and the
        journal's."""
        return published(self.snapshot, self.reader_status(), self.journal_status())

    def subscribe(self) -> Subscriber:
        """A listener for every batch committed after the current snapshot (`sub.after`
        is its seq: the rows up to it are the listener's backfill, read from the journal).
        """
        sub = Subscriber(self.snapshot.seq, SUBSCRIBER_BACKLOG, SUBSCRIBER_BACKLOG_BYTES)
        self.subscribers[sub] = None
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        self.subscribers.pop(sub, None)

    async def _fan_out(self) -> None:
        """Serialize each committed batch once and queue it for every listener, without
        waiting for any: off the writer's path (it only hands the batch over)."""
        while True:
            batch = await self._broadcasts.get()
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
                self._tell_floor()
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
                self._tell_floor()

    def _tell_floor(self) -> None:
        """Wake the floor publisher (it reads the committed rows from the journal itself)
        once the batch is in the listeners' sockets: one byte down a pipe, the publisher's
        own work runs in its process. A wake lost (no fan-out) costs only delay: the
        publisher looks at the journal every few seconds anyway."""
        if self.floor is not None:
            self.floor.committed()

    # -- the writer ----------------------------------------------------------------------

    async def _write_loop(self) -> None:
        """Take batches off the queue and write them. A journal that cannot be written
        (`JournalUnavailable`) is waited out; anything else stops the station."""
        queue = self._queue
        while True:
            items = [await queue.get()]
            while len(items) < MAX_BATCH and not queue.empty():
                items.append(queue.get_nowait())
            try:
                try:
                    await self._write(items)
                except JournalUnavailable as exc:
                    self._journal_down(str(exc), items)
                    await self._until_written()
            except Exception as exc:
                log.exception("the writer failed")
                self._fail(f"the writer failed: {exc}", items)
                return

    def _journal_down(self, message: str, items: list[_Item]) -> None:
        """The batch was not committed: refuse it (503, never answered ok), say so."""
        changed = self.unavailable != message
        if changed:
            log.error("%s", message)
            if self.on_status is not None:
                self.on_status(f"table {self.config.table.id}: NOT READY: {message}")
        self.unavailable = message
        if self._outage is None:
            self._outage = _Outage(now_ts(), message)
        if changed:  # nothing is committed meanwhile: the dashboards hear it from a state
            self._broadcasts.put_nowait(
                ([], self.snapshot, self.reader_status(), self.journal_status())
            )
        self._refuse(items, message)

    def _count_refused(self, source: str) -> None:
        if self._outage is not None:
            self._outage.refused[source] = self._outage.refused.get(source, 0) + 1

    def _refuse(self, items: list[_Item], message: str) -> None:
        bridged = 0
        for item in items:
            self._count_refused(item.pending.source)
            bridged += item.bridged
            if item.future is not None and not item.future.done():
                item.future.set_exception(NotReady(message))
        if bridged:  # the reader must not wait for rows that never come
            with self.published:
                self.reader_committed += bridged
                self.published.notify_all()

    async def _until_written(self) -> None:
        """Refuse what comes while the journal cannot be written; try again with backoff
        until it can, then journal what happened (a notice, then a `fault`, so a table in
        play comes back suspended: cards may have come out unjournaled) and carry on."""
        delay = RETRY_FIRST
        while self.unavailable is not None:
            await self._refuse_for(delay)
            delay = min(delay * 2, RETRY_MAX)
            try:
                await self._recover()
            except JournalUnavailable as exc:
                self._journal_down(str(exc), [])

    async def _refuse_for(self, seconds: float) -> None:
        """Refuse what is queued, for `seconds` (polled: a refusal needs no hurry, and a
        `Queue.get` cancelled by a timeout could lose an item, and so an answer)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while True:
            while not self._queue.empty():
                assert self.unavailable is not None
                self._refuse([self._queue.get_nowait()], self.unavailable)
            left = deadline - loop.time()
            if left <= 0:
                return
            await asyncio.sleep(min(left, 0.05))

    async def _recover(self) -> None:
        """Commit again if the disk lets us: the table is rebuilt from the journal first
        (the failed batch was decided but never committed)."""
        journal, outage = self.journal, self._outage
        assert journal is not None and outage is not None
        await self._on_disk(journal.probe)
        await self._on_disk(journal.resync)
        table = self.config.table.new_table()
        replayed = await self._on_disk(journal.replay_into, table)
        self.table, self.suspended_since = table, replayed.suspended_since
        until = now_ts()
        gap = notice(
            "station",
            "station",
            "the journal could not be written",
            since=outage.since,
            until=until,
            reason=outage.reason,
            refused=dict(outage.refused),
        )
        detail = (
            f"the journal could not be written from {outage.since} to {until}; events "
            "were refused meanwhile and cards may have come out unjournaled: check the shoe"
        )
        fault = Pending("station", "station", {"type": "fault", "detail": detail}, _DECIDE)
        await self._write([_Item(gap), _Item(fault)])
        log.warning(
            "the journal is written again (row %d); a table in play is suspended",
            journal.last_seq,
        )
        self.unavailable = self._outage = None
        if self.on_status is not None:
            self.on_status(
                f"table {self.config.table.id}: ready, journal written again at row "
                f"{journal.last_seq} (a supervisor checks the shoe)"
            )

    async def _write(self, items: list[_Item]) -> None:
        table = self.table
        pendings: list[Pending] = []
        changes: list[tuple[int, str]] = []  # (index in batch, "suspended" | "resumed")
        signals: list[tuple[int, str, dict[str, Any]]] = []  # (index, type, fields)
        refusals: list[tuple[asyncio.Future[Row], str]] = []
        for i, item in enumerate(items):
            p = item.pending
            try:  # stored text first: a row that cannot be stored changes nothing
                text = event_text(p.event)
            except Unstorable as exc:
                item, p, text = self._unstorable(item, str(exc), refusals)
                items = [*items[:i], item, *items[i + 1 :]]
            if p.verdict is _DECIDE:
                was_in_play = table.in_play
                verdict, cleared, began = table.decide(p.event)
                p = Pending(p.source, p.actor, p.event, verdict, p.ts, text)
                if cleared:
                    changes.append((i, "resumed"))
                if began:
                    changes.append((i, "suspended"))
                # What the game server hears, read from the table as this event left it.
                for what, fields in table_events(
                    table, p.event, verdict, was_in_play, cleared, began
                ):
                    signals.append((i, what, fields))
            else:
                p = Pending(p.source, p.actor, p.event, p.verdict, p.ts, text)
            pendings.append(p)
        assert self.journal is not None
        owed: list[OutboxEntry] = []

        def outbox(rows: list[Row]) -> list[OutboxEntry]:
            for i, what, fields in signals:
                owed.extend(self.webhooks.entries(self._webhook_body(what, rows[i], fields)))
            return owed

        delivered, self._delivered = self._delivered, []
        try:  # durable when it returns (WAL, synchronous FULL), with the events it owes
            rows = self.journal.append(pendings, outbox if signals else None, delivered)
        except BaseException:
            self._delivered = delivered + self._delivered  # deleted with a later commit
            raise
        for future, message in refusals:  # the refusal is journaled: now say so
            if not future.done():
                future.set_exception(Refused(message))
        done = perf_counter()
        # Committed: now publish, in journal order.
        suspended_at = {i for i, what in changes if what == "suspended"}
        resumed_at = {i for i, what in changes if what == "resumed"}
        for i, row in enumerate(rows):
            if i in resumed_at:
                self.suspended_since = None
            if i in suspended_at:
                self.suspended_since = row.seq
        snapshot = take(
            table, rows[-1].seq, self.config.table.id, self.suspended_since, self.snapshot
        )
        bridged = 0
        for item, row in zip(items, rows, strict=True):
            bridged += item.bridged
            if item.future is not None and not item.future.done():
                item.future.set_result(row)
        with self.published:  # the new state and the reader's count together, then wake
            self.snapshot = snapshot
            self.reader_committed += bridged
            self.published.notify_all()
        if self.protection is not None:  # checked on its own thread, off this path
            self.protection.committed(rows)
        # The WebSocket broadcast: one hand-off (with the snapshot just published, so a
        # listener subscribing now gets exactly the batches after its snapshot, and the
        # reader's status read now).
        # The journal's status is "writable": this batch was just committed (even while
        # `unavailable` still names the outage it ends).
        self._broadcasts.put_nowait((rows, snapshot, self.reader_status(), {"writable": True}))
        self.webhooks.queue(owed)
        for _i, what, _fields in signals:
            self._to_shoe(what)
        self.observer.committed(items, rows, changes, done)  # log lines and metrics

    def _unstorable(
        self, item: _Item, reason: str, refusals: list[tuple[asyncio.Future[Row], str]]
    ) -> tuple[_Item, Pending, str]:
        """An event that cannot be stored: it is not applied; a notice saying so takes its
        place in the batch, and its sender is told once that notice is committed."""
        p = item.pending
        kind = p.event.get("type")
        gist = clip({"type": kind if isinstance(kind, str) else repr(kind)})["type"]
        what = "notice" if p.verdict is None else f"{gist!r} event"
        row = notice(p.source, p.actor, f"a {what} was refused: {reason}", event_type=gist)
        if item.future is not None:
            refusals.append(
                (
                    item.future,
                    f"the event was refused and not applied: {reason}; send it "
                    "with plain JSON values (strings, numbers within 64 bits, shallow objects)",
                )
            )
        log.error("%s from %s/%s refused: %s", what, p.source, p.actor, reason)
        return _Item(row, None, item.bridged, item.queued), row, event_text(row.event)

    def _fail(self, message: str, items: list[_Item]) -> None:
        """Something that cannot recover (a bug in the writer, a journal that is not ours
        or whose rows the rules no longer decide): the table may be ahead of the journal,
        so stop serving. A journal that cannot be written now is `_journal_down`."""
        log.critical("%s; the station stops (restart it to replay the journal)", message)
        self.fatal = message
        self.ready = False
        self._wake_readers()
        for item in items:
            if item.future is not None and not item.future.done():
                item.future.set_exception(NotReady(message))
        while not self._queue.empty():
            left = self._queue.get_nowait()
            if left.future is not None and not left.future.done():
                left.future.set_exception(NotReady(message))
        if self.on_fatal is not None:
            self.on_fatal(message)

    # -- signals out ---------------------------------------------------------------------

    def _signal(self, what: str, row: Row, fields: dict[str, Any] | None = None) -> None:
        """Tell the game server (owed in the outbox first) and the shoe of an event of a
        row already committed (a suspension announced again at start)."""
        self.webhooks.send(self._webhook_body(what, row, fields))
        self._to_shoe(what)

    def _webhook_body(
        self, what: str, row: Row, fields: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """The game server's body of an event of `row`. `fields`: the event's own fields,
        read from the table right after the row's event (`signals.table_events`); None:
        from the table now."""
        table_id = self.config.table.id
        if fields is None:  # a suspension announced again at start
            fields = suspended_fields(self.table, (row.verdict or {}).get("error"))
        body: dict[str, Any] = {
            "id": f"{table_id}:{row.seq}:{what}",
            "type": what,
            "table": table_id,
            "seq": row.seq,
            "ts": row.ts,
            "event": row.event,
            "source": row.source,
            "actor": row.actor,
            **fields,
        }
        if what in ("round_result", "round_voided", "shoe_started"):
            body["paytable"] = self.config.table.load_paytable().name
        return body

    def _to_shoe(self, what: str) -> None:
        """The shoe's card stop on a suspension, its release on a resume."""
        if what == "suspended":
            data = self.config.stop_command
        elif what == "resumed":
            data = parse_bytes(self.config.signals.release_command)
        else:
            return
        if data and self.reader is not None:
            loop = asyncio.get_running_loop()
            loop.run_in_executor(None, self._send_to_shoe, self.reader, data)

    # -- the webhook outbox --------------------------------------------------------------

    async def _send_owed(self, journal: Journal) -> None:
        """Queue the webhook events the last run did not deliver (its stop's grace ran
        out, or it died); those of an endpoint no longer configured are dropped, said."""
        owed = await self._on_disk(journal.owed)
        if not owed:
            return
        keys = self.webhooks.keys
        gone = [(key, event_id) for key, _seq, event_id, _body in owed if key not in keys]
        if gone:
            log.warning(
                "%d webhook event(s) owed to an endpoint no longer in [signals] are "
                "dropped (from %s)",
                len(gone),
                gone[0][1],
            )
            await self._on_disk(journal.settle, gone)
        owed = [entry for entry in owed if entry[0] in keys]
        if owed:
            log.warning(
                "%d webhook event(s) the last run did not deliver are sent again (from %s)",
                len(owed),
                owed[0][2],
            )
            self.webhooks.queue(owed)

    def _settled(self, endpoint: str, event_id: str) -> None:
        """An endpoint is done with an event: deleted from the outbox with the next
        commit."""
        self._delivered.append((endpoint, event_id))

    def _owe(self, entries: list[OutboxEntry]) -> None:
        """Events of rows already committed: into the outbox now (a synced write; rare)."""
        if self.journal is None:
            return
        try:
            self.journal.owe(entries)
        except JournalUnavailable as exc:  # still sent; only a crash before could lose it
            log.error("webhook events %s not recorded as owed: %s", entries[0][2], exc)

    def _send_to_shoe(self, reader: CardReader, data: bytes) -> None:
        try:
            sent = reader.send(data)
        except Exception as exc:
            sent = False
            log.error("shoe command %r failed: %s", data, exc)
        if not sent:  # journaled, then logged (a warning) by the observer
            loop = self._loop
            if loop is not None:
                row = notice(
                    "station", "station", "shoe command not sent", command=data.decode("latin-1")
                )
                loop.call_soon_threadsafe(self.post, row)

    def _webhook_gave_up(self, url: str, body: dict[str, Any], error: str) -> None:
        self.post(
            notice(
                "station",
                "station",
                "webhook gave up",
                url=url,
                notice_id=body.get("id"),
                error=error,
            )
        )

    # -- the reader thread ---------------------------------------------------------------

    def _start_reader(self, reader: CardReader) -> None:
        assert self._loop is not None
        bridge = ReaderBridge(self, self._loop, reader.name)
        self._reader_thread = threading.Thread(
            target=self._run_reader,
            args=(reader, bridge),
            name=f"reader {reader.name}",
            daemon=True,
        )
        self._reader_thread.start()

    def _run_reader(self, reader: CardReader, bridge: ReaderBridge) -> None:
        """Keep the reader running: a crash is a `fault` (the table suspends), then retry."""
        stop = self._stop_reader
        while not stop.is_set():
            try:
                reader.run(bridge, stop)
            except Exception as exc:
                log.exception("reader %s crashed", reader.name)
                bridge.event({"type": "fault", "detail": f"reader crashed: {exc!r}"})
            else:
                if stop.is_set():
                    return
                bridge.notice("the reader stopped by itself; starting it again")
            stop.wait(READER_RESTART_DELAY)


_DECIDE: Any = {"decide": True}  # marks a Pending whose verdict the writer must decide
