"""Issue 27 item 8: one repeated shoe raised two SHOE_SEQUENCE alerts for one row when
two earlier shoes held its order; now one alert names them all."""

from __future__ import annotations

import random

from drivers.sim.shoe import VirtualShoe
from station.core.protection import SHOE_SEQUENCE, MemoryHistory
from station.core.protection.sequence import NEW_DECK_ORDER, SequenceWatch, encode, packed_orders
from tests.protection.test_watch import alerts_of, shoes_events


def test_a_card_that_completes_runs_of_two_earlier_shoes_gives_one_match() -> None:
    order = encode(VirtualShoe(2, random.Random(3)).order)
    history = MemoryHistory()
    history.add(order, "shoe A", "a")
    history.add(order, "shoe B", "b")
    watch = SequenceWatch(history, 2)
    found = [(i, m) for i, card in enumerate(order) for m in watch.card(card)]
    assert len(found) == 1  # and never again in this shoe
    at, match = found[0]
    assert at == watch.k - 1 and match.start == 0
    assert {match.earlier, *match.others} == {"shoe A", "shoe B"} and len(match.others) == 1
    words = match.message()
    assert "and of shoe " in words and "a repeated or pre-arranged shoe" in words


def test_new_deck_order_and_an_earlier_shoe_on_one_card_give_one_match() -> None:
    packed = bytes(packed_orders()[0])
    history = MemoryHistory()
    history.add(packed * 2, "the new decks", "n")
    watch = SequenceWatch(history, 2)
    found = [m for card in packed * 2 for m in watch.card(card)]
    assert len(found) == 1
    assert {found[0].earlier, *found[0].others} == {"the new decks", NEW_DECK_ORDER}


def test_a_shoe_repeated_twice_raises_one_alert_a_row() -> None:
    alerts = alerts_of(shoes_events(["uniform", "none", "none"]))
    sequence = [a for a in alerts if a.code == SHOE_SEQUENCE]
    # Shoe 2 repeats shoe 1; shoe 3 repeats both: one alert each, at one row each.
    assert len(sequence) == 2
    assert len({a.seq for a in sequence}) == 2
    third = sequence[1]
    assert third.details["earlier"].startswith("T1 shoe at seq ")
    assert len(third.details["others"]) == 1 and third.details["others"][0].startswith("T1 shoe")
    assert third.details["others"][0] in third.message
