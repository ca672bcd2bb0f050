"""The turns of a round in a game with options (chemin de fer, baccarat banque), as the
simulated dealer reads games.md.

Once a round's first cards are placed each hand has its turn, the ponte(s) first and the
banker last, and the rules say whether it must draw (M), must stand (F) or has the option
(O). The dealer reads the ponte rule, the banker's cells and the two-tableaux rule from
its own tables (`PONTE`, `BANKER_CELLS` below), never from the station's, so the stream
it writes checks the station's reading of the rules against another.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from station.core.cards import POINTS

#: The ponte's verdict on its two-card total (games.md, "Ponte rule"): 0-4 M, 5 O, 6-7 F.
PONTE = "MMMMMOFF"
#: The banker's cell: its two-card total -> the verdict against a ponte's third card
#: 0..9, then (index 10) against a ponte that stood.
BANKER_CELLS = {
    0: "MMMMMMMMMMM",
    1: "MMMMMMMMMMM",
    2: "MMMMMMMMMMM",
    3: "MMMMMMMMFOM",
    4: "FFMMMMMMFFM",
    5: "FFFFOMMMFFM",
    6: "FFFFFFMMFFF",
    7: "FFFFFFFFFFF",
}
_STOOD = 10

#: The state of a hand's turn: not reached yet, its third card due, its option waiting
#: for the decision, over (it stood or drew).
_WAIT, _CARD, _ASK, _OVER = "wait", "card", "ask", "over"


class Turns:
    """Whose turn waits in a round, and for what: a card (M, or the hand decided to draw)
    or the hand's decision (O); F turns (and tableaux settled by a natural) pass at once.

    `hands` are the round's cards by hand, in turn order, the banker last: the dealer's
    own, which it goes on placing third cards in (each before it tells `drew`).
    """

    def __init__(self, hands: Mapping[str, Sequence[str]]) -> None:
        """The first cards are placed: naturals, then the first turn opens."""
        self._hands = hands
        self._order = tuple(hands)
        self._naturals = [h for h in self._order if self._total(h) >= 8]
        pontes = [h for h in self._order if h != "banker"]
        if len(pontes) == 2:  # baccarat banque: a banker natural, or both tableaux, end it
            over = "banker" in self._naturals or len(self._naturals) == 2
        else:
            over = bool(self._naturals)
        self._state = {hand: _OVER if over else _WAIT for hand in self._order}
        self._pass()

    def waiting(self) -> str | None:
        """The hand whose turn waits (for a card or a decision); None: the round is over."""
        return next((h for h in self._order if self._state[h] in (_CARD, _ASK)), None)

    def card_due(self, hand: str) -> bool:
        """Whether the hand's turn waits for its third card (not for its decision)."""
        return self._state[hand] == _CARD

    def stood(self) -> list[str]:
        """The hands whose turn is over on two cards (they stood, or had a natural)."""
        return [h for h in self._order if self._state[h] == _OVER and len(self._hands[h]) == 2]

    def decide(self, hand: str, draw: bool) -> None:
        """The decision of the hand whose option waits: its card is due, or its turn is
        over and the next one opens."""
        if draw:
            self._state[hand] = _CARD
        else:
            self._state[hand] = _OVER
            self._pass()

    def drew(self, hand: str) -> None:
        """The hand's third card is placed: its turn is over, the next one opens."""
        self._state[hand] = _OVER
        self._pass()

    def _total(self, hand: str, cards: int = 2) -> int:
        return sum(POINTS[c] for c in self._hands[hand][:cards]) % 10

    def _verdict(self, hand: str) -> str:
        """M, F or O for the hand's turn (games.md), from the dealer's own tables."""
        if hand in self._naturals:
            return "F"  # a tableau settled by its natural stands, as at F
        two = self._total(hand)
        if hand != "banker":
            return PONTE[two]
        cells = []
        for ponte in self._order[:-1]:
            if ponte in self._naturals:
                continue  # settled: not live
            third = self._hands[ponte][2:]
            cells.append(BANKER_CELLS[two][POINTS[third[0]] if third else _STOOD])
        if len(cells) == 1:
            return cells[0]
        may_draw, may_stand = "F" not in cells, "M" not in cells
        if may_draw != may_stand:
            return "M" if may_draw else "F"
        return "O"  # both allowed, or the tableaux pull different ways: the banker's choice

    def _pass(self) -> None:
        """Open the next turn that waits; F turns (and settled tableaux) pass at once."""
        for hand in self._order:
            state = self._state[hand]
            if state in (_CARD, _ASK):
                return
            if state == _OVER:
                continue
            verdict = self._verdict(hand)
            if verdict == "F":
                self._state[hand] = _OVER
                continue
            self._state[hand] = _CARD if verdict == "M" else _ASK
            return
