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
from drivers.reconnect import DeviceError, ReconnectingReader

#: How long one read blocks for the next byte: how soon `stop` and a quiet line are seen.
READ_TIMEOUT = 0.05
#: A write (the card-stop command) that cannot go out within this is given up.
WRITE_TIMEOUT = 1.0

PORT_ERRORS = (serial.SerialException, OSError)


class SerialReader(ReconnectingReader[serial.Serial]):
    """A shoe reader on a serial port; see the module docstring. The reconnect loop is
    `ReconnectingReader`'s; this is the port's own code."""

    name = "serial"

    def __init__(self, config: ReaderConfig) -> None:
        self.config = config
        super().__init__(config.reconnect_min, config.reconnect_max)
        self._decoder = FrameDecoder(config)
        self.frames = 0
        self.unreadable = 0

    def _open(self) -> serial.Serial:
        config = self.config
        try:
            return serial.serial_for_url(
                config.url,
                timeout=READ_TIMEOUT,
                write_timeout=WRITE_TIMEOUT,
                **config.serial_kwargs(),
            )
        except (*PORT_ERRORS, ValueError) as exc:
            raise DeviceError(str(exc)) from exc

    def _close(self, device: serial.Serial) -> None:
        device.close()

    def _device_name(self) -> str:
        return f"reader port {self.config.url}"

    def _identity(self) -> dict[str, Any]:
        return {"url": self.config.url}

    def status(self) -> dict[str, Any]:
        return {
            "driver": self.name,
            **self._link_status(),
            "url": self.config.url,
            "settings": self._describe(),
            "frames": self.frames,
            "unreadable": self.unreadable,
        }

    def send(self, data: bytes) -> bool:
        """Write `data` to the shoe (its card-stop command); False if the port is not open
        or the write failed (the read loop then sees the port fail too)."""
        with self._device_lock:
            port = self._device
            if port is None:
                return False
            try:
                port.write(data)
            except (*PORT_ERRORS, serial.SerialTimeoutException):
                return False
        return True

    def _read(self, port: serial.Serial, sink: ReaderSink, stop: threading.Event) -> str | None:
        """Pass frames on until `stop` (None) or the port fails (its error, in words)."""
        self._working(sink)  # an open port is a working shoe, however long it stays quiet
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
                sink.notice(
                    "over-long line continued (already reported as unreadable)",
                    raw=frame.raw.hex(),
                    detail=frame.problem,
                )
                continue
            self.frames += 1
            if event["type"] == "card" and event["card"] is None:
                self.unreadable += 1
            sink.event(event)

    def _describe(self) -> str:
        config = self.config
        return f"{config.line_settings()}, {config.framing} framing, codec {config.codec}"
