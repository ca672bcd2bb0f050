"""Connections are a budget: how many a service's server holds at once, how long one may be
slow or silent, and a log that stays small when clients misbehave.

Why: every connection costs a file descriptor, and so does every file the service opens
(the journal, its readers, the archive). Under systemd's default open-files limit about
1,100 idle connections took them all: accepts failed in a storm of logged tracebacks and
the journal could no longer be opened. So:

- the server holds at most `[api] max_connections` (HTTP and WebSocket together), fitted
  at start below the open-files limit less `RESERVED_FILES` (`fit`); a connection past
  it is answered 503 with `Retry-After` and closed at once, without a request read;
- a connection silent for `[api] idle_timeout` seconds (before its first request or
  between requests) is closed, and one whose request (head and body) takes more than
  `[api] request_timeout` seconds from its first byte is answered 408 and closed;
- refusals, timeouts and the event loop's failed accepts are logged at most once a
  second each, with a count (`Tally`), never a line (or a traceback) per connection.

The protocol is uvicorn's h11 one (`BoundedProtocol`), with those checks around it.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from station.shared.serving import RESERVED_FILES, Serving

log = logging.getLogger("station.api")

#: The fewest connections a service holds whatever its open-files limit says.
FEWEST = 8
#: What the event loop says when an accept fails for want of a descriptor.
ACCEPT_FAILED = "socket.accept() out of system resource"


@dataclass(frozen=True)
class Budget:
    """What a server's connections may hold: `connections` open at once, and the seconds
    a request may take to arrive (`request_timeout`) and a connection may stay silent
    (`idle_timeout`)."""

    connections: int
    request_timeout: float
    idle_timeout: float

    @classmethod
    def of(cls, api: Serving, limit: int | None = None) -> Budget:
        """The budget of `api`'s keys under the process's open-files limit (`limit`: the
        soft limit now, unless given); a cap lowered to fit is logged as a warning."""
        wanted = api.max_connections
        connections, warning = fit(wanted, open_files_limit() if limit is None else limit)
        if warning is not None:
            log.warning(warning)
        return cls(connections, api.request_timeout, api.idle_timeout)


def open_files_limit() -> int | None:
    """The process's soft limit on open files (RLIMIT_NOFILE); None if unlimited."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def fit(wanted: int, limit: int | None) -> tuple[int, str | None]:
    """The connections to hold: `wanted`, lowered below `limit` less `RESERVED_FILES`
    (at least `FEWEST`), and the warning that says so if lowered."""
    if limit is None or wanted + RESERVED_FILES <= limit:
        return wanted, None
    fitted = max(FEWEST, limit - RESERVED_FILES)
    return min(wanted, fitted), (
        f"[api] max_connections {wanted} does not fit the open-files limit ({limit}, less "
        f"{RESERVED_FILES} for the service's own files): at most {min(wanted, fitted)} "
        "connections at once; raise LimitNOFILE (the systemd unit) or lower max_connections"
    )


class Tally:
    """One kind of trouble, logged at most once every `interval` seconds: the first at
    once, the rest summed up in one line when the interval ends (`words(count, last)`:
    how many since the last line, and the detail of the latest)."""

    def __init__(
        self,
        words: Callable[[int, str], str],
        interval: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.words = words
        self.interval = interval
        self.clock = clock
        self.total = 0  # since the service started
        self._pending = 0  # counted since the last line
        self._last = ""  # the latest one's detail
        self._quiet_until = 0.0
        self._flush: asyncio.TimerHandle | None = None

    def note(self, detail: str = "") -> None:
        self.total += 1
        self._last = detail
        self._pending += 1
        now = self.clock()
        if now >= self._quiet_until:
            self._write(now)
        elif self._flush is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no loop (a test): the next note past the interval says it
                return
            self._flush = loop.call_later(self._quiet_until - now, self._flushed)

    def _flushed(self) -> None:
        self._flush = None
        if self._pending:
            self._write(self.clock())

    def _write(self, now: float) -> None:
        log.warning(self.words(self._pending, self._last))
        self._pending = 0
        self._quiet_until = now + self.interval


def plural(count: int, one: str) -> str:
    return f"{count} {one}" if count == 1 else f"{count} {one}s"


class BoundedProtocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol within a `Budget` (see the module's docstring); made
    per server by `http_protocol`, which sets the class's budget and tallies."""

    budget: ClassVar[Budget]
    refused: ClassVar[Tally]
    timed_out: ClassVar[Tally]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.timeout_keep_alive = self.budget.idle_timeout  # type: ignore[assignment]
        self._request_timer: asyncio.TimerHandle | None = None
        self._over = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.budget.connections:
            self._over = True
            self.refused.note()
            transport.write(_answer(503, "too many connections: retry later", "Retry-After: 1"))
            transport.close()
            return
        # Silent from the start is idle too: uvicorn's keep-alive timer closes it.
        self.timeout_keep_alive_task = self.loop.call_later(
            self.budget.idle_timeout, self.timeout_keep_alive_handler
        )

    def data_received(self, data: bytes) -> None:
        if self._over:
            return
        if self._request_timer is None and self.conn.their_state is h11.IDLE:
            self._request_timer = self.loop.call_later(
                self.budget.request_timeout, self._request_too_slow
            )
        super().data_received(data)
        if self.conn.their_state not in (h11.IDLE, h11.SEND_BODY):  # all of it came
            self._stop_request_timer()

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        self._stop_request_timer()  # the WebSocket's protocol takes the connection over
        super().handle_websocket_upgrade(event)

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_request_timer()
        super().connection_lost(exc)

    def _stop_request_timer(self) -> None:
        if self._request_timer is not None:
            self._request_timer.cancel()
            self._request_timer = None

    def _request_too_slow(self) -> None:
        self._request_timer = None
        if self.transport.is_closing():
            return
        self.timed_out.note()
        cycle = self.cycle  # the request's, or the one before it (a head that never came)
        if cycle is None or cycle.response_complete or not cycle.response_started:
            self.transport.write(_answer(408, "the request took too long to arrive"))
        self.transport.close()


def _answer(status: int, detail: str, *headers: str) -> bytes:
    """A whole HTTP/1.1 answer (JSON, `Connection: close`), written before any request was
    parsed: what a connection gets that the server will not serve."""
    body = f'{{"detail": "{detail}"}}'.encode()
    reason = {408: "Request Timeout", 503: "Service Unavailable"}[status]
    head = [
        f"HTTP/1.1 {status} {reason}",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        "Connection: close",
        *headers,
    ]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def http_protocol(budget: Budget) -> type[BoundedProtocol]:
    """The HTTP protocol class of one server (uvicorn's `http` option): `BoundedProtocol`
    with `budget` and tallies of its own."""
    cap = budget.connections
    refused = Tally(
        lambda n, _: (
            f"refused {plural(n, 'connection')} (503): {cap} open already, [api] max_connections"
        )
    )
    timed_out = Tally(
        lambda n, _: (
            f"closed {plural(n, 'connection')} whose request took over "
            f"{budget.request_timeout:g} s ([api] request_timeout)"
        )
    )
    namespace = {"budget": budget, "refused": refused, "timed_out": timed_out}
    return type("StationHttpProtocol", (BoundedProtocol,), namespace)


def quiet_accept_errors(loop: asyncio.AbstractEventLoop) -> None:
    """Log the loop's failed accepts (no descriptor left) at most once a second with a
    count and no traceback; every other error as before. The loop retries the accept by
    itself a second later."""
    previous = loop.get_exception_handler()
    failed = Tally(
        lambda n, _: (
            f"{plural(n, 'accept')} failed: no file descriptor left (the open-files "
            f"limit: [api] max_connections should keep {RESERVED_FILES} free)"
        )
    )

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if context.get("message") == ACCEPT_FAILED:
            failed.note()
        elif previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)
