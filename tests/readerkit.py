"""Helpers for driving real readers in tests: a collecting sink, a reader thread, a pty shoe,
and a reader whose link a test switches off and on."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from drivers.base import CardReader, ReaderSink


class CollectingSink:
    """A `ReaderSink` that keeps everything, in arrival order, and lets a test wait for it."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.notices: list[tuple[str, dict[str, Any]]] = []
        self.log: list[tuple[str, Any]] = []  # ("event", dict) and ("notice", message)
        self._changed = threading.Condition()

    def event(self, event: dict[str, Any]) -> None:
        with self._changed:
            self.events.append(event)
            self.log.append(("event", event))
            self._changed.notify_all()

    def notice(self, message: str, /, **details: Any) -> None:
        with self._changed:
            self.notices.append((message, details))
            self.log.append(("notice", message))
            self._changed.notify_all()

    def wait_for(self, ready: Callable[[CollectingSink], bool], timeout: float = 10.0) -> None:
        """Block until `ready(self)`; fail the test with what arrived if it never is."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not ready(self):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out; events {self.events}, notices {self.notices}")
                self._changed.wait(left)

    def cards(self) -> list[str | None]:
        return [e["card"] for e in self.events if e["type"] == "card"]

    def types(self) -> list[str]:
        return [e["type"] for e in self.events]


class SwitchReader:
    """A card reader whose link the test switches, for what the station shows of a reader's
    status: `drop()` loses the link (only the status changes, as when a port has just died
    and nothing is journaled yet); `reconnect()` brings it back and journals the notice a
    real reader sends. It reads no cards."""

    name = "switch"

    def __init__(self) -> None:
        self.connected = True
        self._sink: ReaderSink | None = None
        self._running = threading.Event()

    def run(self, sink: ReaderSink, stop: threading.Event) -> None:
        self._sink = sink
        self._running.set()
        stop.wait()

    def status(self) -> dict[str, Any]:
        detail = "reading from the switch" if self.connected else "lost: the cable was pulled"
        return {"driver": self.name, "connected": self.connected, "detail": detail}

    def send(self, data: bytes) -> bool:
        return self.connected

    def drop(self) -> None:
        self.connected = False

    def reconnect(self) -> None:
        assert self._running.wait(5), "the station did not start the reader"
        assert self._sink is not None
        self.connected = True
        self._sink.notice("reader reconnected to the switch after 1 s", downtime=1.0)


def wait_until(ready: Callable[[], bool], timeout: float = 10.0, what: str = "") -> None:
    """Poll `ready` until it holds (for state that no sink call announces)."""
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or ready}")
        time.sleep(0.005)


@contextmanager
def running(reader: CardReader, sink: CollectingSink) -> Iterator[threading.Thread]:
    """Run `reader` in a thread for the duration of the block, then stop it and join."""
    stop = threading.Event()
    thread = threading.Thread(target=reader.run, args=(sink, stop), daemon=True)
    thread.start()
    try:
        yield thread
    finally:
        stop.set()
        thread.join(timeout=10)
        assert not thread.is_alive(), "the reader did not stop within 10 s of being told to"
