"""`GET /api/odds`: the live house edge of every bet for the round being bet on.

Between rounds that is the next round, dealt from the cards left in the shoe. While a
round is in progress its bets are closed, so the answer is the odds that round was bet
at: the cards left plus the ones it has drawn so far. `advantage` lists the open bets
whose edge is negative (the surveillance alert). Computed from the published snapshot
(`TableSnapshot.remaining`, the journal's state at its `seq`), with the traditional
paytable (plus the no-commission banker bet), and cached per journal seq.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Query, Request
from starlette.requests import HTTPConnection

from station.api.auth import require_read, require_ready
from station.core.snapshot import TableSnapshot

router = APIRouter()
DEFAULT_PAYTABLE = "traditional"

if TYPE_CHECKING:  # numpy is imported on first use, not when the app starts
    from station.core.odds import Analyzer


def round_composition(snapshot: TableSnapshot) -> tuple[dict[str, int], int] | None:
    """The shoe the round being bet on is dealt from, and that round's number; None with
    no shoe in play."""
    if not snapshot.in_play:
        return None
    composition = dict(snapshot.remaining)
    rnd = snapshot.round
    if rnd is None:
        return composition, snapshot.rounds_opened + 1
    for card, copies in Counter([*rnd["player"], *rnd["banker"]]).items():
        composition[card] = composition.get(card, 0) + copies
    return composition, rnd["number"]


def cards_counted(snapshot: TableSnapshot) -> dict[str, int]:
    """What the odds' `cards_left` is made of, so a page can say it in words: the cards
    still in the shoe (`left` of `size`, `out` having left it), the unreadable ones (out,
    but never identified, so still unseen) and, while betting is closed, the round's own
    cards (its odds are the ones it was bet at)."""
    size = snapshot.decks * 52
    rnd = snapshot.round
    return {"size": size, "out": snapshot.cards_out, "left": max(size - snapshot.cards_out, 0),
            "unreadable": snapshot.unreadable,
            "round": 0 if rnd is None else len(rnd["player"]) + len(rnd["banker"])}  # fmt: skip


def analyzer_of(conn: HTTPConnection, paytable: str) -> Analyzer:
    """One compiled analyzer per paytable name (compiling takes a moment; analysing, not)."""
    from station.core.odds import Analyzer, seed_bets
    from station.core.paytables import load

    state = conn.app.state
    cache: dict[str, Analyzer] | None = getattr(state, "odds_analyzers", None)
    if cache is None:
        cache = {}
        state.odds_analyzers = cache
    if paytable not in cache:
        cache[paytable] = Analyzer(seed_bets(load(paytable)))
    return cache[paytable]


@router.get("/api/odds")
async def get_odds(
    request: Request,
    paytable: str = Query(DEFAULT_PAYTABLE, pattern="^(traditional|no_commission)$",
                          description="a shipped paytable"),
) -> dict[str, Any]:  # fmt: skip
    """Each bet's house edge (fraction of 1) for the round being bet on, and the bets
    open in it whose edge is negative; `odds` is null with no shoe in play. `cards` says
    what the odds' `cards_left` (the cards not seen) is made of."""
    station = require_ready(request)
    require_read(request)
    snapshot = station.snapshot
    seq = snapshot.seq
    cache: dict[tuple[int, str], dict[str, Any]] = getattr(request.app.state, "odds_cache", {})
    key = (seq, paytable)
    if key in cache:
        return cache[key]
    found = round_composition(snapshot)
    answer: dict[str, Any] = {
        "seq": seq, "paytable": paytable, "odds": None,
        "betting_closed": snapshot.round is not None, "reason": None,
    }  # fmt: skip
    if found is None:
        answer["reason"] = "no shoe in play"
    else:
        answer["cards"] = cards_counted(snapshot)
        from station.core.odds import CompositionError

        analyzer = await asyncio.to_thread(analyzer_of, request, paytable)
        composition, number = found
        try:
            answer["odds"] = analyzer.live_edge(composition, number)
        except CompositionError as exc:
            answer["reason"] = str(exc)
    request.app.state.odds_cache = {key: answer}  # only the latest seq is ever asked again
    return answer
