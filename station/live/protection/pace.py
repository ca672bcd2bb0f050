"""The pace of the current shoe and shift, for the dashboard (`GET /api/pace`).

Read from the journal on a read-only connection (the writer is never disturbed): the
rows from the start of the shoe that was in play when the shift began, decided again by
a fresh table (`station.core.protection.pace.Pace`), counting those of the shift.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from station.core.protection.pace import Pace
from station.core.table import Table


def shift_pace(journal: Path, table: Table, table_id: str, hours: float) -> dict[str, Any]:
    """The pace of the last `hours` hours (the shift) and of the current shoe."""
    start = datetime.now(UTC) - timedelta(hours=hours)
    since = start.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    db = sqlite3.connect(journal.resolve().as_uri() + "?mode=ro", uri=True)
    try:
        first = db.execute(
            "SELECT max(seq) FROM journal WHERE kind = 'event' AND ts <= ? AND "
            "json_extract(event, '$.type') = 'shoe' AND json_extract(verdict, '$.ok')",
            (since,),
        ).fetchone()[0]
        if first is None:  # no shoe began before the shift: from the first one
            first = db.execute(
                "SELECT min(seq) FROM journal WHERE kind = 'event' AND "
                "json_extract(event, '$.type') = 'shoe' AND json_extract(verdict, '$.ok')"
            ).fetchone()[0]
        rows = (
            db.execute(
                "SELECT ts, actor, event FROM journal WHERE kind = 'event' AND seq >= ? "
                "ORDER BY seq",
                (first,),
            ).fetchall()
            if first is not None
            else []
        )
    finally:
        db.close()
    pace = Pace(table, table_id, start)
    for ts, actor, event in rows:
        pace.row(ts, actor, orjson.loads(event))
    report = pace.report()
    current = pace.shoes[-1] if pace.shoes else None
    return {
        "hours": hours,
        "shift": {**report["totals"], "from": report["from"], "dealers": report["dealers"]},
        "shoe": None
        if current is None
        else {"shoe": current.number, "started": current.started, **current.tally.as_dict()},
    }
