"""A round in progress and its turns: the game deals its first cards, then each hand has
its turn in order and the game says whether it must draw, must stand or has an option.

The table's state machine (`station.core.table`) places the cards and takes the
decisions; this module is its bookkeeping of a round (whose turn, what is due) and the
walk of the turns, asking the game's tables (`station.core.games`), so a variant is
another `Game` value, not another branch here. `shared/spec/games.md` is the contract.

The walk runs once a round's first cards are placed and after each third card or
decision, on the replay hot path: it reads the game's tables from slots, and totals
are summed inline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from station.core import events as ev
from station.core.cards import POINTS
from station.core.games import STOOD, Game

#: What `due` is while a hand's option waits for its decision.
DECISION = ev.DECISION


@dataclass(slots=True)
class Round:
    """A round in progress: its number, the cards of each hand, what is due next, and
    whose turn it is.

    `cards` holds one list per hand of the game, in the game's hand order. `due` is the
    role of the card due next, or `"decision"` while a hand's option waits. `turn` is the
    index of the hand whose turn is open (-1 while the first cards are dealt); the turns
    before it are over (each hand drew, with three cards, or stood).
    """

    number: int
    cards: tuple[list[str], ...]
    due: str | None
    turn: int = -1

    @property
    def player(self) -> list[str]:
        """The first hand's cards (the player; tableau 1 in baccarat banque)."""
        return self.cards[0]

    @property
    def banker(self) -> list[str]:
        """The banker's cards (the last hand in every game)."""
        return self.cards[-1]

    def fixed(self, hand: int) -> bool | None:
        """For a hand whose turn has come: whether it draws (True) or stands (False), as
        the rules or its decision fixed it; None while its option waits."""
        if hand < self.turn:
            return len(self.cards[hand]) > 2
        return None if self.due == DECISION else True

    @property
    def being_dealt(self) -> bool:
        """At least one card placed (the first card always goes to the first hand)."""
        return bool(self.cards[0])


def two_card_total(cards: list[str]) -> int:
    """A hand's total on its first two cards (what the drawing rules read)."""
    return (POINTS[cards[0]] + POINTS[cards[1]]) % 10


class Turns:
    """The turns of one game's rounds: the deal as a lookup, the walk of the turns, and
    the option waiting for its decision in words."""

    __slots__ = ("_banker", "_banker_cells", "_combination", "_ponte", "_thirds", "game", "steps")

    def __init__(self, game: Game) -> None:
        self.game = game
        # The deal as a lookup: each role -> (its hand's index, the role due after it, or
        # None when the turns decide); `decision` -> (-1, None): a card at an option.
        steps: dict[str, tuple[int, str | None]] = {}
        for i, (role, hand) in enumerate(game.deal):
            following = game.deal[i + 1][0] if i + 1 < len(game.deal) else None
            steps[role] = (hand, following)
        for hand, role in enumerate(game.thirds):
            steps[role] = (hand, None)
        steps[DECISION] = (-1, None)
        self.steps = steps
        # The game's tables, at hand for the walk.
        self._banker = game.banker_index
        self._thirds = game.thirds
        self._ponte = game.ponte
        self._banker_cells = game.banker
        self._combination = game.combination

    def begin(self, rnd: Round) -> bool:
        """Naturals after the first cards: a banker natural, or naturals on every ponte
        hand, end the round (True); a natural on one tableau settles it (its turn will pass
        at once: the ponte rule says F at 8 and 9). Else the turns, from the first hand."""
        cards = rnd.cards
        hand = cards[-1]
        if (POINTS[hand[0]] + POINTS[hand[1]]) % 10 >= 8:
            return True
        for hand in cards[:-1]:
            if (POINTS[hand[0]] + POINTS[hand[1]]) % 10 < 8:
                return self.walk(rnd, 0)
        return True  # a natural on every ponte hand

    def walk(self, rnd: Round, turn: int) -> bool:
        """Open the turns from `turn` on, asking the game: F passes at once, M makes the
        hand's third card due, O waits for the decision. True: no turn waits, the round
        is complete. Only `rnd.turn` and `rnd.due` change (a dry run may pass a copy)."""
        cards = rnd.cards
        banker = self._banker
        while turn < banker:  # a ponte hand: the ponte rule on its two-card total
            hand = cards[turn]
            verdict = self._ponte[(POINTS[hand[0]] + POINTS[hand[1]]) % 10]
            if verdict != "F":
                rnd.turn = turn
                rnd.due = self._thirds[turn] if verdict == "M" else DECISION
                return False
            turn += 1
        if turn > banker:
            return True  # the banker's turn is over too
        # The banker: its cell against the ponte hand (third card, or S when it stood).
        hand = cards[banker]
        row = self._banker_cells[(POINTS[hand[0]] + POINTS[hand[1]]) % 10]
        if banker == 1:
            ponte = cards[0]
            verdict = row[STOOD if len(ponte) == 2 else POINTS[ponte[2]]]
        else:
            verdict = self._against_tableaux(cards, row)
        if verdict == "F":
            return True
        rnd.turn = banker
        rnd.due = self._thirds[banker] if verdict == "M" else DECISION
        return False

    def _against_tableaux(self, cards: tuple[list[str], ...], row: str) -> str:
        """The banker's cells (its row) against each live tableau (not settled by a
        natural), combined by the game's table."""
        verdict = ""
        for hand in cards[:-1]:
            if len(hand) == 2 and (POINTS[hand[0]] + POINTS[hand[1]]) % 10 >= 8:
                continue  # a tableau settled by its natural
            cell = row[POINTS[hand[2]] if len(hand) > 2 else STOOD]
            verdict = self._combination[verdict, cell] if verdict else cell
        return verdict

    def completes(self, rnd: Round, hand: int) -> bool:
        """Whether standing at `hand`'s option would complete the round (every later turn
        passes at once): a dry run of the walk on a copy of the round."""
        return self.walk(Round(rnd.number, rnd.cards, rnd.due, rnd.turn), hand + 1)

    def option(self, rnd: Round) -> dict[str, Any]:
        """The option of `rnd` waiting for its decision: the hand, its two-card total and
        the question in words (for the banker, what it plays against)."""
        game, turn = self.game, rnd.turn
        hand = game.hands[turn]
        total = two_card_total(rnd.cards[turn])
        against = ""
        # What the banker plays against as codes too (the screens say it in their words):
        # each hand not settled by its natural, its third card's points or standing.
        facing: list[dict[str, Any]] = []
        if turn == game.banker_index:
            sides = []
            for i, cards in enumerate(rnd.cards[:-1]):
                if len(cards) == 2 and two_card_total(cards) >= 8:
                    continue  # settled by its natural
                word = game.hand_words[game.hands[i]]
                if len(cards) > 2:
                    sides.append(f"{word}'s third card {POINTS[cards[2]]}")
                    facing.append({"hand": game.hands[i], "third": POINTS[cards[2]]})
                else:
                    sides.append(f"{word} standing")
                    facing.append({"hand": game.hands[i], "third": None})
            against = " against " + " and ".join(sides)
        words = f"{game.hand_words[hand]}: option on {total}{against}, draw or stand?"
        return {"hand": hand, "total": total, "words": words, "against": facing}
