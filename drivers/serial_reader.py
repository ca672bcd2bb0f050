"""The serial shoe reader: any pyserial URL, `line` or `stx-etx` framing, a card codec.

It runs in a thread of its own (pyserial blocks) and keeps reading until told to stop:
a lost port or a read error is a `fault` event, then it reopens the port with a
doubling backoff and says each step in the journal, so a shoe unplugged and plugged back
in needs nobody at the station. Reads take whatever the port holds (`in_waiting`) and
block for the next byte with a short timeout, so a frame is passed on as soon as its
last byte is in, with no polling sleep in between.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import Any

import serial

from drivers.base import ReaderSink
from drivers.config import ReaderConfig
from drivers.decoding import FrameDecoder
from drivers.framing import Frame, make_framer

#: How long one read blocks for the next byte: how soon `stop` and a quiet line are seen.
READ_TIMEOUT = 0.05
#: A write (the card-stop command) that cannot go out within this is given up.
WRITE_TIMEOUT = 1.0

#: Once the backoff is at its longest, a failed reopen is journaled at most this often.
RETRY_NOTICE_EVERY = 60.0

PORT_ERRORS = (serial.SerialException, OSError)


class SerialReader:
    """A shoe reader on a serial port; see the module docstring."""

    name = "serial"

    def __init__(self, config: ReaderConfig) -> None:
        self.config = config
        self._decoder = FrameDecoder(config)
        self._port_lock = threading.Lock()
        self._port: serial.Serial | None = None
        self._detail = "not started"
        self.frames = 0
        self.unreadable = 0
        self.faults = 0
        self.reconnects = 0

    def run(self, sink: ReaderSink, stop: threading.Event) -> None:
        """Read until `stop` is set; every lost port is a `fault`, then a reconnect."""
        config = self.config
        delay = config.reconnect_min
        down_since: float | None = None  # when the port was lost (fault already sent)
        ever_open = False
        last_retry_notice = -RETRY_NOTICE_EVERY
        while not stop.is_set():
            try:
                port = serial.serial_for_url(
                    config.url, timeout=READ_TIMEOUT, write_timeout=WRITE_TIMEOUT,
                    **config.serial_kwargs(),
                )  # fmt: skip
            except (*PORT_ERRORS, ValueError) as exc:
                if down_since is None:
                    down_since = time.monotonic()
                    self._fault(sink, f"cannot open the reader port {config.url}: {exc}")
                self._detail = f"cannot open {config.url}: {exc}; retrying in {delay:g} s"
                now = time.monotonic()
                at_max = delay >= config.reconnect_max
                if not at_max or now - last_retry_notice >= RETRY_NOTICE_EVERY:
                    if at_max:
                        last_retry_notice = now
                    sink.notice(f"reader port {config.url} not open; retrying in {delay:g} s",
                                url=config.url, error=str(exc), retry_in=delay)  # fmt: skip
                stop.wait(delay)
                delay = min(delay * 2, config.reconnect_max)
                continue
            delay = config.reconnect_min
            last_retry_notice = -RETRY_NOTICE_EVERY
            self._set_port(port)
            if ever_open and down_since is not None:  # back after a loss
                self.reconnects += 1
                downtime = round(time.monotonic() - down_since, 3)
                sink.notice(f"reader reconnected on {config.url} after {downtime:g} s",
                            url=config.url, downtime=downtime)  # fmt: skip
            else:
                sink.notice(f"reader port {config.url} open ({self._describe()})",
                            url=config.url, settings=self._describe())  # fmt: skip
            ever_open = True
            down_since = None
            try:
                error = self._read(port, sink, stop)
            finally:
                self._set_port(None)
                port.close()
            if error is None:
                break
            down_since = time.monotonic()
            self._fault(sink, f"reader port {config.url} lost: {error}")
            sink.notice(f"reconnecting to {config.url} in {delay:g} s",
                        url=config.url, retry_in=delay)  # fmt: skip
            self._detail = f"lost: {error}; reconnecting"
            stop.wait(delay)
            delay = min(delay * 2, config.reconnect_max)
        self._detail = "stopped"

    def status(self) -> dict[str, Any]:
        return {
            "driver": self.name,
            "connected": self._port is not None,
            "detail": self._detail,
            "url": self.config.url,
            "settings": self._describe(),
            "frames": self.frames,
            "unreadable": self.unreadable,
            "faults": self.faults,
            "reconnects": self.reconnects,
        }

    def send(self, data: bytes) -> bool:
        """Write `data` to the shoe (its card-stop command); False if the port is not open
        or the write failed (the read loop then sees the port fail too)."""
        with self._port_lock:
            port = self._port
            if port is None:
                return False
            try:
                port.write(data)
            except (*PORT_ERRORS, serial.SerialTimeoutException):
                return False
        return True

    def _read(self, port: serial.Serial, sink: ReaderSink, stop: threading.Event) -> str | None:
        """Pass frames on until `stop` (None) or the port fails (its error, in words)."""
        framer = make_framer(self.config.framing, self.config.max_frame)
        quiet_after = self.config.frame_timeout
        monotonic = time.monotonic
        last_byte = monotonic()
        try:
            while not stop.is_set():
                data = port.read(port.in_waiting or 1)
                if data:
                    last_byte = monotonic()
                    self._deliver(framer.feed(data), sink)
                elif framer.pending and monotonic() - last_byte >= quiet_after:
                    self._deliver(framer.flush("the line went quiet"), sink)
        except PORT_ERRORS as exc:
            self._deliver(framer.flush("the port was lost"), sink)
            return str(exc) or type(exc).__name__
        self._deliver(framer.flush("the reader stopped"), sink)
        return None

    def _deliver(self, frames: Iterable[Frame], sink: ReaderSink) -> None:
        for frame in frames:
            event = self._decoder.event(frame)
            if event is None:
                sink.notice("over-long line continued (already reported as unreadable)",
                            raw=frame.raw.hex(), detail=frame.problem)  # fmt: skip
                continue
            self.frames += 1
            if event["type"] == "card" and event["card"] is None:
                self.unreadable += 1
            sink.event(event)

    def _fault(self, sink: ReaderSink, detail: str) -> None:
        self.faults += 1
        sink.event({"type": "fault", "detail": detail, "actor": "reader"})

    def _set_port(self, port: serial.Serial | None) -> None:
        with self._port_lock:
            self._port = port
        if port is not None:
            self._detail = f"reading {self.config.url} ({self._describe()})"

    def _describe(self) -> str:
        config = self.config
        return f"{config.line_settings()}, {config.framing} framing, codec {config.codec}"
