"""Replay throughput: a 170k-event stream through `station replay` as a whole process.

The stream comes from `station simulate` (several 8-deck shoes with faults and the
supervisor's reactions, so every path of the core is on it). The baseline is
`benchmarks/plain_replay.py`: the same rules written the obvious way (stdlib json, a
line at a time); both outputs are checked to agree before anything is timed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.figures import record

EVENTS = 170_000
RUNS = 5


def make_stream(path: Path, game: str = "punto_banco") -> int:
    """Write EVENTS events of `game` from `station simulate` to `path`; return how many
    lines it has (the cercle games' shoes: 6 decks, no burn, cut policy stop, options
    decided and recorded, the decision faults too)."""
    cercle = [] if game == "punto_banco" else ["--game", game]
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "station.cli",
            "simulate",
            *cercle,
            "--seed",
            "2026",
            "--shoes",
            "600",
            "--faults",
            "all=0.004",
        ],
        capture_output=True,
        check=True,
    )
    lines = out.stdout.splitlines()
    if len(lines) < EVENTS:
        raise SystemExit(f"the simulator wrote only {len(lines)} events; raise --shoes")
    path.write_bytes(b"\n".join(lines[:EVENTS]) + b"\n")
    return EVENTS


def best_time(command: list[str], stream: Path) -> tuple[float, bytes]:
    best, output = float("inf"), b""
    for _ in range(RUNS):
        started = time.perf_counter()
        output = subprocess.run([*command, str(stream)], capture_output=True, check=True).stdout
        best = min(best, time.perf_counter() - started)
    return best, output


def spec_fields(output: bytes) -> list[tuple[object, ...]]:
    """The spec's keys of each verdict row, and the outcome of its result (any game's)."""
    rows = [json.loads(line) for line in output.splitlines()]
    keys = ("seq", "ok", "error", "role", "round", "voided_round")
    outcome = ("winner", "tableau1_outcome", "tableau2_outcome")
    return [(*(r[k] for k in keys), *((r["result"] or {}).get(k) for k in outcome)) for r in rows]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        stream = Path(tmp) / "events.jsonl"
        events = make_stream(stream)
        station_s, station_out = best_time([sys.executable, "-m", "station.cli", "replay"], stream)
        plain_s, plain_out = best_time([sys.executable, "-m", "benchmarks.plain_replay"], stream)
    if spec_fields(station_out) != spec_fields(plain_out):
        raise SystemExit("station replay and the plain baseline disagree on the stream")
    errors = sum(1 for line in station_out.splitlines() if b'"ok":false' in line)
    print(f"stream: {events} events ({errors} errors and rejections), best of {RUNS} runs")
    print(f"station replay:  {station_s:.3f} s  {events / station_s:>10,.0f} events/s")
    print(f"plain baseline:  {plain_s:.3f} s  {events / plain_s:>10,.0f} events/s")
    print(f"speed-up: {plain_s / station_s:.2f}x the plain baseline")
    record(
        f"`station replay`, {events // 1000}k events", station_s, "plain_replay", plain_s, 0.20, "s"
    )
