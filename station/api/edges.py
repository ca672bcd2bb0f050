"""What both services' apps wear outside their routes (`guard`): HEAD answered wherever GET
is, the Host header checked when reads are public, and the event loop's failed accepts
logged quietly once the server runs.

- **HEAD**: FastAPI routes answer only the methods they name, so a monitor that checks
  with HEAD saw 405 everywhere and the service down. `HeadAsGet` answers a HEAD as the
  GET of the same URL, headers only.
- **Host** (`[api] public_read` on): a page of another site can point its own name at
  the service's address (DNS rebinding) and read what needs no token as if it were the
  page's own. The browser still sends the page's name as Host, so `HostCheck` answers
  only IP addresses, `localhost` and `[api] allowed_hosts`: any other name is a 400 (a
  WebSocket is accepted and closed with 1008 and the reason, as its other refusals).
- **One value each**: a query parameter given twice (`?hours=x&hours=1`) is refused with
  422 rather than read by FastAPI's rule (the last counts): a request that says two
  things is ambiguous, and what a proxy, a log and the station each took it to mean
  could differ (`OneValueEach`).
- **Accepts**: see `station.api.connections.quiet_accept_errors`; installed when the
  app's lifespan starts, on the server's own loop.
"""

from __future__ import annotations

import asyncio
from typing import Protocol
from urllib.parse import parse_qsl

import orjson
from fastapi import FastAPI
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from station.api.connections import Tally, plural, quiet_accept_errors
from station.shared.serving import host_of, is_address

#: Names every service answers to whatever `[api] allowed_hosts` says.
OWN_NAMES = frozenset({"localhost"})


class Guarded(Protocol):
    """The `[api]` keys `guard` reads (both services' `[api]` have them)."""

    @property
    def public_read(self) -> bool: ...
    @property
    def allowed_hosts(self) -> tuple[str, ...]: ...


def guard(app: FastAPI, api: Guarded) -> None:
    """Wrap `app` (after its own middleware: these run first) in the edges above."""
    if api.public_read:
        app.add_middleware(HostCheck, allowed=frozenset(api.allowed_hosts) | OWN_NAMES)
    app.add_middleware(OneValueEach)
    app.add_middleware(HeadAsGet)
    app.add_middleware(QuietAccepts)


class OneValueEach:
    """A request whose query names a parameter more than once: 422, in FastAPI's shape of
    a validation error (`detail[0].loc` names the parameter)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        query = scope.get("query_string", b"") if scope["type"] == "http" else b""
        repeated = _repeated(query.decode("latin-1")) if query else None
        if repeated is None:
            await self.app(scope, receive, send)
            return
        body = orjson.dumps(
            {
                "detail": [
                    {
                        "type": "repeated",
                        "loc": ["query", repeated],
                        "msg": f"the query gives '{repeated}' more than once: give it once",
                        "input": None,
                    }
                ]
            }
        )
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": 422, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _repeated(query: str) -> str | None:
    """The first parameter `query` names twice (as Starlette parses it), or None."""
    seen: set[str] = set()
    for name, _ in parse_qsl(query, keep_blank_values=True):
        if name in seen:
            return name
        seen.add(name)
    return None


class HeadAsGet:
    """A HEAD request answered as its GET, without the body (the headers, Content-Length
    included, are the GET's)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def headers_only(message: Message) -> None:
            if message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, headers_only)


def host_allowed(scope: Scope, allowed: frozenset[str]) -> tuple[bool, str]:
    """Whether the request's Host names the service (an address, or an allowed name);
    and the host it named."""
    header = next((v for k, v in scope["headers"] if k == b"host"), b"")
    host = host_of(header.decode("latin-1"))
    return bool(host) and (is_address(host) or host in allowed), host


class HostCheck:
    """Requests naming a host the service does not answer to are refused (see the
    module's docstring); logged at most once a second, with a count."""

    def __init__(self, app: ASGIApp, allowed: frozenset[str]) -> None:
        self.app = app
        self.allowed = allowed
        self.refused = Tally(
            lambda n, last: (
                f"refused {plural(n, 'request')} naming a host that is not one "
                f"of [api] allowed_hosts (public_read is on), the last {last}"
            )
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        ok, host = host_allowed(scope, self.allowed)
        if ok:
            await self.app(scope, receive, send)
            return
        client = scope.get("client") or ("?", 0)
        self.refused.note(f"{host!r} from {client[0]}")
        detail = (
            f"this service does not answer to the name {host[:100]!r}: use its address, or "
            "add the name to [api] allowed_hosts"
        )
        if scope["type"] == "websocket":
            await receive()  # websocket.connect
            await send({"type": "websocket.accept"})
            reason = "this service does not answer to that name ([api] allowed_hosts)"
            await send({"type": "websocket.close", "code": 1008, "reason": reason})
            return
        body = orjson.dumps({"detail": detail})
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        await send({"type": "http.response.start", "status": 400, "headers": headers})
        await send({"type": "http.response.body", "body": body})


class QuietAccepts:
    """On the lifespan's start: the server's loop logs failed accepts quietly."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            quiet_accept_errors(asyncio.get_running_loop())
        await self.app(scope, receive, send)
