"""Latency at a WebSocket client with 200 dashboards watching: a frame's last byte into
the pty -> its journal row at one `/api/live` client, with 0 and with 200 other clients
reading everything, cards at a dealer's pace and at 10 a second.

As in `bench_latency`, the station runs as `station run` in a subprocess with the serial
driver on a pty, and this process plays the shoe and is the measured client (websockets'
asyncio client). The 200 dashboards are minimal WebSocket clients in a third process
(`_Dashboard`), connected before the measured one, so it is served last of all.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
import sys
import time

import httpx
from websockets.asyncio.client import connect

from benchmarks.bench_latency import ROOT, running_station
from drivers.sim.pty import PtyPort
from drivers.sim.shoe import CUT_CARD, ShoeEmpty, VirtualShoe

DASHBOARDS = int(os.environ.get("BROADCAST_BENCH_DASHBOARDS", "200"))
#: (name, seconds between cards, cards measured): a dealer deals about two cards a second.
PACES = [("dealer's pace (2/s)", 0.5, 160), ("10 cards/s", 0.1, 400)]
BLOCKS = 4
WARMUP = 5  # per block
TARGET = 6.0  # p99 with the dashboards within this many times the p99 without


def measure(dashboards: int, interval: float, cards: int) -> tuple[list[float], list[float]]:
    """Seconds from each frame's last byte to its row at the measured client, alone and
    with `dashboards` other clients: one station, the two interleaved in `BLOCKS` blocks
    each, so both see the same load from the machine's other work."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    alone: list[float] = []
    crowded: list[float] = []
    with running_station() as rig:
        dealer = _Dealer(rig.pty, rig.client, rig.url)
        for _ in range(BLOCKS):
            alone += asyncio.run(dealer.play(interval, cards // BLOCKS))
            watchers = subprocess.Popen(
                [sys.executable, "-m", "benchmarks.bench_broadcast", str(dashboards), rig.url],
                stdout=subprocess.PIPE,
                text=True,
                env=env,
            )
            try:
                assert watchers.stdout is not None
                line = watchers.stdout.readline()
                assert line.startswith("connected"), line
                crowded += asyncio.run(dealer.play(interval, cards // BLOCKS))
            finally:
                watchers.terminate()
                watchers.wait(20)
    return alone, crowded


class _Dealer:
    """Deals an 8-deck virtual shoe into the pty, one shoe after another."""

    def __init__(self, pty: PtyPort, client: httpx.Client, url: str) -> None:
        self.pty, self.client, self.url = pty, client, url
        self.shoe = VirtualShoe(8, 1)
        self.dealt = 0
        client.post(f"{url}/api/events", json={"type": "shoe"})

    async def play(self, interval: float, cards: int) -> list[float]:
        """Deal `cards` (after `WARMUP`) at one per `interval`, each timed from its
        frame's last byte to its row at a client connected now (after any dashboards, so
        the fan-out serves it last)."""
        latencies: list[float] = []
        url, client = self.url, self.client
        async with connect(url.replace("http", "ws") + "/api/live", max_size=None) as ws:
            await ws.recv()  # hello
            next_at = time.perf_counter()
            while len(latencies) < cards + WARMUP:
                try:
                    item = self.shoe.draw()
                except ShoeEmpty:
                    item = CUT_CARD
                if item == CUT_CARD:
                    self.shoe = VirtualShoe(8, self.dealt)
                    continue
                next_at += interval
                await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
                self.pty.write(item.encode() + b"\n")
                sent = time.perf_counter()
                while True:
                    message = json.loads(await ws.recv())
                    if message["type"] == "row" and message["event"]["type"] == "card":
                        break
                latencies.append(time.perf_counter() - sent)
                self.dealt += 1
                if message["verdict"]["error"] is not None:  # shoe finished or suspended
                    for kind in ("void", "end_shoe", "shoe"):
                        client.post(f"{url}/api/events", json={"type": kind})
                    self.shoe = VirtualShoe(8, self.dealt)
                    next_at = time.perf_counter()
        return latencies[WARMUP:]


class _Dashboard(asyncio.Protocol):
    """A WebSocket client that reads everything at the least CPU cost (on this shared
    2-core machine the dashboards' own work would otherwise be most of what is measured;
    in a casino they run on other computers): frames are walked, not decoded, and pings
    get their pong, so the station keeps it connected. It offers per-message deflate, as
    a browser does (a server that accepts it compresses for each client)."""

    def __init__(self, opened: asyncio.Future[None]) -> None:
        self.opened = opened
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        key = base64.b64encode(os.urandom(16)).decode()
        transport.write(
            f"GET /api/live HTTP/1.1\r\nHost: station\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode()
        )

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        if not self.opened.done():
            head, found, _ = buffer.partition(b"\r\n\r\n")
            if not found:
                return
            assert head.startswith(b"HTTP/1.1 101"), head
            del buffer[: len(head) + 4]
            self.opened.set_result(None)
        while len(buffer) >= 2:
            size, start = buffer[1] & 0x7F, 2
            if size == 126:
                size, start = int.from_bytes(buffer[2:4], "big"), 4
            elif size == 127:
                size, start = int.from_bytes(buffer[2:10], "big"), 10
            if len(buffer) < start + size:
                return
            if buffer[0] & 0x0F == 0x9:  # a ping: answer (masked with a zero mask)
                assert self.transport is not None and size < 126
                pong = bytes((0x8A, 0x80 | size, 0, 0, 0, 0)) + buffer[start : start + size]
                self.transport.write(pong)
            del buffer[: start + size]


async def _watch(count: int, url: str) -> None:
    """`count` dashboards reading every message until this process is ended."""
    host, port = url.removeprefix("http://").split(":")
    loop = asyncio.get_running_loop()
    for _ in range(count):
        opened: asyncio.Future[None] = loop.create_future()
        await loop.create_connection(lambda: _Dashboard(opened), host, int(port))  # noqa: B023
        await opened
    print("connected", flush=True)
    await asyncio.Event().wait()


def _pcts(latencies: list[float]) -> tuple[float, float]:
    ms = sorted(x * 1000 for x in latencies)
    return ms[len(ms) // 2], ms[max(int(len(ms) * 0.99) - 1, 0)]


def main() -> None:
    print(
        f"pty frame -> station -> WebSocket client, alone and with {DASHBOARDS} other "
        "clients reading everything (connected before it: it is served last); one station, "
        f"{BLOCKS} blocks of each interleaved:"
    )
    for name, interval, cards in PACES:
        alone, crowded = measure(DASHBOARDS, interval, cards)
        p50_0, p99_0 = _pcts(alone)
        p50_n, p99_n = _pcts(crowded)
        ratio = p99_n / p99_0
        print(f"   {name}, {len(alone)} + {len(crowded)} cards:")
        print(f"      alone:           p50 {p50_0:.2f} ms   p99 {p99_0:.2f} ms")
        print(
            f"      {DASHBOARDS} dashboards:  p50 {p50_n:.2f} ms   p99 {p99_n:.2f} ms   "
            f"p99 ratio {ratio:.1f}x (target: within {TARGET:.0f}x: "
            f"{'ok' if ratio <= TARGET else 'OVER'})"
        )


if __name__ == "__main__":
    if len(sys.argv) == 3:  # the dashboards' process
        asyncio.run(_watch(int(sys.argv[1]), sys.argv[2]))
    else:
        main()
