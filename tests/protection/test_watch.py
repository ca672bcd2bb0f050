"""The protector over a table's events and verdicts, as the live station and files feed it."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from drivers.sim.dealer import Dealer
from drivers.sim.shoe import VirtualShoe, reshuffled
from station.core.protection import (
    SHOE_SEQUENCE,
    WEAK_SHUFFLE,
    Alert,
    MemoryHistory,
    Protector,
)
from station.core.table import Table


def shoes_events(models: list[str], decks: int = 2, seed: int = 4) -> Iterator[dict[str, Any]]:
    """Shoes dealt one after another, each shuffled from the last by `models[i]` (the
    first one fair)."""
    rng = random.Random(seed)
    dealer = Dealer(random.Random(seed + 1), decks=decks)
    shoe = VirtualShoe(decks, rng)
    for i, model in enumerate(models):
        if i:
            shoe = reshuffled(shoe.order, model, rng)
        yield from dealer.deal_shoe(shoe)


def alerts_of(events: Iterator[dict[str, Any]], decks: int = 2) -> list[Alert]:
    table = Table(decks=decks)
    protector = Protector(MemoryHistory(), decks, table="T1")
    alerts: list[Alert] = []
    for seq, event in enumerate(events, 1):
        alerts += protector.row(event, table.apply(event), seq, f"ts{seq}")
    alerts += protector.finish(None)
    return alerts


def test_fair_shoes_raise_nothing() -> None:
    assert alerts_of(shoes_events(["uniform"] * 4)) == []


def test_a_riffled_then_repeated_shoe() -> None:
    alerts = alerts_of(shoes_events(["uniform", "riffle:1", "none"]))
    codes = [a.code for a in alerts]
    # shoe 2 was one riffle of shoe 1; shoe 3 repeats shoe 2 (and is, of course, weak).
    assert codes == [WEAK_SHUFFLE, SHOE_SEQUENCE, WEAK_SHUFFLE]
    weak, repeat, _ = alerts
    assert weak.details["probability"] < 1e-5 and weak.details["riffles"] == 1
    assert "about 1 riffle of the previous shoe" in weak.message
    assert repeat.details["start"] == 1 and repeat.details["earlier_start"] == 1
    assert repeat.details["earlier"].startswith("T1 shoe at seq ")
    assert "call surveillance" in repeat.as_dict()["advice"]


def test_notices_and_refused_events_change_nothing() -> None:
    protector = Protector(MemoryHistory(), 1)
    assert protector.row({"type": "notice", "message": "x"}, None) == []
    assert protector.row({"type": "card", "card": "AS"}, {"ok": False}) == []  # no shoe yet
    assert protector.watch is None


def test_the_shuffle_check_can_be_left_to_the_stations() -> None:
    """The floor service takes each station's own WEAK_SHUFFLE: its protector can skip the
    check (and its cost) and still find repeated shoes."""
    table = Table(decks=2)
    protector = Protector(MemoryHistory(), 2, table="T1", shuffles=False)
    alerts: list[Alert] = []
    for seq, event in enumerate(shoes_events(["uniform", "riffle:1", "none"]), 1):
        alerts += protector.row(event, table.apply(event), seq, f"ts{seq}")
    alerts += protector.finish(None)
    assert [a.code for a in alerts] == [SHOE_SEQUENCE]
