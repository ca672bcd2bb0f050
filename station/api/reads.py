"""`GET /api/state` and `GET /api/journal`: the table now, and its history."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Query, Request

from station.api.access import require_read, require_ready
from station.api.refusals import READ, READ_TOKEN, refusals
from station.live.journal.reading import read_rows
from station.shared.rows import Row

router = APIRouter()
#: The largest seq SQLite can store (a signed 64-bit integer): larger is a 422, not a 500.
MAX_SEQ = 2**63 - 1


@router.get("/api/state", responses=refusals(*READ), openapi_extra=READ_TOKEN)
async def get_state(request: Request) -> dict[str, Any]:
    """The table after the last committed row, and the reader's status."""
    station = require_ready(request)
    require_read(request)
    return station.published_state()


@router.get("/api/journal", responses=refusals(*READ), openapi_extra=READ_TOKEN)
async def get_journal(
    request: Request,
    after: int = Query(0, ge=0, le=MAX_SEQ, description="rows after this seq"),
    limit: int = Query(100, ge=1, le=1000, description="at most this many rows"),
) -> dict[str, Any]:
    """Committed rows after `after`, oldest first. Notices (not table events) have
    `event.type == "notice"` and a null verdict."""
    station = require_ready(request)
    require_read(request)
    rows = await asyncio.to_thread(_read, station.config.journal.path, after, limit)
    return {"events": [r.to_api() for r in rows]}


def _read(path: Path, after: int, limit: int) -> list[Row]:
    try:
        return read_rows(path, after, limit)
    except sqlite3.Error as exc:  # pragma: no cover - a broken disk
        raise RuntimeError(f"cannot read the journal: {exc}") from exc
