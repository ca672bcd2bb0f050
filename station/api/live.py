"""`WS /api/live`: every journal row as it is committed, then the state it leads to.

Messages (JSON text): first `{"type": "hello", "seq", "state"}`; with `?after=SEQ`, the
rows committed after SEQ up to now (`{"type": "row", ...}`, so a client that lost its
connection misses nothing); then, live, each committed batch as its `row` messages
followed by one `{"type": "state", "state": ...}`. A client that falls more than 10,000
messages behind is closed with code 1013 (reconnect with `after`).

A browser page may open the socket only from the station's own address or one of `[api]
allowed_origins` (its `Origin` header; clients that send none are not browsers): else
close code 1008, logged. An address throttled for wrong tokens gets HTTP 429 with
Retry-After instead of the handshake.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import orjson
from fastapi import APIRouter, HTTPException, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse

from station.api.auth import (
    client_of,
    origin_allowed,
    presented_token,
    require_read,
    require_ready,
    tokens_of,
)
from station.live.journal import read_rows

router = APIRouter()
log = logging.getLogger("station.api")
BACKFILL_PAGE = 1000
#: How often an open socket's token is checked again: a revoked token loses its socket
#: within this time, as it loses HTTP at once.
RECHECK_TOKEN = 0.5


@router.websocket("/api/live")
async def live(ws: WebSocket) -> None:
    if not origin_allowed(ws):
        log.warning(
            "refused WS %s from %s: Origin %r is not this station's address nor one of "
            "[api] allowed_origins",
            ws.url.path,
            client_of(ws),
            ws.headers.get("origin"),
        )
        await ws.close(code=1008, reason="this page's origin may not open the station's feed")
        return
    try:
        station = require_ready(ws)
        require_read(ws)  # type: ignore[arg-type]  # needs only headers and query
    except HTTPException as exc:
        if exc.status_code == 429:  # the handshake answered as HTTP would: 429, Retry-After
            await ws.send_denial_response(
                JSONResponse({"detail": exc.detail}, status_code=429, headers=exc.headers)
            )
            return
        await ws.close(code=1013 if exc.status_code == 503 else 1008, reason=str(exc.detail))
        return
    try:
        after = int(ws.query_params.get("after", "-1"))
    except ValueError:
        await ws.close(code=1008, reason="after must be a whole number (a journal seq)")
        return
    await ws.accept()
    sub = station.subscribe()  # before reading the backlog: no row can fall in between
    snapshot = station.snapshot
    watcher = asyncio.create_task(_until_closed(ws))
    revoked = asyncio.create_task(_until_revoked(ws, presented_token(ws)))
    try:
        hello = {"type": "hello", "seq": snapshot.seq, "state": snapshot.to_dict()}
        await ws.send_text(orjson.dumps(hello).decode())
        while 0 <= after < snapshot.seq:
            rows = await asyncio.to_thread(
                read_rows,
                station.config.journal.path,
                after,
                min(BACKFILL_PAGE, snapshot.seq - after),
            )
            if not rows:
                break
            for row in rows:
                await ws.send_text(orjson.dumps({"type": "row", **row.to_api()}).decode())
            after = rows[-1].seq
        while True:
            getter = asyncio.ensure_future(sub.queue.get())
            done, _ = await asyncio.wait(
                {getter, watcher, revoked}, return_when=asyncio.FIRST_COMPLETED
            )
            if watcher in done:
                getter.cancel()
                return
            if revoked in done:
                getter.cancel()
                await ws.close(code=1008, reason="the token was revoked")
                return
            message = getter.result()
            if message is None:
                await ws.close(code=1013, reason="too far behind: reconnect with ?after=SEQ")
                return
            if message == b"":
                await ws.close(code=1001, reason="the station is stopping")
                return
            await ws.send_text(message.decode())
    except (WebSocketDisconnect, RuntimeError):
        return
    finally:
        station.unsubscribe(sub)
        for task in (watcher, revoked):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


async def _until_closed(ws: WebSocket) -> None:
    """Wait for the client to go away (it sends nothing we need)."""
    while True:
        message = await ws.receive()
        if message["type"] == "websocket.disconnect":
            return


async def _until_revoked(ws: WebSocket, token: str | None) -> None:
    """Return once the socket's token is no longer known (revoked, or its file entry
    removed). A socket opened without a token (public reads) has nothing to revoke."""
    if not token:
        await asyncio.Event().wait()  # forever: cancelled when the socket ends
        return
    store = tokens_of(ws)
    while True:
        await asyncio.sleep(RECHECK_TOKEN)
        if store.identify(token) is None:
            return
