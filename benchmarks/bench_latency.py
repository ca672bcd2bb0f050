"""Latency of the live station: a frame's last byte into the pty -> its verdict at a
WebSocket client, with the journal committed (SQLite WAL, synchronous FULL) in between.

The station runs as `station run` in a subprocess (its own interpreter, as in production)
with the real serial driver on a pty; this process plays the shoe and is the WebSocket
client. One card at a time: write the frame, wait for its journal row on `/api/live`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
from websockets.asyncio.client import connect

from benchmarks.figures import record
from drivers.sim.pty import PtyPort
from drivers.sim.shoe import CUT_CARD, ShoeEmpty, VirtualShoe
from station.shared.signing import SigningKey
from station.shared.tokens import new_token, token_hash
from tests.netkit import free_port

CARDS = 2000
WARMUP = 100
ROOT = Path(__file__).resolve().parents[1]
TS = "%Y-%m-%dT%H:%M:%S.%fZ"
#: Per card: seconds from the frame's last byte to the event queued for the writer (the
#: row's `ts`, wall clock); the rest is writer + commit + WebSocket.
STAGES: list[float] = []


def serial_station_config(
    tmp: Path, port: int, token: str, link: Path, extra: str = "", journal: str = ""
) -> Path:
    """An ungated station reading a serial shoe at `link`, its journal in `tmp`, with
    `journal` more keys of its `[journal]` and `extra` TOML sections after its own."""
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
{journal}
[api]
bind = "127.0.0.1:{port}"
public_read = true
tokens = [{{name = "bench", role = "supervisor", sha256 = "{token_hash(token)}"}}]
{extra}""")
    return config


@dataclass(frozen=True, slots=True)
class Rig:
    """A running `station run` (its process), the shoe's pty and a supervisor client."""

    process: subprocess.Popen[bytes]
    pty: PtyPort
    client: httpx.Client
    url: str


@contextlib.contextmanager
def running_station(extra: str = "", signed: bool = False) -> Iterator[Rig]:
    """`station run` in a subprocess (its own interpreter, as in production) on a new
    journal, reading a serial shoe on a pty; stopped at the end. `signed`: with a signing
    key of its own (`[journal] signing_key`), so every row is signed."""
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        port, token = free_port(), new_token()
        link = tmp / "shoe"
        journal = ""
        if signed:
            SigningKey.generate().save(tmp / "station.pem")
            journal = f'signing_key = "{tmp / "station.pem"}"'
        config = serial_station_config(tmp, port, token, link, extra, journal)
        pty = PtyPort(link)
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "station.cli",
                "run",
                "--config",
                str(config),
                "--log-level",
                "warning",
            ],
            stdout=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        url = f"http://127.0.0.1:{port}"
        client = httpx.Client(headers={"Authorization": f"Bearer {token}"})
        try:
            _wait_ready(client, url)
            pty.wait_reader(20)
            yield Rig(proc, pty, client, url)
        finally:
            proc.terminate()
            proc.wait(20)
            pty.close()
            client.close()


def measure(cards: int = CARDS, interval: float = 0.0) -> list[float]:
    """Seconds from each frame's last byte to its row arriving over the WebSocket; with an
    `interval`, one card each `interval` seconds (else each as soon as the last arrived)."""
    with running_station() as rig:
        return play(rig, cards, interval)


def _wait_ready(client: httpx.Client, url: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if client.get(f"{url}/api/state").status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise RuntimeError("the station did not start")


def play(
    rig: Rig,
    cards: int,
    interval: float = 0.0,
    *,
    block: int = 0,
    between: Callable[[int], None] | None = None,
    warmup: int = WARMUP,
) -> list[float]:
    """Deal `cards` (after `warmup` not counted) and time each; with `between`, it is
    called with the block's number before each `block` cards (0 first)."""
    return asyncio.run(_play_async(rig, cards, interval, block, between, warmup))


async def _play_async(
    rig: Rig,
    cards: int,
    interval: float,
    block: int,
    between: Callable[[int], None] | None,
    warmup: int = WARMUP,
) -> list[float]:
    """One thread, one loop: the client's own thread hand-offs stay out of the figures."""
    pty, client, url = rig.pty, rig.client, rig.url
    shoe = VirtualShoe(8, 1)
    next_at = time.perf_counter()
    client.post(f"{url}/api/events", json={"type": "shoe"})
    latencies: list[float] = []
    blocks = 0  # blocks begun
    async with connect(url.replace("http", "ws") + "/api/live") as ws:
        await ws.recv()  # hello
        while len(latencies) < cards + warmup:
            counted = len(latencies) - warmup
            if between is not None and counted >= blocks * block:
                between(blocks)
                blocks += 1
                next_at = time.perf_counter()
            try:
                item = shoe.draw()
            except ShoeEmpty:
                item = CUT_CARD
            if item == CUT_CARD:
                shoe = VirtualShoe(8, len(latencies))
                continue
            if interval:
                next_at += interval
                await asyncio.sleep(max(next_at - time.perf_counter(), 0.0))
            pty.write(item.encode() + b"\n")
            sent, sent_wall = time.perf_counter(), time.time()
            while True:
                message = json.loads(await ws.recv())
                if message["type"] == "row" and message["event"]["type"] == "card":
                    break
            latencies.append(time.perf_counter() - sent)
            queued = datetime.strptime(message["ts"], TS).replace(tzinfo=UTC).timestamp()
            STAGES.append(queued - sent_wall)  # pty -> driver -> the writer's queue
            if message["verdict"]["error"] is not None:  # shoe finished or suspended: reset
                for kind in ("void", "end_shoe", "shoe"):
                    client.post(f"{url}/api/events", json={"type": kind})
                shoe = VirtualShoe(8, len(latencies))
    first = len(STAGES) - len(latencies)  # this deal's stages, its warm-up's left out
    del STAGES[first : first + warmup]
    return latencies[warmup:]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(int(len(ordered) * q) - 1, 0)] * 1000


def commit_p99(commits: int = CARDS + WARMUP) -> float:
    """Milliseconds, p99: one durable SQLite commit (WAL, synchronous FULL, one row the size
    of a card's) in a temporary folder like the station's journal, the warm-up left out.
    The reference of the station's p99: a card can be no faster than its commit."""
    with tempfile.TemporaryDirectory() as tmp:
        db = sqlite3.connect(Path(tmp) / "commits.db", isolation_level=None)
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = FULL")
        db.execute("CREATE TABLE rows (seq INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        times = []
        for _ in range(commits):
            started = time.perf_counter()
            db.execute("BEGIN IMMEDIATE")
            db.execute("INSERT INTO rows (body) VALUES (?)", ("x" * 400,))
            db.execute("COMMIT")
            times.append(time.perf_counter() - started)
        db.close()
    return _pct(times[WARMUP:], 0.99)


def main() -> None:
    STAGES.clear()
    reference = commit_p99()
    latencies = sorted(measure())
    ms = [x * 1000 for x in latencies]
    p50 = statistics.median(ms)
    p99 = ms[int(len(ms) * 0.99) - 1]
    print(
        f"pty frame -> serial driver -> writer -> journal commit -> WebSocket client, "
        f"{len(ms)} cards:"
    )
    print(
        f"   p50 {p50:.2f} ms   p99 {p99:.2f} ms   max {ms[-1]:.2f} ms   "
        f"(p99 must stay under 5 ms: {'ok' if p99 < 5 else 'OVER'})"
    )
    print(
        f"   of which pty -> serial driver -> writer queue: p50 {_pct(STAGES, 0.5):.2f} ms, "
        f"p99 {_pct(STAGES, 0.99):.2f} ms; the rest is apply + commit + WebSocket"
    )
    record(
        "pty -> WebSocket p99, one card at a time",
        p99,
        "one SQLite commit's p99",
        reference,
        3.0,
        "ms",
    )


if __name__ == "__main__":
    main()
