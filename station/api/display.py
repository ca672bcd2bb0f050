"""The table's scoreboard for players: its page (`GET /display`) and its own narrow data,
`GET /api/display` and `WS /api/display/live`.

Why its own data and not the dashboard's: `/api/state`, `/api/history`, `/api/odds` and
`WS /api/live` carry what a player may never see (the cards left, the odds, the journal,
the error codes, who acted). The display's payload is the board of `station.core.display`
(status, the last result, the roads as drawn, the counts) and `[display]`'s settings (the
table's name, the limits, the language and number format), nothing else; a `display` token
(the lowest role) reads it and nothing else, and `[display] public` (or `[api]
public_read`) lets a screen read it with no token.

The socket sends `{"type": "display", "alive": SECONDS, "display": PAYLOAD}` at once and
again after each committed batch that changes it (the fan-out wakes it:
`station.live.fanout`), and `{"type": "alive"}` after `alive` seconds of silence, so the
page tells a silent network (it then reconnects) from a quiet table. A screen that stops
reading is dropped as the dashboard's feed drops it (1013), and reconnects by itself. The
payload is built once per published snapshot, whatever the number of screens. Refusals
(another site's page, no token or one not good here, a station still starting) accept the
socket, then close it with 1008 (1013: starting) and the reason, which the page reads.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import orjson
from fastapi import APIRouter, HTTPException, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import FileResponse, JSONResponse
from starlette.requests import HTTPConnection

from station.api.access import check_role, origin_allowed, require_ready, station_of
from station.api.auth import client_of, identify, presented_token, tokens_of
from station.api.history import roads_of
from station.api.refusals import READ, READ_TOKEN, refusals
from station.api.static import WEB, web_response
from station.core.display import board
from station.live.config import StationConfig
from station.shared.tokens import Identity

router = APIRouter()
log = logging.getLogger("station.api")
#: Seconds without a message after which the socket says it is alive (the page reconnects
#: after three of them without a word: `display-feed.js`).
KEEPALIVE = 10.0
#: A send that takes longer closes the socket (1013): the screen stopped reading.
SEND_TIMEOUT = 5.0
#: How often an open socket's token is checked again (a revoked token loses its screen).
RECHECK_TOKEN = 0.5
ALIVE = orjson.dumps({"type": "alive"}).decode()
BEHIND = "the screen stopped reading: reconnect"


@router.get("/display", include_in_schema=False)
async def display_page() -> FileResponse:
    """The page: all of it from `station/web/` (display.html, .css, .js), nothing else."""
    return web_response(WEB / "display.html")


@router.get("/api/display", responses=refusals(*READ), openapi_extra=READ_TOKEN)
async def get_display(request: Request) -> dict[str, Any]:
    """What the table's display shows: the table's name, game, limits, language and number
    format, its status in a player's words, the shoe's number, the last round's result,
    the shoe's roads as drawn and its counts. A `display` token (or any higher; none with
    `[display] public`)."""
    require_ready(request)
    require_display(request)
    data, _ = current(request)
    return data


@router.websocket("/api/display/live")
async def display_live(ws: WebSocket) -> None:
    if not origin_allowed(ws):
        log.warning(
            "refused WS %s from %s: Origin %r is not this station's address nor one of "
            "[api] allowed_origins",
            ws.url.path,
            client_of(ws),
            ws.headers.get("origin"),
        )
        await _refuse(ws, 1008, "this page's origin may not open the display's feed")
        return
    try:
        station = require_ready(ws)
        require_display(ws)
    except HTTPException as exc:
        if exc.status_code == 429:  # the handshake answered as HTTP would
            await ws.send_denial_response(
                JSONResponse({"detail": exc.detail}, status_code=429, headers=exc.headers)
            )
            return
        await _refuse(ws, 1013 if exc.status_code == 503 else 1008, str(exc.detail))
        return
    await ws.accept()
    sub = station.subscribe()  # before the first payload: no commit after it is missed
    watcher = asyncio.create_task(_until_closed(ws))
    watcher.add_done_callback(lambda _: sub.close(1000, "gone"))
    revoked = asyncio.create_task(_until_revoked(ws, presented_token(ws)))
    revoked.add_done_callback(lambda _: sub.close(1008, "the token was revoked"))
    try:
        sent, last = True, ""
        while sent:
            _, message = current(ws)
            if message != last:
                sent, last = await _send(ws, message), message
                continue  # anything committed meanwhile is in the queue: look again
            try:
                async with asyncio.timeout(KEEPALIVE):
                    batches = await sub.take()
            except TimeoutError:
                sent = await _send(ws, ALIVE)
                continue
            if not batches:  # closed: gone, revoked, too far behind, the station stopping
                break
        if watcher.done():
            return
        station.unsubscribe(sub)
        code, reason = sub.closed if sent and sub.closed else (1013, BEHIND)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(SEND_TIMEOUT):
                await ws.close(code=code, reason=reason)
    except (WebSocketDisconnect, RuntimeError, OSError):  # OSError: gone during a write
        return
    finally:
        station.unsubscribe(sub)
        for task in (watcher, revoked):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


def require_display(conn: HTTPConnection) -> Identity | None:
    """The display's data: a token of the `display` role or higher, or none when `[display]
    public` (or `[api] public_read`) is on."""
    who = identify(conn)
    config = station_of(conn).config
    if config.display.public or config.api.public_read:
        return who
    return check_role(conn, who, "display")


def settings(config: StationConfig) -> dict[str, Any]:
    """`[display]` as the page needs it: the table's name, the language and number format,
    how long a result is announced, and the limits printed."""
    display = config.display
    return {
        "table": display.name or config.table.id,
        "language": display.language,
        "locale": display.locale,
        "currency": display.currency,
        "announce": display.announce,
        "limits": [
            {"bet": limit.bet, "label": limit.label, "min": limit.min, "max": limit.max}
            for limit in display.limits
        ],
    }


def current(conn: HTTPConnection) -> tuple[dict[str, Any], str]:
    """The payload of the published snapshot, and its socket message: built once per
    snapshot (and journal status) for every screen and request."""
    station = station_of(conn)
    snapshot, writable = station.snapshot, station.unavailable is None
    state = conn.app.state
    cached = getattr(state, "display_cache", None)
    if cached is not None and cached[0] is snapshot and cached[1] == writable:
        return cached[2], cached[3]
    roads = roads_of(conn, snapshot.results, snapshot.game)
    data = {**settings(station.config), **board(snapshot, roads, writable)}
    message = orjson.dumps({"type": "display", "alive": KEEPALIVE, "display": data}).decode()
    state.display_cache = (snapshot, writable, data, message)
    return data, message


async def _refuse(ws: WebSocket, code: int, reason: str) -> None:
    """Accept, then close with `code` and `reason`: the page reads them (a refused
    handshake would tell it nothing), and a refused token stops its tries coming fast."""
    await ws.accept()
    await ws.close(code=code, reason=reason.encode()[:123].decode(errors="ignore"))


async def _send(ws: WebSocket, message: str) -> bool:
    """Send `message`; False if that takes over `SEND_TIMEOUT` (a screen that does not read)."""
    try:
        async with asyncio.timeout(SEND_TIMEOUT):
            await ws.send_text(message)
    except TimeoutError:
        return False
    return True


async def _until_closed(ws: WebSocket) -> None:
    """Wait for the screen to go away (it sends nothing the station needs)."""
    while True:
        message = await ws.receive()
        if message["type"] == "websocket.disconnect":
            return


async def _until_revoked(ws: WebSocket, token: str | None) -> None:
    """Return once the socket's token is no longer known; never for a socket without one."""
    if not token:
        await asyncio.Event().wait()  # forever: cancelled when the socket ends
        return
    store = tokens_of(ws)
    while True:
        await asyncio.sleep(RECHECK_TOKEN)
        if store.identify(token) is None:
            return
