"""Shuffle quality: how many riffles the new shoe is of the previous shoe's discards
(issue 15, part 2; the statistic of issue 28).

The station knows the previous shoe as its cards came out (burns, refused cards and
cards named by a supervisor included; those behind the cut card never), each with its
round and hand (`DealtShoe`). `riffle.scores` gives, for every way the discards may have
been gathered, both ways up, and every number of riffles 1..6, a score Z that a fair
shuffle keeps near N(0, 1). The check's score is the largest of them; how unusual it is
for a fair shuffle comes from `riffle_null`, the distribution of that largest score
over simulated fair shoes (`benchmarks/calibrate_shuffle.py`, at least 10^5 shoes for 6
and 8 decks; docs/protection.md has the derivation).

The new shoe is looked at twice: when half its cards are out (`HALF`; four riffles are
plain by then) and at its end. Each look may spend its share (`WEIGHTS`) of the false
alarm threshold, so a shoe's `probability` is the look's tail probability divided by its
share: a fair shoe is called weak, at either look, less often than the threshold.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from station.core.protection.riffle import (
    GATHERINGS,
    RIFFLES,
    Discards,
    excess_by_card,
    hand_code,
    scores,
    strongest_part,
)
from station.core.protection.riffle_null import END_CARDS, QUANTILES, TAIL

#: Default threshold: a shoe whose `probability` is below this is a WEAK_SHUFFLE.
DEFAULT_THRESHOLD = 1e-5
#: The first look: when this share of the shoe's cards is out. The second is its end.
HALF = 0.5
#: Each look's share of the false-alarm threshold (they add up to 1).
WEIGHTS = {"half": 1 / 3, "end": 2 / 3}
#: The least share of the shoe's cards the new shoe must have out at its end, and the
#: previous shoe must be known by, for a check (a shoe ended at once says nothing).
MIN_SHARE = 0.5
#: The kernels the decision takes its largest score over: a riffle at least (the "cut
#: only" kernel counts rare exact gaps, whose tail is heavier; a cut shows under one riffle
#: as plainly, and names itself in `riffles` when it is the better fit).
DECIDING = tuple(i for i, k in enumerate(RIFFLES) if k >= 1)


class DealtShoe:
    """A shoe's cards as they came out, each with its round (0 before round 1) and hand
    (`riffle.hand_code`), in the station's own order."""

    __slots__ = ("_round", "cards", "hands", "rounds")

    def __init__(self) -> None:
        self.cards: list[int] = []
        self.rounds: list[int] = []
        self.hands: list[int] = []
        self._round = 0

    def add(self, card: int, round_: object, role: object) -> None:
        """A card (its `ALL_CARDS` index) and the verdict's round and role; a card with no
        round (refused after its round) goes with the round before it."""
        if isinstance(round_, int) and not isinstance(round_, bool):
            self._round = round_
        self.cards.append(card)
        self.rounds.append(self._round)
        self.hands.append(hand_code(role))

    def __len__(self) -> int:
        return len(self.cards)

    def discards(self) -> Discards:
        return Discards.of(self.cards, self.rounds, self.hands)


@dataclass(frozen=True, slots=True)
class ShuffleScore:
    """One look at a shoe against the previous shoe's discards."""

    look: str  # "half" or "end"
    cards: int  # cards of this shoe compared
    previous: int  # cards of the previous shoe known
    score: float  # the largest Z over gatherings, ways up and riffles 1..6
    riffles: int  # the best fit: about this many riffles (0: cut, not riffled)
    gathering: str  # the way of gathering the discards that fits best
    turned: bool  # whether the discards fit best turned over
    probability: float  # the chance a fair shuffle scores this high at this look / its share
    first: int = 0  # the cards of this shoe (1-based) where the previous order shows most
    last: int = 0  # (0, 0: not looked for, `located`)

    def as_dict(self) -> dict[str, object]:
        return {
            "look": self.look,
            "cards": self.cards,
            "previous_cards": self.previous,
            "score": round(self.score, 2),
            "riffles": self.riffles,
            "gathering": self.gathering,
            "turned_over": self.turned,
            "probability": float(f"{self.probability:.3g}"),
            "part": [self.first, self.last],
        }

    def message(self) -> str:
        if self.riffles == 0:
            what = "the previous shoe cut but not riffled"
        else:
            plural = "s" if self.riffles > 1 else ""
            what = f"about {self.riffles} riffle{plural} of the previous shoe"
        pile = f"its discards gathered {self.gathering}" + (", turned over" if self.turned else "")
        return (
            f"this shoe is {what} ({pile}), most plainly in its cards {self.first}-{self.last} "
            f"of {self.cards} seen; a fair shuffle looks like this with probability "
            f"{self.probability:.2g}"
        )


def half_look(decks: int) -> int:
    """How many cards of a shoe are out at the first look."""
    return int(52 * decks * HALF)


def survival(decks: int, look: str, score: float) -> float:
    """P(the largest score of a fair shoe's look >= score), from `riffle_null`: the
    simulated distribution where it has points, the fitted exponential tail above
    them. A deck count without its own table takes the nearest one calibrated."""
    known = sorted(QUANTILES)
    nearest = min(known, key=lambda d: (abs(d - decks), -d))
    points = QUANTILES[nearest][look]
    top, at_top, scale = TAIL[nearest][look]
    if score >= top:
        return at_top * math.exp(-(score - top) / scale)
    if score < points[0][0]:
        return 1.0  # below the median: at most 1 (no finer figure is needed)
    for (low, p_low), (high, p_high) in itertools.pairwise(points):
        if score <= high:
            share = (score - low) / (high - low) if high > low else 1.0
            return math.exp(math.log(p_low) + share * (math.log(p_high) - math.log(p_low)))
    return at_top  # between the last point and the tail's start (they meet)


def look_probability(decks: int, look: str, score: float, seen: int) -> float:
    """The shoe's probability at a look: its tail probability over its share. The end
    of a shoe shorter than the calibrated end takes the larger of the two tables."""
    tail = survival(decks, look, score)
    if look == "end" and seen < END_CARDS.get(decks, 52 * decks):
        tail = max(tail, survival(decks, "half", score))
    return min(1.0, tail / WEIGHTS[look])


def shuffle_score(
    previous: DealtShoe, shoe: Sequence[int], decks: int, look: str = "end"
) -> ShuffleScore | None:
    """The look `look` ("half": the first `half_look` cards; "end": all of `shoe`) at
    `shoe` (card indices as they came out) against `previous`; None when either has too
    few cards (MIN_SHARE). Where in the shoe it shows is `located`'s to say."""
    return shuffle_scores(previous, shoe, decks, (look,)).get(look)


def shuffle_scores(
    previous: DealtShoe, shoe: Sequence[int], decks: int, looks: Sequence[str] = ("half", "end")
) -> dict[str, ShuffleScore]:
    """`shuffle_score` at each of `looks` that has the cards for it, in one pass."""
    size = 52 * decks
    if len(previous) < MIN_SHARE * size:
        return {}
    seen = {look: half_look(decks) if look == "half" else min(len(shoe), size) for look in looks}
    seen = {look: n for look, n in seen.items() if MIN_SHARE * size <= n <= len(shoe)}
    if not seen:
        return {}
    places = sorted(set(seen.values()))
    z_all = scores(previous.discards(), shoe, decks, places)
    found = {}
    for look, n in seen.items():
        z = z_all[places.index(n)]
        score = float(z[:, :, DECIDING].max())
        gathering, direction, kernel = (int(i) for i in np.unravel_index(int(z.argmax()), z.shape))
        found[look] = ShuffleScore(
            look,
            n,
            len(previous),
            score,
            RIFFLES[kernel],
            GATHERINGS[gathering],
            direction != 0,
            look_probability(decks, look, score, n),
        )
    return found


def located(
    found: ShuffleScore, previous: DealtShoe, shoe: Sequence[int], decks: int
) -> ShuffleScore:
    """`found` with the run of cards of `shoe` where the previous order shows most (the
    run whose cards add most to the best fit's score beyond what a fair shuffle adds)."""
    fit = (GATHERINGS.index(found.gathering), int(found.turned), found.riffles)
    first, last = strongest_part(
        *excess_by_card(previous.discards(), shoe, decks, found.cards, fit)
    )
    return dataclasses.replace(found, first=first + 1, last=last + 1)


def weak_look(
    previous: DealtShoe, shoe: Sequence[int], decks: int, look: str, threshold: float
) -> ShuffleScore | None:
    """The look `look` at `shoe` when it is weak (its probability below `threshold`),
    with where it shows (`located`); None when it is not, or cannot be looked at. One
    function of plain data, so a station can run it in a process of its own
    (`station.live.protection.looks`): 10-30 ms of CPU twice a shoe."""
    score = shuffle_score(previous, shoe, decks, look)
    if score is None or score.probability >= threshold:
        return None
    return located(score, previous, shoe, decks)
