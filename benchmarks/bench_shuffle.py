"""`make bench`: the weak-shuffle check (issue 28): how often it catches each shuffle
model, how often it calls a fair shuffle weak, and what it costs.

1. The power curve: shoes made from a fair shoe's discards by 1 to 8 Gilbert-Shannon-
   Reeds riffles, the discards gathered in dealt order, each round reversed, or the
   banker's cards first (the check looks for these), and each round scrambled (it does
   not), 8 and 6 decks: the share called WEAK_SHUFFLE at the default threshold, at half
   the shoe or at its end, and the riffles the alert names. Targets: at least 99 % at 4
   riffles and 50 % at 5 in dealt order, 90 % at 4 with the other gatherings.
2. The casinos' other shuffles: cuts, strips, stack shuffles in piles, riffles plus strips.
3. False alarms: fair shoes called weak, with the 95 % Clopper-Pearson interval (target:
   at most 1e-4 a shoe), and the share below looser thresholds (a check of the
   calibration: at most the threshold).
4. The time of one look at a whole shoe, on one core (target: under 50 ms).

Shoes are punto banco dealt by the rules through the core table, 16 cards behind the cut
card. Defaults run in a few minutes on 2 CPUs; $BENCH_SHUFFLE_FULL=1 (or `python -m
benchmarks.bench_shuffle --full`) runs 10^5 fair shoes and 1,000 shoes a cell per deck
count. $BENCH_SHUFFLE_TRIALS, $BENCH_SHUFFLE_FAIR and $BENCH_SHUFFLE_JOBS set the sizes,
$BENCH_SHUFFLE_PARTS picks parts (time, power, models, false).
"""

from __future__ import annotations

import math
import multiprocessing
import os
import random
import statistics
import sys
import time

from benchmarks.shuffle_kit import check, shoe_pair
from station.core.protection.shuffle import DEFAULT_THRESHOLD, shuffle_score

FULL = os.environ.get("BENCH_SHUFFLE_FULL") == "1" or "--full" in sys.argv[1:]
TRIALS = int(os.environ.get("BENCH_SHUFFLE_TRIALS", "1000" if FULL else "100"))
FAIR = int(os.environ.get("BENCH_SHUFFLE_FAIR", "100000" if FULL else "2000"))
JOBS = int(os.environ.get("BENCH_SHUFFLE_JOBS", "2"))
#: Which parts to run (comma-separated: time, power, models, false; default all).
PARTS = os.environ.get("BENCH_SHUFFLE_PARTS", "time,power,models,false").split(",")
DECKS = (8, 6)
#: The riffles of the power curve ($BENCH_SHUFFLE_RIFFLES, e.g. "4,5": those columns only).
RIFFLES = [int(r) for r in os.environ.get("BENCH_SHUFFLE_RIFFLES", "1,2,3,4,5,6,7,8").split(",")]
GATHERINGS = ("dealt", "reversed", "banker-first", "scrambled")
MODELS = (
    "box",
    "strip",
    "stack",
    "stack:2",
    "stack:2+strip+riffle:1",
    "riffle:2+strip",
    "riffle:4+strip",
    "riffle:3+strip+riffle:1+box",
)
#: Each cell's seed: its place in the run, so a cell's shoes do not depend on the others.
SEED = 2028


Cell = tuple[int, str, str, int, int]  # decks, model, gathering, shoes, seed


def run_cell(cell: Cell) -> tuple[dict[str, int], list[int], list[float]]:
    """Shoes of one cell: how many each look called weak, the riffles named, and the
    smallest probability of each shoe."""
    decks, model, gathering, shoes, seed = cell
    rng = random.Random(seed)
    caught = {"half": 0, "end": 0}
    named: list[int] = []
    smallest: list[float] = []
    for _ in range(shoes):
        previous, shoe = shoe_pair(decks, model, gathering, rng)
        look, probability, riffles = check(previous, shoe, decks, DEFAULT_THRESHOLD)
        if look is not None:
            caught[look] += 1
            named.append(riffles)
        smallest.append(probability)
    return caught, named, smallest


def run(cells: list[Cell]) -> list[tuple[dict[str, int], list[int], list[float]]]:
    if JOBS > 1:
        with multiprocessing.Pool(JOBS) as pool:
            return pool.map(run_cell, cells, chunksize=1)
    return [run_cell(c) for c in cells]


def binomial_cdf(k: int, n: int, p: float) -> float:
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0 if k < n else 1.0
    total = 0.0
    for i in range(k + 1):
        log_term = (
            math.lgamma(n + 1)
            - math.lgamma(i + 1)
            - math.lgamma(n - i + 1)
            + i * math.log(p)
            + (n - i) * math.log1p(-p)
        )
        total += math.exp(log_term)
    return min(total, 1.0)


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a binomial share k / n."""
    tail = (1 - level) / 2

    def where(falls_to: float, count: int) -> float:
        """The p at which P(X <= count) (falling in p) comes down to `falls_to`."""
        low, high = 0.0, 1.0
        for _ in range(100):
            mid = (low + high) / 2
            if binomial_cdf(count, n, mid) > falls_to:
                low = mid
            else:
                high = mid
        return (low + high) / 2

    lower = 0.0 if k == 0 else where(1 - tail, k - 1)
    upper = 1.0 if k == n else where(tail, k)
    return lower, upper


def share(part: float) -> str:
    """A share in whole per cent, but to a tenth from 99 % to just below 100 % (so that
    99.4 % does not read as 100 % against a target of 99 %)."""
    return f"{part:6.1%}" if 0.99 <= part < 1.0 else f"{part:6.0%}"


def power_curve() -> None:
    cells: list[Cell] = []
    for d_i, decks in enumerate(DECKS):
        for g_i, gathering in enumerate(GATHERINGS):
            for riffles in RIFFLES:
                seed = SEED + 10_000 * d_i + 100 * g_i + riffles
                cells.append((decks, f"riffle:{riffles}", gathering, TRIALS, seed))
    results = iter(run(cells))
    print(
        f"the power curve: the share of shoes called WEAK_SHUFFLE (probability < "
        f"{DEFAULT_THRESHOLD:g}), {TRIALS} shoes a cell; 'at half': already when half the "
        "shoe was out; 'named': the riffles the alert said (median)"
    )
    for decks in DECKS:
        print(f"  {decks} decks, riffles:  " + "".join(f"{r:>6}" for r in RIFFLES))
        for gathering in GATHERINGS:
            caught, half, named = [], [], []
            for _ in RIFFLES:
                looks, said, _ = next(results)
                caught.append(share((looks["half"] + looks["end"]) / TRIALS))
                half.append(f"{looks['half'] / TRIALS:6.0%}")
                named.append(f"{statistics.median(said):6.0f}" if len(said) >= 5 else "     -")
            print(f"    {gathering:<20}" + "".join(f"{c:>6}" for c in caught))
            print(f"    {'  at half':<20}" + "".join(half))
            print(f"    {'  named':<20}" + "".join(named))


def other_models() -> None:
    cells = [
        (decks, model, "dealt", max(TRIALS // 2, 20), SEED + 50_000 + 100 * d_i + m_i)
        for d_i, decks in enumerate(DECKS)
        for m_i, model in enumerate(MODELS)
    ]
    results = iter(run(cells))
    print("casinos' other shuffles (discards gathered in dealt order):")
    for decks in DECKS:
        for model in MODELS:
            caught, named, _ = next(results)
            shoes = max(TRIALS // 2, 20)
            share = (caught["half"] + caught["end"]) / shoes
            said = f"named {statistics.median(named):.0f} riffles" if named else ""
            print(f"  {decks} decks {model:<28} caught {share:7.1%} of {shoes} {said}")


def false_alarms() -> None:
    chunk = 500
    print(f"false alarms: fair shoes (a uniform shuffle of the discards), {FAIR:,} a deck count")
    for d_i, decks in enumerate(DECKS):
        started = time.perf_counter()
        cells = [
            (decks, "uniform", "dealt", min(chunk, FAIR - i), SEED + 10**6 * (d_i + 1) + i)
            for i in range(0, FAIR, chunk)
        ]
        smallest: list[float] = []
        with multiprocessing.Pool(max(JOBS, 1)) as pool:
            for _, _, found in pool.imap(run_cell, cells):
                smallest += found
                if len(smallest) % 10_000 == 0 and len(smallest) < FAIR:
                    weak = sum(p < DEFAULT_THRESHOLD for p in smallest)
                    print(f"  {decks} decks: {weak} weak of {len(smallest):,} so far", flush=True)
        alarms = sum(p < DEFAULT_THRESHOLD for p in smallest)
        low, high = clopper_pearson(alarms, len(smallest))
        looser = ", ".join(
            f"< {t:g}: {sum(p < t for p in smallest) / len(smallest):.2%}"
            for t in (1e-1, 1e-2, 1e-3, 1e-4)
        )
        print(
            f"  {decks} decks: {alarms} weak of {len(smallest):,} (95 % interval "
            f"{low:.1e} to {high:.1e}; target at most 1e-4); probability {looser} "
            f"({time.perf_counter() - started:.0f} s)",
            flush=True,
        )


def timing() -> None:
    rng = random.Random(SEED)
    for decks in DECKS:
        previous, shoe = shoe_pair(decks, "riffle:5", "dealt", rng)
        shuffle_score(previous, shoe, decks)  # the kernels' tables, once a process
        times = []
        for _ in range(30):
            started = time.perf_counter()
            shuffle_score(previous, shoe, decks)
            times.append(time.perf_counter() - started)
        print(
            f"  {decks} decks: one look at {len(shoe)} cards: median "
            f"{statistics.median(times) * 1e3:.1f} ms, slowest {max(times) * 1e3:.1f} ms "
            "(one core; target under 50 ms)"
        )


def main() -> None:
    if "time" in PARTS:
        print("the time of one look:")
        timing()
    if "power" in PARTS:
        power_curve()
    if "models" in PARTS:
        other_models()
    if "false" in PARTS:
        false_alarms()


if __name__ == "__main__":
    main()
