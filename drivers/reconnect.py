"""The reconnect loop every card reader shares: open, read until it fails, back off, reopen.

A reader device (a serial port, a camera) comes and goes: a shoe is unplugged, a USB hub
resets, a camera cable is knocked out. What the station does about it is the same for
every device, so it lives here once and a reader writes only its device code (how to
open, read and close it), as python-can's `BusABC` keeps the bus logic in the base and
each interface only its own:

- an outage is one `fault` event, however many reopens it takes;
- between attempts the wait doubles from `reconnect_min` up to `reconnect_max`, and
  starts again from `reconnect_min` once the device works;
- every step is a notice in the journal ("not open; retrying in N s", "reconnecting to …
  in N s", "reader reconnected to … after N s"), and once the wait is at its longest a
  device that keeps failing is journaled at most once a minute, not every few seconds
  for hours;
- `status()` fields every reader has: `connected`, `detail`, `faults`, `reconnects`.

When a device *works* is the reader's call (`_working`): an open serial port is a working
shoe (it may be quiet for minutes), while a camera that opens but delivers no frame is
still down.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar, Generic, TypeVar

from drivers.base import ReaderSink

#: Once the wait is at its longest, a device that keeps failing is journaled at most this
#: often (seconds).
RETRY_NOTICE_EVERY = 60.0

DeviceT = TypeVar("DeviceT")


class DeviceError(Exception):
    """The device cannot be opened; the message says why, in words for the journal."""


class ReconnectingReader(ABC, Generic[DeviceT]):
    """A card reader whose device is reopened with a doubling backoff whenever it fails.

    A subclass gives its device code (`_open`, `_read`, `_close`) and the words the
    journal names it by (`_device_name`, `_identity`, `_describe`, `reopening`); `run`
    and the shared `status` fields come from here.
    """

    #: The verb of the notice after a loss: "reconnecting to reader port …", "reopening
    #: camera …".
    reopening: ClassVar[str] = "reconnecting to"
    #: The clock of the downtime and of the once-a-minute reminder (a test may stub it).
    clock: Callable[[], float] = staticmethod(time.monotonic)

    def __init__(self, reconnect_min: float, reconnect_max: float) -> None:
        self.reconnect_min = reconnect_min
        self.reconnect_max = reconnect_max
        self._device_lock = threading.Lock()
        self._device: DeviceT | None = None
        self._detail = "not started"
        self.faults = 0
        self.reconnects = 0
        # The state of one run: the next wait, when the outage began (None: no outage),
        # whether the device ever worked, and when the last reminder at the longest wait
        # was journaled.
        self._delay = reconnect_min
        self._down_since: float | None = None
        self._worked = False
        self._last_reminder = -RETRY_NOTICE_EVERY

    # --- the device code a reader writes ---------------------------------------------------

    @abstractmethod
    def _open(self) -> DeviceT:
        """Open the device, or raise `DeviceError` saying why it cannot be."""

    @abstractmethod
    def _read(self, device: DeviceT, sink: ReaderSink, stop: threading.Event) -> str | None:
        """Read and report until `stop` is set or the device is done for good (None), or
        until it fails (what failed, in words). Call `_working` once it works."""

    @abstractmethod
    def _close(self, device: DeviceT) -> None:
        """Let the device go (after `_read`, whatever it returned or raised)."""

    @abstractmethod
    def _device_name(self) -> str:
        """The device in the journal's words: "reader port socket://…", "camera 0"."""

    @abstractmethod
    def _identity(self) -> dict[str, Any]:
        """The notice details that name the device (`url=…`, `camera=…`)."""

    @abstractmethod
    def _describe(self) -> str:
        """How the device is read, for the "open" notice and the status."""

    # --- the shared behaviour ----------------------------------------------------------------

    def run(self, sink: ReaderSink, stop: threading.Event) -> None:
        """Read until `stop` is set: every outage is one `fault`, then reopens with backoff."""
        self._delay = self.reconnect_min
        self._down_since = None
        self._worked = False
        self._last_reminder = -RETRY_NOTICE_EVERY
        opened = False
        name = self._device_name()
        while not stop.is_set():
            try:
                device = self._open()
            except DeviceError as exc:
                self._outage(sink, f"cannot open the {name}: {exc}")
                self._detail = f"cannot open the {name}: {exc}; retrying in {self._delay:g} s"
                self._retry(
                    sink, stop, f"{name} not open; retrying in {self._delay:g} s", error=str(exc)
                )
                continue
            with self._device_lock:
                self._device = device
            reading = f"reading from the {name} ({self._describe()})"
            self._detail = reading
            if not opened:
                opened = True
                sink.notice(
                    f"{name} open ({self._describe()})",
                    **self._identity(),
                    settings=self._describe(),
                )
            try:
                error = self._read(device, sink, stop)
            finally:
                with self._device_lock:
                    self._device = None
                self._close(device)
            if error is None:
                # Done: stopped while reading, or for good (a video that ended, whose
                # reader said so in its own words: they stay, even if stop came at once).
                if self._detail == reading:
                    self._detail = "stopped"
                if not stop.is_set():
                    stop.wait()
                return
            self._outage(sink, f"{name} lost: {error}")
            self._detail = f"lost: {error}; {self.reopening} it in {self._delay:g} s"
            self._retry(sink, stop, f"{self.reopening} {name} in {self._delay:g} s")
        self._detail = "stopped"

    def _working(self, sink: ReaderSink) -> None:
        """The device works: an outage (if any) is over, and the backoff starts afresh.
        Cheap when there is no outage, so a reader may call it for every frame."""
        if self._down_since is None:
            self._worked = True
            return
        if self._worked:
            self.reconnects += 1
            downtime = round(self.clock() - self._down_since, 3)
            sink.notice(
                f"reader reconnected to {self._device_name()} after {downtime:g} s",
                **self._identity(),
                downtime=downtime,
            )
        self._worked = True
        self._down_since = None
        self._delay = self.reconnect_min
        self._last_reminder = -RETRY_NOTICE_EVERY

    def _fault(self, sink: ReaderSink, detail: str) -> None:
        """A `fault` event from the reader (also for a reader's own device faults)."""
        self.faults += 1
        sink.event({"type": "fault", "detail": detail, "actor": "reader"})

    def _outage(self, sink: ReaderSink, detail: str) -> None:
        """The device failed: a `fault` if this starts an outage, nothing if one is on."""
        if self._down_since is None:
            self._down_since = self.clock()
            self._fault(sink, detail)

    def _retry(self, sink: ReaderSink, stop: threading.Event, message: str, **details: Any) -> None:
        """Journal the wait (at the longest wait, once a minute), wait, double the wait."""
        delay = self._delay
        at_longest = delay >= self.reconnect_max
        now = self.clock()
        if not at_longest or now - self._last_reminder >= RETRY_NOTICE_EVERY:
            if at_longest:
                self._last_reminder = now
            sink.notice(message, **self._identity(), **details, retry_in=delay)
        stop.wait(delay)
        self._delay = min(delay * 2, self.reconnect_max)

    def _link_status(self) -> dict[str, Any]:
        """The status fields every reader has, for its `status()`."""
        return {
            "connected": self._device is not None,
            "detail": self._detail,
            "faults": self.faults,
            "reconnects": self.reconnects,
        }
