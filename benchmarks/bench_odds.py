"""`make bench`: one full exact analysis of a shoe (every bet's edge) against a plain
exact enumeration in Python, the baseline the issue measures against (~0.2 s)."""

from __future__ import annotations

import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping

import numpy as np

from benchmarks.figures import record
from station.core import paytables
from station.core.cards import ALL_CARDS, POINTS
from station.core.odds import Analysis, Analyzer, full_shoe, round_tables, seed_bets
from station.core.rules import PUNTO_BANCO, Tableau


def straightforward(
    analyzer: Analyzer, composition: Mapping[str, int], tableau: Tableau = PUNTO_BANCO
) -> Analysis:
    """The same analysis by nested loops over the point values of P1 B1 P2 B2 P3 B3,
    multiplying the draw probabilities out card by card (exact, not simulated)."""
    n = [0] * 10
    for card, copies in composition.items():
        n[POINTS[card]] += copies
    total = sum(n)
    dist = np.zeros(400)

    def add(pt: int, bt: int, pc: int, bc: int, p: float) -> None:
        dist[((pc - 2) * 2 + bc - 2) * 100 + pt * 10 + bt] += p

    for p1 in range(10):
        q1 = n[p1] / total
        n[p1] -= 1
        for b1 in range(10):
            q2 = q1 * n[b1] / (total - 1)
            n[b1] -= 1
            for p2 in range(10):
                q3 = q2 * n[p2] / (total - 2)
                n[p2] -= 1
                for b2 in range(10):
                    q4 = q3 * n[b2] / (total - 3)
                    if q4 <= 0:
                        continue
                    n[b2] -= 1
                    pt, bt = (p1 + p2) % 10, (b1 + b2) % 10
                    if tableau.is_natural(pt, bt):
                        add(pt, bt, 2, 2, q4)
                    elif tableau.player_draws(pt):
                        for p3 in range(10):
                            q5 = q4 * n[p3] / (total - 4)
                            if q5 <= 0:
                                continue
                            if tableau.banker_draws(bt, p3):
                                n[p3] -= 1
                                for b3 in range(10):
                                    q6 = q5 * n[b3] / (total - 5)
                                    add((pt + p3) % 10, (bt + b3) % 10, 3, 3, q6)
                                n[p3] += 1
                            else:
                                add((pt + p3) % 10, bt, 3, 2, q5)
                    elif tableau.banker_draws(bt, None):
                        for b3 in range(10):
                            add(pt, (bt + b3) % 10, 2, 3, q4 * n[b3] / (total - 4))
                    else:
                        add(pt, bt, 2, 2, q4)
                    n[b2] += 1
                n[p2] += 1
            n[b1] += 1
        n[p1] += 1
    return analyzer.analyse_distribution(dist, composition)


def depleted_shoe(seed: int, dealt: int = 150) -> dict[str, int]:
    """An arbitrary composition: an 8-deck shoe with `dealt` random cards gone."""
    rng = random.Random(seed)
    shoe = full_shoe(8)
    for card in rng.sample([c for c in ALL_CARDS for _ in range(8)], dealt):
        shoe[card] -= 1
    return shoe


#: The whole-process figure: `station odds --remaining` on this many depleted shoes.
PROCESS_SHOES, PROCESS_RUNS = 40, 5


def whole_process(shoes: list[dict[str, int]]) -> float:
    """Best seconds of `station odds --remaining FILE --json` on `shoes` (a fresh process:
    its imports and round tables are in the figure)."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl") as f:
        f.writelines(json.dumps(shoe) + "\n" for shoe in shoes)
        f.flush()
        command = [sys.executable, "-m", "station.cli", "odds", "--remaining", f.name, "--json"]
        best = float("inf")
        for _ in range(PROCESS_RUNS):
            started = time.perf_counter()
            subprocess.run(command, stdout=subprocess.DEVNULL, check=True)
            best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    started = time.perf_counter()
    round_tables()
    setup = time.perf_counter() - started
    analyzer = Analyzer(seed_bets(paytables.load("traditional")))
    shoes = [depleted_shoe(seed) for seed in range(200)]
    analyzer.analyse(shoes[0])
    fast = []
    for shoe in shoes:
        t0 = time.perf_counter()
        analyzer.analyse(shoe)
        fast.append(time.perf_counter() - t0)
    slow = []
    for shoe in shoes[:3]:
        t0 = time.perf_counter()
        reference = straightforward(analyzer, shoe)
        slow.append(time.perf_counter() - t0)
        got = analyzer.analyse(shoe)
        worst = max(abs(got.house_edge[b] - e) for b, e in reference.house_edge.items())
        assert worst < 1e-12, f"the fast analysis disagrees with the enumeration by {worst}"
    fast_s, slow_s = statistics.median(fast), statistics.median(slow)
    print(f"odds: one-time round tables {setup * 1e3:.0f} ms")
    print(
        f"odds: one full analysis ({len(analyzer.bets)} bets, depleted 8-deck shoe): "
        f"median {fast_s * 1e3:.3f} ms over {len(fast)} shoes"
    )
    print(f"odds: straightforward exact enumeration in Python: median {slow_s * 1e3:.0f} ms")
    print(f"odds: speed-up {slow_s / fast_s:.0f}x (target >= 10x, <= 10 ms)")
    process = whole_process(shoes[:PROCESS_SHOES])
    record(
        f"`station odds`, {PROCESS_SHOES} depleted shoes",
        process,
        "plain enumeration of them",
        slow_s * PROCESS_SHOES,
        0.07,
        "s",
    )


if __name__ == "__main__":
    main()
