"""Replay throughput of the cercle games: 128k-event chemin de fer and baccarat banque
streams through `station replay --game G` as a whole process, against punto banco's
stream (`bench_replay`'s) on the same machine, at the same time.

The cercle streams come from `station simulate --game G` (`bench_replay.make_stream`):
6-deck shoes, no burn, cut policy `stop`, each option decided by the seeded hands and
recorded as a `decision` event, and the game's faults with the supervisor's reactions
(a card at an option with no decision, held, then placed by the resume with the
decision; a decision against the rules; unreadable and foreign cards, disconnects...).
The simulated dealer deals from its own reading of the rules, and before anything is
timed the verdicts are checked against the plain oracle (`benchmarks/plain_games.py`),
which is timed too.

Figures: best wall time of RUNS, and the CPU time of each run (children's user+system,
less sensitive to the machine's load), runs of the games alternating.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_replay import EVENTS, best_time, make_stream, spec_fields

RUNS = 5


def timed(command: list[str], stream: Path) -> tuple[float, float]:
    """One run: (wall seconds, CPU seconds of the process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([*command, str(stream)], capture_output=True, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    replay = [sys.executable, "-m", "station.cli", "replay"]
    with tempfile.TemporaryDirectory() as tmp:
        streams: dict[str, tuple[Path, list[str]]] = {}
        punto = Path(tmp) / "punto_banco.jsonl"
        make_stream(punto)
        streams["punto_banco"] = (punto, replay)
        oracle: dict[str, float] = {}
        for game in ("chemin_de_fer", "baccarat_banque"):
            path = Path(tmp) / f"{game}.jsonl"
            make_stream(path, game)
            command = [*replay, "--game", game]
            plain = [sys.executable, "-m", "benchmarks.plain_games", "--game", game]
            oracle[game], plain_out = best_time(plain, path)
            station_out = subprocess.run([*command, str(path)], capture_output=True, check=True)
            if spec_fields(station_out.stdout) != spec_fields(plain_out):
                raise SystemExit(f"station replay and the plain oracle disagree on {game}")
            streams[game] = (path, command)
        walls: dict[str, list[float]] = {g: [] for g in streams}
        cpus: dict[str, list[float]] = {g: [] for g in streams}
        for _ in range(RUNS):  # alternating, so that the load falls on all alike
            for game, (path, command) in streams.items():
                wall, cpu = timed(command, path)
                walls[game].append(wall)
                cpus[game].append(cpu)
        errors = {
            game: subprocess.run(
                [*command, str(path)], capture_output=True, check=True
            ).stdout.count(b'"ok":false')
            for game, (path, command) in streams.items()
        }
    base = EVENTS / min(walls["punto_banco"])
    base_cpu = EVENTS / min(cpus["punto_banco"])
    print(f"streams of {EVENTS} events each, best of {RUNS} alternating runs")
    for game in streams:
        rate, cpu_rate = EVENTS / min(walls[game]), EVENTS / min(cpus[game])
        print(
            f"{game:16} {min(walls[game]):.3f} s {rate:>10,.0f} events/s "
            f"({rate / base:.0%} of punto banco); CPU {min(cpus[game]):.3f} s "
            f"{cpu_rate:>10,.0f} events/s ({cpu_rate / base_cpu:.0%}); "
            f"{errors[game]} errors and rejections"
        )
        if game in oracle:
            print(
                f"{'':16} plain oracle {oracle[game]:.3f} s "
                f"{EVENTS / oracle[game]:>10,.0f} events/s (agrees on every verdict)"
            )
    print("target: each cercle game at least 80% of punto banco's events/s")
