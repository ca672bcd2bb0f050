"""Latency at a WebSocket client with 200 dashboards watching: a frame's last byte into
the pty -> its journal row at one `/api/live` client, with 0 and with 200 other clients
reading everything, cards at a dealer's pace and at 10 a second.

As in `bench_latency`, the station runs as `station run` in a subprocess with the serial
driver on a pty, and this process plays the shoe and is the measured client. The 200
dashboards are asyncio WebSocket clients in a third process (permessage-deflate on, as a
browser asks), connected before the measured one, so it is served last of all.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from websockets.asyncio.client import connect

from benchmarks.bench_latency import ROOT, _wait_ready
from drivers.sim.pty import PtyPort
from drivers.sim.shoe import CUT_CARD, ShoeEmpty, VirtualShoe
from station.live.tokens import new_token, token_hash
from tests.netkit import free_port

DASHBOARDS = int(os.environ.get("BROADCAST_BENCH_DASHBOARDS", "200"))
#: (name, seconds between cards, cards measured): a dealer deals about two cards a second.
PACES = [("dealer's pace (2/s)", 0.5, 120), ("10 cards/s", 0.1, 400)]
WARMUP = 10
TARGET = 6.0  # p99 with the dashboards within this many times the p99 without


def _config(tmp: Path, port: int, token: str, link: Path) -> Path:
    config = tmp / "station.toml"
    config.write_text(f"""
[table]
id = "bench"
gated = false
[reader]
driver = "serial"
url = "{link}"
[journal]
path = "{tmp / "journal.db"}"
[api]
bind = "127.0.0.1:{port}"
public_read = true
tokens = [{{name = "bench", role = "supervisor", sha256 = "{token_hash(token)}"}}]
""")
    return config


def measure(dashboards: int, interval: float, cards: int) -> list[float]:
    """Seconds from each frame's last byte to its row at the measured client."""
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        port, token, link = free_port(), new_token(), tmp / "shoe"
        config = _config(tmp, port, token, link)
        pty = PtyPort(link)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        argv = [sys.executable, "-m", "station.cli", "run", "--config", str(config)]
        proc = subprocess.Popen(
            [*argv, "--log-level", "warning"], stdout=subprocess.DEVNULL, env=env
        )
        url = f"http://127.0.0.1:{port}"
        client = httpx.Client(headers={"Authorization": f"Bearer {token}"})
        watchers: subprocess.Popen[str] | None = None
        try:
            _wait_ready(client, url)
            pty.wait_reader(20)
            if dashboards:
                watchers = subprocess.Popen(
                    [sys.executable, "-m", "benchmarks.bench_broadcast", str(dashboards), url],
                    stdout=subprocess.PIPE,
                    text=True,
                    env=env,
                )
                assert watchers.stdout is not None
                line = watchers.stdout.readline()
                assert line.startswith("connected"), line
            return asyncio.run(_play(pty, client, url, interval, cards))
        finally:
            if watchers is not None:
                watchers.terminate()
                watchers.wait(20)
            proc.terminate()
            proc.wait(20)
            pty.close()
            client.close()


async def _play(
    pty: PtyPort, client: httpx.Client, url: str, interval: float, cards: int
) -> list[float]:
    shoe = VirtualShoe(8, 1)
    client.post(f"{url}/api/events", json={"type": "shoe"})
    latencies: list[float] = []
    async with connect(url.replace("http", "ws") + "/api/live", max_size=None) as ws:
        await ws.recv()  # hello
        next_at = time.perf_counter()
        while len(latencies) < cards + WARMUP:
            try:
                item = shoe.draw()
            except ShoeEmpty:
                item = CUT_CARD
            if item == CUT_CARD:
                shoe = VirtualShoe(8, len(latencies))
                continue
            next_at += interval
            await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
            pty.write(item.encode() + b"\n")
            sent = time.perf_counter()
            while True:
                message = json.loads(await ws.recv())
                if message["type"] == "row" and message["event"]["type"] == "card":
                    break
            latencies.append(time.perf_counter() - sent)
            if message["verdict"]["error"] is not None:  # shoe finished or suspended: reset
                for kind in ("void", "end_shoe", "shoe"):
                    client.post(f"{url}/api/events", json={"type": kind})
                shoe = VirtualShoe(8, len(latencies))
                next_at = time.perf_counter()
    return latencies[WARMUP:]


async def _watch(count: int, url: str) -> None:
    """`count` dashboards reading every message until this process is ended."""
    sockets = [
        await connect(url.replace("http", "ws") + "/api/live", max_size=None) for _ in range(count)
    ]
    for ws in sockets:
        await ws.recv()  # hello
    print("connected", flush=True)

    async def read(ws: object) -> None:
        async for _ in ws:  # type: ignore[attr-defined]
            pass

    await asyncio.gather(*(read(ws) for ws in sockets))


def _pcts(latencies: list[float]) -> tuple[float, float]:
    ms = sorted(x * 1000 for x in latencies)
    return ms[len(ms) // 2], ms[max(int(len(ms) * 0.99) - 1, 0)]


def main() -> None:
    print(
        f"pty frame -> station -> WebSocket client, with 0 and {DASHBOARDS} other clients "
        "reading everything (connected before it: it is served last):"
    )
    for name, interval, cards in PACES:
        p50_0, p99_0 = _pcts(measure(0, interval, cards))
        p50_n, p99_n = _pcts(measure(DASHBOARDS, interval, cards))
        ratio = p99_n / p99_0
        print(f"   {name}, {cards} cards:")
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
