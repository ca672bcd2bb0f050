"""Replay throughput of the cercle games: 128k-event chemin de fer and baccarat banque
streams through `station replay --game G` as a whole process, against punto banco's
stream (`bench_replay`'s) on the same machine, at the same time.

The cercle streams come from `cercle_stream` below, a small seeded generator (the
simulator deals punto banco): 6-deck shoes shuffled by a seeded `random.Random`, the cut
card ten to fifteen cards from the end (policy `stop`), each option decided at random,
and now and then a card at an option with no decision (held, then placed by the
supervisor's resume with the decision) or an unreadable card (read by eye on resume).
It asks the core what is due next, so the stream is the dealer's, not a second
implementation of the rules: correctness is the tests' business, this only times.

Figures: best wall time of RUNS, and the CPU time of each run (children's user+system,
less sensitive to the machine's load), runs of the games alternating.
"""

from __future__ import annotations

import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from benchmarks.bench_replay import EVENTS, make_stream
from station.core.cards import ALL_CARDS
from station.core.table import Table

RUNS = 5
#: How often (per option) a card comes out before the decision, and (per card) a card
#: cannot be read.
HELD_RATE = 0.02
UNREADABLE_RATE = 0.002


def cercle_stream(game: str, seed: int, events: int = EVENTS) -> list[dict[str, Any]]:
    """At least `events` events of a `game` table dealt shoe after shoe (then cut)."""
    rng = random.Random(seed)
    table = Table(game=game)
    out: list[dict[str, Any]] = []

    def send(event: dict[str, Any]) -> str | None:
        out.append(event)
        return table.apply(event)["error"]

    def resume_with(option: dict[str, Any]) -> None:
        """The supervisor answers a held card's option; a decision that would complete the
        round is refused then (the card has no place): a plain resume and the dealer's
        decision instead."""
        decision = {"hand": option["hand"], "draw": rng.random() < 0.5}
        if send({"type": "resume", "decision": decision}) == "DECISION_NOT_ALLOWED":
            send({"type": "resume"})
            send({"type": "decision", **decision})

    while len(out) < events:
        shoe = [c for c in ALL_CARDS for _ in range(table.decks)]
        rng.shuffle(shoe)
        behind_cut = rng.randint(10, 15)  # cards left in the shoe when the cut comes out
        send({"type": "shoe"})
        while table.in_play:
            if len(shoe) == behind_cut and not table.cut_seen:
                send({"type": "cut"})
                continue
            held = table.option()
            if table.suspension is not None and held is not None:  # held (again)
                resume_with(held)
                continue
            due = table.due()
            if due == "close_bets":
                send({"type": "close_bets"})
            elif due == "decision":
                option = table.option()
                assert option is not None
                if rng.random() < HELD_RATE:  # the dealer forgot: the card is held
                    send({"type": "card", "card": shoe.pop()})
                    resume_with(option)
                else:
                    draw = rng.random() < 0.5
                    send({"type": "decision", "hand": option["hand"], "draw": draw})
            elif rng.random() < UNREADABLE_RATE:
                code = shoe.pop()
                send({"type": "card", "card": None})
                send({"type": "resume", "card": code})
            else:
                send({"type": "card", "card": shoe.pop()})
    return out[:events]


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
        for seed, game in enumerate(("chemin_de_fer", "baccarat_banque"), 1):
            path = Path(tmp) / f"{game}.jsonl"
            path.write_bytes(b"\n".join(orjson.dumps(e) for e in cercle_stream(game, seed)) + b"\n")
            streams[game] = (path, [*replay, "--game", game])
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
    print("target: each cercle game at least 80% of punto banco's events/s")
