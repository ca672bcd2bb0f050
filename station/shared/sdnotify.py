"""A tiny sd_notify client: tell systemd the station is ready, alive, or stopping.

With `Type=notify` systemd waits for `READY=1` before it counts the station as started,
and with `WatchdogSec=` it restarts a station that stops sending `WATCHDOG=1`. Pinging
from the event loop (not from a thread of its own) means a wedged loop stops the pings,
which is the point. The protocol is one datagram of `KEY=VALUE` lines to the unix socket
named by `NOTIFY_SOCKET` (a leading `@` is the abstract namespace), so it needs no
dependency. Outside systemd (`NOTIFY_SOCKET` unset) every call is a cheap no-op, and a
failed send never raises: systemd's bookkeeping must not take the table down.
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Mapping


class Notifier:
    """Sends sd_notify messages to the socket in `NOTIFY_SOCKET`, if there is one."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        path = env.get("NOTIFY_SOCKET", "")
        self.address = "\0" + path[1:] if path.startswith("@") else path
        self._socket: socket.socket | None = None
        self._watchdog = _watchdog_seconds(env)

    @property
    def enabled(self) -> bool:
        """True when running under systemd with a notify socket."""
        return bool(self.address)

    def notify(self, *fields: str) -> bool:
        """Send `KEY=VALUE` fields as one message; False if there is no socket or it failed."""
        if not self.address:
            return False
        try:
            if self._socket is None:
                self._socket = socket.socket(
                    socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC
                )
            self._socket.sendto("\n".join(fields).encode(), self.address)
        except OSError:
            return False
        return True

    def ready(self, status: str | None = None) -> bool:
        """The station is up: systemd finishes starting the unit."""
        return self.notify("READY=1", *([f"STATUS={status}"] if status else []))

    def status(self, text: str) -> bool:
        """A line for `systemctl status` (e.g. "shoe 3, round 41; reader connected")."""
        return self.notify(f"STATUS={text}")

    def watchdog(self) -> bool:
        """I am alive: resets systemd's watchdog timer."""
        return self.notify("WATCHDOG=1")

    def stopping(self) -> bool:
        """The station is shutting down on purpose."""
        return self.notify("STOPPING=1")

    def watchdog_interval(self) -> float | None:
        """Seconds within which systemd expects a `WATCHDOG=1` (`WatchdogSec=`), or None."""
        return self._watchdog

    async def keep_alive(self) -> None:
        """Ping the watchdog at half its interval, forever (run as a task of the event loop;
        cancel it on shutdown). Returns at once when no watchdog is set."""
        interval = self._watchdog
        if interval is None or not self.enabled:
            return
        while True:
            self.watchdog()
            await asyncio.sleep(interval / 2)

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None


def _watchdog_seconds(env: Mapping[str, str]) -> float | None:
    """`WATCHDOG_USEC` in seconds, if it is meant for this process (`WATCHDOG_PID`)."""
    try:
        usec = int(env.get("WATCHDOG_USEC", ""))
    except ValueError:
        return None
    pid = env.get("WATCHDOG_PID")
    if pid is not None and pid != str(os.getpid()):
        return None
    return usec / 1_000_000 if usec > 0 else None
