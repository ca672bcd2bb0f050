"""How much of the previous shoe's order survived the shuffle: the riffle statistic
(issue 28).

A Gilbert-Shannon-Reeds riffle cuts the discards into two packets and drops them
together; k riffles interleave 2^k packets, each a run of the previous order kept in
order. So two cards `delta` places apart in the discards (same packet, which happens with
chance about exp(-delta 2^k / N)) come out in the same order in the new shoe, about
`delta 2^k` places apart: the gap is a negative binomial, `delta` geometric gaps of mean
2^k. A fair shuffle puts them anywhere.

With several decks the station cannot tell which copy of a card is which, so every copy
pair counts: for each pair of cards `delta` <= SPAN places apart in the previous order
(as gathered, see `gathered`) and every copy of the first and of the second in the new
shoe, `d` places apart, the statistic adds the kernel K_k(delta, d) = N exp(-delta (2^k -
1) / N) NegBin(d; delta, 2^-k), the likelihood ratio of that gap under k riffles against
a fair shuffle. Summed over all pairs it is the locally most powerful score against k
riffles. Kernel k = 0 is "cut only": the gap is exactly `delta`.

Its mean and variance under a fair shuffle are taken given the new shoe's composition
so far (how many copies of each card are out): the copy pairs of a pair of cards are
then spread over the gaps as a multinomial with P(d) = (n - d) / (n (n - 1)), which
gives the mean exactly and the variance up to the copy pairs' small correlations (the
calibration, `riffle_null`, takes the distribution from simulation, so the variance only
standardizes). The result is one standardized score Z per gathering order, direction
(the discards as gathered, or the whole pile turned over) and kernel.

Pure: standard library and numpy; the orders come in as arrays.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

#: How far apart (places in the previous order) two cards of a pair may be.
SPAN = 24
#: The kernels: k riffles (0: cut only, no riffle).
RIFFLES = (0, 1, 2, 3, 4, 5, 6)
#: How the discards of a round may have been gathered (`gathered`).
GATHERINGS = ("dealt order", "each round reversed", "banker's cards first", "banker's cards last")
#: The discards as gathered, or the whole pile turned over before the shuffle.
DIRECTIONS = ("as gathered", "turned over")
#: The hand code of the banker's cards (`Discards.hands`); ponte hands count from 0.
BANKER = 9
#: The most cards a round holds (baccarat banque: 9): how far gathering moves a card.
ROUND_CARDS = 9

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Discards:
    """The previous shoe as the station knows it, in the order its cards came out: each
    card's index (0..51, -1 for one nobody read), its round (0: the burn, or outside any
    round) and its hand (0, 1: the ponte hands in deal order, BANKER, -1: none)."""

    cards: IntArray
    rounds: IntArray
    hands: IntArray

    @classmethod
    def of(
        cls, cards: Sequence[int], rounds: Sequence[int], hands: Sequence[int]
    ) -> Discards:
        if not len(cards) == len(rounds) == len(hands):
            raise ValueError("cards, rounds and hands must be as long as each other")
        return cls(
            np.asarray(cards, dtype=np.int64),
            np.asarray(rounds, dtype=np.int64),
            np.asarray(hands, dtype=np.int64),
        )

    def __len__(self) -> int:
        return len(self.cards)


def hand_code(role: object) -> int:
    """A verdict's card role -> its hand code: `P1`, `T1.2` -> 0, `T2.1` -> 1, `B3`, `B.1`
    -> BANKER; a burn or no role -> -1."""
    if not isinstance(role, str) or not role or role.startswith("burn"):
        return -1
    if role[0] == "B":
        return BANKER
    if role[0] == "T" and role[1:2].isdigit():
        return int(role[1]) - 1
    return 0


def gathered(discards: Discards, gathering: int) -> IntArray:
    """The place of each card of `discards` in the discard pile gathered the
    `GATHERINGS[gathering]` way: rounds stay in dealt order, the burn first; within a
    round the cards go in dealt order, reversed, or hand by hand (each hand's cards in
    dealt order) with the banker's first or last."""
    size = len(discards)
    place = np.arange(size)
    rounds, hands = discards.rounds, discards.hands
    if gathering == 0:
        keys: tuple[IntArray, ...] = (place, rounds)
    elif gathering == 1:
        keys = (-place, rounds)
    elif gathering == 2:
        keys = (place, hands, (hands != BANKER).astype(np.int64), rounds)
    elif gathering == 3:
        keys = (place, hands, rounds)
    else:
        raise ValueError(f"no gathering order {gathering}")
    order = np.lexsort(keys)
    out = np.empty(size, dtype=np.int64)
    out[order] = place
    return out


@cache
def kernels(size: int) -> FloatArray:
    """K[k, delta, d] for each kernel of RIFFLES, delta = 0..SPAN (row 0 is zero: no
    pair) and gap d = 0..size - 1, in a shoe of `size` cards."""
    gaps = np.arange(size)
    table = np.zeros((len(RIFFLES), SPAN + 1, size))
    log_gamma = np.array([math.lgamma(x) for x in range(1, size + 2)])  # [x - 1] = lgamma(x)
    for i, riffles in enumerate(RIFFLES):
        packets = 2.0**riffles
        for delta in range(1, min(SPAN, size - 1) + 1):
            together = size * math.exp(-delta * (packets - 1) / size)
            if riffles == 0:
                table[i, delta, delta] = together
                continue
            d = gaps[delta:]
            log_p = (
                log_gamma[d - 1]
                - log_gamma[delta - 1]
                - log_gamma[d - delta]
                + delta * math.log(1 / packets)
                + (d - delta) * math.log1p(-1 / packets)
            )
            table[i, delta, delta:] = together * np.exp(log_p)
    table.setflags(write=False)
    return table


@cache
def null_moments(size: int, seen: int) -> tuple[FloatArray, FloatArray]:
    """mu[k, delta] = sum_d P(d) K and G[k, delta, delta'] = sum_d P(d) K K' for a shoe of
    `size` cards `seen` cards in, P(d) = (seen - d) / (seen (seen - 1)) the chance that
    two copies out so far are d places apart, this way round."""
    table = kernels(size)[:, :, :seen]
    chance = np.zeros(seen)
    if seen > 1:
        chance[1:] = (seen - np.arange(1, seen)) / (seen * (seen - 1.0))
    mu = table @ chance
    gram = np.einsum("kad,d,kbd->kab", table, chance, table)
    mu.setflags(write=False)
    gram.setflags(write=False)
    return mu, gram


def scores(discards: Discards, shoe: Sequence[int], decks: int, looks: Sequence[int]) -> FloatArray:
    """Z[look, gathering, direction, kernel]: the standardized statistic for the first
    `looks[i]` cards of `shoe` (card indices as dealt, -1 for an unread card) against
    `discards`. `looks` ascending, each between 2 and len(shoe) and 52 * decks."""
    size = 52 * decks
    looks_ = np.asarray(looks, dtype=np.int64)
    last = int(looks_[-1])
    if looks_[0] < 2 or last > min(len(shoe), size) or np.any(np.diff(looks_) <= 0):
        raise ValueError(f"looks must rise from 2 to at most {min(len(shoe), size)}: {looks!r}")
    cards = np.asarray(shoe, dtype=np.int64)[:last]
    # Where each card's copies came out, place[card, copy], and the first look that sees
    # it; a copy not out yet counts at no look (its look is len(looks): dropped).
    known_places = np.flatnonzero(cards >= 0)
    known = cards[known_places]
    out_counts = np.bincount(known, minlength=52)
    copies = max(decks, int(out_counts.max(initial=0)))
    order = np.argsort(known, kind="stable")
    first = np.concatenate(([0], np.cumsum(out_counts)[:-1]))
    slot = np.arange(len(known)) - first[known[order]]
    place = np.zeros((52, copies), dtype=np.int64)
    place[known[order], slot] = known_places[order]
    seen_at = np.full((52, copies), len(looks_), dtype=np.int64)
    seen_at[known[order], slot] = np.searchsorted(looks_, known_places[order], side="right")
    # Pairs of the previous order up to SPAN + ROUND_CARDS - 1 apart (gathering moves a
    # card by less than a round), both cards known.
    prev = discards.cards
    span = SPAN + ROUND_CARDS - 1
    firsts = np.concatenate([np.arange(len(prev) - k) for k in range(1, span + 1)])
    seconds = np.concatenate([np.arange(k, len(prev)) for k in range(1, span + 1)])
    both = (prev[firsts] >= 0) & (prev[seconds] >= 0)
    firsts, seconds = firsts[both], seconds[both]
    faces_x, faces_y = prev[firsts], prev[seconds]
    width = 2 * last - 1
    row = (SPAN + 1) * width
    cells = (len(looks_) + 1) * row
    gap = (place[faces_y][:, None, :] - place[faces_x][:, :, None]).reshape(len(firsts), -1)
    seen = np.maximum(seen_at[faces_x][:, :, None], seen_at[faces_y][:, None, :])
    ahead = seen.reshape(gap.shape) * row + (last - 1) + gap  # index less the row's
    out_by_look = np.stack([np.bincount(known[known_places < n], minlength=52) for n in looks_])
    table = kernels(size)
    result = np.zeros((len(looks_), len(GATHERINGS), len(DIRECTIONS), len(RIFFLES)))
    for g in range(len(GATHERINGS)):
        where = gathered(discards, g)
        apart = where[seconds] - where[firsts]
        delta = np.abs(apart)
        delta = np.where(delta <= SPAN, delta, 0)  # row 0: out of reach, kernel 0
        index = ahead + (delta * width)[:, None]
        turned = np.flatnonzero(apart < 0)  # pairs the gathering turned round: gap -> -gap
        index[turned] -= 2 * gap[turned]
        histogram = np.bincount(index.ravel(), minlength=cells)
        histogram = np.cumsum(histogram.reshape(len(looks_) + 1, SPAN + 1, width)[:-1], axis=0)
        # The pair as the gathered pile holds it: x first.
        pair = np.where(apart > 0, faces_x * 52 + faces_y, faces_y * 52 + faces_x)
        near = delta > 0
        counts = np.bincount(
            pair[near] * (SPAN + 1) + delta[near], minlength=52 * 52 * (SPAN + 1)
        ).reshape(52 * 52, SPAN + 1)
        rows = np.flatnonzero(counts.any(axis=1))
        m = counts[rows].astype(np.float64)
        for i, n in enumerate(looks_):
            c = out_by_look[i].astype(np.float64)
            weights = np.outer(c, c)
            weights[np.diag_indices(52)] = c * (c - 1)
            w = weights.ravel()[rows]
            mu, gram = null_moments(size, int(n))
            mean = mu @ (w @ m)
            spread = np.einsum("kab,ab->k", gram, (m * w[:, None]).T @ m)
            spread -= ((m @ mu.T) ** 2 * w[:, None]).sum(axis=0)
            sd = np.sqrt(np.maximum(spread, 1e-12))
            forward = histogram[i][:, last - 1 : last - 1 + int(n)]
            backward = histogram[i][:, last - 1 :: -1][:, : int(n)]
            k = table[:, :, : int(n)]
            result[i, g, 0] = (np.einsum("kad,ad->k", k, forward) - mean) / sd
            result[i, g, 1] = (np.einsum("kad,ad->k", k, backward) - mean) / sd
    return result
