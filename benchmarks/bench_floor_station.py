"""The station's own latency with its floor publisher on: `bench_latency`'s pty -> WebSocket
figure (the real serial driver, the journal committed, the row at a WebSocket client) with
and without the floor's work, against a real nats-server (JetStream, `sync_interval:
always`, its store on the disk) on this machine.

The method: one station with its floor on, the cards dealt back to back in blocks of 100
(on, off, off, on, ...: a drift over the run favours neither mode), and between blocks
the floor's work frozen (SIGSTOP of the publisher process, then of the broker) or let
run again (SIGCONT, broker first). The station, its journal and the
minute are the same for both modes, so the machine's other work (this is a shared VM: a
p99 moves by up to 2x between runs a minute apart, which made the old way, a station
with and one without `[floor]` started anew for each run, mostly noise) falls on both
alike. While frozen the station still writes its wake byte a commit to the pipe, which
costs nothing measurable. The first cards of each block are not counted: after a thaw
the publisher sends the rows the frozen block left (a backlog no dealer makes).

Where the broker runs matters on 2 cores. On a floor it has a server of its own; here
it shares the station's cores. So it is measured twice: **as on a server of its own**
(the broker's threads at SCHED_IDLE, so they take only CPU the station and the rig leave
over: the target's figure, the station's own cost), and **sharing the cores** at the
station's priority (for information). A control shows why: any other work of the same
CPU share (a process busy 1 ms in 6) moves the back-to-back p99 as much at the station's
priority, and even a process at SCHED_IDLE (which by definition runs only on CPU
nothing else wants) moves it: on this VM the p99 of a closed loop of two processes is
not a measure of CPU taken from the station alone. Each line also gives the station's
own CPU time a card in both modes (from /proc).
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import bench_latency
from benchmarks.bench_cores import busy_script
from benchmarks.bench_floor import cpu_seconds, floor_broker
from devkit.broker import ADMIN_USER, Broker

#: The target: p99 with the floor on within this factor of the p99 without it.
TARGET = 1.10
#: Interleaved: blocks of cards, alternated off/on, and the cards not counted after a switch.
BLOCK, BLOCKS, SETTLE = 100, 60, 15
#: The same at one card each SLOW_INTERVAL seconds (10 a second: five times a fast dealer).
SLOW_BLOCK, SLOW_BLOCKS, SLOW_SETTLE = 60, 16, 5
SLOW_INTERVAL = 0.1
#: Interleaved runs (each a station of its own) pooled for a figure.
RUNS = 3


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
            if b"station.live.publisher.worker" in cmdline:
                return child
        time.sleep(0.05)
    raise RuntimeError("the station started no floor publisher")


@dataclass
class Run:
    """One interleaved run: milliseconds per card and the station's CPU seconds, by mode
    (the last block's CPU is not counted: no switch closes it)."""

    latency: dict[str, list[float]] = field(default_factory=lambda: {"off": [], "on": []})
    cpu: dict[str, float] = field(default_factory=lambda: {"off": 0.0, "on": 0.0})
    cpu_cards: dict[str, int] = field(default_factory=lambda: {"off": 0, "on": 0})


def mode_of(block: int) -> str:
    """On, off, off, on, on, off, ...: each mode as often early as late in a run (a
    drift over the run, such as the journal growing, favours neither)."""
    return "on" if block % 4 in (0, 3) else "off"


def interleaved(
    freeze: Callable[[int], list[int]],
    extra: str = "",
    cards_per_block: int = BLOCK,
    blocks: int = BLOCKS,
    settle: int = SETTLE,
    interval: float = 0.0,
) -> Run:
    """The processes `freeze` names (given the station's pid once it runs; in the order
    to stop them) stopped ("off") and running ("on") in alternate blocks of cards."""
    run = Run()
    with bench_latency.running_station(extra) as rig:
        station = rig.process.pid
        pids = freeze(station)
        last = 0.0

        def switch(block: int) -> None:
            nonlocal last
            now = cpu_seconds(station)
            if block:
                ended = mode_of(block - 1)
                run.cpu[ended] += now - last
                run.cpu_cards[ended] += cards_per_block
            last = now
            stop = mode_of(block) == "off"
            if block and mode_of(block - 1) == mode_of(block):
                return
            for pid in pids if stop else reversed(pids):
                os.kill(pid, signal.SIGSTOP if stop else signal.SIGCONT)

        try:
            ms = [
                x * 1000
                for x in bench_latency.play(
                    rig, cards_per_block * blocks, interval, block=cards_per_block, between=switch
                )
            ]
        finally:
            for pid in reversed(pids):
                os.kill(pid, signal.SIGCONT)
        for block in range(blocks):
            counted = ms[block * cards_per_block + settle : (block + 1) * cards_per_block]
            run.latency[mode_of(block)].extend(counted)
        return run


def the_floor(broker: Broker, interval: float = 0.0) -> Run:
    """The station with its floor: its publisher and the broker frozen or running."""
    assert broker.process is not None
    broker_pid = broker.process.pid
    site = f"interleaved-{secrets.token_hex(4)}"  # a new journal each time: a site of its own
    blocks = (SLOW_BLOCK, SLOW_BLOCKS, SLOW_SETTLE) if interval else (BLOCK, BLOCKS, SETTLE)
    return interleaved(
        lambda station: [publisher_pid(station), broker_pid],
        floor_section(broker, site),
        *blocks,
        interval=interval,
    )


def scheduled(policy: int, pid: int) -> None:
    """Every thread of `pid` under `policy` (threads it starts later inherit it: Go's)."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(ProcessLookupError):
            os.sched_setscheduler(int(task.name), policy, os.sched_param(0))


idle = functools.partial(scheduled, os.SCHED_IDLE)
normal = functools.partial(scheduled, os.SCHED_OTHER)


def verdict(off: float, on: float) -> str:
    return f"on/off {on / off:.2f} (target within 10 %: {'ok' if on <= off * TARGET else 'OVER'})"


def report(name: str, runs: list[Run]) -> None:
    """Pooled figures of `runs` and each run's p99 ratio."""
    off = [x for run in runs for x in run.latency["off"]]
    on = [x for run in runs for x in run.latency["on"]]
    p_off, p_on = _ms(off, 0.99), _ms(on, 0.99)
    each = ", ".join(
        f"{_ms(run.latency['on'], 0.99) / _ms(run.latency['off'], 0.99):.2f}" for run in runs
    )
    cpu = {
        mode: 1000 * sum(r.cpu[mode] for r in runs) / max(1, sum(r.cpu_cards[mode] for r in runs))
        for mode in ("off", "on")
    }
    print(
        f"{name}: {len(off)} / {len(on)} cards off / on: p99 {p_off:.2f} / {p_on:.2f} ms, "
        f"{verdict(p_off, p_on)} (each run: {each}); p50 {_ms(off, 0.5):.2f} / "
        f"{_ms(on, 0.5):.2f} ms, p99.9 {_ms(off, 0.999):.2f} / {_ms(on, 0.999):.2f} ms; "
        f"the station's CPU {cpu['off']:.3f} / {cpu['on']:.3f} ms a card",
        flush=True,
    )


def hog(priority: Callable[[int], None], busy: float) -> Run:
    """The control: the station alone, with a process busy `busy` of each 6 ms (all of
    the time if 1) frozen or running."""
    process = subprocess.Popen([sys.executable, "-c", busy_script(busy)])
    try:
        priority(process.pid)
        return interleaved(lambda _station: [process.pid])
    finally:
        process.kill()
        process.wait()


#: The controls: other work than the floor's, frozen and running as the floor's is.
CONTROLS = (
    ("a process busy 1 ms in 6 at the station's priority", normal, 1 / 6),
    ("the same at SCHED_IDLE", idle, 1 / 6),
    ("a process always busy at SCHED_IDLE (uses only CPU nothing else wants)", idle, 1.0),
)


def run(broker: Broker) -> None:
    assert broker.process is not None
    broker_pid = broker.process.pid
    for name, placement in (("as on a server of its own", idle), ("sharing the cores", normal)):
        placement(broker_pid)
        report(
            f"back to back (~700 cards/s), broker {name}",
            [the_floor(broker) for _ in range(RUNS)],
        )
    idle(broker_pid)
    report(
        "10 cards/s, broker as on a server of its own",
        [the_floor(broker, SLOW_INTERVAL)],
    )
    report(
        "control, back to back: nothing switched (the method's own noise)",
        [interleaved(lambda _station: []) for _ in range(2)],
    )
    for name, placement, busy in CONTROLS:
        report(f"control, back to back: {name}", [hog(placement, busy) for _ in range(2)])


def with_broker(body: Callable[[Broker], None]) -> None:
    """`body` with a broker of its own (`bench_floor`'s)."""
    password = secrets.token_hex(8)
    os.environ["BENCH_FLOOR_PASSWORD"] = password
    with tempfile.TemporaryDirectory() as tmp_dir, floor_broker(Path(tmp_dir), password) as broker:
        body(broker)


def main() -> None:
    print(f"(load average at start: {os.getloadavg()[0]:.2f})")
    with_broker(run)


if __name__ == "__main__":
    main()
