"""Helpers for driving real readers in tests: a collecting sink, a reader thread, a pty shoe."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from drivers.base import CardReader


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
