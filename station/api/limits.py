"""What a request may weigh: the body limit (413 as soon as it is passed, before the body
is in memory) and the JSON content type of `POST /api/events` (415 otherwise).

The limit is an ASGI middleware, so it holds for every route: a declared `Content-Length`
over the limit is refused before a byte of the body is read, and a body sent without one
(chunked) is counted as it arrives and refused the moment the count passes the limit.
Either way the connection is closed after the 413 (the rest of the body is never read),
as it is after any answer given before its request's body was read (a 401 to a large
upload): the server does not read on to keep the connection.
"""

from __future__ import annotations

import orjson
from fastapi import HTTPException, Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send


def too_large(limit: int) -> str:
    return f"the body is over {limit} bytes: send one event per request"


class BodyTooLarge(HTTPException):
    """A body over the limit, found while it streams in (the app's exception handler
    answers it when the route is reading its body)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, too_large(limit), headers={"Connection": "close"})


class BodyLimit:
    """Refuse any HTTP request body over `limit` bytes with 413, without reading it all."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is None:
            await _answer(send, 400, "the Content-Length header is not a whole number")
            return
        if declared > self.limit:
            await _answer(send, 413, too_large(self.limit))
            return
        received = 0
        started = False
        unread = declared > 0 or _has_header(scope, b"transfer-encoding")

        async def counted() -> Message:
            nonlocal received, unread
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                unread = unread and bool(message.get("more_body", False))
                if received > self.limit:
                    raise BodyTooLarge(self.limit)
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                if unread:  # refused before its body was read: do not read the rest either
                    headers = [(k, v) for k, v in message.get("headers", []) if k != b"connection"]
                    message = {**message, "headers": [*headers, (b"connection", b"close")]}
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except BodyTooLarge:  # read outside a route (no handler): answer it here
            if started:
                raise
            await _answer(send, 413, too_large(self.limit))


def _has_header(scope: Scope, name: bytes) -> bool:
    return any(key == name for key, _ in scope["headers"])


def _content_length(scope: Scope) -> int | None:
    """The declared body size, 0 without one; None if the header is not a number."""
    for name, value in scope["headers"]:
        if name == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() and len(text) < 20 else None
    return 0


async def _answer(send: Send, status: int, detail: str) -> None:
    body = orjson.dumps({"detail": detail})
    headers: list[tuple[bytes, bytes]] = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def require_json(request: Request) -> None:
    """415 unless the body is declared JSON (`application/json`, a charset allowed): a
    browser sends `text/plain` across sites without asking first, JSON it must ask for."""
    declared = request.headers.get("content-type", "")
    media, _, params = declared.partition(";")
    charset = _charset(params)
    if media.strip().lower() != "application/json" or charset not in (None, "utf-8", "utf8"):
        got = f"got {declared!r}" if declared else "none was sent"
        raise HTTPException(
            415, f"send the event as 'Content-Type: application/json' (UTF-8); {got}"
        )


def _charset(params: str) -> str | None:
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            return value.strip().strip('"').lower()
    return None
