"""`POST /api/sim/misdeal`: the demo's suspension on demand.

A newcomer at `make run` should see what the station does on a dealer error without
waiting for the simulated reader's rare faults: this asks the demo's dealer bot (the
`sim` reader) to deal a card before closing bets. Only a station whose reader can do so
(the sim driver's `misdeal`) has it; on any other it is 404, so a real table cannot be
made to suspend through it.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request

from station.api.access import check_role, require_ready
from station.api.auth import identify
from station.api.refusals import TOKEN, refusals

router = APIRouter()


@router.post(
    "/api/sim/misdeal",
    openapi_extra=TOKEN,
    responses=refusals(401, 403, 404, 429, 503),
)
def post_misdeal(request: Request) -> dict[str, Any]:
    """Demo only (`[reader] driver = "sim"`): the dealer bot deals a card before closing
    bets at the next chance, so the table suspends (UNEXPECTED_CARD, or BURN_EXCESS in a
    shoe's first round); a dealer token."""
    station = require_ready(request)
    check_role(request, identify(request), "dealer")
    misdeal = getattr(station.reader, "misdeal", None)
    if misdeal is None:
        raise HTTPException(
            404,
            'only the demo\'s simulated reader ([reader] driver = "sim") deals a misdeal on '
            "demand; this station's reader is a real one",
        )
    return {"ok": True, "detail": misdeal()}
