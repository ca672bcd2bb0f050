"""The shared reconnect loop (`drivers.reconnect.ReconnectingReader`) with a scripted fake
device, a stop event whose waits are recorded and a clock that only the waits move: the
exact events, notices and backoff values, with no sleeping."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from drivers.base import ReaderSink
from drivers.reconnect import DeviceError, ReconnectingReader
from tests.readerkit import CollectingSink

#: What a scripted `_read` does: None (stopped), or a failure in words.
Step = Callable[["FakeReader", ReaderSink, threading.Event], str | None]


class FakeStop(threading.Event):
    """A stop event whose timed waits return at once, move the fake clock and are recorded;
    `stop_after` sets it on that many-th wait (the operator stops the station meanwhile)."""

    def __init__(self, stop_after: int | None = None) -> None:
        super().__init__()
        self.now = 1000.0
        self.waits: list[float | None] = []
        self.stop_after = stop_after

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(timeout)
        if timeout is None or len(self.waits) == self.stop_after:
            self.set()
        else:
            self.now += timeout
        return self.is_set()


class FakeReader(ReconnectingReader[str]):
    """A scripted device: each open fails or not as `fail_opens` says (then it opens), and
    each successful open reads with the next of `reads`."""

    def __init__(
        self,
        stop: FakeStop,
        fail_opens: list[bool],
        reads: list[Step],
        reconnect_min: float = 1.0,
        reconnect_max: float = 8.0,
    ) -> None:
        super().__init__(reconnect_min, reconnect_max)
        self.clock = lambda: stop.now
        self.fail_opens = list(fail_opens)
        self.reads = list(reads)
        self.closed = 0

    def _open(self) -> str:
        if self.fail_opens and self.fail_opens.pop(0):
            raise DeviceError("no such device")
        return "handle"

    def _read(self, device: str, sink: ReaderSink, stop: threading.Event) -> str | None:
        assert device == "handle" and self.status()["connected"]
        return self.reads.pop(0)(self, sink, stop)

    def _close(self, device: str) -> None:
        self.closed += 1

    def _device_name(self) -> str:
        return "shoe 7"

    def _identity(self) -> dict[str, Any]:
        return {"shoe": 7}

    def _describe(self) -> str:
        return "fake"

    def status(self) -> dict[str, Any]:
        return {"driver": "fake", **self._link_status()}

    def send(self, data: bytes) -> bool:
        return False


#: The details of a "not open" notice, but for its wait.
NO_DEVICE = {"shoe": 7, "error": "no such device"}


def works_until_stopped(reader: FakeReader, sink: ReaderSink, stop: threading.Event) -> None:
    reader._working(sink)
    stop.set()


def works_then_fails(reader: FakeReader, sink: ReaderSink, stop: threading.Event) -> str:
    reader._working(sink)
    sink.event({"type": "card", "card": "AS"})
    return "cable pulled"


def opens_but_fails(reader: FakeReader, sink: ReaderSink, stop: threading.Event) -> str:
    return "no frame"


def log(sink: CollectingSink) -> list[tuple[str, Any]]:
    """Events as (type, detail or card), notices as (message, details)."""
    out: list[tuple[str, Any]] = []
    notices = iter(sink.notices)
    for kind, item in sink.log:
        if kind == "event":
            out.append((item["type"], item.get("detail", item.get("card"))))
        else:
            out.append(next(notices))
    return out


def run(reader: FakeReader, stop: FakeStop) -> CollectingSink:
    sink = CollectingSink()
    reader.run(sink, stop)
    return sink


def test_fails_to_open_twice_then_works_is_one_fault_with_a_doubling_wait() -> None:
    stop = FakeStop()
    reader = FakeReader(stop, [True, True], [works_until_stopped])
    sink = run(reader, stop)
    assert log(sink) == [
        ("fault", "cannot open the shoe 7: no such device"),
        ("shoe 7 not open; retrying in 1 s", {**NO_DEVICE, "retry_in": 1.0}),
        ("shoe 7 not open; retrying in 2 s", {**NO_DEVICE, "retry_in": 2.0}),
        ("shoe 7 open (fake)", {"shoe": 7, "settings": "fake"}),
    ]
    assert sink.events[0]["actor"] == "reader"
    assert stop.waits == [1.0, 2.0]
    # the first open after a failed start is not a reconnection: it never worked before
    assert reader.status() == {
        "driver": "fake",
        "connected": False,
        "detail": "stopped",
        "faults": 1,
        "reconnects": 0,
    }
    assert reader.closed == 1


def test_a_failure_mid_read_is_a_fault_then_a_reconnection_with_its_downtime() -> None:
    stop = FakeStop()
    reader = FakeReader(stop, [False, True, False], [works_then_fails, works_until_stopped])
    sink = run(reader, stop)
    assert log(sink) == [
        ("shoe 7 open (fake)", {"shoe": 7, "settings": "fake"}),
        ("card", "AS"),
        ("fault", "shoe 7 lost: cable pulled"),
        ("reconnecting to shoe 7 in 1 s", {"shoe": 7, "retry_in": 1.0}),
        # the reopen fails: the same outage, no second fault, the wait doubles
        ("shoe 7 not open; retrying in 2 s", {**NO_DEVICE, "retry_in": 2.0}),
        ("reader reconnected to shoe 7 after 3 s", {"shoe": 7, "downtime": 3.0}),
    ]
    assert stop.waits == [1.0, 2.0]
    status = reader.status()
    assert (status["faults"], status["reconnects"], status["detail"]) == (1, 1, "stopped")


def test_the_next_outage_starts_the_backoff_afresh() -> None:
    stop = FakeStop()
    reader = FakeReader(
        stop,
        [False, True, True, False, False],
        [works_then_fails, works_then_fails, works_until_stopped],
    )
    sink = run(reader, stop)
    assert stop.waits == [1.0, 2.0, 4.0, 1.0]
    assert [e["detail"] for e in sink.events if e["type"] == "fault"] == [
        "shoe 7 lost: cable pulled",
        "shoe 7 lost: cable pulled",
    ]
    assert reader.status()["reconnects"] == 2


def test_a_device_that_opens_but_never_works_is_one_outage_and_keeps_backing_off() -> None:
    stop = FakeStop(stop_after=4)
    reader = FakeReader(stop, [], [opens_but_fails] * 4)
    sink = run(reader, stop)
    assert log(sink) == [
        ("shoe 7 open (fake)", {"shoe": 7, "settings": "fake"}),  # said once, not per reopen
        ("fault", "shoe 7 lost: no frame"),
        ("reconnecting to shoe 7 in 1 s", {"shoe": 7, "retry_in": 1.0}),
        ("reconnecting to shoe 7 in 2 s", {"shoe": 7, "retry_in": 2.0}),
        ("reconnecting to shoe 7 in 4 s", {"shoe": 7, "retry_in": 4.0}),
        ("reconnecting to shoe 7 in 8 s", {"shoe": 7, "retry_in": 8.0}),
    ]
    assert stop.waits == [1.0, 2.0, 4.0, 8.0]
    assert reader.status()["reconnects"] == 0 and reader.closed == 4


def test_at_the_longest_wait_a_failing_device_is_journaled_once_a_minute() -> None:
    stop = FakeStop(stop_after=20)
    reader = FakeReader(stop, [True] * 20, [])
    sink = run(reader, stop)
    assert stop.waits == [1.0, 2.0, 4.0] + [8.0] * 17
    # retries start at t = 0, 1, 3, 7, 15, ...; the notices at the longest wait are at
    # t = 7 and then the first retry 60 s later or more (t = 7 + 8 * 8 = 71, then 135)
    retries = [(d["retry_in"]) for _, d in sink.notices]
    assert retries == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert len(sink.events) == 1
    assert reader.status()["detail"] == "stopped"


def test_stop_set_while_waiting_ends_the_run_without_another_attempt() -> None:
    stop = FakeStop(stop_after=1)
    reader = FakeReader(stop, [True, False], [works_until_stopped])
    sink = run(reader, stop)
    assert stop.waits == [1.0]
    assert reader.fail_opens == [False]  # never tried again
    assert [m for m, _ in sink.notices] == ["shoe 7 not open; retrying in 1 s"]
    assert reader.status() == {
        "driver": "fake",
        "connected": False,
        "detail": "stopped",
        "faults": 1,
        "reconnects": 0,
    }


def test_status_while_it_waits_says_why_and_for_how_long() -> None:
    seen: list[dict[str, Any]] = []

    class Watching(FakeStop):
        def wait(self, timeout: float | None = None) -> bool:
            seen.append(reader.status())
            return super().wait(timeout)

    stop = Watching(stop_after=2)
    reader = FakeReader(stop, [True, False], [works_then_fails])
    run(reader, stop)
    assert [s["detail"] for s in seen] == [
        "cannot open the shoe 7: no such device; retrying in 1 s",
        "lost: cable pulled; reconnecting to it in 1 s",
    ]
    assert [s["connected"] for s in seen] == [False, False]


def test_a_device_done_for_good_keeps_its_words_until_stopped() -> None:
    def ends(reader: FakeReader, sink: ReaderSink, stop: threading.Event) -> None:
        reader._working(sink)
        reader._detail = "the clip ended"

    stop = FakeStop()
    reader = FakeReader(stop, [], [ends])
    sink = run(reader, stop)
    assert stop.waits == [None]  # waited for stop, never reopened
    assert reader.status()["detail"] == "the clip ended" and reader.closed == 1
    assert sink.events == []


def test_a_source_that_ended_keeps_its_words_even_when_stopped_at_once() -> None:
    """A video that ended says so in the status; an operator's stop arriving just as it
    ended (the race a loaded machine showed) must not turn that into a plain "stopped"."""

    def ends_and_is_stopped(reader: FakeReader, sink: ReaderSink, stop: threading.Event) -> None:
        reader._detail = "clip.avi ended after 250 frames"
        stop.set()

    stop = FakeStop()
    reader = FakeReader(stop, [False], [ends_and_is_stopped])
    reader.run(CollectingSink(), stop)
    assert reader.status()["detail"] == "clip.avi ended after 250 frames"
    stopped = FakeReader(stop := FakeStop(), [False], [works_until_stopped])
    stopped.run(CollectingSink(), stop)
    assert stopped.status()["detail"] == "stopped"
