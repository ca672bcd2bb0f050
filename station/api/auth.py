"""Who is asking: bearer tokens to identities, roles to permissions.

Every refusal (401, 403) is logged with the client's address and the token's name (never
the token), so a supervisor can see who tried what.
"""

from __future__ import annotations

import logging

from fastapi import HTTPException, Request
from starlette.requests import HTTPConnection

from station.live.service import Station
from station.live.tokens import Identity, TokenStore, allows

log = logging.getLogger("station.api")


def station_of(conn: HTTPConnection) -> Station:
    station: Station = conn.app.state.station
    return station


def tokens_of(conn: HTTPConnection) -> TokenStore:
    store: TokenStore = conn.app.state.tokens
    return store


def presented_token(conn: HTTPConnection) -> str | None:
    """The bearer token of a request: the Authorization header, or (for WebSockets, which
    browsers cannot give headers) the `token` query parameter."""
    header = conn.headers.get("authorization")
    if header:
        scheme, _, value = header.partition(" ")
        return value.strip() if scheme.lower() == "bearer" and value.strip() else ""
    return conn.query_params.get("token")


def refuse(conn: HTTPConnection, status: int, detail: str, who: Identity | None) -> HTTPException:
    client = conn.client.host if conn.client else "?"
    name = who.name if who else "-"
    log.warning(
        "refused %s %s from %s (token %s): %d %s",
        getattr(conn, "method", "WS"),
        conn.url.path,
        client,
        name,
        status,
        detail,
    )
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return HTTPException(status, detail, headers=headers)


def identify(conn: HTTPConnection) -> Identity | None:
    """The caller's identity, None without a token; 401 for an unknown token."""
    token = presented_token(conn)
    if token is None:
        return None
    who = tokens_of(conn).identify(token) if token else None
    if who is None:
        raise refuse(
            conn,
            401,
            "unknown token: ask a supervisor for a valid token (`station token add`)",
            None,
        )
    return who


def check_role(conn: HTTPConnection, who: Identity | None, needed: str) -> Identity:
    """`who` if it may act as `needed`; else 401 (no token) or 403 (not allowed)."""
    if who is None:
        raise refuse(conn, 401, "missing token: send 'Authorization: Bearer TOKEN'", None)
    if who.role == "rig" and not station_of(conn).config.api.allow_rig:
        raise refuse(
            conn,
            403,
            "rig tokens are off on this station ([api] allow_rig = "
            "false); they are for test rigs only",
            who,
        )
    if not allows(who.role, needed):
        raise refuse(
            conn, 403, f"this needs the {needed} role; token {who.name!r} is {who.role}", who
        )
    return who


def require_ready(conn: HTTPConnection) -> Station:
    station = station_of(conn)
    if not station.ready:
        detail = station.fatal or "the station is starting (replaying its journal)"
        raise HTTPException(503, detail, headers={"Retry-After": "1"})
    return station


def require_read(request: Request) -> Identity | None:
    """Read endpoints: any valid token, or none when `[api] public_read` is on."""
    who = identify(request)
    if station_of(request).config.api.public_read:
        return who
    return check_role(request, who, "viewer")
