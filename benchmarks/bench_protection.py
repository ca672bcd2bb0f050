"""`make bench`: game protection (issue 15) by simulation, and the index at 10^6 shoes.

1. Repeated shoes: the per-comparison bound of `run_length` checked where matches are
   common enough to count (short runs), and fair shoes against a history of fair shoes.
2. The index: a synthetic SQLite history of `SHOES` shoes (default 10^6; random window
   keys and card orders, as many rows as real shoes make), the time to check each card of
   fair 8-deck shoes against it, and a replayed shoe caught within k cards. The file is
   built once into $STATION_BENCH_CACHE (default /tmp/station-bench) and reused.

The weak-shuffle check (issue 28) has its own: `bench_shuffle`.
$BENCH_PROTECTION_PARTS picks parts (e.g. `index`); $BENCH_PROTECTION_SHOES sets the
index's size.
"""

from __future__ import annotations

import math
import os
import random
import statistics
import time
from pathlib import Path

import numpy as np

from drivers.sim.shoe import VirtualShoe
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
from station.shared.protection_index import START_BITS, SqliteHistory

CUT = 16  # cards behind the cut card: never dealt, never seen
SHOES = int(os.environ.get("BENCH_PROTECTION_SHOES", "1000000"))
CACHE = Path(os.environ.get("STATION_BENCH_CACHE", "/tmp/station-bench"))
#: Which parts to run (comma-separated: repeats, index; default both).
PARTS = os.environ.get("BENCH_PROTECTION_PARTS", "repeats,index").split(",")


def dealt(order: list[str]) -> bytes:
    return encode(order[: len(order) - CUT])


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
    if "repeats" in PARTS:
        repeated_shoes()
    if "index" in PARTS:
        index_speed()


if __name__ == "__main__":
    main()
