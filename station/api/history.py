"""`GET /api/history` (the shoe's rounds and its roads) and `GET /api/export` (the journal
as replay JSON Lines, for the dashboard's download).

Why a follower: the service's `Table` belongs to its writer, which applies a batch of
events *before* committing it, so reading it from a request could show a state the
journal does not have yet. The follower keeps a table of its own, fed only with rows
already committed (read back from the journal up to the published snapshot's seq), so
the history and the odds shown are always those of the journal, like `station replay`
of an export would give.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse
from starlette.requests import HTTPConnection

from station.api.auth import require_read, require_ready
from station.core.roads import scoreboards
from station.core.table import Table
from station.live.journal import export_line, read_rows
from station.live.service import Station

router = APIRouter()
PAGE = 1000


class Follower:
    """A table that follows the committed journal (see the module docstring)."""

    def __init__(self, station: Station) -> None:
        self.station = station
        self.table = station.config.table.new_table()
        self.seq = 0
        self._lock = asyncio.Lock()

    async def sync(self) -> int:
        """Apply the rows committed since the last call; returns the seq now followed."""
        async with self._lock:
            target = self.station.snapshot.seq
            path = self.station.config.journal.path
            while self.seq < target:
                rows = await asyncio.to_thread(read_rows, path, self.seq,
                                               min(PAGE, target - self.seq))  # fmt: skip
                if not rows:
                    break
                for row in rows:
                    if row.kind == "event":
                        self.table.apply(row.event)
                self.seq = rows[-1].seq
            return self.seq


def follower_of(conn: HTTPConnection) -> Follower:
    """The app's follower, made on first use (one per app, shared by history and odds)."""
    state = conn.app.state
    follower: Follower | None = getattr(state, "follower", None)
    if follower is None:
        follower = Follower(conn.app.state.station)
        state.follower = follower
    return follower


def shoe_history(table: Table) -> dict[str, Any]:
    """The current (or last) shoe's rounds and voided rounds, and its roads."""
    rounds = [dict(r) for r in table.results]
    return {
        "shoe": table.shoes_started,
        "in_play": table.in_play,
        "rounds": rounds,
        "voided": list(table.voided),
        "roads": scoreboards(rounds),
    }


@router.get("/api/history")
async def get_history(request: Request) -> dict[str, Any]:
    """The shoe's rounds (cards, totals, winner, flags), voided rounds and roads, as of
    journal row `seq`."""
    require_ready(request)
    require_read(request)
    follower = follower_of(request)
    seq = await follower.sync()
    return {"seq": seq, **shoe_history(follower.table)}


@router.get("/api/export")
async def get_export(
    request: Request, after: int = Query(0, ge=0, description="only rows after this seq"),
) -> StreamingResponse:  # fmt: skip
    """The table events as `station journal export` writes them (replay JSON Lines, each
    with its verdict and journal seq, ts, source, actor), as a file download."""
    station = require_ready(request)
    require_read(request)
    path = station.config.journal.path
    upto = station.snapshot.seq
    table_id = re.sub(r"[^A-Za-z0-9._-]", "_", station.config.table.id)

    def lines() -> Iterator[bytes]:
        seq = after
        while seq < upto:
            rows = read_rows(path, seq, min(PAGE, upto - seq))
            if not rows:
                return
            for row in rows:
                if row.kind == "event":
                    yield export_line(row)
            seq = rows[-1].seq

    name = f"{table_id}-journal-{after + 1}-{upto}.jsonl"
    return StreamingResponse(lines(), media_type="application/x-ndjson",
                             headers={"Content-Disposition": f'attachment; filename="{name}"'})
