"""Runs in the order of an earlier shoe or of a new deck: k, the bound, detection."""

from __future__ import annotations

import random

import pytest

from drivers.sim.shoe import VirtualShoe
from station.core.protection.sequence import (
    MIN_RUN,
    NEW_DECK_ORDER,
    MemoryHistory,
    SequenceWatch,
    encode,
    false_alarm_bound,
    match_bound,
    packed_orders,
    packed_windows,
    run_length,
)


def fair_shoe(decks: int, rng: random.Random) -> bytes:
    return encode(VirtualShoe(decks, rng).order)


def test_k_grows_with_the_history_and_keeps_the_bound() -> None:
    ks = [run_length(h, 8) for h in (0, 1, 10**3, 10**6, 10**9)]
    assert ks == sorted(ks) and ks[0] == MIN_RUN and ks[3] == 11
    for h in (0, 10**3, 10**6):
        k = run_length(h, 8)
        assert false_alarm_bound(h, 8, k) <= 1e-6
        assert k == MIN_RUN or false_alarm_bound(h, 8, k - 1) > 1e-6
    with pytest.raises(ValueError, match="between 0 and 1"):
        run_length(1, 8, budget=0)


@pytest.mark.parametrize(("decks", "k"), [(1, 2), (8, 2), (8, 3)])
def test_the_per_comparison_bound_holds_by_simulation(decks: int, k: int) -> None:
    """Short runs (k = 2, 3) match often enough to count: the mean number of matching
    (place, place) pairs between two fair shoes stays under the union bound, and near it
    (the bound is not loose by orders of magnitude)."""
    rng = random.Random(15)
    size = 52 * decks
    trials, matches = 100, 0
    for _ in range(trials):
        a, b = fair_shoe(decks, rng), fair_shoe(decks, rng)
        grams: dict[bytes, int] = {}
        for i in range(size - k + 1):
            grams[a[i : i + k]] = grams.get(a[i : i + k], 0) + 1
        matches += sum(grams.get(b[j : j + k], 0) for j in range(size - k + 1))
    bound = (size - k + 1) ** 2 * match_bound(decks, k)
    assert 0.5 * bound < matches / trials <= bound * 1.1


def test_packed_orders_are_every_brand() -> None:
    orders = packed_orders()
    assert len(orders) == 384 and len(set(orders)) == 384
    assert all(sorted(o) == list(range(52)) for o in orders)
    # Within one suit or across one suit change: 3 x 4 x 2 + 10 x 12 x 4 windows of 11.
    assert len(packed_windows(11)) == 504


def test_a_replayed_shoe_is_caught_within_k_cards() -> None:
    rng = random.Random(7)
    history = MemoryHistory()
    for i in range(30):
        history.add(fair_shoe(8, rng), f"shoe {i}", str(i))
    earlier = history.cards(12)
    for offset, begin in ((0, 0), (3, 100), (1, 37)):
        watch = SequenceWatch(history, 8)
        k = watch.k
        fresh = fair_shoe(8, rng)
        stacked = fresh[:offset] + earlier[begin : begin + 40] + fresh[offset + 40 :]
        found = []
        for i, card in enumerate(stacked):
            for match in watch.card(card):
                found.append((i, match))
        assert found, "the replayed run was not caught"
        i, match = found[0]
        assert match.earlier == "shoe 12" and match.earlier_start == begin
        assert match.start == offset and i == offset + k - 1  # at its k-th card
        assert match.length == k


def test_a_factory_order_deck_is_caught_within_k_cards() -> None:
    order = packed_orders()[200]
    rng = random.Random(3)
    history = MemoryHistory()
    watch = SequenceWatch(history, 6)
    cards = fair_shoe(6, rng)[:9] + bytes(order[20:]) + bytes(order) + fair_shoe(6, rng)
    hits = [(i, m) for i, c in enumerate(cards) for m in watch.card(c)]
    assert len(hits) == 1
    i, match = hits[0]
    assert match.earlier == NEW_DECK_ORDER and match.start == 9 and i == 9 + watch.k - 1


def test_fair_shoes_raise_nothing() -> None:
    """Fair 8-deck shoes against a history of fair shoes (the real rate is < 1e-6)."""
    rng = random.Random(11)
    history = MemoryHistory()
    alarms = 0
    for i in range(150):
        watch = SequenceWatch(history, 8)
        cards = fair_shoe(8, rng)
        alarms += sum(len(watch.card(c)) for c in cards)
        history.add(cards, f"shoe {i}", str(i))
    assert alarms == 0


def test_a_shoe_added_twice_is_stored_once() -> None:
    history = MemoryHistory()
    cards = fair_shoe(1, random.Random(1))
    assert history.add(cards, "a", "x") == 0
    assert history.add(cards, "a", "x") is None and history.shoes() == 1
