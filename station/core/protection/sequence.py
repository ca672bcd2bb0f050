"""Pre-arranged or repeated shoes: runs of cards in the order of an earlier shoe or of a
new deck (issue 15, part 1).

A shoe is a sequence of card indices (0..51, `ALL_CARDS` order), burns included. While
it is dealt, every run of `k` consecutive cards is compared with every earlier shoe and
with every order new decks are packed in. `k` comes from the size of the history so that
a fairly shuffled shoe raises a false alarm less than once in `budget` shoes
(`run_length`; the derivation is in docs/protection.md).

The history is indexed sparsely: an earlier shoe's `GRAM`-card windows are stored only
where they start at a multiple of `STRIDE`. A run of `GRAM + STRIDE - 1` cards or more
holds `STRIDE` consecutive window starts, one of which is stored, so every run of `k`
cards is found by the time its `k`-th card is dealt (`k` is never below
`MIN_RUN`); a window found is then extended backwards and forwards card by card against
the earlier shoe's stored order. Pure: the history is a `History` (the live station's is
SQLite, `station.shared.protection_index`; `MemoryHistory` here serves files and tests).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Protocol

from station.core.cards import ALL_CARDS, RANKS, SUITS

#: Cards in one indexed window, and the spacing of the stored windows in an earlier shoe.
GRAM = 5
STRIDE = 4
#: The shortest run the index is sure to find: GRAM + STRIDE - 1.
MIN_RUN = GRAM + STRIDE - 1
#: Default false-alarm budget: a fairly shuffled shoe alarms less than once in 10^6 shoes.
FALSE_ALARM_BUDGET = 1e-6
#: What the packed-order matches name as their earlier shoe.
NEW_DECK_ORDER = "new deck order"
#: Card code -> index 0..51, the byte stored for it.
CARD_INDEX: dict[str, int] = {code: i for i, code in enumerate(ALL_CARDS)}


def encode(cards: Iterable[str]) -> bytes:
    """Card codes -> one byte each (their `ALL_CARDS` index)."""
    return bytes(CARD_INDEX[c] for c in cards)


def gram_key(window: Sequence[int]) -> int:
    """A window of `GRAM` card indices as one exact integer (base 52: no collisions)."""
    key = 0
    for card in window:
        key = key * 52 + card
    return key


def match_bound(decks: int, k: int) -> float:
    """An upper bound on the probability that the `k` cards at given places of a fairly
    shuffled shoe of `decks` decks are one given sequence: each card, given those before
    it, is one of at most `decks` copies among at least `52 * decks - k + 1` cards left."""
    size = 52 * decks
    return (decks / (size - k + 1)) ** k


def comparisons(history_shoes: int, decks: int, k: int) -> float:
    """How many (place in this shoe, place in the history) pairs a shoe is compared at:
    every start in this shoe against every start in every earlier shoe and every window
    of every packed order (a union bound needs no independence)."""
    size = 52 * decks
    starts = size - k + 1
    return starts * (history_shoes * starts + len(packed_windows(k)))


def false_alarm_bound(history_shoes: int, decks: int, k: int) -> float:
    """The union bound on the chance that a fairly shuffled shoe alarms at run length k."""
    return comparisons(history_shoes, decks, k) * match_bound(decks, k)


def run_length(history_shoes: int, decks: int, budget: float = FALSE_ALARM_BUDGET) -> int:
    """The shortest run `k` (at least `MIN_RUN`) whose false-alarm bound is under `budget`
    for a history of `history_shoes` shoes of `decks` decks."""
    if not 0.0 < budget < 1.0:
        raise ValueError(f"the false-alarm budget must be between 0 and 1, got {budget}")
    k = MIN_RUN
    while false_alarm_bound(history_shoes, decks, k) > budget:
        k += 1
        if k > 52 * decks:  # unreachable for any real history; guards a runaway loop
            raise ValueError(f"no run length keeps {history_shoes} shoes under {budget}")
    return k


def packed_orders() -> list[tuple[int, ...]]:
    """Every order a new deck is packed in: the four suits in any order, each in ascending
    (A..K) or descending (K..A) rank, whatever the brand (24 x 16 = 384 orders)."""
    orders = []
    for suits in itertools.permutations(SUITS):
        for directions in itertools.product((1, -1), repeat=4):
            deck: list[int] = []
            for suit, direction in zip(suits, directions, strict=True):
                ranks = RANKS if direction == 1 else RANKS[::-1]
                deck.extend(CARD_INDEX[rank + suit] for rank in ranks)
            orders.append(tuple(deck))
    return orders


@cache
def packed_windows(k: int) -> frozenset[tuple[int, ...]]:
    """Every run of `k` cards of a packed order, read cyclically: a shoe of several new
    decks of one brand runs from the end of one deck into the start of the next."""
    windows = set()
    for order in packed_orders():
        doubled = order + order[: k - 1]
        for start in range(len(order)):
            windows.add(doubled[start : start + k])
    return frozenset(windows)


@cache
def packed_starts(k: int) -> frozenset[tuple[int, ...]]:
    """The first `GRAM` cards of every packed window of `k` cards (a cheap pre-check)."""
    return frozenset(w[:GRAM] for w in packed_windows(k))


class History(Protocol):
    """The earlier shoes: their card orders and the index of their stored windows."""

    def shoes(self) -> int:
        """How many shoes the history holds (what `run_length` is computed from)."""
        ...

    def lookup(self, key: int) -> Sequence[tuple[int, int]]:
        """(shoe id, start) of every stored window equal to `gram_key` `key`."""
        ...

    def cards(self, shoe: int) -> bytes:
        """An earlier shoe's card order (one byte a card)."""
        ...

    def label(self, shoe: int) -> str:
        """How an alert names the earlier shoe (table, when it started)."""
        ...

    def find(self, source: str) -> int | None:
        """The id of the shoe stored under `source`, if any."""
        ...

    def add(self, cards: bytes, label: str, source: str) -> int | None:
        """Store a finished shoe; `source` names it uniquely (adding it twice is a no-op,
        None). Returns its id."""
        ...


def stored_windows(cards: bytes) -> list[tuple[int, int]]:
    """(key, start) of the windows of a shoe the index stores: every STRIDE-th start."""
    return [
        (gram_key(cards[start : start + GRAM]), start)
        for start in range(0, len(cards) - GRAM + 1, STRIDE)
    ]


class MemoryHistory:
    """A history in memory: for `station protect` over files, tests and simulations."""

    def __init__(self) -> None:
        self._index: dict[int, list[tuple[int, int]]] = {}
        self._shoes: list[tuple[bytes, str]] = []
        self._sources: dict[str, int] = {}

    def shoes(self) -> int:
        return len(self._shoes)

    def lookup(self, key: int) -> Sequence[tuple[int, int]]:
        return self._index.get(key, ())

    def cards(self, shoe: int) -> bytes:
        return self._shoes[shoe][0]

    def label(self, shoe: int) -> str:
        return self._shoes[shoe][1]

    def find(self, source: str) -> int | None:
        return self._sources.get(source)

    def add(self, cards: bytes, label: str, source: str) -> int | None:
        if source in self._sources:
            return None
        shoe = self._sources[source] = len(self._shoes)
        self._shoes.append((bytes(cards), label))
        for key, start in stored_windows(cards):
            self._index.setdefault(key, []).append((shoe, start))
        return shoe


@dataclass(frozen=True, slots=True)
class SequenceMatch:
    """A run of `length` cards of this shoe from card `start` (0-based, burns included)
    in the order of `earlier` (a shoe's label, or NEW_DECK_ORDER) from its card
    `earlier_start`."""

    start: int
    length: int
    earlier: str
    earlier_shoe: int | None
    earlier_start: int | None
    k: int
    #: The other earlier shoes (or NEW_DECK_ORDER) the same card completed a run of: one
    #: alert names them all (issue 27: a shoe repeated twice raised two alerts for one row).
    others: tuple[str, ...] = ()

    def message(self) -> str:
        where = f"card {self.start + 1} of this shoe"
        also = f", and of {', '.join(self.others)}" if self.others else ""
        if self.earlier_shoe is None:
            return f"{self.k} cards in new deck order{also} from {where}: the shoe was not shuffled"
        return (
            f"{self.k} cards in the order of {self.earlier} (its card "
            f"{(self.earlier_start or 0) + 1}){also} from {where}: a repeated or pre-arranged "
            "shoe"
        )


class SequenceWatch:
    """One shoe being dealt: `card()` each card in order; it returns the match whose run
    just reached `k` cards, naming every earlier shoe (and new deck order) whose run that
    card completed. Each earlier shoe (and new deck order) is reported once per shoe: the
    first run says what there is to say. `exclude` is this very shoe when the history
    already holds it (a journal checked a second time)."""

    __slots__ = ("_alerted", "_cards", "_history", "_live", "_packed", "k")

    def __init__(
        self,
        history: History,
        decks: int,
        budget: float = FALSE_ALARM_BUDGET,
        exclude: int | None = None,
    ) -> None:
        self._history = history
        self.k = run_length(history.shoes(), decks, budget)
        self._cards = bytearray()
        #: (earlier shoe, its start - our start) -> (our run's first card, its cards)
        self._live: dict[tuple[int, int], tuple[int, bytes]] = {}
        #: Earlier shoe ids already reported (None: new deck order), and `exclude`.
        self._alerted: set[int | None] = set() if exclude is None else {exclude}
        self._packed = packed_windows(self.k)

    @property
    def cards(self) -> bytes:
        return bytes(self._cards)

    def card(self, index: int) -> list[SequenceMatch]:
        """The next card (its `ALL_CARDS` index) out of the shoe: no match, or one."""
        cards = self._cards
        cards.append(index)
        i = len(cards) - 1
        k = self.k
        found: list[SequenceMatch] = []
        # Runs already followed: does the earlier shoe go on with this card?
        for key, (first, earlier) in list(self._live.items()):
            shoe, delta = key
            j = i + delta
            if j >= len(earlier) or earlier[j] != index:
                del self._live[key]
                continue
            if i - first + 1 >= k:
                del self._live[key]
                if shoe not in self._alerted:
                    self._alerted.add(shoe)
                    found.append(self._match(shoe, first, first + delta))
        if i + 1 >= GRAM:
            start = i + 1 - GRAM
            for shoe, earlier_start in self._history.lookup(gram_key(cards[start:])):
                delta = earlier_start - start
                if (shoe, delta) in self._live or shoe in self._alerted:
                    continue
                earlier = self._history.cards(shoe)
                first = start
                while (
                    first > 0
                    and first + delta > 0
                    and cards[first - 1] == earlier[first - 1 + delta]
                ):
                    first -= 1
                if i - first + 1 >= k:
                    self._alerted.add(shoe)
                    found.append(self._match(shoe, first, first + delta))
                else:
                    self._live[(shoe, delta)] = (first, earlier)
        if i + 1 >= k and None not in self._alerted and tuple(cards[i + 1 - k :]) in self._packed:
            self._alerted.add(None)
            found.append(SequenceMatch(i + 1 - k, k, NEW_DECK_ORDER, None, None, k))
        if len(found) > 1:  # one card, one alert: the first match names the others
            named, *rest = found
            return [dataclasses.replace(named, others=tuple(m.earlier for m in rest))]
        return found

    def _match(self, shoe: int, first: int, earlier_first: int) -> SequenceMatch:
        return SequenceMatch(first, self.k, self._history.label(shoe), shoe, earlier_first, self.k)


def describe_k(history_shoes: int, decks: int, budget: float = FALSE_ALARM_BUDGET) -> str:
    """One line on how k was chosen (for logs, `station protect --explain`, the docs)."""
    k = run_length(history_shoes, decks, budget)
    bound = false_alarm_bound(history_shoes, decks, k)
    return (
        f"k = {k}: {comparisons(history_shoes, decks, k):.3g} comparisons x "
        f"{match_bound(decks, k):.3g} per comparison = {bound:.3g} <= {budget:g} "
        f"(log10 {math.log10(bound):.2f})"
    )
