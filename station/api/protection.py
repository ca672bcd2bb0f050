"""`GET /api/protection`: the game-protection checks (README, "Game protection"): whether
they run, the run length k the history's size gives now, and the latest alerts, newest
first (as journaled: the dashboard's alert list after a reload)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from station.api.auth import require_read, require_ready
from station.api.refusals import READ, refusals

router = APIRouter()


@router.get("/api/protection", responses=refusals(*READ))
async def get_protection(request: Request) -> dict[str, Any]:
    """The protection checks' status and recent alerts (`enabled` false: `[protection]`
    turned them off)."""
    station = require_ready(request)
    require_read(request)
    if station.protection is None:
        return {"enabled": False, "running": False, "alerts": []}
    return station.protection.status()
