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
`after`), and reset if it does not answer its close frame within `CLOSE_TIMEOUT`; the
writer and the other clients never wait for it.

Refusals, each logged: a page whose `Origin` is neither the station's own address nor one
of `[api] allowed_origins` (clients that send none are not browsers), a missing or unknown
token, or an `after` that is not a whole number: the socket is accepted, then closed with
code 1008 and the reason, which a browser's page can read (HTTP statuses of a handshake
it cannot); a station still starting, 1013. A wrong token from an address throttled for
wrong tokens gets HTTP 429 with Retry-After instead of the handshake (a valid token is let
through), and a client that would catch up while `[api] backfill_queue` others wait
already, HTTP 503 with Retry-After.

Catching up (`after`) is paged and bounded: see `station.api.backfill`. The reset (any
close frame unanswered within `CLOSE_TIMEOUT`) discards what the client did not read, in
the station and in the kernel (`station.api.server`: `SO_LINGER` 0).
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
from station.api.backfill import RETRY_AFTER, Backfills, catch_up
from station.api.server import FRAMES
from station.live.fanout import TOO_FAR_BEHIND, published, text_frame
from station.live.service import Station

router = APIRouter()
log = logging.getLogger("station.api")
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
        await _refuse(ws, 1008, "this page's origin may not open the station's feed")
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
        await _refuse(ws, 1013 if exc.status_code == 503 else 1008, str(exc.detail))
        return
    try:
        after = int(ws.query_params.get("after", "-1"))
    except ValueError:
        await _refuse(ws, 1008, "after must be a whole number (a journal seq)")
        return
    backfills: Backfills = ws.app.state.backfills
    catching_up = 0 <= after < station.snapshot.seq
    if catching_up and backfills.full:
        log.warning(
            "refused WS %s from %s: %d clients catching up and %d waiting ([api] "
            "max_backfills, backfill_queue)",
            ws.url.path,
            client_of(ws),
            backfills.running,
            backfills.waiting,
        )
        detail = "too many clients are catching up from the journal: retry later"
        headers = {"Retry-After": str(RETRY_AFTER)}
        await ws.send_denial_response(JSONResponse({"detail": detail}, 503, headers=headers))
        return
    await ws.accept()
    extension: dict[str, Any] = ws.scope.get("extensions", {}).get(FRAMES, {})
    watcher = asyncio.create_task(_until_closed(ws))
    revoked = asyncio.create_task(_until_revoked(ws, presented_token(ws)))
    turn = _Turn(backfills)
    try:
        if catching_up and not await turn.take(watcher, revoked):
            if revoked.done():
                await _close(ws, extension, 1008, "the token was revoked")
            return
        await _serve(ws, extension, station, after, watcher, revoked, turn)
    except (WebSocketDisconnect, RuntimeError, OSError):  # OSError: gone during a write
        return
    finally:
        turn.give_back()
        for task in (watcher, revoked):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


async def _serve(
    ws: WebSocket,
    extension: dict[str, Any],
    station: Station,
    after: int,
    watcher: asyncio.Task[None],
    revoked: asyncio.Task[None],
    turn: _Turn,
) -> None:
    """The hello, the rows after `after` (the catch-up; `turn` given back once done),
    then every committed batch."""
    # Subscribe and take the snapshot in one step (no await between): the listener gets
    # exactly the batches committed after `snapshot`, and the catch-up reads up to it.
    sub = station.subscribe()
    snapshot = station.snapshot
    watcher.add_done_callback(lambda _: sub.close(1000, "gone"))
    revoked.add_done_callback(lambda _: sub.close(1008, "the token was revoked"))
    try:
        state = published(snapshot, station.reader_status(), station.journal_status())
        hello = {"type": "hello", "seq": snapshot.seq, "state": state}
        sent = await _send(ws, [orjson.dumps(hello).decode()])
        frames = extension.get("write")
        # Without a turn, only the rows committed while the socket was accepted (few).
        if sent and 0 <= after < snapshot.seq:
            sent = await catch_up(
                station.config.journal.path,
                after,
                snapshot.seq,
                ready=lambda: _drained(extension),
                send=lambda messages: _page(ws, frames, messages),
            )
        turn.give_back()
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
        await _close(ws, extension, code, reason)
    finally:
        station.unsubscribe(sub)


class _Turn:
    """One client's turn to catch up (`Backfills`), given back once, whatever happens."""

    def __init__(self, backfills: Backfills) -> None:
        self.backfills = backfills
        self.taken = False

    async def take(self, *gone: asyncio.Future[None]) -> bool:
        self.taken = await self.backfills.turn_or_gone(*gone)
        return self.taken

    def give_back(self) -> None:
        if self.taken:
            self.taken = False
            self.backfills.leave()


async def _refuse(ws: WebSocket, code: int, reason: str) -> None:
    """Accept, then close with `code` and `reason` (what a page's script can read)."""
    await ws.accept()
    await ws.close(code=code, reason=_reason(reason))


def _reason(text: str) -> str:
    """`text` cut to what a close frame carries (123 bytes of UTF-8)."""
    return text.encode()[:123].decode(errors="ignore")


async def _close(ws: WebSocket, extension: dict[str, Any], code: int, reason: str) -> None:
    """Close with `code`, waiting `CLOSE_TIMEOUT` for the client to answer; then reset the
    connection. A client that does not read has its close frame behind what its socket
    holds: a plain close would leave that, in the kernel too, for minutes."""
    try:
        async with asyncio.timeout(CLOSE_TIMEOUT):
            await ws.close(code=code, reason=_reason(reason))
            if (gone := extension.get("gone")) is not None:
                await gone()
    except TimeoutError:
        if (abort := extension.get("abort")) is not None:
            abort()


async def _drained(extension: dict[str, Any]) -> bool:
    """Whether the client's socket took what it was sent (its buffer under the
    high-water mark) within `SEND_TIMEOUT`; True without the `station.frames` extension
    (an ASGI send waits for that itself)."""
    drained = extension.get("drained")
    if drained is None:
        return True
    try:
        async with asyncio.timeout(SEND_TIMEOUT):
            await drained()
    except TimeoutError:
        return False
    return True


async def _page(
    ws: WebSocket, frames: Callable[[bytes], Awaitable[None]] | None, messages: list[bytes]
) -> bool:
    """One page of the catch-up: one write of its frames, or its messages sent by ASGI."""
    if frames is not None:
        return await _write(frames, b"".join(map(text_frame, messages)))
    return await _send(ws, [m.decode() for m in messages])


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
