"""A read-only picture of the table, published by the writer after each commit.

Why: only the service's writer touches the `Table`. Everyone else (the API's `/api/state`,
`/api/history` and `/api/odds`, the WebSocket, the `sim` driver's dealer bot in its own
thread) reads the latest `TableSnapshot`, an immutable value swapped in with one
attribute assignment (atomic in Python), so readers need no lock and never see a state
the journal does not have yet. State flows one way: the table decides, the writer
commits, then publishes; nobody reads the journal back to learn the state.

The snapshot is taken after every commit, so it is cheap: the shoe's results are a tuple
shared with the previous snapshot until a round ends, and the heavy parts (`results`,
`remaining`, the previous shoe's results) stay out of `to_dict` (the state sent with
every WebSocket batch).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any

from station.core.results import GameResult
from station.core.table import Table
from station.core.words import EXPLANATIONS

#: Published for `/api/history` and `/api/odds`, not in `/api/state` or the WebSocket.
_NOT_IN_STATE = frozenset({"results", "remaining", "previous_results", "previous_voided"})


@dataclass(frozen=True, slots=True)
class TableSnapshot:
    """The table after journal row `seq`."""

    seq: int
    table_id: str
    #: The game's name (`station.core.games`), its hands in layout order, its burn.
    game: str
    hands: tuple[str, ...]
    burn: str
    decks: int
    gated: bool
    cut_policy: str
    in_play: bool
    shoes_started: int
    cards_out: int
    unreadable: int
    reveal_due: bool
    burns_due: int
    burned: tuple[str, ...]
    rounds_opened: int
    round: dict[str, Any] | None
    due: str | None
    expecting: str
    #: The option waiting for its decision (`Table.option`), or None.
    option: dict[str, Any] | None
    #: The card held by DECISION_MISSING, or None.
    held: str | None
    suspension: dict[str, Any] | None
    cut_seen: bool
    last_round: int | None
    last_result: dict[str, Any] | None
    rounds_complete: int
    voided: tuple[int, ...]
    actions: tuple[str, ...]
    results: tuple[GameResult, ...]
    remaining: Mapping[str, int]
    #: The shoe before this one (`shoes_started - 1`): its rounds and voided rounds.
    previous_results: tuple[GameResult, ...]
    previous_voided: tuple[int, ...]

    @property
    def suspended(self) -> bool:
        return self.suspension is not None

    def to_dict(self) -> dict[str, Any]:
        """The state as `/api/state` and the WebSocket show it (JSON-ready; without the
        shoe's results and remaining cards, which `/api/history` and `/api/odds` serve)."""
        d = {name: getattr(self, name) for name in _STATE_FIELDS}
        d["suspended"] = self.suspended
        return d


_STATE_FIELDS = tuple(f.name for f in fields(TableSnapshot) if f.name not in _NOT_IN_STATE)


#: Characters of a card as the state shows it: a card code is 2 or 3, so what is longer
#: is what an unreadable card's reader sent, shown cut (the journal keeps it whole).
CARD_TEXT = 24


def _card_text(card: object) -> str | None:
    """A card as the state shows it: its code, or a short text of what was read."""
    if card is None:
        return None
    text = card if isinstance(card, str) else repr(card)
    return text if len(text) <= CARD_TEXT else text[: CARD_TEXT - 1] + "…"


def take(
    table: Table,
    seq: int,
    table_id: str,
    suspended_since: int | None,
    previous: TableSnapshot | None = None,
) -> TableSnapshot:
    """The snapshot of `table` now (call it from the writer only). With the `previous`
    snapshot, its values that did not change are shared, not copied again."""
    rnd = table.round
    game = table.game
    susp = table.suspension
    suspension = None
    if susp is not None:
        suspension = {
            "code": susp.code,
            "explanation": EXPLANATIONS.get(susp.code, susp.code),
            "card": _card_text(susp.card),
            "later": [{"code": c, "card": _card_text(k)} for c, k in susp.later],
            "later_counts": dict(susp.later_counts),
            "later_total": susp.later_total,
            "since_seq": suspended_since,
        }
    results = table.results
    cards_out = table.cards_out
    same_shoe = previous is not None and previous.shoes_started == table.shoes_started
    # Within a shoe, results and identified cards only ever grow: same count, same values.
    if previous is not None and same_shoe and len(previous.results) == len(results):
        published_results = previous.results
    else:
        published_results = tuple(results)
    if (
        previous is not None
        and same_shoe
        and previous.cards_out - previous.unreadable == cards_out - table.unreadable
    ):
        remaining = previous.remaining
    else:
        remaining = MappingProxyType(table.remaining())
    if previous is not None and same_shoe:
        previous_results, previous_voided = previous.previous_results, previous.previous_voided
    else:
        previous_results = tuple(table.previous_results)
        previous_voided = tuple(table.previous_voided)
    last = results[-1] if results else None
    return TableSnapshot(
        seq=seq,
        table_id=table_id,
        game=game.name,
        hands=game.hands,
        burn=table.burn,
        decks=table.decks,
        gated=table.gated,
        cut_policy=table.cut_policy,
        in_play=table.in_play,
        shoes_started=table.shoes_started,
        cards_out=cards_out,
        unreadable=table.unreadable,
        reveal_due=table.reveal_due,
        burns_due=table.burns_due,
        burned=tuple(table.burned),
        rounds_opened=table.rounds_opened,
        round=None
        if rnd is None
        else {
            "number": rnd.number,
            **{hand: list(cards) for hand, cards in zip(game.hands, rnd.cards, strict=True)},
            "due": rnd.due,
        },
        due=table.due(),
        expecting=table.expecting(),
        option=table.option(),
        held=table.held,
        suspension=suspension,
        cut_seen=table.cut_seen,
        last_round=table.last_round,
        last_result=None if last is None else dict(last),
        rounds_complete=len(table.results),
        voided=tuple(table.voided),
        actions=table.actions(),
        results=published_results,
        remaining=remaining,
        previous_results=previous_results,
        previous_voided=previous_voided,
    )
