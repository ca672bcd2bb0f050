"""The floor publisher's process: `python -m station.live.publisher.worker CONTROL_FD WAKE_FD`.

Started by the station (`station.live.publisher.process.PublisherProcess`), never by hand. It
reads its settings from the control socket, runs one `Publisher`, wakes it at each byte
on the wake pipe, and sends the station its status, notices to journal, log lines,
questions for the table's state, and once what its first look at the stream found. It
ends when the station says `stop`, or when the control socket closes (the station is
gone). SIGINT and SIGTERM are the station's to act on (a Ctrl-C or a systemd stop reaches
the whole group): the station stops it after its last rows.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

import orjson

from station.live.children import ignore_sigint
from station.live.publisher.process import encode
from station.live.publisher.publisher import BURST_GAP, Publisher
from station.live.publisher.settings import FloorConfig, KeyFile
from station.live.publisher.state import PublisherStatus, TableState
from station.shared.rows import Pending
from station.shared.signing import SigningError, SigningKey

#: Seconds between two looks at the publisher's status (sent when it changed).
REPORT_EVERY = 0.1
#: Seconds the process takes at most to end once told to (after the rows' grace).
EXIT_WITHIN = 3.0
#: Seconds the station has to answer a question for the table's state.
ASK_TIMEOUT = 1.0


class _ToStation(logging.Handler):
    """Log records go to the station, which logs them as its own."""

    def __init__(self, worker: Worker) -> None:
        super().__init__()
        self.worker = worker
        self.setFormatter(logging.Formatter("%(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            entry = {"name": record.name, "level": record.levelno, "message": self.format(record)}
            self.worker.send("log", entry)
        except Exception:
            self.handleError(record)


class Worker:
    """One publisher and its link to the station."""

    def __init__(self, control: socket.socket, wake: int) -> None:
        self.control = control
        self.wake = wake
        self.publisher: Publisher | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.get_ident()  # the loop's
        self._answer: asyncio.Future[TableState] | None = None
        self._last_state = TableState()
        self._reported: tuple[Any, ...] = ()
        self._ended = False  # the wake pipe is no longer read

    def send(self, kind: str, body: Any) -> None:
        """To the station, in order (from any thread; dropped once the link is closed)."""
        writer, loop = self._writer, self._loop
        if writer is None or loop is None or loop.is_closed():
            return
        if threading.get_ident() == self._thread:
            _write(writer, encode(kind, body))
            return
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(_write, writer, encode(kind, body))

    async def run(self) -> int:
        self._loop = asyncio.get_running_loop()
        reader, self._writer = await asyncio.open_unix_connection(sock=self.control)
        first = await reader.readline()
        if not first:
            return 0  # the station went before it said anything
        start = orjson.loads(first)["start"]
        logging.getLogger().setLevel(int(start.get("level", logging.INFO)))
        logging.getLogger().addHandler(_ToStation(self))
        publisher = Publisher(
            FloorConfig.model_validate(start["config"]),
            str(start["table"]),
            Path(start["journal"]),
            state=self.ask_state,
            journal_notice=self.journal_notice,
            key=_key(start.get("key")),
        )
        publisher.on_status = self._status_changed
        publisher.on_checked = lambda sound, what: self.send("checked", {"ok": sound, "what": what})
        self.publisher = publisher
        os.set_blocking(self.wake, False)
        self._listen_for_commits()
        running = asyncio.create_task(publisher.run(), name="floor publisher")
        reporting = asyncio.create_task(self._report(), name="floor status")
        stop = await self._listen(reader)
        # Whatever the broker or the client does now, this process ends in time.
        grace = float(stop["grace"]) if stop is not None else 0.0
        ending = threading.Timer(grace + EXIT_WITHIN, os._exit, (0,))
        ending.daemon = True
        ending.start()
        if stop is not None:
            await self._finish(publisher, int(stop["until"]), float(stop["grace"]))
        for task in (running, reporting):
            task.cancel()
        await asyncio.gather(running, reporting, return_exceptions=True)
        self._ended = True
        self._loop.remove_reader(self.wake)
        self._report_once()
        with contextlib.suppress(OSError, ConnectionError):
            await self._writer.drain()
            self._writer.close()
        return 0

    def _woken(self) -> None:
        """A commit (a byte from the station). The pipe is then left unread for the
        publisher's burst gap: it sends a table's rows at most once a gap anyway, so a
        burst's commits wake this process once a gap, not once a row (the bytes wait in
        the pipe; the first after the gap wakes it at once)."""
        loop = self._loop
        try:
            data = os.read(self.wake, 4096)
        except BlockingIOError:
            return
        if loop is None:
            return
        loop.remove_reader(self.wake)
        if not data:  # the station closed its end
            return
        if self.publisher is not None:
            self.publisher.committed()
        loop.call_later(BURST_GAP, self._listen_for_commits)

    def _listen_for_commits(self) -> None:
        if self._loop is not None and not self._loop.is_closed() and not self._ended:
            self._loop.add_reader(self.wake, self._woken)

    async def _listen(self, reader: asyncio.StreamReader) -> dict[str, Any] | None:
        """The station's messages until `stop` (returned) or the link closes (None)."""
        while line := await reader.readline():
            try:
                message = orjson.loads(line)
            except orjson.JSONDecodeError:  # cut short: the station died while it wrote
                return None
            if "stop" in message:
                stop: dict[str, Any] = message["stop"]
                return stop
            if "state" in message:
                self._last_state = TableState.from_dict(message["state"])
                if self._answer is not None and not self._answer.done():
                    self._answer.set_result(self._last_state)
        return None

    async def ask_state(self) -> TableState:
        """The table's state now (for a heartbeat), or the last known if no answer."""
        loop = asyncio.get_running_loop()
        self._answer = loop.create_future()
        self.send("ask", "state")
        with contextlib.suppress(TimeoutError):
            return await asyncio.wait_for(self._answer, ASK_TIMEOUT)
        return self._last_state

    def journal_notice(self, pending: Pending) -> None:
        body = {
            "source": pending.source,
            "actor": pending.actor,
            "event": dict(pending.event),
            "ts": pending.ts,
        }
        self.send("notice", body)

    async def _report(self) -> None:
        while True:
            self._report_once()
            await asyncio.sleep(REPORT_EVERY)

    def _status_changed(self, status: PublisherStatus) -> None:
        """A new state (publishing, refused, ...) goes to the station at once; a new row
        count or detail waits for the next report, so a busy table costs the station at
        most `1 / REPORT_EVERY` messages a second."""
        if not self._reported or status.state != self._reported[0]:
            self._report_once()

    def _report_once(self) -> None:
        publisher = self.publisher
        if publisher is None:
            return
        status = publisher.status
        now = (status.state, publisher.published, status.detail)
        if now != self._reported:
            self._reported = now
            self.send("status", {"state": now[0], "published": now[1], "detail": now[2]})

    @staticmethod
    async def _finish(publisher: Publisher, until: int, grace: float) -> None:
        """Up to `grace` seconds for the rows up to `until`, if the broker takes them."""
        publisher.committed()  # the last wake may not have come: look at the journal now
        deadline = time.monotonic() + grace
        while publisher.published < until and time.monotonic() < deadline:
            if publisher.status.state != "publishing":
                return
            await asyncio.sleep(0.01)


def _key(where: dict[str, Any] | None) -> SigningKey | None:
    """The station's key, read here from where the station reads it; None (said in the
    log) if it has none or it cannot be read: heartbeats and alerts then go unsigned, and
    a floor that knows the table's key shows none of them."""
    if where is None:
        return None
    try:
        return KeyFile.from_dict(where).load()
    except SigningError as exc:
        logging.getLogger("station.live.floor").error(
            "floor: heartbeats and alerts go unsigned (the floor ignores them): %s", exc
        )
        return None


def _write(writer: asyncio.StreamWriter, data: bytes) -> None:
    if not writer.is_closing():
        writer.write(data)


def main(argv: list[str]) -> int:
    ignore_sigint()  # blocked until now (station.live.children.sigint_held)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    control = socket.socket(fileno=int(argv[1]))
    return asyncio.run(Worker(control, int(argv[2])).run())


if __name__ == "__main__":
    sys.exit(main(sys.argv))
