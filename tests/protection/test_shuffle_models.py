"""The simulator's shuffles and gathering orders (`drivers.sim.shuffles`) and `station
simulate --shuffle ... --gather ...`, which the weak-shuffle check is measured against."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import orjson
import pytest

from drivers.sim.shoe import VirtualShoe
from drivers.sim.shuffles import (
    GATHERINGS,
    DealtCard,
    deal,
    gather,
    parse_model,
    seen_cards,
    shuffle,
    simulate_shuffled,
    stack_shuffle,
)
from drivers.sim.stream import simulate
from station.commands.simulate import GATHER_ORDERS
from station.core.table import Table
from tests.conftest import run_station

#: The burn (two cards), a round of six cards and one of four, as the station saw them.
DEALT = [
    DealtCard("5S", 0, "burn_reveal"),
    DealtCard("KD", 0, "burn"),
    *[
        DealtCard(c, 1, r)
        for c, r in zip(
            ["AS", "2S", "3S", "4S", "5H", "6H"], ["P1", "B1", "P2", "B2", "P3", "B3"], strict=True
        )
    ],
    *[
        DealtCard(c, 2, r)
        for c, r in zip(["7C", "8C", "9C", "TC"], ["P1", "B1", "P2", "B2"], strict=True)
    ],
]
REST = ["QH", "JH"]


@pytest.mark.parametrize(
    ("how", "pile"),
    [
        ("dealt", ["5S", "KD", "AS", "2S", "3S", "4S", "5H", "6H", "7C", "8C", "9C", "TC"]),
        ("reversed", ["5S", "KD", "6H", "5H", "4S", "3S", "2S", "AS", "TC", "9C", "8C", "7C"]),
        ("banker-first", ["5S", "KD", "2S", "4S", "6H", "AS", "3S", "5H", "8C", "TC", "7C", "9C"]),
        ("player-first", ["5S", "KD", "AS", "3S", "5H", "2S", "4S", "6H", "7C", "9C", "8C", "TC"]),
    ],
)
def test_the_gathering_orders(how: str, pile: list[str]) -> None:
    assert gather(DEALT, REST, how, random.Random(1)) == [*pile, *REST]


def test_a_scrambled_round_stays_a_round() -> None:
    pile = gather(DEALT, REST, "scrambled", random.Random(2))
    assert pile[:2] == ["5S", "KD"] and pile[-2:] == REST
    assert sorted(pile[2:8]) == sorted(c.card for c in DEALT[2:8])
    assert sorted(pile[8:12]) == sorted(c.card for c in DEALT[8:12])
    assert set(GATHERINGS) == set(GATHER_ORDERS)  # the command spells the same orders


def test_banque_hands_are_gathered_hand_by_hand() -> None:
    roles = ["T1.1", "T2.1", "B.1", "T1.2", "T2.2", "B.2", "T2.3"]
    dealt = [DealtCard(f"{r}C", 1, role) for r, role in zip("A23456", roles, strict=False)]
    dealt.append(DealtCard("7C", 1, "T2.3"))
    banker_first = gather(dealt, [], "banker-first", random.Random(0))
    assert banker_first == ["3C", "6C", "AC", "4C", "2C", "5C", "7C"]
    assert gather(dealt, [], "player-first", random.Random(0)) == [
        "AC", "4C", "2C", "5C", "7C", "3C", "6C",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "model", ["uniform", "none", "riffle:16", "strip", "box:4", "stack", "stack:3+strip+riffle:1"]
)
def test_every_model_keeps_the_cards(model: str) -> None:
    order = VirtualShoe(8, 5).order
    out = shuffle(order, model, random.Random(6))
    assert Counter(out) == Counter(order)
    assert shuffle(order, model, random.Random(6)) == out  # seeded
    if model == "none":
        assert out == order


def test_a_stack_shuffle_keeps_runs_of_each_grab_in_order() -> None:
    cards = [f"{i:03d}" for i in range(416)]
    out = stack_shuffle(cards, random.Random(3))
    position = {c: i for i, c in enumerate(out)}
    # Most neighbours of the discards stay in order, close together (one riffle of two
    # grabs at a time).
    kept = sum(0 < position[b] - position[a] < 10 for a, b in itertools.pairwise(cards))
    assert kept > 300


@pytest.mark.parametrize(
    ("model", "words"),
    [
        ("shake", "not a shuffle step"),
        ("riffle:17", "between 1 and 16"),
        ("stack:x", "must be a number"),
        ("riffle:0", "between 1 and 16"),
    ],
)
def test_a_bad_model_says_what_is_accepted(model: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        parse_model(model)


def test_deal_gives_the_station_s_rounds_and_roles() -> None:
    dealt, rest = deal(VirtualShoe(8, 4).order, 8, 16)
    assert dealt[0].role == "burn_reveal" and dealt[0].round == 0
    assert {c.role for c in dealt[1:] if c.round == 0} == {"burn"}
    first_round = [c.role for c in dealt if c.round == 1]
    assert first_round[:4] == ["P1", "B1", "P2", "B2"]
    # The cut card 16 from the bottom, then the rounds it lets finish (one more).
    assert 0 < len(rest) <= 16 and len(dealt) + len(rest) == 416


def test_with_dealt_order_the_stream_is_simulate_s() -> None:
    """`--gather dealt` (the default) shuffles exactly what `--shuffle` always did."""
    assert list(simulate_shuffled(4, "riffle:2", decks=2, shoes=3)) == list(
        simulate(4, decks=2, shoes=3, shuffle="riffle:2")
    )


def test_the_stream_gathers_what_the_station_saw() -> None:
    events = list(
        simulate_shuffled(9, "none", "reversed", decks=1, shoes=2, faults={"unreadable": 0.1})
    )
    shoes = [i for i, e in enumerate(events) if e["type"] == "shoe"]
    table = Table(decks=1)
    first = seen_cards(events[: shoes[1]], table)
    second = seen_cards(events[shoes[1] :], table)
    # Shoe 2 is shoe 1's discards, untouched: the burn, then each round reversed.
    expected = gather(first, [], "reversed", random.Random(0))
    assert [c.card for c in second] == expected[: len(second)]


def test_simulate_gather_on_the_command_line() -> None:
    dealt = run_station(
        "simulate", "--seed", "3", "--decks", "1", "--shoes", "2", "--shuffle", "none",
        "--gather", "banker-first",
    )  # fmt: skip
    assert dealt.returncode == 0, dealt.stderr
    events = [orjson.loads(line) for line in dealt.stdout.splitlines()]
    assert sum(e["type"] == "shoe" for e in events) == 2
    bad = run_station("simulate", "--shuffle", "riffle:2", "--gather", "sideways")
    assert bad.returncode == 2 and b"--gather" in bad.stderr
    bad = run_station("simulate", "--shuffle", "stack:99")
    assert bad.returncode == 2 and b"between 1 and 8" in bad.stderr
