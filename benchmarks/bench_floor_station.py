"""The station's own latency with its floor publisher on: `bench_latency`'s pty -> WebSocket
figure (the real serial driver, the journal committed, the row at a WebSocket client) with
and without the floor, against a real nats-server (JetStream, `sync_interval: always`, its
store on the disk) on this machine.

Two ways, both printed:

- **interleaved** (the figure issue 11's target is judged on): one station with its floor
  on, the cards dealt in blocks, and between blocks the floor's work frozen (SIGSTOP of
  the publisher process, then of the broker) or let run again (SIGCONT of the broker, then
  of the publisher). The station, its journal and the minute are the same for both
  modes, so the machine's other work (this is a shared VM: the p99 of one mode moves by
  up to 2x between runs a minute apart) falls on both alike. While frozen the station
  still writes its one wake byte a commit to the pipe, which costs nothing measurable
  (BENCHMARKS: the publisher up with an unreachable broker). The first cards of each
  block are not counted: after a thaw the publisher sends the rows the frozen block
  left (a backlog no dealer makes).
- **separate runs**: a station without `[floor]` and a station with it, started anew
  for each run, alternated (the method used before; its ratio is mostly the noise of
  the "off" runs).

The broker shares the station's 2 cores here; on a floor it runs on a server of its own.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import nats

from benchmarks import bench_latency
from station.live.floor.broker import ADMIN_USER, Broker, free_port, render_config
from station.live.floor.messages import stream_config

#: The target: p99 with the floor on within this factor of the p99 without it.
TARGET = 1.10
#: Interleaved: blocks of cards, alternated off/on, and the cards not counted after a switch.
BLOCK, BLOCKS, SETTLE = 250, 24, 25
#: The same at 10 cards a second (five times a fast dealer).
SLOW_BLOCK, SLOW_BLOCKS, SLOW_SETTLE = 50, 12, 5
#: Separate runs: cards per run, runs per mode.
RUN_CARDS, RUNS = 1500, 3


def _ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(len(ordered) * q), len(ordered) - 1)]


def floor_section(broker: Broker, site: str) -> str:
    return (
        f'[floor]\nurl = "{broker.url}"\nsite = "{site}"\nuser = "{ADMIN_USER}"\n'
        'password = "env:BENCH_FLOOR_PASSWORD"\n'
    )


def children(pid: int) -> list[int]:
    """The process's children (from /proc: the station's publisher process)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found.extend(int(x) for x in text)
    return found


def publisher_pid(station: int, timeout: float = 20.0) -> int:
    """The station's floor publisher process, once it has started."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for child in children(station):
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
            if b"station.live.floor.worker" in cmdline:
                return child
        time.sleep(0.05)
    raise RuntimeError("the station started no floor publisher")


def interleaved(
    broker: Broker, cards_per_block: int, blocks: int, settle: int, interval: float
) -> tuple[list[float], list[float]]:
    """Milliseconds per card with the floor's work frozen and running, block by block."""
    assert broker.process is not None
    site = f"interleaved-{secrets.token_hex(4)}"  # a new journal each time: a site of its own
    with bench_latency.running_station(floor_section(broker, site)) as rig:
        publisher = publisher_pid(rig.process.pid)
        broker_pid = broker.process.pid

        def switch(block: int) -> None:
            if block % 2:  # off: nothing of the floor runs
                os.kill(publisher, signal.SIGSTOP)
                os.kill(broker_pid, signal.SIGSTOP)
            else:
                os.kill(broker_pid, signal.SIGCONT)
                os.kill(publisher, signal.SIGCONT)

        try:
            ms = [
                x * 1000
                for x in bench_latency.play(
                    rig, cards_per_block * blocks, interval, block=cards_per_block, between=switch
                )
            ]
        finally:
            os.kill(broker_pid, signal.SIGCONT)
            os.kill(publisher, signal.SIGCONT)
    on: list[float] = []
    off: list[float] = []
    for block in range(blocks):
        counted = ms[block * cards_per_block + settle : (block + 1) * cards_per_block]
        (off if block % 2 else on).extend(counted)
    return off, on


def separate_runs(broker: Broker) -> tuple[list[float], list[float]]:
    """p99s (ms) of stations without and with a floor, each run a station of its own."""
    p99: dict[str, list[float]] = {"off": [], "on": []}
    for run in range(RUNS * 2):
        mode = ("off", "on")[run % 2]
        extra = floor_section(broker, f"separate-{run}") if mode == "on" else ""
        ms = [x * 1000 for x in bench_latency.measure(RUN_CARDS, 0.0, extra)]
        p99[mode].append(_ms(ms, 0.99))
    return p99["off"], p99["on"]


def verdict(off: float, on: float) -> str:
    return f"on/off {on / off:.2f} (target within 10 %: {'ok' if on <= off * TARGET else 'OVER'})"


def report(name: str, off: list[float], on: list[float]) -> None:
    p_off, p_on = _ms(off, 0.99), _ms(on, 0.99)
    print(
        f"{name}: {len(off)} / {len(on)} cards off / on: p99 {p_off:.2f} / {p_on:.2f} ms, "
        f"{verdict(p_off, p_on)}; p50 {_ms(off, 0.5):.2f} / {_ms(on, 0.5):.2f} ms, "
        f"p99.9 {_ms(off, 0.999):.2f} / {_ms(on, 0.999):.2f} ms"
    )


def run(broker: Broker) -> None:
    off, on = interleaved(broker, BLOCK, BLOCKS, SETTLE, 0.0)
    report("interleaved, back to back (~700 cards/s)", off, on)
    off, on = interleaved(broker, SLOW_BLOCK, SLOW_BLOCKS, SLOW_SETTLE, 0.1)
    report("interleaved, 10 cards/s", off, on)
    p99_off, p99_on = separate_runs(broker)
    print(
        f"separate runs, back to back, {RUN_CARDS} cards each: p99 off "
        f"{' / '.join(f'{x:.2f}' for x in p99_off)} ms, on "
        f"{' / '.join(f'{x:.2f}' for x in p99_on)} ms: medians' "
        f"{verdict(statistics.median(p99_off), statistics.median(p99_on))}"
    )


def with_broker(body: Callable[[Broker], None]) -> None:
    """`body` with a broker of its own (admin login, the floor's stream made)."""
    password = secrets.token_hex(8)
    os.environ["BENCH_FLOOR_PASSWORD"] = password
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        port = free_port()
        config = tmp / "nats.conf"
        config.write_text(render_config(port, tmp / "store", [], password))
        broker = Broker(config, port, log=tmp / "nats.log")
        broker.start()
        try:
            asyncio.run(_create_stream(broker.url, password))
            body(broker)
        finally:
            broker.stop()


async def _create_stream(url: str, password: str) -> None:
    nc = await nats.connect(url, user=ADMIN_USER, password=password)
    try:
        await nc.jetstream().add_stream(stream_config())
    finally:
        await nc.close()


def main() -> None:
    print(f"(load average at start: {os.getloadavg()[0]:.2f})")
    with_broker(run)


if __name__ == "__main__":
    main()
