"""The live feed's catch-up is bounded (issue 25, item 2): a hundred viewers replaying a
journal of large rows from row 0 against a real `station run` each get every row once and
in order, while the station's memory grows by a bounded amount (paged reads, a few
catch-ups at once); past the waiting line the handshake is refused with Retry-After."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect as connect_async
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

import station.api.live as live_api
from station.api.backfill import PAGE_BYTES, Backfills, read_page
from tests.service.kit import make_config, serve
from tests.service.stationkit import StationProcess, running, write_config

pytestmark = pytest.mark.server

#: A refused close_bets (no shoe) carrying 14 texts of 4,000 characters: a ~56 KB row,
#: journaled, and logged only at info.
BIG = {"type": "close_bets", **{f"pad_{i}": "x" * 4000 for i in range(14)}}
#: The bound the test holds the station to: generous (the bench measures the figure, see
#: docs/BENCHMARKS.md); reading a page of a thousand rows for every viewer at once took
#: gigabytes.
GROWTH_BOUND = 150 * 1024 * 1024


def fill(url: str, headers: dict[str, str], rows: int) -> int:
    """`rows` large rows in the journal; the last seq."""
    with httpx.Client(headers=headers, timeout=30) as client:
        seq = 0
        for _ in range(rows):
            answer = client.post(f"{url}/api/events", json=BIG)
            assert answer.status_code == 200, answer.text
            seq = answer.json()["seq"]
    return seq


class PeakMemory(threading.Thread):
    """The largest resident memory of a process, sampled every 5 ms until stopped."""

    def __init__(self, station: StationProcess) -> None:
        super().__init__(daemon=True)
        self.station = station
        self.peak = station.rss()
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.005):
            with contextlib.suppress(OSError, KeyError):
                self.peak = max(self.peak, self.station.rss())


async def viewers(url: str, count: int) -> list[tuple[int, list[int]]]:
    """`count` viewers from row 0 at once: each one's hello seq and the rows it got up to
    it, in the order they came."""

    async def one() -> tuple[int, list[int]]:
        async with connect_async(f"{url}&after=0", max_size=None, open_timeout=60) as ws:
            hello = json.loads(await ws.recv())
            assert hello["type"] == "hello"
            seqs: list[int] = []
            while not seqs or seqs[-1] < hello["seq"]:
                message = json.loads(await ws.recv())
                if message["type"] == "row":
                    seqs.append(message["seq"])
            return hello["seq"], seqs

    return await asyncio.wait_for(asyncio.gather(*(one() for _ in range(count))), 300)


def test_a_hundred_viewers_replaying_large_rows_stay_within_the_memory_bound(
    tmp_path: Path,
) -> None:
    config, tokens = write_config(tmp_path)
    with running(config, tokens) as station:
        last = fill(station.url, station.headers("dealer"), 150)  # ~8 MB of rows
        url = f"{station.ws_url}?token={station.tokens['viewer']}"
        asyncio.run(viewers(url, 2))  # warm: the first catch-ups' allocations
        before = station.rss()
        peak = PeakMemory(station)
        peak.start()
        try:
            got = asyncio.run(viewers(url, 100))
        finally:
            peak.done.set()
            peak.join()
        assert httpx.get(f"{station.url}/api/health", timeout=5).status_code == 200
    for hello, seqs in got:
        assert hello >= last
        assert seqs == list(range(1, hello + 1))  # every row, once, in order
    growth = peak.peak - before
    assert growth < GROWTH_BOUND, f"grew by {growth / 2**20:.0f} MiB"


def test_a_page_is_bounded_in_bytes_and_rows(tmp_path: Path) -> None:
    config, tokens = make_config(tmp_path, allow_rig=True)
    with serve(config, tokens) as live:
        last = fill(live.url, live.headers("dealer"), 40)
        path = config.journal.path
        messages, upto = read_page(path, 0, last)
        assert sum(map(len, messages)) - len(messages[-1]) < PAGE_BYTES  # the last tips it
        assert upto == json.loads(messages[-1])["seq"]
        assert [json.loads(m)["seq"] for m in messages] == list(range(1, upto + 1))
        journal = httpx.get(
            f"{live.url}/api/journal?after=0&limit={upto}", headers=live.headers("viewer")
        ).json()["events"]
        assert [json.loads(m) for m in messages] == [{"type": "row", **r} for r in journal]
        few, _ = read_page(path, 0, last, max_bytes=1)
        assert len(few) == 1  # a row larger than the page goes alone
        rows, upto = read_page(path, 0, last, max_rows=3)
        assert len(rows) == 3 and upto == 3
        assert read_page(path, last, last) == ([], last)


def test_past_the_waiting_line_the_handshake_is_refused_with_retry_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One catch-up at a time and none waiting: while a client that reads nothing holds
    the turn, another that would catch up is refused (503, Retry-After); one that needs
    no catch-up is served."""
    monkeypatch.setattr(live_api, "SEND_TIMEOUT", 30.0)
    config, tokens = make_config(tmp_path, max_backfills=1, backfill_queue=0)
    with serve(config, tokens) as live:
        fill(live.url, live.headers("dealer"), 60)
        url = f"{live.ws_url}?token={live.tokens['viewer']}"
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", int(live.url.rpartition(":")[2])))
        stuck = connect(f"{url}&after=0", sock=sock, max_queue=2, max_size=None, close_timeout=0.5)
        with stuck:
            backfills: Backfills = live.app.state.backfills
            deadline = time.monotonic() + 5
            while backfills.running < 1:
                assert time.monotonic() < deadline
                time.sleep(0.01)
            with pytest.raises(InvalidStatus) as refused, connect(f"{url}&after=0"):
                pass
            response = refused.value.response
            assert response.status_code == 503 and response.headers["Retry-After"] == "5"
            assert "retry later" in json.loads(response.body or b"{}")["detail"]
            with connect(url) as ws:  # nothing to catch up on: no turn needed
                assert json.loads(ws.recv(5))["type"] == "hello"


def test_catch_ups_take_turns_in_the_order_they_came() -> None:
    async def run() -> list[Any]:
        backfills = Backfills(slots=2, queue=10)
        order: list[str] = []

        async def client(name: str, hold: float) -> None:
            await backfills.enter()
            order.append(name)
            await asyncio.sleep(hold)
            backfills.leave()

        first = [asyncio.create_task(client(n, 0.05)) for n in ("a", "b")]
        await asyncio.sleep(0)
        waiting = [asyncio.create_task(client(n, 0.0)) for n in ("c", "d", "e")]
        await asyncio.sleep(0)
        assert backfills.running == 2 and backfills.waiting == 3
        waiting[1].cancel()  # "d" leaves the line: the others keep their places
        await asyncio.gather(*first, *waiting, return_exceptions=True)
        gone = asyncio.get_running_loop().create_future()
        gone.set_result(None)
        refused = await backfills.turn_or_gone(gone)  # the client left: no turn kept
        return [order, backfills.running, backfills.waiting, refused]

    assert asyncio.run(run()) == [["a", "b", "c", "e"], 0, 0, False]
