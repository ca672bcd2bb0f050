"""The live station's weak-shuffle looks in a process of their own (`LookWorker`): the
same answer as in the station's process, from another process at a lower priority; a
worker that dies is replaced, and the look it was making is made here meanwhile."""

from __future__ import annotations

import os
import random
import signal
from collections.abc import Iterator

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
