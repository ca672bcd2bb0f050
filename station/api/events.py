"""`POST /api/events`: one event of the replay format in, its verdict out.

The body is parsed here (strict JSON, like `station replay`) rather than by a model, so
the event is journaled exactly as sent, extra keys included. Anything that is not a
valid event is a 422 and is not journaled; a valid event always gets 200 with its
verdict, whatever the verdict.
"""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import APIRouter, HTTPException, Request

from station.api.auth import EVENT_ROLE, check_role, identify, refuse, require_ready
from station.core.table import EVENT_TYPES
from station.live.service import NotReady

router = APIRouter()
MAX_BODY = 64 * 1024
RESERVED = ("journal", "verdict")  # keys `station journal export` adds to each line


def parse_event(body: bytes) -> dict[str, Any]:
    """The event in `body`, or a ValueError saying what is wrong with it."""
    if len(body) > MAX_BODY:
        raise ValueError(f"the body is over {MAX_BODY} bytes")
    try:
        event = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"the body is not valid JSON ({exc})") from None
    if not isinstance(event, dict):
        raise ValueError('the body must be one JSON object, e.g. {"type": "close_bets"}')
    kind = event.get("type")
    if kind not in EVENT_TYPES:
        raise ValueError(f"'type' must be one of {', '.join(EVENT_TYPES)}; got {kind!r}")
    if kind == "card" and "card" not in event:
        raise ValueError('a card event needs a "card" key (a card code, or null if unreadable)')
    for key in RESERVED:
        if key in event:
            raise ValueError(f"the key {key!r} is reserved (journal export adds it)")
    return event


@router.post("/api/events")
async def post_event(request: Request) -> dict[str, Any]:
    """Submit one table event; answers its verdict (the replay output's fields, with the
    journal's seq)."""
    station = require_ready(request)
    who = check_role(request, identify(request), "dealer")
    try:
        event = parse_event(await request.body())
    except ValueError as exc:
        raise refuse(request, 422, str(exc), who) from None
    kind = event["type"]
    if kind == "restart":
        raise refuse(request, 403, "only the station itself journals restart", who)
    check_role(request, who, EVENT_ROLE[kind])
    try:
        row = await station.submit(event, "api", who.name)
    except NotReady as exc:
        raise HTTPException(503, str(exc)) from None
    assert row.verdict is not None
    return {"seq": row.seq, **row.verdict}
