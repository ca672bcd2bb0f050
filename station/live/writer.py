"""The single writer: events off one queue, decided by the core, committed, then told.

A task takes every event already waiting (group commit: a burst costs one fsync), asks the
core (`Table.decide`), commits events and verdicts to the journal with the webhook events
they owe, and only then hands the batch on (`committed`). Nothing else changes table state,
so there are no locks and the journal order is the truth. The commit runs on the event loop
itself: handing it to a thread measured slower at the tail (two GIL hand-offs per batch,
see `make bench`), and every answer waits for the commit anyway.

A journal that cannot be written (disk full, read-only, the file deleted) is waited out:
what comes meanwhile is refused (503, never answered ok), the writer tries again with
backoff, and once a commit works it journals what happened (a notice, then a `fault`, so a
table in play comes back suspended: cards may have come out unjournaled). A journal that
cannot be opened at start is waited out the same way. Anything else (a bug, a journal that
is not ours) stops the station: `fatal`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from time import perf_counter
from typing import Any, Protocol

from station.core.bounds import clip
from station.core.snapshot import TableSnapshot, take
from station.core.table import Table
from station.live.errors import NotReady, Refused
from station.live.journal import Journal, JournalUnavailable, JournalUnopenable, OutboxEntry
from station.live.outbox import Signal
from station.live.signals import table_events
from station.shared.rows import Pending, Row, Unstorable, event_text, notice, now_ts

log = logging.getLogger("station.live.service")

MAX_BATCH = 512
#: While the journal cannot be written, the writer tries again after this many seconds,
#: doubling up to `RETRY_MAX`.
RETRY_FIRST = 0.25
RETRY_MAX = 5.0

DECIDE: Any = {"decide": True}  # marks a Pending whose verdict the writer must decide


@dataclass(slots=True)
class Queued:
    """One row waiting for the writer, and who waits for it."""

    pending: Pending
    future: asyncio.Future[Row] | None = None
    bridged: bool = False  # sent by the reader thread (counted for `ReaderBridge.settled`)
    queued: float = field(default_factory=perf_counter)  # for the verdict latency metric


@dataclass(slots=True)
class Outage:
    """A time the journal could not be written: since when, why, and what was refused,
    journaled as a notice when writing works again."""

    since: str
    reason: str
    refused: dict[str, int] = field(default_factory=dict)  # by source


class Owing(Protocol):
    """What the writer needs of the outbox (`station.live.outbox.Outbox`): the webhook
    events a batch owes, made inside its commit, and the delivered ones that commit
    deletes."""

    def entries(self, signals: list[Signal], rows: list[Row]) -> list[OutboxEntry]: ...

    def take_delivered(self) -> list[tuple[str, str]]: ...

    def keep_delivered(self, delivered: list[tuple[str, str]]) -> None: ...


@dataclass(frozen=True, slots=True)
class Commit:
    """A committed batch, as the writer hands it on."""

    items: list[Queued]
    rows: list[Row]
    snapshot: TableSnapshot
    changes: list[tuple[int, str]]  # (index in batch, "suspended" | "resumed")
    signals: list[Signal]  # the webhook events it owes, by row
    owed: list[OutboxEntry]  # those events' outbox entries (committed with the rows)
    bridged: int  # how many of its rows the reader thread sent
    done: float  # perf_counter() when the commit returned


class Writer:
    """The queue, the table it decides on, the journal it commits to, and the outage state.

    Whoever composes it gives the outbox and narrow callbacks: `committed` (a batch is on
    disk: publish it), `unwritable` (the journal cannot be written now: say so), `status`
    (a line for systemd), `refused` (how many reader reports were refused), `fatal` (it
    stopped)."""

    def __init__(
        self,
        table_id: str,
        new_table: Callable[[], Table],
        on_disk: Callable[..., Awaitable[Any]],
        outbox: Owing,
        committed: Callable[[Commit], None],
        unwritable: Callable[[], None],
        status: Callable[[str], None],
        refused: Callable[[int], None],
        fatal: Callable[[str], None],
    ) -> None:
        self.table_id = table_id
        self._new_table = new_table
        self.table = new_table()
        self.journal: Journal | None = None
        self.snapshot: TableSnapshot = take(self.table, 0, table_id, None)
        self.suspended_since: int | None = None
        self.fatal: str | None = None
        #: Why the journal cannot be written (or opened) now, or None.
        self.unavailable: str | None = None
        self.outage: Outage | None = None
        self._on_disk = on_disk
        self._outbox = outbox
        self._committed = committed
        self._unwritable = unwritable
        self._status = status
        self._refused = refused
        self._fatal = fatal
        #: A head anchor write is scheduled (`_anchor_later`).
        self._anchor_due = False
        self._queue: asyncio.Queue[Queued] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    # -- opening -------------------------------------------------------------------------

    async def open(self, path: Path, waiting: Callable[[str], None]) -> Outage | None:
        """Open the journal (created if new). A disk it cannot be opened on yet, or that
        has no room for its first rows (full, read-only), is waited out: `waiting` is told
        why (systemd's status), the writer tries again with backoff. Returns the wait, if
        there was one, to be journaled once the restart row is."""
        delay = RETRY_FIRST
        while True:
            try:
                journal = await self._on_disk(Journal, path)
                await self._on_disk(journal.check_room)
                self.journal = journal
                break
            except JournalUnopenable as exc:
                message = str(exc)
                if self.unavailable != message:
                    log.error("%s; the station waits for it", message)
                    if self.outage is None:
                        self.outage = Outage(now_ts(), message)
                    self.unavailable = message
                    waiting(f"table {self.table_id}: NOT READY: {message}")
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETRY_MAX)
        waited, self.outage, self.unavailable = self.outage, None, None
        return waited

    def replayed(self, suspended_since: int | None) -> None:
        """The journal was replayed into `table`: the snapshot to start from."""
        assert self.journal is not None
        self.suspended_since = suspended_since
        self.snapshot = take(
            self.table, self.journal.last_seq, self.table_id, suspended_since, self.snapshot
        )

    # -- sources -------------------------------------------------------------------------

    async def submit(self, event: dict[str, Any], source: str, actor: str) -> Row:
        """Decide, commit and publish one event; returns its committed row."""
        if self.fatal is not None:
            raise NotReady(self.fatal)
        if self.unavailable is not None:
            self._count_refused(source)
            raise NotReady(self.unavailable)
        future: asyncio.Future[Row] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(Queued(Pending(source, actor, event, verdict=DECIDE), future))
        return await future

    async def journal_notice(self, pending: Pending) -> Row:
        """Journal a notice of the station's own and wait until it is committed (for what
        is told only after it is journaled: a protection alert's webhook)."""
        if self.fatal is not None:
            raise NotReady(self.fatal)
        if self.unavailable is not None:
            raise NotReady(self.unavailable)
        future: asyncio.Future[Row] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(Queued(pending, future))
        return await future

    def put(self, item: Queued) -> None:
        """Queue a row without waiting (notices of the service itself, the reader's)."""
        self._queue.put_nowait(item)

    def journal_status(self) -> dict[str, Any]:
        """Whether the journal can be written now; if not, why and since when. While it
        cannot, every event is refused (the shoe's cards too) and nothing is committed, so
        no row would tell a dashboard: its state does."""
        outage = self.outage
        if self.unavailable is None or outage is None:
            return {"writable": True}
        return {"writable": False, "detail": self.unavailable, "since": outage.since}

    # -- life cycle ------------------------------------------------------------------------

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name="writer")

    async def stop(self) -> None:
        """Let the writer commit what is queued (bounded: a failed writer does not hang),
        then stop it."""
        if self._task is None:
            return
        for _ in range(100):
            if self._queue.empty() or self.fatal:
                break
            await asyncio.sleep(0.01)
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)

    async def _loop(self) -> None:
        """Take batches off the queue and write them. A journal that cannot be written
        (`JournalUnavailable`) is waited out; anything else stops the station."""
        queue = self._queue
        while True:
            items = [await queue.get()]
            while len(items) < MAX_BATCH and not queue.empty():
                items.append(queue.get_nowait())
            try:
                try:
                    self._write(items)
                except JournalUnavailable as exc:
                    self._down(str(exc), items)
                    await self._until_written()
            except Exception as exc:
                log.exception("the writer failed")
                self._fail(f"the writer failed: {exc}", items)
                return

    # -- a commit --------------------------------------------------------------------------

    def _write(self, items: list[Queued]) -> None:
        table = self.table
        pendings: list[Pending] = []
        changes: list[tuple[int, str]] = []
        signals: list[Signal] = []
        refusals: list[tuple[asyncio.Future[Row], str]] = []
        for i, item in enumerate(items):
            p = item.pending
            try:  # stored text first: a row that cannot be stored changes nothing
                text = event_text(p.event)
            except Unstorable as exc:
                item, p, text = _unstorable(item, str(exc), refusals)
                items = [*items[:i], item, *items[i + 1 :]]
            if p.verdict is DECIDE:
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
            owed.extend(self._outbox.entries(signals, rows))
            return owed

        delivered = self._outbox.take_delivered()
        try:  # durable when it returns (WAL, synchronous FULL), with the events it owes
            rows = self.journal.append(
                pendings, outbox if signals else None, delivered, anchor=False
            )
        except BaseException:
            self._outbox.keep_delivered(delivered)  # deleted with a later commit
            raise
        for future, message in refusals:  # the refusal is journaled: now say so
            if not future.done():
                future.set_exception(Refused(message))
        done = perf_counter()
        # Committed: now publish, in journal order.
        for i, what in changes:
            self.suspended_since = rows[i].seq if what == "suspended" else None
        self.snapshot = snapshot = take(
            table, rows[-1].seq, self.table_id, self.suspended_since, self.snapshot
        )
        bridged = 0
        for item, row in zip(items, rows, strict=True):
            bridged += item.bridged
            if item.future is not None and not item.future.done():
                item.future.set_result(row)
        self._committed(Commit(items, rows, snapshot, changes, signals, owed, bridged, done))
        self._anchor_later()

    def _anchor_later(self) -> None:
        """Rewrite the journal's head anchor at the event loop's next turn: after the
        fan-out, woken by `_committed`, has sent the batch (its encoding and signature are
        off a card's way to the dashboards, issue 36); one write for the commits of a turn.
        The anchor may lag the rows (a crash in between), never lead them."""
        if not self._anchor_due:
            self._anchor_due = True
            asyncio.get_running_loop().call_soon(self._write_anchor)

    def _write_anchor(self) -> None:
        self._anchor_due = False
        if self.journal is not None:
            self.journal.write_anchor()

    # -- when the journal cannot be written ------------------------------------------------

    def _down(self, message: str, items: list[Queued]) -> None:
        """The batch was not committed: refuse it (503, never answered ok), say so."""
        changed = self.unavailable != message
        if changed:
            log.error("%s", message)
            self._status(f"table {self.table_id}: NOT READY: {message}")
        self.unavailable = message
        if self.outage is None:
            self.outage = Outage(now_ts(), message)
        if changed:  # nothing is committed meanwhile: the dashboards hear it from a state
            self._unwritable()
        self._refuse(items, message)

    def _count_refused(self, source: str) -> None:
        if self.outage is not None:
            self.outage.refused[source] = self.outage.refused.get(source, 0) + 1

    def _refuse(self, items: list[Queued], message: str) -> None:
        bridged = 0
        for item in items:
            self._count_refused(item.pending.source)
            bridged += item.bridged
            if item.future is not None and not item.future.done():
                item.future.set_exception(NotReady(message))
        self._refused(bridged)  # the reader must not wait for rows that never come

    async def _until_written(self) -> None:
        """Refuse what comes while the journal cannot be written; try again with backoff
        until it can, then journal what happened and carry on."""
        delay = RETRY_FIRST
        while self.unavailable is not None:
            await self._refuse_for(delay)
            delay = min(delay * 2, RETRY_MAX)
            try:
                await self._recover()
            except JournalUnavailable as exc:
                self._down(str(exc), [])

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
        journal, outage = self.journal, self.outage
        assert journal is not None and outage is not None
        await self._on_disk(journal.probe)
        await self._on_disk(journal.resync)
        table = self._new_table()
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
        fault = Pending("station", "station", {"type": "fault", "detail": detail}, DECIDE)
        self._write([Queued(gap), Queued(fault)])
        log.warning(
            "the journal is written again (row %d); a table in play is suspended",
            journal.last_seq,
        )
        self.unavailable = self.outage = None
        self._status(
            f"table {self.table_id}: ready, journal written again at row "
            f"{journal.last_seq} (a supervisor checks the shoe)"
        )

    def _fail(self, message: str, items: list[Queued]) -> None:
        """Something that cannot recover (a bug in the writer, a journal that is not ours
        or whose rows the rules no longer decide): the table may be ahead of the journal,
        so stop serving. A journal that cannot be written now is `_down`."""
        log.critical("%s; the station stops (restart it to replay the journal)", message)
        self.fatal = message
        for item in items:
            if item.future is not None and not item.future.done():
                item.future.set_exception(NotReady(message))
        while not self._queue.empty():
            left = self._queue.get_nowait()
            if left.future is not None and not left.future.done():
                left.future.set_exception(NotReady(message))
        self._fatal(message)


def _unstorable(
    item: Queued, reason: str, refusals: list[tuple[asyncio.Future[Row], str]]
) -> tuple[Queued, Pending, str]:
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
    return Queued(row, None, item.bridged, item.queued), row, event_text(row.event)
