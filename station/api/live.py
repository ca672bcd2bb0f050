"""`WS /api/live`: every journal row as it is committed, then the state it leads to.

Messages (JSON text): first `{"type": "hello", "seq", "state"}` (every `state` carries
the reader's status as `state.reader` and the journal's as `state.journal`, as `GET
/api/state` does); with `?after=SEQ`, the rows committed after SEQ up to now (`{"type":
"row", ...}`, so a client that lost its connection misses nothing); then, live, each
committed batch as its `row` messages followed by one `{"type": "state", "state": ...}`,
and a `state` alone when the journal cannot be written (no row can say so).

Each client has its own bounded queue, filled by the station's fan-out without waiting
(`station.live.fanout.Subscriber`): a client more than `SUBSCRIBER_BACKLOG` messages or
`SUBSCRIBER_BACKLOG_BYTES` bytes behind, or whose send does not complete within
`SEND_TIMEOUT` seconds (it stopped reading), is closed with code 1013 (reconnect with
`after`), and disconnected if its close frame cannot go out within `CLOSE_TIMEOUT`; the
writer and the other clients never wait for it.

A browser page may open the socket only from the station's own address or one of `[api]
allowed_origins` (its `Origin` header; clients that send none are not browsers): else
close code 1008, logged. An address throttled for wrong tokens gets HTTP 429 with
Retry-After instead of the handshake.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from fastapi import APIRouter, HTTPException, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse

from station.api.access import origin_allowed, require_read, require_ready
from station.api.auth import client_of, presented_token, tokens_of
from station.api.server import FRAMES
from station.live.fanout import TOO_FAR_BEHIND, published
from station.live.journal.reading import read_rows

router = APIRouter()
log = logging.getLogger("station.api")
BACKFILL_PAGE = 1000
#: How often an open socket's token is checked again: a revoked token loses its socket
#: within this time, as it loses HTTP at once.
RECHECK_TOKEN = 0.5
#: A send (hello, backlog page or live batch) that takes longer than this closes the
#: socket with 1013: the client stopped reading.
SEND_TIMEOUT = 5.0
#: Then the time its close frame may take before the connection is dropped.
CLOSE_TIMEOUT = 5.0


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
    # Subscribe and take the snapshot in one step (no await between): the listener gets
    # exactly the batches committed after `snapshot`, and the backlog is read up to it.
    sub = station.subscribe()
    snapshot = station.snapshot
    extension: dict[str, Any] = ws.scope.get("extensions", {}).get(FRAMES, {})
    watcher = asyncio.create_task(_until_closed(ws))
    watcher.add_done_callback(lambda _: sub.close(1000, "gone"))
    revoked = asyncio.create_task(_until_revoked(ws, presented_token(ws)))
    revoked.add_done_callback(lambda _: sub.close(1008, "the token was revoked"))
    try:
        state = published(snapshot, station.reader_status(), station.journal_status())
        hello = {"type": "hello", "seq": snapshot.seq, "state": state}
        backlog = [orjson.dumps(hello).decode()]
        sent = True
        while sent and 0 <= after < snapshot.seq:
            rows = await asyncio.to_thread(
                read_rows,
                station.config.journal.path,
                after,
                min(BACKFILL_PAGE, snapshot.seq - after),
            )
            if not rows:
                break
            backlog.extend(orjson.dumps({"type": "row", **row.to_api()}).decode() for row in rows)
            sent = await _send(ws, backlog)
            backlog = []
            after = rows[-1].seq
        if sent and backlog:
            sent = await _send(ws, backlog)
        frames = extension.get("write")
        if (write_now := extension.get("write_now")) is not None:
            sub.deliver = lambda batch: bool(write_now(batch.frames))
        while sent and (batches := await sub.take()):
            if frames is not None:  # one write of frames built once for every client
                sent = await _write(frames, b"".join(b.frames for b in batches))
            else:
                sent = await _send(ws, [m for b in batches for m in b.messages])
        if watcher.done():
            return
        station.unsubscribe(sub)  # nothing more is queued for it while it closes
        code, reason = sub.closed if sent and sub.closed else (1013, TOO_FAR_BEHIND)
        # If the client does not read, the close frame waits behind what its socket holds
        # (bounded by the transport's buffer): given CLOSE_TIMEOUT more to read, it is
        # then dropped, so a stuck socket does not keep its buffers.
        try:
            async with asyncio.timeout(CLOSE_TIMEOUT):
                await ws.close(code=code, reason=reason)
        except TimeoutError:
            if (abort := extension.get("abort")) is not None:
                abort()
    except (WebSocketDisconnect, RuntimeError, OSError):  # OSError: gone during a write
        return
    finally:
        station.unsubscribe(sub)
        for task in (watcher, revoked):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


async def _send(ws: WebSocket, messages: list[str]) -> bool:
    """Send `messages` in order; False if that takes over `SEND_TIMEOUT` (a client that
    does not read: its TCP window is full and the send waits on it)."""
    try:
        async with asyncio.timeout(SEND_TIMEOUT):
            for message in messages:
                await ws.send_text(message)
    except TimeoutError:
        return False
    return True


async def _write(write: Callable[[bytes], Awaitable[None]], frames: bytes) -> bool:
    """`_send` through the server's `station.frames` extension (`station.api.server`)."""
    try:
        async with asyncio.timeout(SEND_TIMEOUT):
            await write(frames)
    except TimeoutError:
        return False
    return True


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
