"""A hand's decision at its option, read and judged as `shared/spec/games.md` says: from
a `decision` event, or from a supervisor's `resume` that carries one.

Questions only, on the round as it stands: the table's state machine
(`station.core.table`) asks them in the spec's order of checks and takes the decision.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from station.core import events as ev
from station.core.turns import Round, Turns

_ABSENT = object()


def judge(rnd: Round | None, hand: int | None, draw: bool) -> int:
    """The index of the hand a decision goes to (`hand`, or the hand whose turn it is when
    None), or -1 when it is DECISION_NOT_ALLOWED: no round being dealt, its first cards
    not all placed, the hand not yet at its turn, or a decision against what the rules
    (or an earlier decision) fixed for it."""
    if rnd is None or rnd.turn < 0:
        return -1
    index = rnd.turn if hand is None else hand
    if index > rnd.turn:
        return -1
    fixed = rnd.fixed(index)
    if fixed is not None and fixed is not draw:
        return -1
    return index


class Decisions:
    """The decisions at one game's table: the hands they may name, and the game's turns
    to look ahead with."""

    __slots__ = ("_hand_index", "_turns")

    def __init__(self, turns: Turns) -> None:
        self._turns = turns
        self._hand_index = {name: i for i, name in enumerate(turns.game.hands)}

    def read(self, decision: object) -> tuple[int | None, bool] | None:
        """A decision's hand (its index; None: the hand whose turn it is) and draw, or None
        when it is malformed (not an object, a hand this game has not, a draw that is
        not a boolean). Other keys are ignored."""
        if type(decision) is not dict:
            return None
        draw = decision.get("draw", _ABSENT)
        if type(draw) is not bool:
            return None
        hand = decision.get("hand")
        if hand is None:
            return None, draw
        index = self._hand_index.get(hand) if type(hand) is str else None
        return None if index is None else (index, draw)

    def card_may_follow(self, rnd: Round, hand: int, draw: bool, held: bool) -> bool:
        """Whether a resume may take the decision at `hand` (judged allowed) and then place
        a card: the held card (`held`) only after the answer to the waiting option, and
        no card after a decision that would complete the round (it would have no place)."""
        answers = rnd.fixed(hand) is None
        if held and not answers:
            return False
        return not (answers and not draw and self._turns.completes(rnd, hand))

    def bad_input_reason(self, event: Mapping[str, Any], held: bool) -> str | None:
        """Why an event of the vocabulary is still BAD_INPUT at this game, in words that
        say what to send: a `decision` naming a hand the game has not, a resume's malformed
        `decision`, or a resume with both a decision and a card while one is `held`."""
        game = self._turns.game
        hands = ", ".join(game.hands)
        if event.get("type") == ev.DECISION and self.read(event) is None:
            return f'the "hand" of a decision at {game.title} must be one of {hands}, or null'
        if event.get("type") == ev.RESUME and event.get("decision") is not None:
            if self.read(event["decision"]) is None:
                return (
                    'a resume\'s "decision" must be an object {"hand": ..., "draw": true|false} '
                    f"(hand one of {hands}, or null)"
                )
            if event.get("card") is not None and held:
                return "a card is held: resume with the decision only (no card) to place it"
        return None
