"""`GET /api/protection` and `GET /api/pace`.

`/api/protection`: the game-protection checks (docs/protection.md): whether
they run, the run length k the history's size gives now, and the latest alerts, newest
first (as journaled: the dashboard's alert list after a reload). `/api/pace`: the pace
of the current shoe and shift (the dashboard's pace panel)."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Query, Request

from station.api.access import require_read, require_ready
from station.api.refusals import READ, READ_TOKEN, refusals

router = APIRouter()


@router.get("/api/protection", responses=refusals(*READ), openapi_extra=READ_TOKEN)
async def get_protection(request: Request) -> dict[str, Any]:
    """The protection checks' status and recent alerts (`enabled` false: `[protection]`
    turned them off)."""
    station = require_ready(request)
    require_read(request)
    if station.protection is None:
        return {"enabled": False, "running": False, "alerts": []}
    return station.protection.status()


@router.get("/api/pace", responses=refusals(*READ), openapi_extra=READ_TOKEN)
async def get_pace(
    request: Request,
    hours: float = Query(8.0, gt=0, le=24, description="the shift: this many hours back"),
) -> dict[str, Any]:
    """Game pace of the shift (`hours` back) and of the current shoe: rounds per hour,
    seconds per round, bets closed to result, suspensions by code and their resolution,
    voided rounds, in total and per dealer (`station report` has the whole report)."""
    station = require_ready(request)
    require_read(request)
    from station.live.protection.pace import shift_pace

    config = station.config
    return await asyncio.to_thread(
        shift_pace, config.journal.path, config.table.new_table(), config.table.id, hours
    )
