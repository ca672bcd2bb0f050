"""What the live station's routes ask of a caller beyond a valid token: a role the
station allows (rig tokens may be off), a station ready to take events, read access
(`[api] public_read`), and a WebSocket's Origin. The token itself is `station.api.auth`'s.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from fastapi import HTTPException, Request
from starlette.requests import HTTPConnection

from station.api.auth import HIGHER_ROLE, MISSING, identify, refuse
from station.live.service import Station
from station.shared.tokens import Identity, allows


def station_of(conn: HTTPConnection) -> Station:
    station: Station = conn.app.state.station
    return station


def check_role(conn: HTTPConnection, who: Identity | None, needed: str) -> Identity:
    """`who` if it may act as `needed`; else 401 (no token) or 403 (not allowed)."""
    if who is None:
        raise refuse(conn, 401, MISSING, None)
    if who.role == "rig" and not station_of(conn).config.api.allow_rig:
        why = "rig tokens are off on this station ([api] allow_rig = false)"
        raise refuse(conn, 403, HIGHER_ROLE, who, why)
    if not allows(who.role, needed):
        raise refuse(conn, 403, HIGHER_ROLE, who, f"this needs the {needed} role")
    return who


def require_ready(conn: HTTPConnection) -> Station:
    station = station_of(conn)
    if not station.ready:
        detail = (
            station.fatal
            or station.unavailable  # waiting for a journal it cannot open yet
            or "the station is starting (replaying its journal)"
        )
        raise HTTPException(503, detail, headers={"Retry-After": "1"})
    return station


def require_read(request: Request) -> Identity | None:
    """Read endpoints: any valid token, or none when `[api] public_read` is on."""
    who = identify(request)
    if station_of(request).config.api.public_read:
        return who
    return check_role(request, who, "viewer")


def origin_allowed(conn: HTTPConnection) -> bool:
    """Whether a WebSocket's `Origin` may connect: none (not a browser), the station's own
    address as the client named it (the Host header, over http, https, ws or wss), or one
    of `[api] allowed_origins`. Browsers send the Origin of the page that opens a socket,
    so a page on another site cannot use a viewer's token through the viewer's browser."""
    origin = conn.headers.get("origin")
    if origin is None:
        return True
    origin = origin.strip().rstrip("/").lower()
    allowed = {o.rstrip("/").lower() for o in station_of(conn).config.api.allowed_origins}
    if origin in allowed:
        return True
    try:
        parts = urlsplit(origin)
    except ValueError:  # e.g. an unclosed IPv6 bracket
        return False
    host = conn.headers.get("host", "").strip().lower()
    own = parts.scheme in ("http", "https", "ws", "wss") and bool(host)
    return own and parts.netloc == host and not parts.path
