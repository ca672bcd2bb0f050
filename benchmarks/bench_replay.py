"""Replay throughput: a 128k-event stream through `station replay` as a whole process.

The stream comes from `station simulate` (several 8-deck shoes with faults and the
supervisor's reactions, so every path of the core is on it). The baseline is
`benchmarks/plain_replay.py`: the same rules written the obvious way (stdlib json, a
line at a time); both outputs are checked to agree before anything is timed.

Then the cercle games: a 128k-event stream of each from `station simulate --game G`
(6-deck shoes, no burn, cut policy stop, options decided and recorded, the faults of
the game, the decision faults included) through `station replay --game G`, against the
plain oracle `benchmarks/plain_games.py`, with the ratio of its events/s to punto
banco's (target: at least 80 %: options and turns may cost a little, not a lot).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EVENTS = 128_000
RUNS = 5


#: The cercle games benchmarked after punto banco, and the share of its speed they aim at.
CERCLE_GAMES = ("chemin_de_fer", "baccarat_banque")
CERCLE_TARGET = 0.80


def make_stream(path: Path, game: str = "punto_banco") -> int:
    """Write EVENTS simulated events of `game` to `path`; return how many lines it has."""
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
            "400",
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
        print(f"ratio: {plain_s / station_s:.2f}x the plain baseline (target: >= 300,000 events/s)")
        for game in CERCLE_GAMES:
            cercle(game, stream, Path(tmp) / f"{game}.jsonl")


def run_once(command: list[str], stream: Path) -> tuple[float, float, bytes]:
    """One whole process over `stream`: its wall time, its CPU time, its output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    output = subprocess.run([*command, str(stream)], capture_output=True, check=True).stdout
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, output


def cercle(game: str, punto_banco: Path, stream: Path) -> None:
    """One cercle game's stream through `station replay --game` and the plain oracle.

    Its runs alternate with runs of punto banco's stream, so that a busy machine slows
    both alike; the ratio is given by wall time and by CPU time.
    """
    events = make_stream(stream, game)
    replay = [sys.executable, "-m", "station.cli", "replay"]
    walls: dict[str, float] = {"punto_banco": float("inf"), game: float("inf")}
    cpus = dict(walls)
    station_out = b""
    for _ in range(RUNS):
        for name, command, path in (
            ("punto_banco", replay, punto_banco),
            (game, [*replay, "--game", game], stream),
        ):
            wall, cpu, output = run_once(command, path)
            walls[name], cpus[name] = min(walls[name], wall), min(cpus[name], cpu)
            if name == game:
                station_out = output
    oracle = [sys.executable, "-m", "benchmarks.plain_games", "--game", game]
    plain_s, plain_out = best_time(oracle, stream)
    if spec_fields(station_out) != spec_fields(plain_out):
        raise SystemExit(f"station replay and the plain oracle disagree on the {game} stream")
    errors = sum(1 for line in station_out.splitlines() if b'"ok":false' in line)
    station_s = walls[game]
    print(
        f"{game}: {events} events ({errors} errors and rejections), best of {RUNS} runs "
        "alternating with punto banco's stream"
    )
    print(
        f"station replay --game {game}:  {station_s:.3f} s  {events / station_s:>10,.0f} "
        f"events/s  (CPU {cpus[game]:.3f} s; punto banco {walls['punto_banco']:.3f} s, "
        f"CPU {cpus['punto_banco']:.3f} s)"
    )
    print(f"plain oracle:  {plain_s:.3f} s  {events / plain_s:>10,.0f} events/s")
    by_wall = walls["punto_banco"] / station_s  # same number of events: a ratio of rates
    by_cpu = cpus["punto_banco"] / cpus[game]
    print(
        f"ratio: {by_wall:.0%} of punto banco's events/s ({by_cpu:.0%} by CPU time; target: "
        f">= {CERCLE_TARGET:.0%}); {plain_s / station_s:.2f}x the plain oracle"
    )
