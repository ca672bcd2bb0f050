"""`make bench`: game protection (issue 15) by simulation, and the index at 10^6 shoes.

1. Shuffle quality: how often a fair (uniform) shuffle is called weak, against the
   target of less than once in 10,000 shoes, and how often each weak shuffle model is
   caught (target: a single riffle at least 99 %), 8 and 6 decks.
2. Repeated shoes: the per-comparison bound of `run_length` checked where matches are
   common enough to count (short runs), and fair shoes against a history of fair shoes.
3. The index: a synthetic SQLite history of `SHOES` shoes (default 10^6; random window
   keys and card orders, as many rows as real shoes make), the time to check each card of
   fair 8-deck shoes against it, and a replayed shoe caught within k cards. The file is
   built once into $STATION_BENCH_CACHE (default /tmp/station-bench) and reused.

$BENCH_PROTECTION_PARTS picks parts (e.g. `index`); $BENCH_PROTECTION_FAIR,
$BENCH_PROTECTION_MODEL and $BENCH_PROTECTION_SHOES set the sizes.
"""

from __future__ import annotations

import math
import os
import random
import statistics
import time
from pathlib import Path

import numpy as np

from drivers.sim.shoe import VirtualShoe, shuffle
from station.core.protection.sequence import (
    GRAM,
    STRIDE,
    MemoryHistory,
    SequenceWatch,
    describe_k,
    encode,
    match_bound,
    run_length,
)
from station.core.protection.shuffle import DEFAULT_THRESHOLD, expected_kept, shuffle_score
from station.shared.protection_index import START_BITS, SqliteHistory

CUT = 16  # cards behind the cut card: never dealt, never seen
FAIR_SHOES = int(os.environ.get("BENCH_PROTECTION_FAIR", "50000"))
MODEL_SHOES = int(os.environ.get("BENCH_PROTECTION_MODEL", "2000"))
SHOES = int(os.environ.get("BENCH_PROTECTION_SHOES", "1000000"))
CACHE = Path(os.environ.get("STATION_BENCH_CACHE", "/tmp/station-bench"))
#: Which parts to run (comma-separated: shuffle, repeats, index; default all).
PARTS = os.environ.get("BENCH_PROTECTION_PARTS", "shuffle,repeats,index").split(",")
MODELS = (
    "riffle:1",
    "riffle:2",
    "riffle:3",
    "riffle:4",
    "riffle:5",
    "riffle:7",
    "strip",
    "box",
    "riffle:1+strip+riffle:1+box",
)


def dealt(order: list[str]) -> bytes:
    return encode(order[: len(order) - CUT])


def weak_rate(decks: int, model: str, shoes: int, rng: random.Random) -> tuple[float, list[int]]:
    """The share of `shoes` shoes shuffled by `model` from the last that are called weak,
    and their `kept` counts."""
    previous = VirtualShoe(decks, rng).order
    weak, kept = 0, []
    for _ in range(shoes):
        new = shuffle(previous, model, rng)
        score = shuffle_score(dealt(previous), dealt(new), decks)
        assert score is not None
        weak += score.probability < DEFAULT_THRESHOLD
        kept.append(score.kept)
        previous = new
    return weak / shoes, kept


def shuffle_quality() -> None:
    rng = random.Random(2026)
    print(f"shuffle quality: WEAK_SHUFFLE when P(kept or more | uniform) < {DEFAULT_THRESHOLD:g}")
    for decks in (8, 6):
        started = time.perf_counter()
        rate, kept = weak_rate(decks, "uniform", FAIR_SHOES, rng)
        previous = dealt(VirtualShoe(decks, rng).order)
        mean = expected_kept(previous, 52 * decks - CUT, decks)
        upper = 3.0 / FAIR_SHOES if rate == 0 else rate
        each = (time.perf_counter() - started) / FAIR_SHOES
        print(
            f"  {decks} decks uniform: {rate * FAIR_SHOES:.0f} weak of {FAIR_SHOES:,} shoes "
            f"(95 % upper bound {upper:.1e}; target < 1e-4); kept {statistics.fmean(kept):.1f} "
            f"+- {statistics.pstdev(kept):.1f} (exact mean ~{mean:.1f}, Poisson spread "
            f"{math.sqrt(mean):.1f}); {each * 1e3:.2f} ms a shoe"
        )
        for model in MODELS if decks == 8 else ("riffle:1", "riffle:2", "riffle:3"):
            shoes = MODEL_SHOES if model == "riffle:1" else MODEL_SHOES // 4
            rate, kept = weak_rate(decks, model, shoes, rng)
            print(
                f"  {decks} decks {model:<28} caught {rate:7.2%} of {shoes:,} "
                f"(kept {statistics.fmean(kept):.0f} +- {statistics.pstdev(kept):.0f})"
            )


def repeated_shoes() -> None:
    rng = random.Random(15)
    print("repeated shoes: the per-comparison bound (decks/(N-k+1))^k against simulation")
    for decks, k in ((1, 2), (8, 2), (8, 3), (8, 4)):
        trials, matches = 400 if k < 4 else 10_000, 0
        for _ in range(trials):
            a, b = dealt(VirtualShoe(decks, rng).order), dealt(VirtualShoe(decks, rng).order)
            grams: dict[bytes, int] = {}
            for i in range(len(a) - k + 1):
                grams[a[i : i + k]] = grams.get(a[i : i + k], 0) + 1
            matches += sum(grams.get(b[j : j + k], 0) for j in range(len(b) - k + 1))
        bound = (52 * decks - CUT - k + 1) ** 2 * match_bound(decks, k)
        error = math.sqrt(matches) / trials  # the simulation's own spread (Poisson counts)
        print(
            f"  {decks} decks, k={k}: {matches / trials:.4f} +- {error:.4f} matching pairs "
            f"a shoe, bound {bound:.4f} (ratio {matches / trials / bound:.2f})"
        )
    for decks in (8, 6, 1):
        for shoes in (0, 10**3, 10**6):
            print(f"  {decks} decks, {shoes:>9,} shoes: {describe_k(shoes, decks)}")
    history, alarms, fair = MemoryHistory(), 0, 2000
    for i in range(fair):
        watch = SequenceWatch(history, 8)
        cards = dealt(VirtualShoe(8, rng).order)
        alarms += sum(len(watch.card(c)) for c in cards)
        history.add(cards, str(i), str(i))
    print(f"  {fair:,} fair 8-deck shoes, each against all before it: {alarms} alarms")


def synthetic_index(shoes: int) -> Path:
    """A protection index of `shoes` synthetic 8-deck shoes (built once, then reused)."""
    path = CACHE / f"protection-{shoes}.sqlite"
    if path.exists():
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    for stale in (partial, Path(f"{partial}-wal"), Path(f"{partial}-shm")):
        stale.unlink(missing_ok=True)
    started = time.perf_counter()
    SqliteHistory(partial).close()
    import sqlite3

    db = sqlite3.connect(partial, isolation_level=None)
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    db.execute("PRAGMA cache_size=-1000000")
    gen = np.random.default_rng(1)
    cards = 52 * 8 - CUT
    db.execute("BEGIN")
    for first in range(1, shoes + 1, 20_000):
        ids = range(first, min(first + 20_000, shoes + 1))
        blobs = gen.integers(0, 52, (len(ids), cards), dtype=np.uint8)
        db.executemany(
            "INSERT INTO shoes VALUES (?, ?, ?, ?)",
            (
                (i, f"synthetic:{i}", f"synthetic shoe {i}", blobs[n].tobytes())
                for n, i in enumerate(ids)
            ),
        )
    db.execute("COMMIT")
    windows = len(range(0, cards - GRAM + 1, STRIDE))
    rows, chunks, space = shoes * windows, 256, 52**GRAM
    db.execute("BEGIN")
    for c in range(chunks):  # keys in ascending order: appends, not random B-tree inserts
        low, high = space * c // chunks, space * (c + 1) // chunks
        keys = np.sort(gen.integers(low, high, rows // chunks))
        refs = (
            gen.integers(1, shoes + 1, len(keys)) << START_BITS
            | gen.integers(0, windows, len(keys)) * STRIDE
        )
        db.executemany(
            "INSERT OR IGNORE INTO grams VALUES (?, ?)",
            zip(keys.tolist(), refs.tolist(), strict=True),
        )
    db.execute("COMMIT")
    db.close()
    partial.rename(path)
    size, took = path.stat().st_size / 1e9, time.perf_counter() - started
    print(f"  built {path} ({rows:,} windows, {size:.1f} GB) in {took:.0f} s")
    return path


def index_speed() -> None:
    print(f"the index: {SHOES:,} shoes of history")
    history = SqliteHistory(synthetic_index(SHOES))
    # Fresh seeds: the shoes a run adds to the cached index must not be the next run's.
    rng = random.Random(time.time_ns())
    k = run_length(history.shoes(), 8)
    times: list[float] = []
    cpu: list[float] = []
    alarms = 0
    for _ in range(50):
        watch = SequenceWatch(history, 8)
        for card in dealt(VirtualShoe(8, rng).order):
            started, started_cpu = time.perf_counter(), time.thread_time()
            alarms += len(watch.card(card))
            times.append(time.perf_counter() - started)
            cpu.append(time.thread_time() - started_cpu)
    for name, values in (("wall", times), ("CPU", cpu)):
        us = sorted(t * 1e6 for t in values)
        print(
            f"  k = {k}; {len(us):,} cards of 50 fair shoes, {name} time a card: mean "
            f"{statistics.fmean(us):.0f} us, p50 {us[len(us) // 2]:.0f} us, p99 "
            f"{us[int(len(us) * 0.99)]:.0f} us, p99.9 {us[int(len(us) * 0.999)]:.0f} us, max "
            f"{us[-1]:.0f} us (target < 1 ms)"
        )
    print(f"  {alarms} alarms (fair shoes)")
    # A real shoe in the history, replayed from its card 100: caught at its k-th card.
    earlier = dealt(VirtualShoe(8, rng).order)
    shoe = history.add(earlier, "replayed shoe", f"bench:{time.time_ns()}")
    watch = SequenceWatch(history, 8)
    stacked = dealt(VirtualShoe(8, rng).order)[:30] + earlier[100:200]
    caught = next(i for i, c in enumerate(stacked) if watch.card(c)) - 30 + 1
    print(f"  a replayed run (shoe {shoe}, its cards 101-200) caught at its card {caught}, k = {k}")
    history.close()


def main() -> None:
    if "shuffle" in PARTS:
        shuffle_quality()
    if "repeats" in PARTS:
        repeated_shoes()
    if "index" in PARTS:
        index_speed()


if __name__ == "__main__":
    main()
