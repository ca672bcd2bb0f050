"""How fast the simulated dealer writes streams: in process, and `station simulate` whole.

The replay benchmark asks `station simulate` for 128k events, so this must stay at a
few seconds for that size at most.
"""

from __future__ import annotations

import subprocess
import sys
import time

import orjson

from drivers.sim.faults import parse_faults
from drivers.sim.stream import simulate

EVENTS = 128_000
RUNS = 3


def _in_process(faults: str | None) -> tuple[int, float]:
    """Seconds to generate and serialise at least EVENTS events (best of RUNS)."""
    rates = parse_faults(faults) if faults else {}
    best = float("inf")
    count = 0
    for _ in range(RUNS):
        started = time.perf_counter()
        count = 0
        for event in simulate(2026, shoes=10_000, faults=rates):
            orjson.dumps(event)
            count += 1
            if count >= EVENTS:
                break
        best = min(best, time.perf_counter() - started)
    return count, best


def _command() -> tuple[int, float]:
    """Seconds for the whole `station simulate` process writing a ~128k-event stream."""
    args = [
        sys.executable,
        "-m",
        "station.cli",
        "simulate",
        "--seed",
        "2026",
        "--shoes",
        "260",
        "--faults",
        "all=0.004",
    ]
    best = float("inf")
    lines = 0
    for _ in range(RUNS):
        started = time.perf_counter()
        out = subprocess.run(args, capture_output=True, check=True)
        best = min(best, time.perf_counter() - started)
        lines = out.stdout.count(b"\n")
    return lines, best


def main() -> None:
    for label, faults in (("fault-free", None), ("all=0.01", "all=0.01")):
        count, seconds = _in_process(faults)
        print(
            f"simulate() + orjson, {label:10}: {count} events in {seconds:.3f} s "
            f"({count / seconds:,.0f} events/s)"
        )
    lines, seconds = _command()
    print(
        f"station simulate --shoes 260 (process): {lines} events in {seconds:.3f} s "
        f"({lines / seconds:,.0f} events/s)"
    )


if __name__ == "__main__":
    main()
