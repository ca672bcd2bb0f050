"""The fan-out on its own: each committed batch serialized once and queued for every
listener, a listener that falls behind dropped (1013) without costing the others, the
floor publisher woken only for batches of rows, every listener closed (1001) at stop."""

from __future__ import annotations

import asyncio

import orjson

from station.core.snapshot import take
from station.core.table import Table
from station.live.fanout import FanOut, Subscriber
from station.shared.rows import GENESIS, Row


def rows(first: int, n: int) -> list[Row]:
    return [
        Row(
            seq,
            "ts",
            "api",
            "dealer",
            "notice",
            {"type": "notice", "message": "m"},
            None,
            GENESIS,
            GENESIS,
        )
        for seq in range(first, first + n)
    ]


def test_each_listener_gets_every_batch_after_its_subscription_and_the_publisher_is_woken() -> None:
    woken: list[int] = []

    async def main() -> None:
        fanout = FanOut(sent=lambda: woken.append(1))
        fanout.start()
        table = Table(decks=1)
        early = fanout.subscribe(0)
        fanout.publish(
            rows(1, 2), take(table, 2, "t", None), {"driver": "none"}, {"writable": True}
        )
        await asyncio.sleep(0)
        late = fanout.subscribe(2)
        fanout.publish(
            rows(3, 1), take(table, 3, "t", None), {"driver": "none"}, {"writable": True}
        )
        # a state alone (the journal cannot be written): heard by everyone, no wake
        fanout.publish([], take(table, 3, "t", None), {"driver": "none"}, {"writable": False})
        await fanout.stop()
        early_batches = await early.take()
        late_batches = await late.take()
        assert [b.seq for b in early_batches] == [2, 3, 3]
        assert [b.seq for b in late_batches] == [3, 3]
        first = [orjson.loads(m) for m in early_batches[0].messages]
        assert [m["type"] for m in first] == ["row", "row", "state"]
        assert first[-1]["state"]["journal"] == {"writable": True}
        assert orjson.loads(early_batches[-1].messages[-1])["state"]["journal"] == {
            "writable": False
        }
        assert early.closed == (1001, "the station is stopping")

    asyncio.run(main())
    assert woken == [1, 1]


def test_a_listener_that_falls_behind_is_dropped_and_the_others_keep_theirs() -> None:
    async def main() -> None:
        fanout = FanOut(sent=lambda: None)
        fanout.start()
        table = Table(decks=1)
        slow = fanout.subscribe(0)
        slow.max_messages = 5
        fast = fanout.subscribe(0)
        got: list[int] = []
        for seq in range(1, 11):
            fanout.publish(rows(seq, 1), take(table, seq, "t", None), {}, {"writable": True})
            await asyncio.sleep(0)
            got += [b.seq for b in await fast.take()]
        assert slow.closed is not None and slow.closed[0] == 1013
        assert slow not in fanout.subscribers and fast in fanout.subscribers
        assert got == list(range(1, 11))
        await fanout.stop()

    asyncio.run(main())


def test_a_listener_whose_queue_raises_is_closed_alone() -> None:
    class Broken(Subscriber):
        def put(self, batch: object) -> None:
            raise RuntimeError("a bug in one client")

    async def main() -> None:
        fanout = FanOut(sent=lambda: None)
        fanout.start()
        broken = Broken(0)
        fanout.subscribers[broken] = None
        fine = fanout.subscribe(0)
        fanout.publish(rows(1, 1), take(Table(decks=1), 1, "t", None), {}, {"writable": True})
        await asyncio.sleep(0.01)
        assert broken.closed is not None and broken.closed[0] == 1011
        assert [b.seq for b in await fine.take()] == [1]
        await fanout.stop()

    asyncio.run(main())
