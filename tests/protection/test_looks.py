"""The live station's weak-shuffle looks in a process of their own (`LookWorker`): the
same answer as in the station's process, from another process at a lower priority; a
worker that dies is replaced, and the look it was making is made here meanwhile."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.shuffle_kit import shoe_pair
from station.core.protection.shuffle import DEFAULT_THRESHOLD, weak_look
from station.live.protection.looks import NICE, LookWorker


@pytest.fixture
def worker() -> Iterator[LookWorker]:
    looks = LookWorker()
    yield looks
    looks.close()


def test_a_look_in_the_worker_is_the_look_made_here(worker: LookWorker) -> None:
    rng = random.Random(4)
    weak = shoe_pair(6, "riffle:3", "dealt", rng)
    fair = shoe_pair(6, "uniform", "dealt", rng)
    for previous, shoe in (weak, fair):
        for look in ("half", "end"):
            here = weak_look(previous, shoe, 6, look, DEFAULT_THRESHOLD)
            assert worker(previous, shoe, 6, look, DEFAULT_THRESHOLD) == here
    assert weak_look(*weak, 6, "end", DEFAULT_THRESHOLD) is not None  # one of each
    assert weak_look(*fair, 6, "end", DEFAULT_THRESHOLD) is None


def test_the_worker_is_another_process_below_the_station(worker: LookWorker) -> None:
    worker.start()
    pid = worker.pid()
    assert pid != os.getpid()
    assert os.getpriority(os.PRIO_PROCESS, pid) == os.getpriority(os.PRIO_PROCESS, 0) + NICE


def test_a_dead_worker_is_replaced_and_no_look_is_lost(
    worker: LookWorker, caplog: pytest.LogCaptureFixture
) -> None:
    previous, shoe = shoe_pair(6, "riffle:2", "dealt", random.Random(9))
    expected = weak_look(previous, shoe, 6, "end", DEFAULT_THRESHOLD)
    assert expected is not None
    first = worker.pid()
    os.kill(first, signal.SIGKILL)
    assert worker(previous, shoe, 6, "end", DEFAULT_THRESHOLD) == expected  # made here
    assert "looking in the station's process this time" in caplog.text
    assert worker.pid() not in (first, os.getpid())  # a new worker for the next look
    assert worker(previous, shoe, 6, "end", DEFAULT_THRESHOLD) == expected


STATION = """
import sys, time
from station.live.protection.looks import LookWorker
looks = LookWorker()
looks.start()
print(looks.pid(), flush=True)
time.sleep(60)
"""


def test_the_worker_ends_with_a_station_killed_outright() -> None:
    """SIGKILL leaves the station no time to stop its worker: the worker sees it gone and
    ends, so it does not hold the station's output pipes (a supervisor's, a test's) open."""
    station = subprocess.Popen(
        [sys.executable, "-c", STATION], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert station.stdout is not None
        worker = int(station.stdout.readline())
        os.kill(station.pid, signal.SIGKILL)
        station.communicate(timeout=10)  # EOF: no process holds its pipes any more
    finally:
        if station.poll() is None:
            station.kill()
    # The kernel closes an exiting process's files (the EOF above) before it turns it into
    # a zombie: on a busy machine the worker may still be in its exit for a moment.
    deadline = time.monotonic() + 5
    while running(worker):
        assert time.monotonic() < deadline, "the worker outlived its station"
        time.sleep(0.01)


def running(pid: int) -> bool:
    """Whether process `pid` runs (a zombie, ended but not yet reaped by whoever adopted
    it, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def test_a_worker_whose_station_died_while_it_started_ends_too() -> None:
    """The station names itself to the worker: a station killed while its worker was
    starting is no longer the worker's parent by the time the worker looks (it was
    adopted), and such a worker once took its new parent for its station and stayed."""
    started = subprocess.run(
        [
            sys.executable,
            "-c",
            "import time; from station.live.protection.looks import _in_worker; "
            "_in_worker(2**22 + 1); time.sleep(30)",  # a pid no process has (pid_max)
        ],
        timeout=10,
        check=False,
    )
    assert started.returncode == 0  # ended by the watch, long before the sleep
