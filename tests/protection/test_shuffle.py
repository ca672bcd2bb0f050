"""Shuffle quality: the models of the simulated shoe, and the check against a single
riffle and a fair shuffle (the statistic's own tests: test_riffle.py, test_weak_shuffle.py)."""

from __future__ import annotations

import itertools
import random

import pytest

from benchmarks.shuffle_kit import dealt_shoe
from drivers.sim.shoe import (
    VirtualShoe,
    parse_shuffle_model,
    reshuffled,
    riffle,
    shuffle,
)
from drivers.sim.shuffles import deal
from station.core.protection.sequence import CARD_INDEX
from station.core.protection.shuffle import DealtShoe, shuffle_score

CUT = 16


@pytest.mark.slow  # 300 looks at 8-deck shoes: about 5 s
def test_a_single_riffle_is_always_caught_and_a_fair_shuffle_is_not() -> None:
    rng = random.Random(9)
    previous = VirtualShoe(8, rng).order
    weak = fair = 0
    for _ in range(100):
        dealt, _ = deal(previous, 8, CUT)
        seen = dealt_shoe(dealt)
        new = shuffle(previous, "riffle:1", rng)
        shoe = [CARD_INDEX[c] for c in new[: len(new) - CUT]]
        weak += shuffle_score(seen, shoe, 8, "half").probability < 1e-5  # type: ignore[union-attr]
        uniform = shuffle(previous, "uniform", rng)
        shoe = [CARD_INDEX[c] for c in uniform[: len(uniform) - CUT]]
        fair += any(
            shuffle_score(seen, shoe, 8, look).probability < 1e-5  # type: ignore[union-attr]
            for look in ("half", "end")
        )
        previous = uniform
    assert weak == 100 and fair == 0


def test_too_few_cards_say_nothing() -> None:
    short = DealtShoe()
    for card in range(19):
        short.add(card, 1, "P1")
    assert shuffle_score(short, list(range(40)), 1) is None


def test_shuffle_models_keep_the_cards_and_the_default_shoe() -> None:
    rng = random.Random(4)
    order = VirtualShoe(2, 5).order
    assert order == VirtualShoe(2, 5).order  # seeded
    for model in ("uniform", "none", "riffle:7", "strip", "box:4", "riffle:2+strip:5+box"):
        assert sorted(shuffle(order, model, rng)) == sorted(order)
    assert shuffle(order, "none", rng) == order
    assert shuffle(order, "riffle:3", 1) == shuffle(order, "riffle:3", 1)


def test_one_riffle_interleaves_two_packets_in_order() -> None:
    cards = [f"{r}S" for r in "A23456789TJQK"] + [f"{r}H" for r in "A23456789TJQK"]
    out = riffle(cards, random.Random(8))
    position = {c: i for i, c in enumerate(out)}
    for cut in range(len(cards) + 1):
        left, right = cards[:cut], cards[cut:]
        if all(position[a] < position[b] for a, b in itertools.pairwise(left)) and all(
            position[a] < position[b] for a, b in itertools.pairwise(right)
        ):
            return
    pytest.fail(f"{out} is not one riffle of {cards}")


def test_a_strip_reverses_its_packets() -> None:
    cards = [f"{r}S" for r in "A23456789TJQK"]
    out = shuffle(cards, "strip:13", 0)
    assert out == cards[::-1]


def test_reshuffled_places_the_cut_card() -> None:
    previous = VirtualShoe(1, 3)
    shoe = reshuffled(previous.order, "riffle:1", 3, cut_depth=20)
    assert shoe.size == 52 and shoe.cut_depth == 20 and shoe.decks == 1


@pytest.mark.parametrize(
    ("model", "words"),
    [
        ("shake", "not a shuffle step"),
        ("riffle:9", "between 1 and 7"),
        ("box:x", "must be a number"),
    ],
)
def test_a_bad_model_says_what_is_accepted(model: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        parse_shuffle_model(model)
