"""The floor publisher in a process of its own, seen from the station.

Why a process: the publisher's work for a row (reading it back, JSON, the broker's
protocol) is Python, and in the station's process it would take the interpreter from the
writer and the WebSocket fan-out whenever cards come close together. In a process of its
own it runs on the other core and the station's only cost is one byte written to a pipe
per committed batch.

The station and the publisher (`station.live.publisher.worker`) talk over two channels:

- the wake pipe (station -> publisher): one byte per committed batch, written without
  blocking; a full pipe already holds a wake, so nothing is lost by dropping one;
- the control socket (both ways, one JSON object a line): the publisher's status, its
  journal notices (the station's writer journals them, as every row), its log lines (the
  station logs them, so they go where the station's own go), its questions for the
  table's state (for heartbeats), what its first look at the stream found (`checked`),
  and the station's answers and `stop`.

The publisher ends when the station stops it, or when its control socket closes (the
station died: nothing is left behind). If it ends on its own (a bug, or killed), the
station says so and starts it again; rows wait in the journal meanwhile.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from station.live.children import run_below_station, sigint_held
from station.live.publisher.settings import FloorConfig, KeyFile
from station.live.publisher.state import PublisherStatus, TableState
from station.shared.rows import Pending

log = logging.getLogger("station.live.floor")

#: The publisher's priority where SCHED_IDLE cannot be had (nice): below the station's.
NICE = 10
#: Seconds before a publisher that ended on its own is started again.
RESTART_AFTER = 2.0
#: Environment variables of the station's that are not the publisher's (systemd's: the
#: publisher must not notify systemd in the station's name).
NOT_INHERITED = ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID")


def encode(kind: str, body: Any) -> bytes:
    """One control message: a JSON object on a line of its own."""
    return orjson.dumps({kind: body}) + b"\n"


class PublisherProcess:
    """The station's handle on its publisher process: start it, wake it at each commit,
    read its status, stop it."""

    def __init__(
        self,
        config: FloorConfig,
        table: str,
        journal: Path,
        *,
        state: Callable[[], TableState],
        journal_notice: Callable[[Pending], None],
        key: KeyFile | None = None,
        checked: Callable[[bool, str], None] | None = None,
    ) -> None:
        """`checked`: told (from the link's thread) once per start of the process, when
        it first compared the stream's tail with the journal (`Publisher.on_checked`)."""
        self.config, self.table, self.journal = config, table, journal
        self.key = key
        self._checked = checked
        self._state = state
        self._journal_notice = journal_notice
        self._status = PublisherStatus("connecting", 0, "starting the publisher process")
        self._process: subprocess.Popen[bytes] | None = None
        self._control: socket.socket | None = None
        self._wake = -1  # the wake pipe's write end
        self._send_lock = threading.Lock()
        self._stopping = threading.Event()
        self._listener: threading.Thread | None = None

    @property
    def status(self) -> PublisherStatus:
        return self._status

    @property
    def pid(self) -> int | None:
        process = self._process
        return None if process is None else process.pid

    # -- the writer's side ---------------------------------------------------------------

    def committed(self) -> None:
        """Rows were committed: wake the publisher (never blocks the writer)."""
        with contextlib.suppress(BlockingIOError, BrokenPipeError, OSError):
            os.write(self._wake, b"w")

    # -- life cycle ----------------------------------------------------------------------

    def start(self) -> None:
        self._spawn()
        self._listener = threading.Thread(target=self._listen, name="floor link", daemon=True)
        self._listener.start()

    def _spawn(self) -> None:
        """Start the publisher process and give it its settings."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        wake_read, wake_write = os.pipe()
        os.set_blocking(wake_write, False)
        env = {k: v for k, v in os.environ.items() if k not in NOT_INHERITED}
        try:
            with sigint_held():  # the worker ignores SIGINT before it can come
                self._process = subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "station.live.publisher.worker",
                        str(theirs.fileno()),
                        str(wake_read),
                    ],
                    pass_fds=(theirs.fileno(), wake_read),
                    stdin=subprocess.DEVNULL,
                    env=env,
                )
        except OSError:
            ours.close()
            os.close(wake_write)
            raise
        finally:
            theirs.close()
            os.close(wake_read)
        yield_to_station(self._process.pid)
        old_wake, self._wake, self._control = self._wake, wake_write, ours
        if old_wake >= 0:
            with contextlib.suppress(OSError):
                os.close(old_wake)
        self._send(
            "start",
            {
                "config": self.config.model_dump(mode="json"),
                "table": self.table,
                "journal": str(self.journal),
                "key": None if self.key is None else self.key.to_dict(),
                "level": log.getEffectiveLevel(),
            },
        )

    def _send(self, kind: str, body: Any) -> None:
        control = self._control
        if control is None:
            return
        with self._send_lock, contextlib.suppress(OSError):
            control.sendall(encode(kind, body))

    def _listen(self) -> None:
        """Read the publisher's messages; start it again if it ends on its own."""
        while True:
            control, process = self._control, self._process
            assert control is not None and process is not None
            with control.makefile("rb") as lines:
                self._read(lines)
            code = process.wait()
            if self._stopping.is_set():
                return
            log.error(
                "floor: the publisher process ended (exit code %s); it starts again in "
                "%.0f s, rows wait in the journal",
                code,
                RESTART_AFTER,
            )
            self._status = PublisherStatus(
                "connecting", self._status.published, f"the publisher process ended ({code})"
            )
            if self._stopping.wait(RESTART_AFTER):
                return
            try:
                self._spawn()
            except OSError as exc:
                log.error("floor: cannot start the publisher process: %s", exc)
                if self._stopping.wait(RESTART_AFTER):
                    return

    def _read(self, lines: BinaryIO) -> None:
        for line in lines:
            try:
                message = orjson.loads(line)
                self._handle(message)
            except Exception:  # a bug in one message must not end the link
                log.exception("floor: an unreadable message from the publisher: %r", line[:200])

    def _handle(self, message: dict[str, Any]) -> None:
        if "status" in message:
            s = message["status"]
            self._status = PublisherStatus(str(s["state"]), int(s["published"]), str(s["detail"]))
        elif "ask" in message:
            self._send("state", self._state().to_dict())
        elif "notice" in message:
            n = message["notice"]
            self._journal_notice(Pending(n["source"], n["actor"], n["event"], ts=n["ts"]))
        elif "checked" in message:
            c = message["checked"]
            if self._checked is not None:
                self._checked(bool(c["ok"]), str(c["what"]))
        elif "log" in message:
            entry = message["log"]
            logging.getLogger(entry["name"]).log(int(entry["level"]), "%s", entry["message"])

    def stop(self, until: int = 0, grace: float = 1.0, timeout: float = 3.0) -> None:
        """Stop it (blocking: call it off the event loop), after at most `grace` seconds
        to send the rows up to `until` if the broker takes them now; the rest wait in the
        journal for the next start."""
        self._stopping.set()
        process = self._process
        self._send("stop", {"until": until, "grace": grace})
        if process is not None:
            try:
                process.wait(grace + timeout)
            except subprocess.TimeoutExpired:
                log.warning("floor: the publisher process did not stop in time; killed")
                process.kill()
                process.wait()
        control = self._control
        if control is not None:  # ends the listener's read
            with contextlib.suppress(OSError):
                control.shutdown(socket.SHUT_RDWR)
        if self._listener is not None:
            self._listener.join(timeout)
        if control is not None:
            control.close()
        if self._wake >= 0:
            with contextlib.suppress(OSError):
                os.close(self._wake)
            self._wake = -1
        self._status = PublisherStatus("stopped", self._status.published, "the station is stopping")


def yield_to_station(pid: int) -> None:
    """Let process `pid` run only on the CPU the station leaves over (SCHED_IDLE), or
    else at a lower nice; set from here as it starts, so even its imports wait.

    When the dealer PC's cores are busy the station's work goes first: a card's verdict
    waits for no row sent to the floor, and the rows wait in the journal (a floor's
    delay, never a loss). At the station's priority the publisher moved the station's
    p99 more when cards came back to back (docs/BENCHMARKS.md, "the station's p99 with
    its floor, measured in one station"). The log says so if neither can be had."""
    run_below_station(pid, NICE, "floor: the publisher process", log, idle=True)
