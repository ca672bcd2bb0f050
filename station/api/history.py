"""`GET /api/history` (the shoe's rounds and its roads) and `GET /api/export` (the journal
as replay JSON Lines, for the dashboard's download).

The history is the published snapshot's (`TableSnapshot.results` and `voided`, taken by
the writer after each commit), so it is always the journal's, as `station replay` of an
export up to `seq` would give, without reading the journal back. The roads are worked
out here, on request, once per published set of results (not on the writer's path):
punto banco's and chemin de fer's bead plate, big road and derived roads, or baccarat
banque's bead plate per tableau (`station.core.roads.game_scoreboards`); `game` says which.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse
from starlette.requests import HTTPConnection

from station.api.access import require_read, require_ready
from station.api.reads import MAX_SEQ
from station.api.refusals import READ, READ_TOKEN, refusals
from station.core.results import GameResult
from station.core.roads import game_scoreboards
from station.core.snapshot import TableSnapshot
from station.live.journal.reading import export_line, read_rows
from station.live.journal.table import table_settings
from station.live.replay import saying_table

router = APIRouter()
PAGE = 1000
JOURNAL_LINES = (
    "The table events as replay JSON Lines (one JSON object a line: the event as sent, "
    "its `verdict` and its `journal` object: seq, ts, source, actor), as a download"
)


class JournalLines(StreamingResponse):
    """JSON Lines, streamed page by page (the whole journal is never in memory)."""

    media_type = "application/x-ndjson"


#: Results tuples whose roads are kept: the shoe's and the previous shoe's.
ROADS_KEPT = 2


def roads_of(
    conn: HTTPConnection, results: tuple[GameResult, ...], game: str = "punto_banco"
) -> dict[str, Any]:
    """The scoreboards of `results` (a shoe of `game`), cached for the latest published
    results (the writer shares one tuple between snapshots until a round ends, so most
    requests hit) and the previous shoe's."""
    state = conn.app.state
    cached: list[tuple[tuple[GameResult, ...], dict[str, Any]]] = getattr(state, "roads_cache", [])
    for kept, roads in cached:
        if kept is results:
            return roads
    roads = game_scoreboards(game, results)
    state.roads_cache = [(results, roads), *cached[: ROADS_KEPT - 1]]
    return roads


def shoe_history(
    snapshot: TableSnapshot, roads: dict[str, Any], previous: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The current (or last) shoe's rounds and voided rounds, its roads, and `previous`
    (the shoe before, while this one has no result yet; else null)."""
    return {
        "seq": snapshot.seq,
        "game": snapshot.game,
        "shoe": snapshot.shoes_started,
        "in_play": snapshot.in_play,
        "rounds": snapshot.results,
        "voided": snapshot.voided,
        "roads": roads,
        "previous": previous,
    }


def previous_shoe(conn: HTTPConnection, snapshot: TableSnapshot) -> dict[str, Any] | None:
    """The shoe before this one while this one has no round yet (a supervisor still sees
    the finished shoe's rounds and roads through the shuffle and the burn); else None."""
    if snapshot.results or not (snapshot.previous_results or snapshot.previous_voided):
        return None
    return {
        "shoe": snapshot.shoes_started - 1,
        "rounds": snapshot.previous_results,
        "voided": snapshot.previous_voided,
        "roads": roads_of(conn, snapshot.previous_results, snapshot.game),
    }


@router.get("/api/history", responses=refusals(*READ), openapi_extra=READ_TOKEN)
async def get_history(request: Request) -> dict[str, Any]:
    """The shoe's rounds (cards, totals, winner or each tableau's outcome, flags), voided
    rounds and roads (for `game`), as of journal row `seq`; until the shoe has a result,
    also the previous shoe's (`previous`)."""
    station = require_ready(request)
    require_read(request)
    snapshot = station.snapshot
    return shoe_history(
        snapshot,
        roads_of(request, snapshot.results, snapshot.game),
        previous_shoe(request, snapshot),
    )


@router.get(
    "/api/export",
    response_class=JournalLines,
    responses={200: {"description": JOURNAL_LINES}, **refusals(*READ)},
    openapi_extra=READ_TOKEN,
)
async def get_export(
    request: Request,
    after: int = Query(0, ge=0, le=MAX_SEQ, description="only rows after this seq"),
) -> JournalLines:
    """The table events as `station journal export` writes them (replay JSON Lines, each
    with its verdict and journal seq, ts, source, actor; the first also saying the table
    the journal is the record of, so `station replay` plays it at its own game), as a file
    download."""
    station = require_ready(request)
    require_read(request)
    path = station.config.journal.path
    upto = station.snapshot.seq
    settings = table_settings(station.config.table.id, station.table)
    table_id = re.sub(r"[^A-Za-z0-9._-]", "_", station.config.table.id)

    def lines() -> Iterator[bytes]:
        seq, first = after, True
        while seq < upto:
            rows = read_rows(path, seq, min(PAGE, upto - seq))
            if not rows:
                return
            for row in rows:
                if row.kind == "event":
                    line = export_line(row)
                    yield saying_table(line, settings) if first else line
                    first = False
            seq = rows[-1].seq

    name = f"{table_id}-journal-{after + 1}-{upto}.jsonl"
    return JournalLines(
        lines(),
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )
