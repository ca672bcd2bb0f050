"""The weak-shuffle looks of the live station, in a process of their own.

A look (`shuffle.weak_look`, twice a shoe) is 10-30 ms of numpy and Python on the
protection thread; in the station's process it held the interpreter while cards were
being decided, and the card-to-WebSocket p99 with cards back to back rose from about
1 ms to 3-4 ms (docs/BENCHMARKS.md). Here it runs in one worker process at a lower
priority: the protection thread waits for the answer without holding the interpreter,
and the station's threads go first on a busy dealer PC (the look is once a shoe; it may
wait). A worker that dies is replaced at the next look; meanwhile the look is made in
this process, so no shoe goes unchecked.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import resource_tracker
from typing import TypeVar

from station.core.protection.shuffle import DealtShoe, ShuffleScore, weak_look
from station.live.children import ignore_sigint, run_below_station, sigint_held

log = logging.getLogger("station.live.protection")
T = TypeVar("T")

#: The worker's niceness: below the station's threads, which decide the cards.
NICE = 10
#: Seconds between the worker's looks at whether its station is still there.
PARENT_CHECK = 0.5


def _in_worker(station: int) -> None:
    """In the worker, as it starts: let the station's own threads run first, and end with
    the station (`station`: its pid, given by the station itself, since one killed while
    this worker was starting is not this process's parent any more). A station killed
    outright (SIGKILL, a crash) cannot stop its worker; left behind, it would hold the
    station's stdout and stderr (and a supervisor's pipe reading them) open for good.
    A terminal's Ctrl-C is the station's: it closes this worker as it stops."""
    ignore_sigint()
    with contextlib.suppress(OSError):  # the station says so if it cannot be had
        os.nice(NICE)
    threading.Thread(target=_end_with, args=(station,), name="station watch", daemon=True).start()


def _end_with(station: int) -> None:
    while os.getppid() == station:
        time.sleep(PARENT_CHECK)
    os._exit(0)  # the station is gone (this process was handed to another parent)


def _pid() -> int:
    return os.getpid()


class LookWorker:
    """A `Looker` (`station.core.protection.watch`) that runs each look in a worker
    process, started at the first look (spawned: a clean interpreter, not a fork of the
    station's threads) and stopped by `close`."""

    def __init__(self) -> None:
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None

    def __call__(
        self, previous: DealtShoe, shoe: Sequence[int], decks: int, look: str, threshold: float
    ) -> ShuffleScore | None:
        args = (previous, list(shoe), decks, look, threshold)
        try:
            return self._submit(weak_look, *args).result()
        except (BrokenProcessPool, OSError) as exc:
            log.warning(
                "game protection: the shuffle look's process failed (%s); looking in the "
                "station's process this time, a new one at the next look",
                exc,
            )
            self.close()
            return weak_look(*args)

    def start(self) -> None:
        """Start the worker now (its interpreter and imports take a few hundred ms of
        CPU: better at the station's start than during a shoe). A worker that cannot be
        started is said once; the looks are then made in this process."""
        try:
            pid = self.pid()
        except (BrokenProcessPool, OSError) as exc:
            log.warning("game protection: no process for the shuffle looks (%s)", exc)
            self.close()
            return
        run_below_station(pid, NICE, "game protection: the shuffle looks' process", log, idle=False)

    def pid(self) -> int:
        """The worker's process id (starting it if need be): what tests check."""
        return self._submit(_pid).result()

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def _submit(self, fn: Callable[..., T], *args: object) -> concurrent.futures.Future[T]:
        """`fn(*args)` in the worker, started if need be (in `submit`, by this thread) with
        SIGINT held: a Ctrl-C during its imports must not end it with a traceback. The
        resource tracker, which multiprocessing starts with its first pool, unblocks SIGINT
        as it starts: started first, it cannot undo the hold."""
        resource_tracker.ensure_running()
        with sigint_held():
            return self._worker().submit(fn, *args)

    def _worker(self) -> concurrent.futures.ProcessPoolExecutor:
        if self._pool is None:
            self._pool = concurrent.futures.ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_in_worker,
                initargs=(os.getpid(),),
            )
        return self._pool
