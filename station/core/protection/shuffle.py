"""Shuffle quality: how many neighbouring cards of the previous shoe stayed neighbours
(issue 15, part 2).

The discards a shoe is shuffled from are the previous shoe's cards in the order they
were dealt. A weak shuffle (one riffle, a few strip or box cuts) keeps many of their
neighbouring pairs together, in the same order. The statistic `kept` counts the places
`j` of the new shoe whose pair (card j, card j+1) is a pair of neighbours somewhere in
the previous shoe (as kinds of card: with several decks a pair names card faces, not
physical cards).

Under a fair (uniform) shuffle every place of the new shoe holds the same pair
distribution, so the expectation is exact: (m - 1) * sum over the previous shoe's
distinct pairs (x, y) of P(x then y) = D^2 / (N (N - 1)), or D (D - 1) / (N (N - 1))
when x = y, for N = 52 D cards and m cards of the new shoe seen. `kept` is a sum of
many weakly dependent rare events whose variance is *below* its mean (sampling without
replacement; docs/protection.md shows the simulation), so the Poisson upper tail with
that mean is a conservative probability: a fair shoe is reported weak less often than
the threshold says.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: Below this many cards in either shoe the test says nothing (a shoe ended at once).
MIN_CARDS = 20
#: Default threshold: a shoe whose `probability` is below this is a WEAK_SHUFFLE.
DEFAULT_THRESHOLD = 1e-5


@dataclass(frozen=True, slots=True)
class ShuffleScore:
    """The shuffle of one shoe against the previous one's dealt order."""

    cards: int  # cards of this shoe compared
    kept: int  # its neighbouring pairs that were neighbours in the previous shoe
    expected: float  # the mean of `kept` under a uniform shuffle (exact)
    spread: float  # sqrt(expected): the Poisson spread, above the true one
    score: float  # (kept - expected) / spread
    probability: float  # P(kept or more | uniform), conservative (Poisson upper tail)

    def as_dict(self) -> dict[str, float | int]:
        return {
            "cards": self.cards,
            "kept": self.kept,
            "expected": round(self.expected, 3),
            "spread": round(self.spread, 3),
            "score": round(self.score, 2),
            "probability": float(f"{self.probability:.3g}"),
        }


def neighbour_pairs(cards: Sequence[int]) -> set[int]:
    """The ordered pairs of neighbouring kinds of card in a shoe, as x * 52 + y."""
    return {cards[i] * 52 + cards[i + 1] for i in range(len(cards) - 1)}


def expected_kept(previous: Sequence[int], cards: int, decks: int) -> float:
    """The exact mean of `kept` for `cards` cards of a uniformly shuffled shoe of `decks`
    decks against the previous shoe's dealt order."""
    size = 52 * decks
    same = different = 0
    for pair in neighbour_pairs(previous):
        if pair // 52 == pair % 52:
            same += 1
        else:
            different += 1
    one_place = (different * decks * decks + same * decks * (decks - 1)) / (size * (size - 1))
    return max(cards - 1, 0) * one_place


def kept_pairs(previous: Sequence[int], current: Sequence[int]) -> int:
    """How many neighbouring pairs of `current` were neighbours in `previous`."""
    pairs = neighbour_pairs(previous)
    return sum(1 for i in range(len(current) - 1) if current[i] * 52 + current[i + 1] in pairs)


def poisson_upper_tail(count: int, mean: float) -> float:
    """P(X >= count) for X ~ Poisson(mean), summed from `count` up in log space (no
    cancellation, so probabilities of 1e-40 come out right)."""
    if count <= 0:
        return 1.0
    if mean <= 0.0:
        return 0.0
    log_term = -mean + count * math.log(mean) - math.lgamma(count + 1)
    total = 0.0
    i = count
    while True:
        term = math.exp(log_term)
        total += term
        i += 1
        if i > mean and term <= total * 1e-17:
            break
        log_term += math.log(mean) - math.log(i)
    return min(total, 1.0)


def shuffle_score(
    previous: Sequence[int], current: Sequence[int], decks: int
) -> ShuffleScore | None:
    """The score of `current` (card indices as dealt) shuffled from `previous`; None when
    either has fewer than MIN_CARDS cards."""
    if len(previous) < MIN_CARDS or len(current) < MIN_CARDS:
        return None
    kept = kept_pairs(previous, current)
    mean = expected_kept(previous, len(current), decks)
    spread = math.sqrt(mean) if mean > 0 else 1.0
    return ShuffleScore(
        len(current), kept, mean, spread, (kept - mean) / spread, poisson_upper_tail(kept, mean)
    )
