"""What signing every journal row costs (issue 24): one Ed25519 signature of each row's
hash, made in the commit, and its check by `station journal verify --public-key`.

- a row: sign and verify, alone (pyca cryptography);
- a commit: `Journal.append` of one row (a card at a dealer's pace) and of a burst of 64,
  signed against unsigned, alternated, on the disk a station writes to (WAL, synchronous
  FULL): what the signatures add to each commit and to each row of it;
- a verify: the signatures of a journal checked, rows a second (`keychain.check`);
- the station: bench_latency's rig (`station run` with the real serial driver on a pty,
  the journal committed, the row at a WebSocket client), a signed and an unsigned station
  running side by side and dealt in alternated blocks (so the machine's other work falls on
  both alike), at 10 cards a second (five times a fast dealer) and back to back; with the
  station's CPU a card (its threads' schedstat), and a control: both stations unsigned
  (the method's own noise).

The decision it stands for: one signature per row (so that whoever holds the public key
checks each row on its own, and no row waits for a later head), unless that costs more
than 5 % of the pty -> WebSocket p99, in which case a commit's last row alone is signed.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.bench_latency import Rig, play, running_station
from station.core.table import Table
from station.live.journal import Journal
from station.shared.keychain import check
from station.shared.rows import GENESIS, Pending, notice, row_hash
from station.shared.signing import SigningKey

ROWS = 5000
#: Commits timed a mode, alternated signed / unsigned.
COMMITS, BURST = 600, 64
#: The station: blocks of cards a mode, alternated (the first cards of a block not counted).
SLOW_BLOCK, SLOW_BLOCKS, SLOW_INTERVAL = 50, 12, 0.1
FAST_BLOCK, FAST_BLOCKS = 250, 4
SETTLE = 5
#: Runs (each two stations of their own) a figure pools; each run's ratio is shown too.
RUNS = 3
#: The target: the signed p99 within this factor of the unsigned one.
TARGET = 1.05
#: Each block deals the rig's same seeded shoe again, which game protection rightly calls
#: a repeated shoe: its checks (a thread of their own, the same in both modes) are off.
QUIET = "[protection]\nenabled = false\n"


def cpu_seconds(pid: int) -> float:
    """The CPU time of the process's threads now, to the nanosecond (their schedstat: the
    clock ticks of /proc/PID/stat are 10 ms, as much as a card's share of a block)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, IndexError, ValueError):  # a thread that just ended
            continue
    return total / 1e9


def _us(seconds: float, count: int) -> float:
    return seconds / count * 1e6


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(len(ordered) * q), len(ordered) - 1)] * 1000


def per_row() -> tuple[float, float]:
    """Microseconds to sign a row's hash, and to verify the signature."""
    key = SigningKey.generate()
    hashes = [row_hash(i, "ts", "api", "dealer", "event", "{}", None, GENESIS) for i in range(ROWS)]
    started = time.perf_counter()
    signatures = [key.sign_row(h) for h in hashes]
    signed = time.perf_counter() - started
    started = time.perf_counter()
    assert all(key.public.verify_row(h, s) for h, s in zip(hashes, signatures, strict=True))
    return _us(signed, ROWS), _us(time.perf_counter() - started, ROWS)


def card() -> Pending:
    """A row the size of a card's."""
    return Pending(
        "reader",
        "reader",
        {"type": "card", "card": "9S"},
        {
            "ok": True,
            "error": None,
            "role": "player",
            "round": 12,
            "result": None,
            "voided_round": None,
        },
    )


def commits(folder: Path) -> dict[tuple[bool, int], list[float]]:
    """Seconds a commit of 1 and of BURST rows, signed and unsigned, alternated."""
    journals = {}
    for signed in (False, True):
        journal = Journal(folder / f"{'signed' if signed else 'plain'}.db")
        journal.start("bench", Table(), SigningKey.generate() if signed else None)
        journals[signed] = journal
    times: dict[tuple[bool, int], list[float]] = {
        (s, n): [] for s in (False, True) for n in (1, BURST)
    }
    for i in range(COMMITS):
        for signed in (i % 2 == 0, i % 2 == 1):
            for size in (1, BURST) if i % 8 == 0 else (1,):
                batch = [card() for _ in range(size)]
                started = time.perf_counter()
                journals[signed].append(batch)
                times[(signed, size)].append(time.perf_counter() - started)
    for journal in journals.values():
        journal.close()
    return times


def verify_rate(folder: Path) -> tuple[float, int]:
    """Rows a second `keychain.check` verifies, over a journal of ROWS rows."""
    key = SigningKey.generate()
    with Journal(folder / "verify.db") as journal:
        journal.start("bench", Table(), key)
        for _ in range(ROWS // 100):
            journal.append([notice("station", "station", "row") for _ in range(100)])
        raw = journal._db.execute(
            "SELECT seq, kind, event, hash, signature FROM journal ORDER BY seq"
        ).fetchall()
    started = time.perf_counter()
    report = check(raw, key.public)
    elapsed = time.perf_counter() - started
    assert report.ok, report.problem
    return len(raw) / elapsed, len(raw)


def station(
    block: int, blocks: int, interval: float, signed: bool = True
) -> dict[bool, tuple[list[float], float]]:
    """The pty -> WebSocket seconds of each card, and the station's CPU seconds a card, of a
    signed and an unsigned station side by side, dealt in alternated blocks (unsigned,
    signed, signed, unsigned, ...). `signed=False`: the second station unsigned too (the
    method's own noise)."""
    got: dict[bool, tuple[list[float], float]] = {False: ([], 0.0), True: ([], 0.0)}
    with (
        running_station(QUIET) as first,
        running_station(QUIET, signed=signed) as second,
    ):
        rigs: dict[bool, Rig] = {False: first, True: second}
        for i in range(blocks):
            mode = (i % 4) in (1, 2)
            rig = rigs[mode]
            rig.client.post(f"{rig.url}/api/events", json={"type": "end_shoe"})  # a new shoe
            cpu = cpu_seconds(rig.process.pid)
            latencies = play(rig, block, interval, warmup=SETTLE)
            spent = cpu_seconds(rig.process.pid) - cpu
            so_far, cpu_total = got[mode]
            got[mode] = (so_far + latencies, cpu_total + spent)
    return {mode: (latencies, cpu / len(latencies)) for mode, (latencies, cpu) in got.items()}


def _station_line(
    title: str, runs: list[dict[bool, tuple[list[float], float]]], modes: str = "signed/unsigned"
) -> None:
    """One line for `runs` pooled, with each run's p99 ratio (`modes`: its name)."""
    plain = [x for run in runs for x in run[False][0]]
    signed = [x for run in runs for x in run[True][0]]
    plain_cpu = statistics.mean(run[False][1] for run in runs)
    signed_cpu = statistics.mean(run[True][1] for run in runs)
    p99 = _pct(plain, 0.99), _pct(signed, 0.99)
    ratio = p99[1] / p99[0]
    each = ", ".join(f"{_pct(r[True][0], 0.99) / _pct(r[False][0], 0.99):.2f}" for r in runs)
    print(
        f"   {title}: {len(plain)} / {len(signed)} cards; p50 {_pct(plain, 0.5):.2f} / "
        f"{_pct(signed, 0.5):.2f} ms; p99 {p99[0]:.2f} / {p99[1]:.2f} ms ({modes} "
        f"{ratio:.2f}: {'within 5 %' if ratio <= TARGET else 'OVER 5 %'}; each run {each}); "
        f"CPU a card {plain_cpu * 1000:.3f} / {signed_cpu * 1000:.3f} ms"
    )


def main() -> None:
    sign, verify = per_row()
    print(f"a row ({ROWS}): sign {sign:.1f} us, verify {verify:.1f} us")
    with tempfile.TemporaryDirectory(dir=Path.cwd()) as tmp:
        folder = Path(tmp)
        times = commits(folder)
        rate, rows = verify_rate(folder)
    for size in (1, BURST):
        plain = statistics.median(times[(False, size)]) * 1000
        signed = statistics.median(times[(True, size)]) * 1000
        extra = (signed - plain) / size * 1000
        print(
            f"a commit of {size} row(s) (median of {len(times[(False, size)])} a mode): "
            f"unsigned {plain:.3f} ms, signed {signed:.3f} ms ({extra:+.1f} us a row)"
        )
    print(f"verify: {rate:,.0f} rows a second (keychain.check over {rows} rows)")
    print("pty -> WebSocket, unsigned / signed (two stations side by side, blocks alternated):")
    slow = f"{1 / SLOW_INTERVAL:.0f} cards a second, blocks of {SLOW_BLOCK}"
    fast = f"back to back, blocks of {FAST_BLOCK}"
    for title, (block, blocks, interval) in (
        (slow, (SLOW_BLOCK, SLOW_BLOCKS, SLOW_INTERVAL)),
        (fast, (FAST_BLOCK, FAST_BLOCKS, 0.0)),
    ):
        _station_line(title, [station(block, blocks, interval) for _ in range(RUNS)])
        _station_line(
            f"{title}, both unsigned (the method's own noise)",
            [station(block, blocks, interval, signed=False)],
            "second/first",
        )


if __name__ == "__main__":
    main()
