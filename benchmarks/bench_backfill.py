"""The WebSocket catch-up's memory bound (issue 25): 100 viewers open `/api/live?after=0`
at once on a journal of large rows, and the station's resident memory, its health
check's latency and the time until every viewer has every row are measured.

The station runs as `station run` in a subprocess (its own interpreter, as in
production), the viewers in another (`python -m benchmarks.bench_backfill viewers URL N`:
they take each row's seq from the start of its message, no JSON parsing, so they keep
up), and this process posts the rows, then samples the station's memory (/proc, every
5 ms) and asks `/api/health` every 20 ms until the viewers are done. Once with
`[api] max_backfills` at its default (4) and once at 16: what a catch-up at once costs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
from websockets.asyncio.client import connect

from benchmarks.bench_latency import ROOT
from station.shared.tokens import new_token, token_hash
from tests.netkit import free_port

VIEWERS = int(os.environ.get("BACKFILL_BENCH_VIEWERS", "100"))
ROWS = int(os.environ.get("BACKFILL_BENCH_ROWS", "1800"))
#: A refused close_bets (no shoe) with 11 texts of 4,000 characters: a ~44 KB row, as
#: the probe's journal (1,796 rows, 78 MB of event text).
ROW = {"type": "close_bets", **{f"pad_{i}": "x" * 4000 for i in range(11)}}
SLOTS = (4, 16)
SEQ = re.compile(rb'"seq":(\d+)')
STATION = [sys.executable, "-m", "station.cli"]


@contextlib.contextmanager
def station(tmp: Path, max_backfills: int) -> Iterator[tuple[subprocess.Popen[bytes], str, str]]:
    """`station run` on a journal in `tmp`: the process, its URL and a dealer's token."""
    port, token = free_port(), new_token()
    config = tmp / f"station-{max_backfills}.toml"
    config.write_text(f"""
[journal]
path = "{tmp / "journal.db"}"
[api]
bind = "127.0.0.1:{port}"
public_read = true
max_backfills = {max_backfills}
tokens = [{{name = "bench", role = "dealer", sha256 = "{token_hash(token)}"}}]
token_file = "{tmp / "tokens.toml"}"
""")
    proc = subprocess.Popen(
        [*STATION, "run", "--config", str(config), "--log-level", "warning"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{url}/api/ready", timeout=2).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("the station did not start")
            time.sleep(0.05)
        yield proc, url, token
    finally:
        proc.terminate()
        proc.wait(30)


def rss(pid: int) -> int:
    """Resident bytes of `pid` now."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def fill(url: str, token: str, rows: int) -> int:
    with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
        seq = 0
        for _ in range(rows):
            seq = client.post(f"{url}/api/events", json=ROW).json()["seq"]
    return seq


class Sampler(threading.Thread):
    """The station's peak memory and `/api/health`'s latencies, until `done`."""

    def __init__(self, pid: int, url: str) -> None:
        super().__init__(daemon=True)
        self.pid, self.url = pid, url
        self.peak = rss(pid)
        self.health: list[float] = []
        self.done = threading.Event()

    def run(self) -> None:
        memory = threading.Thread(target=self._memory, daemon=True)
        memory.start()
        with httpx.Client(timeout=30) as client:
            while not self.done.wait(0.02):
                started = time.perf_counter()
                client.get(f"{self.url}/api/health")
                self.health.append(time.perf_counter() - started)
        memory.join()

    def _memory(self) -> None:
        while not self.done.wait(0.005):
            with contextlib.suppress(OSError, RuntimeError):
                self.peak = max(self.peak, rss(self.pid))


def measure(tmp: Path, max_backfills: int, rows: int) -> dict[str, float]:
    with station(tmp, max_backfills) as (proc, url, token):
        if rows:
            fill(url, token, rows)
        ws_url = url.replace("http://", "ws://") + "/api/live"
        asyncio.run(_viewers(ws_url, 2))  # warm: the first catch-ups' allocations
        time.sleep(0.5)
        before = rss(proc.pid)
        sampler = Sampler(proc.pid, url)
        sampler.start()
        started = time.perf_counter()
        viewers = subprocess.run(
            [sys.executable, "-m", "benchmarks.bench_backfill", "viewers", ws_url, str(VIEWERS)],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            check=True,
        )
        seconds = time.perf_counter() - started
        sampler.done.set()
        sampler.join()
        after = rss(proc.pid)
        delivered = int(viewers.stdout.split()[0])
        complete = int(viewers.stdout.split()[1])
    health = sorted(sampler.health)
    return {
        "before": before,
        "peak": sampler.peak,
        "after": after,
        "seconds": seconds,
        "delivered": delivered,
        "complete": complete,
        "health_p50": statistics.median(health),
        "health_p99": health[int(len(health) * 0.99)],
        "health_max": health[-1],
        "health_n": len(health),
    }


async def _viewers(url: str, count: int) -> tuple[int, int]:
    """`count` viewers from row 0 at once: the bytes they got, and how many got every row
    up to their hello, once and in order."""

    async def one() -> tuple[int, bool]:
        got = 0
        async with connect(f"{url}?after=0", max_size=None, open_timeout=120) as ws:
            hello = await ws.recv(decode=False)
            last = int(SEQ.search(hello)[1])  # type: ignore[index]
            expected = 1
            while expected <= last:
                message = await ws.recv(decode=False)
                got += len(message)
                if message.startswith(b'{"type":"row"'):
                    seq = int(SEQ.search(message[:40])[1])  # type: ignore[index]
                    if seq != expected:
                        return got, False
                    expected += 1
        return got, True

    done = await asyncio.gather(*(one() for _ in range(count)))
    return sum(g for g, _ in done), sum(ok for _, ok in done)


def main() -> None:
    mib = 1 << 20
    print(f"   {VIEWERS} viewers from row 0 at once, {ROWS} rows of ~44 KB")
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        for n, slots in enumerate(SLOTS):
            m = measure(tmp, slots, ROWS if n == 0 else 0)
            journal = (tmp / "journal.db").stat().st_size
            growth = (m["peak"] - m["before"]) / mib
            print(
                f"   max_backfills {slots:>2}: journal {journal / mib:.0f} MiB, "
                f"{m['complete']:.0f}/{VIEWERS} viewers got every row in order in "
                f"{m['seconds']:.1f} s ({m['delivered'] / mib / m['seconds']:.0f} MiB/s)"
            )
            print(
                f"      RSS {m['before'] / mib:.0f} MiB before, peak {m['peak'] / mib:.0f} MiB "
                f"(**+{growth:.0f} MiB**), {m['after'] / mib:.0f} MiB after"
            )
            print(
                f"      /api/health meanwhile ({m['health_n']:.0f} asked): p50 "
                f"{m['health_p50'] * 1000:.1f} ms, p99 {m['health_p99'] * 1000:.1f} ms, "
                f"max {m['health_max'] * 1000:.1f} ms (target under 100 ms)"
            )
    print(
        "   the bound: the catch-ups' memory grows with max_backfills, not with the viewers "
        "or the journal (pages of at most 1 MiB, each read once the client took the last)"
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["viewers"]:
        got, complete = asyncio.run(_viewers(sys.argv[2], int(sys.argv[3])))
        print(got, complete)
    else:
        main()
