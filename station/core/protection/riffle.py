"""How much of the previous shoe's order survived the shuffle: the riffle statistic
(issue 28; docs/protection.md derives it).

A Gilbert-Shannon-Reeds riffle cuts the discards into two packets and drops them
together; k riffles interleave 2^k packets, each a run of the previous order kept in
order. So two cards `delta` places apart in the discards (in one packet, which happens
with chance about exp(-delta (2^k - 1) / N)) come out in the same order in the new shoe,
about `delta 2^k` places apart: the gap is a negative binomial, `delta` geometric gaps of
mean 2^k. A fair shuffle puts them anywhere.

With several decks the station cannot tell which copy of a card is which, so every copy
pair counts: for each pair of cards up to SPAN places apart in the previous order (as
gathered, `gathered`) and every copy of the first and of the second in the new shoe, d
places apart, the statistic adds K_k(delta, d) = N exp(-delta (2^k - 1) / N)
NegBin(d; delta, 2^-k), the likelihood ratio of that gap under k riffles against a fair
shuffle: summed, the locally most powerful score against k riffles. Kernel k = 0 is
"cut only": the gap is exactly `delta`.

Gaps are counted round the cards seen (`circular`), so under a fair shuffle every gap is
as likely wherever a card lies. Given the new shoe's composition so far, the mean of the
sum is exact and its variance is the multinomial's of each two cards' copy pairs, after
taking out what depends on one card alone (`_null_mean_sd`): each standardized score Z
is then close to N(0, 1) under a fair shuffle. `scores` gives Z for every gathering,
direction (the pile as gathered, or turned over) and kernel; `riffle_null` holds the
simulated distribution of the largest one.

Pure: standard library and numpy; the orders come in as arrays.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

#: How far apart (places in the previous order) two cards of a pair may be (16: as
#: powerful as 24 or 32 against 4 to 6 riffles, and cheaper; docs/protection.md).
SPAN = 16
#: The kernels: k riffles (0: cut only, no riffle).
RIFFLES = (0, 1, 2, 3, 4, 5, 6)
#: How the discards of a round may have been gathered (`gathered`).
GATHERINGS = (
    "in dealt order",
    "each round reversed",
    "with the banker's cards first",
    "with the banker's cards last",
)
#: The discards as gathered, or the whole pile turned over before the shuffle.
DIRECTIONS = ("as gathered", "turned over")
#: The hand code of the banker's cards (`Discards.hands`); ponte hands count from 0.
BANKER = 9

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
    def of(cls, cards: Sequence[int], rounds: Sequence[int], hands: Sequence[int]) -> Discards:
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
        keys = (np.where(rounds > 0, -place, place), rounds)
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
    `size` cards `seen` cards in: gaps are counted round the `seen` cards (`circular`), so
    under a fair shuffle every gap 1..seen-1 has the same chance P(d) = 1 / (seen - 1)."""
    table = kernels(size)[:, :, 1:seen]
    mu = table.sum(axis=2) / max(seen - 1, 1)
    gram = np.einsum("kad,kbd->kab", table, table) / max(seen - 1, 1)
    mu.setflags(write=False)
    gram.setflags(write=False)
    return mu, gram


def circular(histogram: IntArray, last: int, seen: int) -> tuple[IntArray, IntArray]:
    """From the counts of copy pairs by gap g = -(last-1)..last-1 (index g + last - 1) of
    the first `seen` cards: the counts by gap round the `seen` cards, g mod seen, this way
    round (forward) and the other (backward), for d = 0..seen-1. Counting round the shoe
    gives every card the same room before and after it, so where a card lies does not
    change what its pairs can add (without it, a card near the end of the cards seen has
    few partners after it, and a previous shoe whose cards are unevenly represented
    spreads the statistic more than its variance says)."""
    zero = last - 1
    forward = histogram[:, zero : zero + seen].copy()
    forward[:, 1:] += histogram[:, zero + 1 - seen : zero]
    backward = histogram[:, zero - seen + 1 : zero + 1][:, ::-1].copy()
    backward[:, 1:] += histogram[:, zero + 1 : zero + seen][:, ::-1]
    return forward, backward


@dataclass(frozen=True, slots=True)
class _CopyPairs:
    """Every pair of cards of the previous order up to SPAN + (the longest round - 1)
    apart (a gathering moves a card by less than its round), both known, with the places
    in the new shoe of every copy of each: `firsts`, `seconds` index the previous order;
    `gap[p, c]` is copy pair c's second place less its first; `seen[p, c]` the first look
    it is in (len(looks) while a copy is not out: no look)."""

    firsts: IntArray
    seconds: IntArray
    gap: IntArray
    seen: IntArray
    x_places: IntArray  # [p, copy]: the new shoe's places of the first card's copies
    y_places: IntArray  # and of the second's
    out_by_look: IntArray  # copies of each card out at each look


def _copy_pairs(discards: Discards, cards: IntArray, decks: int, looks: IntArray) -> _CopyPairs:
    """The copy pairs of `discards`' pairs in `cards` (the new shoe up to its last look)."""
    known_places = np.flatnonzero(cards >= 0)
    known = cards[known_places]
    out_counts = np.bincount(known, minlength=52)
    copies = max(decks, int(out_counts.max(initial=0)))
    order = np.argsort(known, kind="stable")
    first = np.concatenate(([0], np.cumsum(out_counts)[:-1]))
    slot = np.arange(len(known)) - first[known[order]]
    place = np.zeros((52, copies), dtype=np.int64)
    place[known[order], slot] = known_places[order]
    seen_at = np.full((52, copies), len(looks), dtype=np.int64)
    seen_at[known[order], slot] = np.searchsorted(looks, known_places[order], side="right")
    prev = discards.cards
    rounds = discards.rounds
    span = SPAN + int(np.bincount(rounds[rounds > 0]).max(initial=1)) - 1
    firsts = np.concatenate([np.arange(len(prev) - k) for k in range(1, span + 1)])
    seconds = np.concatenate([np.arange(k, len(prev)) for k in range(1, span + 1)])
    both = (prev[firsts] >= 0) & (prev[seconds] >= 0)
    firsts, seconds = firsts[both], seconds[both]
    x, y = prev[firsts], prev[seconds]
    x_places, y_places = place[x], place[y]
    seen = np.maximum(seen_at[x][:, :, None], seen_at[y][:, None, :])
    out_by_look = np.stack([np.bincount(known[known_places < n], minlength=52) for n in looks])
    return _CopyPairs(
        firsts,
        seconds,
        (y_places[:, None, :] - x_places[:, :, None]).reshape(len(x), -1),
        seen.reshape(len(x), -1),
        x_places,
        y_places,
        out_by_look,
    )


def _looks(shoe: Sequence[int], decks: int, looks: Sequence[int]) -> tuple[IntArray, IntArray]:
    """The looks as an array, checked, and the shoe's cards up to the last look."""
    looks_ = np.asarray(looks, dtype=np.int64)
    top = min(len(shoe), 52 * decks)
    if len(looks_) == 0 or looks_[0] < 2 or looks_[-1] > top or np.any(np.diff(looks_) <= 0):
        raise ValueError(f"looks must rise from 2 to at most {top}, got {list(looks)}")
    return looks_, np.asarray(shoe, dtype=np.int64)[: int(looks_[-1])]


def scores(discards: Discards, shoe: Sequence[int], decks: int, looks: Sequence[int]) -> FloatArray:
    """Z[look, gathering, direction, kernel]: the standardized statistic for the first
    `looks[i]` cards of `shoe` (card indices as dealt, -1 for an unread card) against
    `discards`. `looks` rise, each between 2 and len(shoe) (and 52 * decks)."""
    size = 52 * decks
    looks_, cards = _looks(shoe, decks, looks)
    last = len(cards)
    pairs = _copy_pairs(discards, cards, decks, looks_)
    faces_x, faces_y = discards.cards[pairs.firsts], discards.cards[pairs.seconds]
    width = 2 * last - 1
    row = (SPAN + 1) * width
    cells = (len(looks_) + 1) * row
    ahead = pairs.seen * row + (last - 1) + pairs.gap  # the histogram index less the row's
    table = kernels(size)
    result = np.zeros((len(looks_), len(GATHERINGS), len(DIRECTIONS), len(RIFFLES)))
    for g in range(len(GATHERINGS)):
        where = gathered(discards, g)
        apart = where[pairs.seconds] - where[pairs.firsts]
        delta = np.abs(apart)
        delta = np.where(delta <= SPAN, delta, 0)  # row 0: out of reach, kernel 0
        index = ahead + (delta * width)[:, None]
        turned = np.flatnonzero(apart < 0)  # pairs the gathering turned round: gap -> -gap
        index[turned] -= 2 * pairs.gap[turned]
        histogram = np.bincount(index.ravel(), minlength=cells)
        histogram = np.cumsum(histogram.reshape(len(looks_) + 1, SPAN + 1, width)[:-1], axis=0)
        # How many pairs of each two cards (x first in the gathered pile) at each delta.
        pair = np.where(apart > 0, faces_x * 52 + faces_y, faces_y * 52 + faces_x)
        near = delta > 0
        counts = np.bincount(
            pair[near] * (SPAN + 1) + delta[near], minlength=52 * 52 * (SPAN + 1)
        ).reshape(52 * 52, SPAN + 1)
        rows = np.flatnonzero(counts.any(axis=1))
        m = counts[rows].astype(np.float64)
        for i, n in enumerate(looks_.tolist()):
            mean, sd = _null_mean_sd(m, rows, pairs.out_by_look[i], size, n)
            forward, backward = circular(histogram[i], last, n)
            k = table[:, :, :n]
            result[i, g, 0] = (np.einsum("kad,ad->k", k, forward) - mean) / sd
            result[i, g, 1] = (np.einsum("kad,ad->k", k, backward) - mean) / sd
    return result


def _null_mean_sd(
    m: FloatArray, rows: IntArray, out: IntArray, size: int, seen: int
) -> tuple[FloatArray, FloatArray]:
    """The mean and spread of each kernel's sum under a fair shuffle, given the copies of
    each card out (`out`) `seen` cards in; `m[r, delta]` counts the pairs of the two cards
    `rows[r]` (x * 52 + y) `delta` apart.

    The mean is exact. The spread treats each two cards' copy pairs as spread over the
    gaps independently (a multinomial), after taking out of `m` what depends on x alone
    or y alone: counted round the shoe, that part of the sum is fixed by the composition
    (every copy of x has the same room and its neighbours are some card), and left in it
    would add spread that is not there."""
    c = out.astype(np.float64)
    weights = np.outer(c, c)
    weights[np.diag_indices(52)] = c * (c - 1)
    w = weights.ravel()[rows]
    mu, gram = null_moments(size, seen)
    # einsum, not `@`: matrix products would go to a BLAS that may start threads of its
    # own beside the live station's writer; einsum stays on this thread.
    mean = np.einsum("ka,pa,p->k", mu, m, w)
    full = np.zeros((52 * 52, m.shape[1]))
    full[rows] = m
    cube = full.reshape(52, 52, -1)
    share = c / max(c.sum(), 1.0)
    row = np.einsum("xyd,y->xd", cube, share)
    column = np.einsum("xyd,x->yd", cube, share)
    grand = np.einsum("xd,x->d", row, share)
    centred = (cube - row[:, None, :] - column[None, :, :] + grand).reshape(52 * 52, -1)
    wall = weights.ravel()
    spread = np.einsum("kab,ab->k", gram, np.einsum("pa,pb->ab", centred * wall[:, None], centred))
    spread -= np.einsum("pk,p->k", np.einsum("pa,ka->pk", centred, mu) ** 2, wall)
    return mean, np.sqrt(np.maximum(spread, 1e-12))


def excess_by_card(
    discards: Discards, shoe: Sequence[int], decks: int, seen: int, fit: tuple[int, int, int]
) -> tuple[FloatArray, float]:
    """How much each of the first `seen` cards of `shoe` adds to the statistic of `fit`
    (gathering, direction, riffles) beyond what a fair shuffle adds on average, and the
    spread of the whole sum under a fair shuffle: where in the shoe the previous order
    shows."""
    gathering, direction, kernel = fit
    looks_, cards = _looks(shoe, decks, [seen])
    pairs = _copy_pairs(discards, cards, decks, looks_)
    where = gathered(discards, gathering)
    apart = where[pairs.seconds] - where[pairs.firsts]
    delta = np.abs(apart)
    turn = np.sign(apart) * (1 if direction == 0 else -1)
    gap = (pairs.gap * turn[:, None]) % seen  # round the cards seen, as `scores` counts
    ok = (pairs.seen == 0) & (gap > 0) & (delta <= SPAN)[:, None]
    table = kernels(52 * decks)[RIFFLES.index(kernel)]
    value = np.zeros(gap.shape)
    rows = np.broadcast_to(delta[:, None], gap.shape)
    value[ok] = table[rows[ok], gap[ok]]
    copies = pairs.x_places.shape[1]
    first = np.repeat(pairs.x_places, copies, axis=1)  # [p, i * copies + j] = x_places[p, i]
    second = np.tile(pairs.y_places, (1, copies))  # ... = y_places[p, j]
    total = np.bincount(first[ok], weights=value[ok] / 2, minlength=seen)
    total += np.bincount(second[ok], weights=value[ok] / 2, minlength=seen)
    faces_x, faces_y = discards.cards[pairs.firsts], discards.cards[pairs.seconds]
    pair = np.where(apart > 0, faces_x * 52 + faces_y, faces_y * 52 + faces_x)
    near = (delta > 0) & (delta <= SPAN)
    counts = np.bincount(
        pair[near] * (SPAN + 1) + delta[near], minlength=52 * 52 * (SPAN + 1)
    ).reshape(52 * 52, SPAN + 1)
    rows_ = np.flatnonzero(counts.any(axis=1))
    m = counts[rows_].astype(np.float64)
    mean, spread = _null_mean_sd(m, rows_, pairs.out_by_look[0], 52 * decks, seen)
    k = RIFFLES.index(kernel)
    return total - mean[k] / seen, float(spread[k])


def strongest_part(excess: FloatArray, spread: float) -> tuple[int, int]:
    """The run of cards (first, last, 0-based) whose excess is least likely under a fair
    shuffle: the largest sum over its spread, sqrt(run / cards) of the whole's `spread`
    (a scan over every run of at least a sixteenth of the cards)."""
    seen = len(excess)
    shortest = min(seen, max(13, seen // 16))
    sums = np.concatenate(([0.0], np.cumsum(excess)))
    first = np.arange(seen)[:, None]
    last = np.arange(seen)[None, :]
    length = last - first + 1
    z = (sums[1:][None, :] - sums[:-1][:, None]) / (
        max(spread, 1e-12) * np.sqrt(np.maximum(length, 1) / seen)
    )
    z = np.where(length >= shortest, z, -np.inf)
    at = np.unravel_index(int(z.argmax()), z.shape)
    return int(at[0]), int(at[1])
