"""Shoes for the weak-shuffle check's calibration and benchmark: a shoe dealt by the rules,
its discards gathered and shuffled into the next one, both as the station sees them."""

from __future__ import annotations

import random
from collections.abc import Sequence

from drivers.sim.shoe import VirtualShoe
from drivers.sim.shuffles import DealtCard, deal, gather, shuffle
from station.core.protection.sequence import CARD_INDEX
from station.core.protection.shuffle import DealtShoe, located, shuffle_scores

#: Cards behind the cut card (never dealt, never seen), as at most tables.
CUT = 16


def dealt_shoe(cards: Sequence[DealtCard]) -> DealtShoe:
    """The station's account of a shoe dealt (`drivers.sim.shuffles.deal`)."""
    shoe = DealtShoe()
    for card in cards:
        shoe.add(CARD_INDEX[card.card], card.round, card.role)
    return shoe


def shoe_pair(
    decks: int, model: str, gathering: str, rng: random.Random, cut: int = CUT
) -> tuple[DealtShoe, list[int]]:
    """A fair shoe dealt, and the next one: its discards gathered the `gathering` way and
    shuffled by `model`, dealt: the first as the station knows it, the second's cards (as
    `ALL_CARDS` indices) in the order they came out."""
    dealt, rest = deal(VirtualShoe(decks, rng).order, decks, cut)
    pile = shuffle(gather(dealt, rest, gathering, rng), model, rng)
    seen, _ = deal(pile, decks, cut)
    return dealt_shoe(dealt), [CARD_INDEX[c.card] for c in seen]


def check(
    previous: DealtShoe, shoe: list[int], decks: int, threshold: float
) -> tuple[str | None, float, int]:
    """What the station's check says of a shoe, as `Protector` looks at it (half the shoe,
    then its end): the look that called it weak (None: neither), the smallest
    probability, the riffles of the best fit."""
    found = shuffle_scores(previous, shoe, decks)
    for look in ("half", "end"):
        score = found.get(look)
        if score is not None and score.probability < threshold:
            located(score, previous, shoe, decks)  # what the alert costs too
            return look, score.probability, score.riffles
    if not found:
        return None, 1.0, -1
    best = min(found.values(), key=lambda s: s.probability)
    return None, best.probability, best.riffles
