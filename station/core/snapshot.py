"""A read-only picture of the table, published by the writer after each commit.

Why: only the service's writer touches the `Table`. Everyone else (the API's `/api/state`,
the WebSocket, the `sim` driver's dealer bot in its own thread) reads the latest
`TableSnapshot`, an immutable value swapped in with one attribute assignment (atomic in
Python), so readers need no lock and never see a state the journal does not have yet.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from station.core.table import EXPLANATIONS, Table


@dataclass(frozen=True, slots=True)
class TableSnapshot:
    """The table after journal row `seq`."""

    seq: int
    table_id: str
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
    suspension: dict[str, Any] | None
    cut_seen: bool
    last_round: int | None
    last_result: dict[str, Any] | None
    rounds_complete: int
    voided: tuple[int, ...]
    actions: tuple[str, ...]

    @property
    def suspended(self) -> bool:
        return self.suspension is not None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["suspended"] = self.suspended
        return d


def due_role(table: Table) -> str | None:
    """What is due next as a code: `shoe`, `burn_reveal`, `burn`, `close_bets`, a card
    role (`P1`..`B3`), or None while suspended."""
    if not table.in_play:
        return "shoe"
    if table.suspension is not None:
        return None
    if table.reveal_due:
        return "burn_reveal"
    if table.burns_due:
        return "burn"
    if table.round is not None and table.round.due is not None:
        return table.round.due
    return "close_bets" if table.gated else "P1"


def actions_now(table: Table) -> tuple[str, ...]:
    """The supervisor and dealer events the table accepts now (of `shoe`, `close_bets`,
    `resume`, `void`, `end_shoe`): the dashboard enables a button only for these, so the
    page never re-derives the table's rules."""
    in_play = table.in_play
    suspended = table.suspension is not None
    accepted = {
        "shoe": not in_play,
        "close_bets": in_play and not suspended and due_role(table) == "close_bets",
        "resume": suspended,
        "void": suspended or table.round is not None,
        "end_shoe": in_play,
    }
    return tuple(kind for kind, ok in accepted.items() if ok)


def take(table: Table, seq: int, table_id: str, suspended_since: int | None) -> TableSnapshot:
    """The snapshot of `table` now (call it from the writer only)."""
    rnd = table.round
    susp = table.suspension
    suspension = None
    if susp is not None:
        suspension = {
            "code": susp.code,
            "explanation": EXPLANATIONS.get(susp.code, susp.code),
            "card": susp.card if isinstance(susp.card, str | None) else repr(susp.card),
            "later": [{"code": c, "card": k if isinstance(k, str | None) else repr(k)}
                      for c, k in susp.later],
            "since_seq": suspended_since,
        }
    last = table.results[-1] if table.results else None
    return TableSnapshot(
        seq=seq,
        table_id=table_id,
        decks=table.decks,
        gated=table.gated,
        cut_policy=table.cut_policy,
        in_play=table.in_play,
        shoes_started=table.shoes_started,
        cards_out=table.cards_out,
        unreadable=table.unreadable,
        reveal_due=table.reveal_due,
        burns_due=table.burns_due,
        burned=tuple(table.burned),
        rounds_opened=table.rounds_opened,
        round=None if rnd is None else {"number": rnd.number, "player": list(rnd.player),
                                        "banker": list(rnd.banker), "due": rnd.due},
        due=due_role(table),
        expecting=table.expecting(),
        suspension=suspension,
        cut_seen=table.cut_seen,
        last_round=table.last_round,
        last_result=None if last is None else dict(last),
        rounds_complete=len(table.results),
        voided=tuple(table.voided),
        actions=actions_now(table),
    )
