"""Reader supervision: the card reader on a thread of its own, restarted when it drops out.

The reader thread reports through a `ReaderBridge` (the `drivers.base.TableViewSink` it
is given): each report hops onto the event loop and is queued for the writer like every
event. A reader may send only the vocabulary's reader events (the demo bot also deals and
supervises); anything else is journaled as a notice, never applied. A reader that crashes
is a `fault` (the table suspends) and is started again after `RESTART_DELAY`; one that
returns by itself is said in a notice and started again.

`CommittedView` is what the reader sees of the table: the latest committed snapshot and how
many of its own reports that snapshot includes, published together under one lock, so the
simulated dealer never acts twice on one state.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Any

from drivers.base import CardReader, TableViewSink
from drivers.sim.bot import SimReader
from station.core.bounds import clip
from station.core.events import DEMO_BOT_TYPES, READER_TYPES
from station.core.snapshot import TableSnapshot
from station.live.writer import DECIDE, Queued
from station.shared.rows import Pending, notice

log = logging.getLogger("station.live.service")

#: Seconds between a reader's crash (or return) and its next start.
RESTART_DELAY = 2.0


class CommittedView:
    """The latest committed table state and the reader's reports it includes (written by
    the writer, read by the reader thread: an immutable snapshot behind a condition)."""

    def __init__(self, snapshot: TableSnapshot) -> None:
        self.snapshot = snapshot
        self.reader_committed = 0  # the reader's reports committed (or refused)
        self.closing = False  # stopping or failed: no more commits will come
        #: Notified each time a snapshot is published, and when the station stops or fails.
        self.published = threading.Condition()

    def publish(self, snapshot: TableSnapshot, bridged: int) -> None:
        """A batch is committed: its snapshot and its count of the reader's reports."""
        with self.published:
            self.snapshot = snapshot
            self.reader_committed += bridged
            self.published.notify_all()

    def settle(self, bridged: int) -> None:
        """Reports refused (never committed): the reader must not wait for them."""
        if bridged:
            with self.published:
                self.reader_committed += bridged
                self.published.notify_all()

    def close(self) -> None:
        """No more commits: wake whoever waits."""
        with self.published:
            self.closing = True
            self.published.notify_all()


class ReaderBridge(TableViewSink):
    """The sink the reader thread talks to: a `drivers.base.TableViewSink` (it also offers
    the table's `view()` and waits for its events to be committed, for the sim bot)."""

    def __init__(
        self,
        view: CommittedView,
        loop: asyncio.AbstractEventLoop,
        name: str,
        take: Callable[[str, dict[str, Any]], None],
        put: Callable[[Queued], None],
    ) -> None:
        """`take`: an event from the reader, on the loop; `put`: a row for the writer."""
        self._view = view
        self._loop = loop
        self._name = name
        self._take = take
        self._put = put
        self.posted = 0  # written by the reader thread only

    def event(self, event: dict[str, Any]) -> None:
        self.posted += 1
        # Cut to the bounds every event keeps (a huge or odd `raw` must not cost the card).
        self._call(self._take, self._name, clip(event))

    def notice(self, message: str, /, **details: Any) -> None:
        self.posted += 1
        item = Queued(notice("reader", self._name, message, **clip(details)), bridged=True)
        self._call(self._put, item)

    def view(self) -> TableSnapshot:
        """The latest committed table state (thread-safe: an immutable value)."""
        return self._view.snapshot

    def settled(self, timeout: float) -> bool:
        """Wait until all this reader sent is committed, and so in `view()` (the sim dealer
        must not act twice on one state). The writer wakes us when it publishes; False on
        timeout, or at once when the station stops or fails."""
        view = self._view
        with view.published:
            view.published.wait_for(
                lambda: view.reader_committed >= self.posted or view.closing, timeout
            )
            return view.reader_committed >= self.posted

    def _call(self, fn: Callable[..., Any], *args: Any) -> None:
        try:
            self._loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:  # the loop is closed: the service has stopped
            log.error("reader %s: report after shutdown not journaled: %r", self._name, args)


class ReaderSupervisor:
    """The card reader of a station (or none): its thread, its reports, its status, and
    the commands the station sends to the shoe (the card stop on a suspension)."""

    def __init__(
        self,
        reader: CardReader | None,
        view: CommittedView,
        put: Callable[[Queued], None],
        stop_command: bytes,
        release_command: bytes,
    ) -> None:
        """`put`: a row for the writer; `stop_command`, `release_command`: the bytes
        sent to the shoe on a suspension and on a resume (empty: none)."""
        self.reader = reader
        self._view = view
        self._put = put
        self._commands = {"suspended": stop_command, "resumed": release_command}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self) -> None:
        """Run the reader on its thread (on the running loop's side)."""
        self._loop = asyncio.get_running_loop()
        reader = self.reader
        if reader is None:
            return
        bridge = self.bridge(reader.name)
        self._thread = threading.Thread(
            target=self._run, args=(reader, bridge), name=f"reader {reader.name}", daemon=True
        )
        self._thread.start()

    def bridge(self, name: str) -> ReaderBridge:
        """A sink for a reader named `name` (once started: its reports hop onto the loop)."""
        assert self._loop is not None
        return ReaderBridge(self._view, self._loop, name, self.take, self._put)

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    async def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            await asyncio.to_thread(self._thread.join, 5.0)

    def take(self, reader_name: str, event: dict[str, Any]) -> None:
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
            row = Pending("reader", actor, event, verdict=DECIDE)
        self._put(Queued(row, bridged=True))

    def status(self) -> dict[str, Any]:
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

    def to_shoe(self, what: str) -> None:
        """The shoe's card stop on a suspension, its release on a resume (sent off the
        loop; one not sent is journaled)."""
        data = self._commands.get(what)
        if data and self.reader is not None:
            loop = asyncio.get_running_loop()
            loop.run_in_executor(None, self._send, self.reader, data)

    def _send(self, reader: CardReader, data: bytes) -> None:
        try:
            sent = reader.send(data)
        except Exception as exc:
            sent = False
            log.error("shoe command %r failed: %s", data, exc)
        if not sent and self._loop is not None:  # journaled, then logged by the observer
            row = notice(
                "station", "station", "shoe command not sent", command=data.decode("latin-1")
            )
            self._loop.call_soon_threadsafe(self._put, Queued(row))

    def _run(self, reader: CardReader, bridge: ReaderBridge) -> None:
        """Keep the reader running: a crash is a `fault` (the table suspends), then retry."""
        stop = self._stop
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
            stop.wait(RESTART_DELAY)
