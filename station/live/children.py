"""The station's helper processes (the floor publisher, the shuffle looks): started so that
a terminal's Ctrl-C does not end them, and run below the station's priority, or said not to.

A terminal's Ctrl-C is a SIGINT to the whole process group: the station's helpers get it
too, and one still importing its modules died of it with a `KeyboardInterrupt` traceback
on the terminal. A child inherits its parent thread's signal mask across `exec`, so one
started inside `sigint_held()` begins with SIGINT blocked and ignores it (`ignore_sigint`)
before it can come; the station stops its helpers itself as it shuts down.

The helpers run only on the CPU the station leaves over (SCHED_IDLE, else a higher nice):
a card's verdict goes first. Under a seccomp filter that forbids `setpriority` and
`sched_setscheduler` (systemd's `SystemCallFilter=~@resources`) they would run at the
station's priority: `run_below_station` says so in the log, with what to change.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
from collections.abc import Iterator

#: What the log says when a helper cannot be given a lower priority.
NO_PRIORITY = (
    "%s runs at the station's priority (%s): its work competes with the cards' on a busy "
    "PC; under systemd, the unit's SystemCallFilter must allow setpriority and "
    "sched_setscheduler (see systemd/baccarat-station.service)"
)


@contextlib.contextmanager
def sigint_held() -> Iterator[None]:
    """SIGINT blocked in this thread while a helper process starts (it inherits the mask).
    A SIGINT meanwhile is not lost: it waits, and comes as the mask is restored (or goes
    to another thread of the station's at once)."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def ignore_sigint() -> None:
    """In a helper, first thing: SIGINT ignored (it is the station's to act on), then no
    longer blocked."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def run_below_station(pid: int, nice: int, what: str, log: logging.Logger, *, idle: bool) -> bool:
    """Give process `pid` SCHED_IDLE (if `idle`), else niceness `nice`; False after a log
    line saying it runs at the station's priority. Lowering a process's priority needs no
    privilege, only the system calls."""
    idle_refused: OSError | None = None
    if idle:
        try:
            os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0))
            return True
        except OSError as exc:
            idle_refused = exc
    try:
        os.setpriority(os.PRIO_PROCESS, pid, nice)
    except OSError as exc:
        log.warning(NO_PRIORITY, what, exc.strerror or exc)
        return False
    if idle_refused is not None:
        log.info("%s: no SCHED_IDLE (%s), nice %d instead", what, idle_refused.strerror, nice)
    return True
