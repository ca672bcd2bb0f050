"""Shuffle quality: the exact null mean, the conservative tail, power against riffles."""

from __future__ import annotations

import itertools
import math
import random
import statistics

import pytest

from drivers.sim.shoe import (
    VirtualShoe,
    parse_shuffle_model,
    reshuffled,
    riffle,
    shuffle,
)
from station.core.protection.sequence import encode
from station.core.protection.shuffle import (
    expected_kept,
    kept_pairs,
    poisson_upper_tail,
    shuffle_score,
)

CUT = 16


def dealt(order: list[str]) -> bytes:
    return encode(order[: len(order) - CUT])


def test_poisson_tail_matches_the_direct_sum() -> None:
    for count, mean in ((0, 2.0), (1, 0.5), (5, 0.57), (81, 55.6), (300, 55.6)):
        terms = (math.exp(-mean + i * math.log(mean) - math.lgamma(i + 1)) for i in range(count))
        direct = 1.0 - math.fsum(terms)
        got = poisson_upper_tail(count, mean)
        if direct > 1e-12:
            assert got == pytest.approx(direct, rel=1e-9)
        else:
            assert 0.0 < got < 1e-12


@pytest.mark.parametrize("decks", [1, 8])
def test_the_null_mean_is_exact_and_the_spread_below_poisson(decks: int) -> None:
    rng = random.Random(2)
    previous = dealt(VirtualShoe(decks, rng).order)
    size = 52 * decks - CUT
    kept = [kept_pairs(previous, dealt(VirtualShoe(decks, rng).order)) for _ in range(1500)]
    mean = expected_kept(previous, size, decks)
    error = math.sqrt(mean / len(kept))
    assert abs(statistics.fmean(kept) - mean) < 4 * error
    assert statistics.pvariance(kept) < mean * 1.1  # Poisson's spread is conservative


def test_a_single_riffle_is_always_caught_and_a_fair_shuffle_is_not() -> None:
    rng = random.Random(9)
    previous = VirtualShoe(8, rng).order
    weak = fair = 0
    for _ in range(100):
        new = shuffle(previous, "riffle:1", rng)
        weak += shuffle_score(dealt(previous), dealt(new), 8).probability < 1e-5  # type: ignore[union-attr]
        uniform = shuffle(previous, "uniform", rng)
        fair += shuffle_score(dealt(previous), dealt(uniform), 8).probability < 1e-5  # type: ignore[union-attr]
        previous = uniform
    assert weak == 100 and fair == 0


def test_too_few_cards_say_nothing() -> None:
    assert shuffle_score(bytes(range(19)), bytes(range(40)), 1) is None


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
