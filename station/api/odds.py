"""`GET /api/odds`: the live house edge of every bet for the round being bet on.

Between rounds that is the next round, dealt from the cards left in the shoe. While a
round is in progress its bets are closed, so the answer is the odds that round was bet
at: the cards left plus the ones it has drawn so far. `advantage` lists the open bets
whose edge is negative (the surveillance alert). Computed from the published snapshot
(`TableSnapshot.remaining`, the journal's state at its `seq`), with the table's paytable
(`[table] paytable`; `?paytable=` asks for a shipped one instead), plus the
no-commission banker bet, and cached per journal seq. `paytable` in the answer is the
name of the paytable used (what the dashboard shows).

Odds are computed for punto banco only. At a chemin de fer or baccarat banque table the
answer is still 200 (the dashboard polls it like any table's), with `offered: false`,
`odds: null` and `reason` saying that odds are not offered for that game; `game` names the
table's game in every answer.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Query, Request
from starlette.requests import HTTPConnection

from station.api.access import require_read, require_ready
from station.api.refusals import READ, READ_TOKEN, refusals
from station.core.snapshot import TableSnapshot

router = APIRouter()

if TYPE_CHECKING:  # numpy is imported on first use, not when the app starts
    from station.core.odds import Analyzer
    from station.core.paytables import Paytable


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
    return {
        "size": size,
        "out": snapshot.cards_out,
        "left": max(size - snapshot.cards_out, 0),
        "unreadable": snapshot.unreadable,
        "round": 0 if rnd is None else len(rnd["player"]) + len(rnd["banker"]),
    }


def analyzer_of(conn: HTTPConnection, paytable: Paytable) -> Analyzer:
    """One compiled analyzer per paytable (compiling takes a moment; analysing, not)."""
    from station.core.odds import Analyzer, seed_bets

    state = conn.app.state
    cache: dict[str, Analyzer] | None = getattr(state, "odds_analyzers", None)
    if cache is None:
        cache = {}
        state.odds_analyzers = cache
    if paytable.source not in cache:
        cache[paytable.source] = Analyzer(seed_bets(paytable))
    return cache[paytable.source]


@router.get("/api/odds", responses=refusals(*READ), openapi_extra=READ_TOKEN)
async def get_odds(
    request: Request,
    paytable: str | None = Query(
        None,
        pattern="^(traditional|no_commission)$",
        description="a shipped paytable (default: the table's, `[table] paytable`)",
    ),
) -> dict[str, Any]:
    """Each bet's house edge (fraction of 1) for the round being bet on, and the bets
    open in it whose edge is negative; `odds` is null with no shoe in play. `cards` says
    what the odds' `cards_left` (the cards not seen) is made of."""
    station = require_ready(request)
    require_read(request)
    snapshot = station.snapshot
    seq = snapshot.seq
    spec = station.config.table.paytable if paytable is None else paytable
    cache: dict[tuple[int, str], dict[str, Any]] = getattr(request.app.state, "odds_cache", {})
    key = (seq, spec)
    if key in cache:
        return cache[key]
    if paytable is None:
        table = station.config.table.load_paytable()  # validated when the config was loaded
    else:
        from station.core.paytables import load

        table = load(paytable)
    from station.core.odds import odds_offered

    game = station.config.table.game
    not_offered = odds_offered(game)
    found = round_composition(snapshot) if not_offered is None else None
    answer: dict[str, Any] = {
        "seq": seq,
        "game": game,
        "offered": not_offered is None,
        "paytable": table.name,
        "odds": None,
        "betting_closed": snapshot.round is not None,
        "reason": None,
    }
    if not_offered is not None:
        answer["reason"] = not_offered
    elif found is None:
        answer["reason"] = "no shoe in play"
    else:
        answer["cards"] = cards_counted(snapshot)
        from station.core.odds import CompositionError

        analyzer = await asyncio.to_thread(analyzer_of, request, table)
        composition, number = found
        try:
            answer["odds"] = analyzer.live_edge(composition, number)
        except CompositionError as exc:
            answer["reason"] = str(exc)
    request.app.state.odds_cache = {key: answer}  # only the latest seq is ever asked again
    return answer
