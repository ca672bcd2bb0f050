"""The riffle statistic (issue 28): the gathering orders, the kernels, the counting round
the shoe, the standardization under a fair shuffle, and where in a shoe it shows."""

from __future__ import annotations

import math
import random
import statistics

import numpy as np
import pytest

from station.core.protection.riffle import (
    BANKER,
    GATHERINGS,
    RIFFLES,
    SPAN,
    Discards,
    circular,
    excess_by_card,
    gathered,
    hand_code,
    kernels,
    scores,
    strongest_part,
)

#: A burn of two cards, then a round P1 B1 P2 B2 P3 B3 and a round P1 B1 P2 B2.
ROUNDS = [0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2]
HANDS = [-1, -1, 0, BANKER, 0, BANKER, 0, BANKER, 0, BANKER, 0, BANKER]


def order_of(gathering: str) -> list[int]:
    """The dealt places of the example's cards in the pile gathered `gathering`'s way."""
    places = gathered(Discards.of(range(12), ROUNDS, HANDS), GATHERINGS.index(gathering))
    pile = [0] * 12
    for dealt, place in enumerate(places):
        pile[place] = dealt
    return pile


def test_the_gathering_orders() -> None:
    assert order_of("in dealt order") == list(range(12))
    assert order_of("each round reversed") == [0, 1, 7, 6, 5, 4, 3, 2, 11, 10, 9, 8]
    assert order_of("with the banker's cards first") == [0, 1, 3, 5, 7, 2, 4, 6, 9, 11, 8, 10]
    assert order_of("with the banker's cards last") == [0, 1, 2, 4, 6, 3, 5, 7, 8, 10, 9, 11]


@pytest.mark.parametrize(
    ("role", "code"),
    [
        *[("P1", 0), ("P3", 0), ("B2", BANKER), ("B.3", BANKER), ("T1.2", 0), ("T2.1", 1)],
        *[("burn", -1), ("burn_reveal", -1), (None, -1), ("", -1)],
    ],
)
def test_hand_codes(role: object, code: int) -> None:
    assert hand_code(role) == code


def test_the_kernels_are_likelihood_ratios_of_the_gaps() -> None:
    size = 416
    table = kernels(size)
    assert table.shape == (len(RIFFLES), SPAN + 1, size) and not table[:, 0].any()
    cut_only = table[RIFFLES.index(0)]
    assert cut_only[3, 3] == pytest.approx(size) and cut_only[3].sum() == cut_only[3, 3]
    for k in (1, 4, 6):
        row = table[RIFFLES.index(k)]
        # N times a probability: the negative binomial's mass (all of it for small 2^k
        # delta), times the chance the two cards stayed in one packet.
        for delta in (1, 5, SPAN):
            together = math.exp(-delta * (2**k - 1) / size)
            assert row[delta].sum() <= size * together * (1 + 1e-9)
            assert row[delta, :delta].sum() == 0.0  # delta cards apart stay delta apart at least
        whole = 1 - (1 - 2.0**-k) ** (size - 1)  # the geometric's mass inside the shoe
        assert row[1].sum() == pytest.approx(size * math.exp(-(2**k - 1) / size) * whole)


def test_gaps_are_counted_round_the_cards_seen() -> None:
    last, seen = 7, 5
    width = 2 * last - 1
    histogram = np.arange(3 * width).reshape(3, width)  # any counts, by gap -6..6
    forward, backward = circular(histogram, last, seen)
    zero = last - 1  # the column of gap 0
    for d in range(1, seen):
        for row in range(3):
            assert forward[row, d] == histogram[row, zero + d] + histogram[row, zero + d - seen]
            assert backward[row, d] == histogram[row, zero - d] + histogram[row, zero + seen - d]


def fair_discards(decks: int, rng: random.Random, cards: int) -> Discards:
    order = [c for c in range(52) for _ in range(decks)]
    rng.shuffle(order)
    return Discards.of(order[:cards], [1 + i // 5 for i in range(cards)], [0] * cards)


# The larger shoes take 1.5-2 s each: `make test` runs them, `make test-fast` the smallest.
@pytest.mark.parametrize(
    ("decks", "previous"),
    [
        (2, 50),
        pytest.param(2, 88, marks=pytest.mark.slow),
        pytest.param(4, 190, marks=pytest.mark.slow),
    ],
)
def test_under_a_fair_shuffle_each_score_is_standardized(decks: int, previous: int) -> None:
    """Counted round the shoe and with what the composition fixes taken out, each Z has
    mean 0 and spread 1 under a fair shuffle, however much of the previous shoe is known
    (seeded: 200 shoes, each spread's bounds 4 standard errors wide)."""
    rng = random.Random(decks * 1000 + previous)
    size = 52 * decks
    found = []
    for _ in range(200):
        shoe = [c for c in range(52) for _ in range(decks)]
        rng.shuffle(shoe)
        discards = fair_discards(decks, rng, previous)
        found.append(scores(discards, shoe, decks, [size // 2, size - 16]))
    z = np.array(found)  # shoe, look, gathering, direction, kernel
    riffled = z[..., 1:]  # the kernels the check decides on
    assert abs(float(riffled.mean())) < 0.1
    spreads = riffled.reshape(200, -1).std(axis=0)
    assert float(spreads.min()) > 0.8 and float(spreads.max()) < 1.25
    assert 0.9 < statistics.fmean(spreads.tolist()) < 1.1


def test_two_looks_in_one_pass_are_two_passes() -> None:
    rng = random.Random(5)
    discards = fair_discards(3, rng, 140)
    shoe = [c for c in range(52) for _ in range(3)]
    rng.shuffle(shoe)
    both = scores(discards, shoe, 3, [60, 150])
    assert np.allclose(both[0], scores(discards, shoe[:60], 3, [60])[0])
    assert np.allclose(both[1], scores(discards, shoe, 3, [150])[0])
    with pytest.raises(ValueError, match="looks must rise"):
        scores(discards, shoe, 3, [150, 60])


def riffled(cards: list[int], rng: random.Random, times: int) -> list[int]:
    for _ in range(times):
        labels = [rng.random() < 0.5 for _ in cards]
        cut = labels.count(False)
        left, right = iter(cards[:cut]), iter(cards[cut:])
        cards = [next(right) if label else next(left) for label in labels]
    return cards


def test_a_riffled_shoe_scores_highest_under_its_riffles_and_its_gathering() -> None:
    rng = random.Random(11)
    decks, size = 6, 312
    dealt = [c for c in range(52) for _ in range(decks)]
    rng.shuffle(dealt)
    rounds = [0] * 4 + [1 + i // 5 for i in range(size - 4)]
    hands = [-1] * 4 + [(0, BANKER)[i % 2] for i in range(size - 4)]
    discards = Discards.of(dealt, rounds, hands)
    for gathering in range(len(GATHERINGS)):
        places = gathered(discards, gathering)
        pile = [0] * size
        for card, place in zip(dealt, places, strict=True):
            pile[place] = card
        shoe = riffled(pile, rng, 3)
        z = scores(discards, shoe, decks, [size])[0]
        best = np.unravel_index(int(z.argmax()), z.shape)
        assert (int(best[0]), int(best[1]), RIFFLES[int(best[2])]) == (gathering, 0, 3)
        assert float(z.max()) > 15
        # Turned over, the same pile is found turned over.
        z = scores(discards, shoe[::-1], decks, [size])[0]
        assert int(np.unravel_index(int(z.argmax()), z.shape)[1]) == 1


def test_where_the_previous_order_shows() -> None:
    rng = random.Random(12)
    decks, size = 4, 208
    dealt = [c for c in range(52) for _ in range(decks)]
    rng.shuffle(dealt)
    discards = Discards.of(dealt, [1 + i // 5 for i in range(size)], [0] * size)
    # The first half of the shoe kept the order (two riffles of half the discards); the
    # second half is shuffled fairly.
    kept = riffled(dealt[:104], rng, 2)
    rest = dealt[104:]
    rng.shuffle(rest)
    first, last = strongest_part(*excess_by_card(discards, kept + rest, decks, size, (0, 0, 2)))
    assert first < 10 and 90 < last < 120
    assert strongest_part(np.array([-1.0] * 13 + [2.0] * 13 + [-1.0] * 13), 1.0) == (13, 25)
