"""The virtual shoe, the simulated dealer on stacked shoes, and the `station simulate` command."""

from __future__ import annotations

import collections
import json
import random
import subprocess
from typing import Any

import pytest

from drivers.sim.dealer import Dealer
from drivers.sim.faults import (
    FAULT_ERRORS,
    FAULTS,
    GATED_ONLY,
    FaultSpecError,
    applicable_faults,
    parse_faults,
)
from drivers.sim.shoe import (
    CUT_CARD,
    MIN_CUT_DEPTH,
    ShoeEmpty,
    VirtualShoe,
    parse_cut_depth,
    resolve_cut_depth,
)
from drivers.sim.stream import simulate
from station.core.cards import ALL_CARDS
from station.core.table import Table
from tests.conftest import CliResult, run_station, spawn_station
from tests.simkit import simulate_then_replay


def run_table(events: list[dict[str, Any]], **options: Any) -> tuple[Table, list[dict[str, Any]]]:
    table = Table(**options)
    return table, [dict(table.apply(e)) for e in events]


def dealt(cards: list[str], cut_depth: int, **options: Any) -> list[dict[str, Any]]:
    """The events of one stacked shoe dealt by a fault-free dealer."""
    dealer = Dealer(random.Random(0), decks=options.pop("decks", 1), **options)
    return list(dealer.deal_shoe(VirtualShoe.stacked(cards, cut_depth)))


def words(events: list[dict[str, Any]]) -> list[str]:
    """Events in tablekit's shorthand: card codes, `?`, and the event types."""
    out = []
    for e in events:
        if e["type"] == "card":
            out.append(e["card"] or "?")
        elif e["type"] == "resume" and e.get("card"):
            out.append(f"resume:{e['card']}")
        else:
            out.append(e["type"])
    return out


# -- the virtual shoe ------------------------------------------------------------------


def test_a_shoe_holds_every_card_decks_times_and_the_cut_card_once() -> None:
    shoe = VirtualShoe(decks=3, rng=7, cut_depth=20)
    items = [shoe.draw() for _ in range(3 * 52 + 1)]
    assert items.count(CUT_CARD) == 1
    assert collections.Counter(i for i in items if i != CUT_CARD) == {c: 3 for c in ALL_CARDS}
    assert items.index(CUT_CARD) == 3 * 52 - 20
    with pytest.raises(ShoeEmpty):
        shoe.draw()


def test_the_shoe_counts_cards_left_and_knows_when_the_cut_card_came_out() -> None:
    shoe = VirtualShoe(decks=1, rng=1, cut_depth=50)
    assert (shoe.cards_left, shoe.cards_dealt, shoe.cut_out) == (52, 0, False)
    assert shoe.draw() != CUT_CARD
    assert shoe.draw() != CUT_CARD
    assert (shoe.cards_left, shoe.cut_out) == (50, False)
    assert shoe.draw() == CUT_CARD
    assert (shoe.cards_left, shoe.cards_dealt, shoe.cut_out) == (50, 2, True)


def test_the_same_seed_shuffles_the_same_shoe_and_another_seed_does_not() -> None:
    def order(seed: int) -> list[str]:
        shoe = VirtualShoe(decks=8, rng=seed)
        return [shoe.draw() for _ in range(417)]

    assert order(5) == order(5)
    assert order(5) != order(6)
    by_rng = VirtualShoe(decks=8, rng=random.Random(5))
    assert [by_rng.draw() for _ in range(417)] == order(5)


def test_a_fractional_cut_depth_is_a_share_of_the_shoe() -> None:
    assert VirtualShoe(decks=8, rng=0, cut_depth=0.25).cut_depth == 104
    assert parse_cut_depth("0.25") == 0.25
    assert parse_cut_depth(" 20 ") == 20
    assert resolve_cut_depth(0.5, 52) == 26


@pytest.mark.parametrize("text", ["abc", "1.5", "1e400", "-0.2", ""])
def test_a_cut_depth_that_is_no_count_nor_fraction_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="fraction"):
        parse_cut_depth(text)


@pytest.mark.parametrize(
    ("depth", "decks"), [(MIN_CUT_DEPTH - 1, 8), (0, 8), (52, 1), (0.1, 1), (True, 8)]
)
def test_a_cut_card_too_shallow_or_too_deep_is_refused(depth: int | float, decks: int) -> None:
    with pytest.raises(ValueError, match="cut"):
        VirtualShoe(decks=decks, rng=0, cut_depth=depth)


def test_a_stacked_shoe_deals_its_cards_in_order_and_refuses_non_cards() -> None:
    shoe = VirtualShoe.stacked(["as", "10h", "KD"], cut_depth=1)
    assert [shoe.draw() for _ in range(4)] == ["AS", "TH", CUT_CARD, "KD"]
    with pytest.raises(ValueError, match="not a card"):
        VirtualShoe.stacked(["AS", "ZZ"], cut_depth=0)


# -- the fault spec --------------------------------------------------------------------


def test_a_fault_spec_names_rates_and_all_sets_every_detectable_fault() -> None:
    assert parse_faults("unreadable=0.1, foreign=1") == {"unreadable": 0.1, "foreign": 1.0}
    assert parse_faults("all=0.2,disconnect=0") == {**dict.fromkeys(FAULTS, 0.2), "disconnect": 0}
    ungated = parse_faults("all=0.2", gated=False)
    assert set(ungated) == set(FAULTS) - GATED_ONLY == set(applicable_faults(False))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("bogus=0.1", "unknown fault 'bogus'"),
        ("unreadable", "not NAME=RATE"),
        ("unreadable=2", "in 0..1"),
        ("foreign=x", "a number"),
        ("foreign=nan", "in 0..1"),
        ("", "empty"),
    ],
)
def test_a_bad_fault_spec_says_what_is_wrong_and_names_the_faults(spec: str, message: str) -> None:
    with pytest.raises(FaultSpecError, match=message) as info:
        parse_faults(spec)
    if "RATE" in str(info.value) or "unknown" in message:
        assert all(name in str(info.value) for name in FAULTS)


@pytest.mark.parametrize("fault", sorted(GATED_ONLY))
def test_a_fault_no_ungated_table_can_detect_is_refused_when_ungated(fault: str) -> None:
    with pytest.raises(FaultSpecError, match="ungated"):
        parse_faults(f"{fault}=0.1", gated=False)
    with pytest.raises(FaultSpecError, match="ungated"):
        simulate(1, gated=False, faults={fault: 0.1})


# -- the dealer on stacked shoes: exact streams ----------------------------------------

# Reveal AS (burn one), burn KD; round 1: player 9S+TH natural; round 2: banker 3H+5H natural;
# round 3 and 4: more naturals.
STACK = [
    "AS",
    "KD",
    "9S",
    "KC",
    "TH",
    "2C",
    "2H",
    "3H",
    "4H",
    "5H",
    "8S",
    "QS",
    "JS",
    "QH",
    "9D",
    "2D",
    "TD",
    "KS",
    "7S",
    "7D",
]


def test_a_cut_between_rounds_makes_the_next_round_the_last() -> None:
    events = dealt(STACK, cut_depth=len(STACK) - 6)  # the cut card sits in front of 2H
    assert words(events) == [
        "shoe",
        "AS",
        "KD",
        "close_bets",
        "9S",
        "KC",
        "TH",
        "2C",
        "close_bets",
        "cut",
        "2H",
        "3H",
        "4H",
        "5H",
    ]
    table, verdicts = run_table(events, decks=1)
    assert all(v["ok"] for v in verdicts)
    assert not table.in_play and [r["winner"] for r in table.results] == ["player", "banker"]


@pytest.mark.parametrize(("policy", "rounds"), [("one_more", 2), ("last_round", 1)])
def test_a_cut_mid_round_ends_the_shoe_as_the_cut_policy_says(policy: str, rounds: int) -> None:
    events = dealt(STACK, cut_depth=len(STACK) - 3, cut_policy=policy)  # cut in front of KC
    assert words(events)[:6] == ["shoe", "AS", "KD", "close_bets", "9S", "cut"]
    assert words(events).count("close_bets") == rounds
    table, verdicts = run_table(events, decks=1, cut_policy=policy)
    assert all(v["ok"] for v in verdicts)
    assert not table.in_play and len(table.results) == rounds


def test_an_ungated_dealer_never_closes_betting() -> None:
    events = dealt(STACK, cut_depth=len(STACK) - 6, gated=False)
    assert words(events) == [
        "shoe",
        "AS",
        "KD",
        "9S",
        "KC",
        "TH",
        "2C",
        "cut",
        "2H",
        "3H",
        "4H",
        "5H",
    ]
    table, verdicts = run_table(events, decks=1, gated=False)
    assert all(v["ok"] for v in verdicts) and not table.in_play


def test_the_dealer_draws_third_cards_by_the_tableau() -> None:
    # Player 2S+3S = 5 draws 4S (4 points); banker KH+6H = 6 draws on a P3 of 6 or 7 only.
    # Round 2: player KD+6D = 6 stands; banker 2D+3D = 5 draws (player stood) 9C.
    stack = [
        "AS",
        "KC",
        "2S",
        "KH",
        "3S",
        "6H",
        "4S",
        "KD",
        "2D",
        "6D",
        "3D",
        "9C",
        "8C",
        "8D",
        "9H",
        "QD",
    ]
    events = dealt(stack, cut_depth=len(stack) - 7, gated=False)  # cut in front of KD
    hands = [e["card"] for e in events if e["type"] == "card"][2:]
    assert hands == ["2S", "KH", "3S", "6H", "4S", "KD", "2D", "6D", "3D", "9C"]
    table, _ = run_table(events, decks=1, gated=False)
    assert [(r["player"], r["banker"]) for r in table.results] == [
        (["2S", "3S", "4S"], ["KH", "6H"]),
        (["KD", "6D"], ["2D", "3D", "9C"]),
    ]


def test_rounds_caps_each_shoe_and_the_supervisor_ends_it() -> None:
    events = list(simulate(3, decks=2, shoes=2, rounds=3))
    assert [e["type"] for e in events].count("end_shoe") == 2
    table, verdicts = run_table(events, decks=2)
    assert all(v["ok"] for v in verdicts) and table.shoes_started == 2
    assert all(e["actor"] == "supervisor" for e in events if e["type"] == "end_shoe")


# -- each fault on its own -------------------------------------------------------------


def faulty(
    fault: str, extra: dict[str, float] | None = None, **options: Any
) -> list[dict[str, Any]]:
    rates = {fault: 1.0 if fault not in ("disconnect", "foreign") else 0.3, **(extra or {})}
    return list(simulate(11, decks=options.pop("decks", 2), shoes=2, faults=rates, **options))


@pytest.mark.parametrize("fault", FAULTS)
def test_each_fault_is_injected_and_flagged_with_its_error(fault: str) -> None:
    extra = {"unreadable": 0.2} if fault == "while_suspended" else None
    events = faulty(fault, extra)
    injected = [e for e in events if e.get("fault") == fault]
    assert injected, f"{fault} was never injected"
    assert all(e["expect"] in FAULT_ERRORS[fault] for e in injected)
    table, verdicts = run_table(events, decks=2)
    assert [v["error"] for v in verdicts] == [e.get("expect") for e in events]
    assert not table.in_play


@pytest.mark.parametrize("fault", sorted(set(FAULTS) - GATED_ONLY))
def test_faults_an_ungated_table_can_detect_are_flagged_there(fault: str) -> None:
    extra = {"foreign": 0.2} if fault == "while_suspended" else None
    events = faulty(fault, extra, gated=False)
    assert any(e.get("fault") == fault for e in events)
    _, verdicts = run_table(events, decks=2, gated=False)
    assert [v["error"] for v in verdicts] == [e.get("expect") for e in events]


def test_an_unreadable_card_is_resumed_with_the_card_read_by_eye() -> None:
    events = faulty("unreadable", decks=1)
    first = events[1:3]
    assert first[0] == {
        "type": "card",
        "card": None,
        "actor": "reader",
        "fault": "unreadable",
        "expect": "UNREADABLE_CARD",
    }
    assert first[1]["type"] == "resume" and first[1]["card"] in ALL_CARDS
    _, verdicts = run_table(events, decks=1)
    assert verdicts[2]["role"] == "burn_reveal"


def test_a_missing_third_card_is_drawn_after_the_supervisor_resumes() -> None:
    events = faulty("missing_third")
    at = next(i for i, e in enumerate(events) if e.get("fault") == "missing_third")
    assert [e["type"] for e in events[at : at + 3]] == ["close_bets", "resume", "card"]
    _, verdicts = run_table(events, decks=2)
    assert verdicts[at + 2]["role"] in ("P3", "B3")


def test_a_foreign_card_repeats_a_code_whose_copies_are_all_out() -> None:
    events = faulty("foreign", decks=1)
    seen: collections.Counter[str] = collections.Counter()
    foreign = 0
    for e in events:
        if e["type"] == "shoe":
            seen.clear()
        card = e.get("card")
        if card:
            if e.get("fault") == "foreign":
                assert seen[card] >= 1  # one deck: its only copy is already out
                foreign += 1
            seen[card] += 1
    assert foreign


def test_a_disconnect_mid_round_voids_it_and_elsewhere_resumes() -> None:
    events = faulty("disconnect", gated=False)
    table = Table(decks=2, gated=False)
    reactions = collections.Counter()
    for i, e in enumerate(events):
        if e.get("fault") == "disconnect":
            being_dealt = table.round is not None and bool(table.round.player)
            reactions[being_dealt, events[i + 1]["type"]] += 1
        table.apply(e)
    assert set(reactions) == {(True, "void"), (False, "resume")}


def test_while_suspended_follows_another_fault_before_the_supervisor_acts() -> None:
    events = faulty("while_suspended", {"unreadable": 0.2})
    for i, e in enumerate(events):
        if e.get("fault") == "while_suspended":
            assert events[i - 1].get("fault") == "unreadable"
            assert events[i + 1]["type"] == "resume"


def test_actors_name_who_did_what() -> None:
    actors = {
        "card": "reader",
        "cut": "reader",
        "fault": "reader",
        "shoe": "dealer",
        "close_bets": "dealer",
        "resume": "supervisor",
        "void": "supervisor",
    }
    events = list(simulate(4, decks=2, shoes=3, faults={"all": 0.1}))
    assert {e["type"] for e in events} == set(actors)
    assert all(e["actor"] == actors[e["type"]] for e in events)


def drawn(events: list[dict[str, Any]]) -> list[str]:
    """The cards that came out of the shoe, in the shoe's order: an unreadable card
    counts where it came out, with the value the supervisor read by eye."""
    out: list[str | None] = []
    for e in events:
        if e["type"] == "card" and e.get("fault") != "foreign":
            out.append(e["card"])
        elif e["type"] == "resume" and e.get("card"):
            out[out.index(None)] = e["card"]
    assert None not in out
    return [c for c in out if c is not None]


def test_the_same_seed_gives_the_same_first_shoe_whatever_the_faults() -> None:
    clean = drawn(list(simulate(9, decks=1)))
    assert drawn(list(simulate(9, decks=1, faults={"unreadable": 0.5}))) == clean
    over = drawn(list(simulate(9, decks=1, faults={"over_burn": 1.0})))
    assert over[: len(clean)] == clean[: len(over)]
    assert len(over) != len(clean) or over == clean


# -- the `station simulate` command ------------------------------------------------------


def simulate_cli(*args: str) -> CliResult:
    return run_station("simulate", *args)


def test_the_command_writes_the_same_json_lines_for_the_same_arguments() -> None:
    args = ["--seed", "21", "--decks", "2", "--shoes", "2", "--faults", "all=0.05"]
    first, second = simulate_cli(*args), simulate_cli(*args)
    assert first.returncode == 0 and first.stdout == second.stdout
    lines = first.stdout.split(b"\n")
    assert lines[-1] == b"" and all(lines[:-1])  # newline-terminated, no blank line
    events = [json.loads(line) for line in lines[:-1]]
    said = {"game": "punto_banco", "decks": 2, "gated": True, "cut_policy": "one_more"}
    assert events[0].pop("journal") == {"table": {**said, "burn": "reveal"}}  # its table
    assert events == list(simulate(21, decks=2, shoes=2, faults=parse_faults("all=0.05")))
    assert simulate_cli("--seed", "22", "--decks", "2").stdout != first.stdout


def test_the_command_pipes_into_replay_and_every_verdict_is_the_expected_one() -> None:
    table = ["--decks", "3", "--ungated", "--cut-policy", "last_round"]
    faults = ["--cut-depth", "0.3", "--faults", "all=0.1"]
    events = simulate_then_replay(["--seed", "8", *table, *faults], table)
    assert any(e.get("fault") for e in events)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--faults", "bogus=0.1"], "extra_third, missing_third"),
        (["--faults", "all=1.5"], "0..1"),
        (["--ungated", "--faults", "short_burn=0.1"], "ungated"),
        (["--decks", "1", "--cut-depth", "52"], "between 16 and 51"),
        (["--cut-depth", "deep"], "fraction"),
        (["--shoes", "0"], "at least 1"),
    ],
)
def test_bad_arguments_exit_2_with_a_clear_message(args: list[str], message: str) -> None:
    out = simulate_cli(*args)
    assert out.returncode == 2
    assert out.stdout == b""
    assert message in out.stderr.decode()


def test_a_reader_that_goes_away_stops_the_command_quietly() -> None:
    sim = spawn_station("simulate", "--shoes", "50", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert sim.stdout is not None and sim.stderr is not None
    sim.stdout.readline()
    sim.stdout.close()
    assert sim.wait(timeout=60) == 0
    assert sim.stderr.read() == b""
