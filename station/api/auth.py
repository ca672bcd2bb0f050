"""Who is asking: bearer tokens to identities, roles to permissions, and the throttle on
wrong tokens.

A refusal's body says only what the client must do (send a valid token, use a token of a
higher role, wait); the log keeps the detail (the client's address, the token's name and
role, never the token) for the supervisor. An address that presents `Throttle.limit`
tokens the station does not know within `Throttle.window` seconds is answered 429 with
`Retry-After` for a window for every wrong token it sends, and the log gets one summary
line per address per window instead of a line per attempt.

A valid token is never refused by the throttle (issue 32, attack 10): every token is
checked first, and only a wrong one meets the throttle. Otherwise any process that can
reach the port (a local one shares 127.0.0.1 with the pit's browser) could keep the
supervisor out with ten wrong guesses a minute. Checking a token costs one sha256 and a
constant-time comparison per known token, and a token is 256 random bits, so letting every
guess be checked gives a guesser nothing: the throttle's work is to answer a flood of wrong
tokens cheaply (429) and to keep the log to one line per address per window.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from fastapi import HTTPException
from starlette.requests import HTTPConnection

from station.shared.tokens import Identity, TokenStore

log = logging.getLogger("station.api")

MISSING = "a token is needed: send 'Authorization: Bearer TOKEN'"
NOT_VALID = "the token is not valid: ask a supervisor for a token (`station token add`)"
HIGHER_ROLE = "this action needs a token of a higher role"
THROTTLED = "too many requests with tokens that are not valid from this address: retry later"


@dataclass(slots=True)
class _Address:
    """One client address's current window of wrong tokens."""

    since: float
    unknown: int = 0  # tokens presented that the station does not know
    refused: int = 0  # requests answered 429 unchecked
    until: float = 0.0  # throttled until (monotonic seconds)


class Throttle:
    """Wrong tokens per client address: `limit` in `window` seconds throttles the address
    for `window` seconds. In memory only (a restart forgets), at most `capacity` addresses
    tracked at once (beyond that a new address is throttled on its first wrong token)."""

    def __init__(
        self,
        limit: int = 10,
        window: float = 60.0,
        capacity: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.window = window
        self.capacity = capacity
        self._clock = clock
        self._addresses: dict[str, _Address] = {}

    def retry_after(self, address: str) -> int | None:
        """Whole seconds until `address` may try again, or None if it is not throttled.
        Each throttled request is counted for the window's summary line."""
        now = self._clock()
        entry = self._current(address, now)
        if entry is None or now >= entry.until:
            return None
        entry.refused += 1
        return max(1, math.ceil(entry.until - now))

    def unknown_token(self, address: str, detail: str) -> None:
        """Count a token from `address` that the station does not know. The first of a
        window is logged with `detail`; the rest go into the window's summary."""
        now = self._clock()
        entry = self._current(address, now)
        if entry is None:
            entry = self._addresses[address] = _Address(since=now)
            log.warning("%s (further wrong tokens from %s are summed up)", detail, address)
            self._expire_later(address, entry, self.window)
        entry.unknown += 1
        full = len(self._addresses) > self.capacity
        if (entry.unknown >= self.limit or full) and entry.until <= now:
            entry.until = now + self.window

    def _current(self, address: str, now: float) -> _Address | None:
        """The address's window, None once it is over (which logs its summary)."""
        entry = self._addresses.get(address)
        if entry is not None and now >= entry.since + self.window and now >= entry.until:
            self._summarise(address, entry, now)
            return None
        return entry

    def _summarise(self, address: str, entry: _Address, now: float) -> None:
        del self._addresses[address]
        if entry.unknown > 1 or entry.refused:
            log.warning(
                "%s: %d tokens that are not valid in the last %.0f s; %d requests answered "
                "429 unchecked while throttled",
                address,
                entry.unknown,
                now - entry.since,
                entry.refused,
            )

    def _expire_later(self, address: str, entry: _Address, delay: float) -> None:
        """Write the window's summary when it ends, even if the address never comes back
        (without a running loop the next request from the address writes it)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        loop.call_later(delay, self._expire, address, entry)

    def _expire(self, address: str, entry: _Address) -> None:
        if self._addresses.get(address) is not entry:  # summed up already
            return
        now = self._clock()
        if self._current(address, now) is not None:  # still throttled: look again then
            self._expire_later(address, entry, max(entry.until, entry.since + self.window) - now)


def tokens_of(conn: HTTPConnection) -> TokenStore:
    store: TokenStore = conn.app.state.tokens
    return store


def throttle_of(conn: HTTPConnection) -> Throttle:
    throttle: Throttle = conn.app.state.throttle
    return throttle


def client_of(conn: HTTPConnection) -> str:
    return conn.client.host if conn.client else "?"


def presented_token(conn: HTTPConnection) -> str | None:
    """The bearer token of a request: the Authorization header; for the WebSocket only
    (browsers cannot give it headers) also the `token` query parameter. A query token on
    an HTTP route is ignored: a URL leaks (logs, history, referrers) and a page on another
    site could use it without a CORS preflight. An Authorization header that is not a
    bearer token is the empty string (not valid)."""
    header = conn.headers.get("authorization")
    if header:
        scheme, _, value = header.partition(" ")
        return value.strip() if scheme.lower() == "bearer" and value.strip() else ""
    if conn.scope["type"] == "websocket":
        return conn.query_params.get("token")
    return None


def refuse(
    conn: HTTPConnection,
    status: int,
    detail: str,
    who: Identity | None,
    why: str | None = None,
) -> HTTPException:
    """The refusal to raise, logged with who asked and `why` (the detail for the
    supervisor; the client gets only `detail`)."""
    name = f"{who.name} ({who.role})" if who else "-"
    log.warning(
        "refused %s %s from %s (token %s): %d %s",
        getattr(conn, "method", "WS"),
        conn.url.path,
        client_of(conn),
        name,
        status,
        why or detail,
    )
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return HTTPException(status, detail, headers=headers)


def identify(conn: HTTPConnection) -> Identity | None:
    """The caller's identity, None without a token; for a token the station does not know
    401, or 429 (with Retry-After) from an address that sent too many. A valid token is
    checked first and always let through, whatever its address sent before."""
    token = presented_token(conn)
    if token is None:
        return None
    who = tokens_of(conn).identify(token) if token else None
    if who is not None:
        return who
    throttle, client = throttle_of(conn), client_of(conn)
    wait = throttle.retry_after(client)
    if wait is not None:
        raise HTTPException(429, THROTTLED, headers={"Retry-After": str(wait)})
    method = getattr(conn, "method", "WS")
    throttle.unknown_token(
        client, f"refused {method} {conn.url.path} from {client}: 401 token not valid"
    )
    raise HTTPException(401, NOT_VALID, headers={"WWW-Authenticate": "Bearer"})
