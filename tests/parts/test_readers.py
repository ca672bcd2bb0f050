"""Reader supervision on its own: a reader that crashes is a `fault` and runs again, one
that returns by itself is said and runs again, a reader may send only reader events, the
card stop goes to the shoe on a suspension and a stop the shoe refuses is journaled."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

import station.live.readers as readers
from drivers.base import ReaderSink
from station.core.snapshot import take
from station.core.table import Table
from station.live.readers import CommittedView, ReaderSupervisor
from station.live.writer import DECIDE, Queued


class Flaky:
    """A reader whose first run crashes, second returns, third reports then waits."""

    name = "flaky"

    def __init__(self) -> None:
        self.runs = 0
        self.sent: list[bytes] = []

    def run(self, sink: ReaderSink, stop: threading.Event) -> None:
        self.runs += 1
        if self.runs == 1:
            raise OSError("the port went away")
        if self.runs == 2:
            return
        sink.event({"type": "card", "card": "5H"})
        sink.event({"type": "void"})  # not a reader's event
        stop.wait()

    def status(self) -> dict[str, Any]:
        return {"driver": "flaky", "connected": True}

    def send(self, data: bytes) -> bool:
        self.sent.append(data)
        return False  # the shoe refused it


def test_a_reader_is_restarted_and_only_its_own_events_are_decided(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(readers, "RESTART_DELAY", 0.01)
    reader = Flaky()
    queued: list[Queued] = []

    async def main() -> None:
        view = CommittedView(take(Table(decks=1), 0, "t", None))
        supervisor = ReaderSupervisor(reader, view, queued.append, b"\x13", b"\x11")
        supervisor.start()
        for _ in range(500):
            if len(queued) >= 4:
                break
            await asyncio.sleep(0.01)
        supervisor.to_shoe("suspended")
        for _ in range(500):
            if len(queued) >= 5:
                break
            await asyncio.sleep(0.01)
        view.close()
        await supervisor.stop()

    asyncio.run(main())
    fault, again, card, refused, unsent = (q.pending for q in queued[:5])
    assert fault.event["type"] == "fault" and "the port went away" in fault.event["detail"]
    assert fault.verdict is DECIDE
    assert again.kind == "notice" and "stopped by itself" in again.event["message"]
    assert card.event == {"type": "card", "card": "5H"} and card.actor == "flaky"
    assert refused.kind == "notice" and "may not send" in refused.event["message"]
    assert unsent.event["message"] == "shoe command not sent"
    assert all(q.bridged for q in queued[:4]) and reader.sent == [b"\x13"]
    assert reader.runs == 3


def test_a_waiting_reader_is_released_by_a_commit_or_a_stop() -> None:
    view = CommittedView(take(Table(decks=1), 0, "t", None))
    done: list[bool] = []

    def wait() -> None:
        with view.published:
            view.published.wait_for(lambda: view.reader_committed >= 2 or view.closing, 10)
            done.append(view.reader_committed >= 2)

    thread = threading.Thread(target=wait)
    thread.start()
    view.publish(take(Table(decks=1), 1, "t", None), 1)
    view.settle(1)  # refused: never committed, not waited for
    thread.join(5)
    assert done == [True] and view.snapshot.seq == 1
