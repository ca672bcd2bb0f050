"""The snapshot's `actions` (`Table.actions`): the dealer and supervisor events the table
accepts now, which the dashboard enables its buttons by (it re-derives no rule of its own)."""

from __future__ import annotations

import orjson
import pytest

from station.core.snapshot import take
from station.core.suspension import LATER_KEPT
from station.core.table import Table
from tests.tablekit import BURNED, play


def actions_after(words: list[str], **options: object) -> tuple[str, ...]:
    table = Table(**options)  # type: ignore[arg-type]
    play(words, table)
    return table.actions()


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ([], ("shoe",)),
        (["shoe"], ("end_shoe",)),  # the burn is due: betting cannot close yet
        (BURNED, ("close_bets", "end_shoe")),
        ([*BURNED, "close"], ("void", "end_shoe")),  # a round in progress
        ([*BURNED, "close", "?"], ("resume", "void", "end_shoe")),  # suspended
        ([*BURNED, "fault"], ("resume", "void", "end_shoe")),  # suspended between rounds
        ([*BURNED, "end"], ("shoe",)),
    ],
)
def test_the_actions_the_table_accepts_now(words: list[str], expected: tuple[str, ...]) -> None:
    assert actions_after(words) == expected


def test_an_ungated_table_never_offers_close_bets() -> None:
    assert actions_after(BURNED, gated=False) == ("end_shoe",)


def test_the_actions_are_published_in_the_snapshot() -> None:
    table = Table()
    play(BURNED, table)
    assert take(table, 3, "t1", None).to_dict()["actions"] == ("close_bets", "end_shoe")


@pytest.mark.parametrize(
    "words", [[], ["shoe"], BURNED, [*BURNED, "close"], [*BURNED, "close", "?"], [*BURNED, "fault"]]
)
def test_the_table_accepts_every_action_it_offers(words: list[str]) -> None:
    word = {
        "shoe": "shoe",
        "close_bets": "close",
        "resume": "resume",
        "void": "void",
        "end_shoe": "end",
    }
    offered = actions_after(words)
    assert offered
    for kind in offered:
        verdict = play([*words, word[kind]])[-1]
        assert verdict["ok"], (words, kind, verdict)


def test_a_suspension_keeps_counts_and_the_last_few_later_errors_whatever_comes() -> None:
    """30,000 unreadable cards while suspended: the state stays small (the table keeps the
    last `LATER_KEPT` with their cards, and counts by code)."""
    table = Table()
    play([*BURNED, "fault"], table)
    for i in range(30_000):
        table.decide({"type": "card", "card": f"garbage {i} " + "x" * 100})
    table.decide({"type": "card", "card": "AS"})
    snap = take(table, 99, "t1", 42)
    susp = snap.suspension
    assert susp is not None and susp["code"] == "SCANNER_FAULT" and susp["since_seq"] == 42
    assert susp["later_total"] == 30_001
    assert susp["later_counts"] == {"UNREADABLE_CARD": 30_000, "CARD_WHILE_SUSPENDED": 1}
    assert len(susp["later"]) == LATER_KEPT
    assert susp["later"][-1] == {"code": "CARD_WHILE_SUSPENDED", "card": "AS"}
    assert susp["later"][0] == {"code": "UNREADABLE_CARD", "card": "garbage 29991 xxxxxxxxx…"}
    assert len(orjson.dumps(snap.to_dict())) < 4096
    assert table.suspension is not None and len(table.suspension.later) == LATER_KEPT


def test_the_previous_shoe_is_kept_through_the_next_one() -> None:
    """The dashboard shows the finished shoe until the new one has a result: the table
    keeps it when a shoe starts (so a replay rebuilds it), the snapshot shares it."""
    table = Table()
    play([*BURNED, "close", "9S", "2D", "KH", "5C", "close", "?", "void", "end"], table)
    first = take(table, 1, "t1", None)
    assert first.previous_results == () and len(first.results) == 1
    play(["shoe"], table)
    second = take(table, 2, "t1", None, first)
    assert second.results == () and second.previous_results == first.results
    assert second.previous_voided == (2,)
    play(["AS"], table)
    third = take(table, 3, "t1", None, second)
    assert third.previous_results is second.previous_results  # shared, not copied
    assert "previous_results" not in third.to_dict()  # served by /api/history only
    play(["2S", "end", "shoe"], table)
    assert take(table, 4, "t1", None, third).previous_results == ()  # that shoe had none
