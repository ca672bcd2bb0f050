"""The players' board (`station.core.display`): the status in a player's words for every
state of the table, the marks exactly the roads' (`station.core.roads`) with only the
fields drawn, the bank's plate in baccarat banque, and nothing outside the allow-list."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from drivers.sim.stream import simulate
from station.core.display import bank_outcome, board, status_of
from station.core.roads import game_scoreboards
from station.core.snapshot import TableSnapshot, take
from station.core.table import Table
from tests.display_payload import check_payload
from tests.tablekit import BURNED, play

SETTINGS: dict[str, Any] = {
    "table": "Table 7",
    "language": "en",
    "locale": "",
    "currency": "EUR",
    "announce": 4.0,
    "limits": [{"bet": "banker", "label": "", "min": 100, "max": 50000}],
}
# Round 1 after BURNED: player 9S KH = 9 (natural), banker 2D 5C = 7.
ROUND = ["9S", "2D", "KH", "5C"]


def snapshot_after(words: list[str], **options: Any) -> TableSnapshot:
    table = Table(**options)
    play(words, table)
    return take(table, len(words), "t1", None)


@pytest.mark.parametrize(
    ("words", "status"),
    [
        ([], "shuffling"),  # no shoe yet
        (["shoe"], "new_shoe"),  # the burn reveal is due
        (["shoe", "AS"], "new_shoe"),  # one card to burn
        (BURNED, "betting_open"),
        ([*BURNED, "close"], "no_more_bets"),
        ([*BURNED, "close", "9S"], "dealing"),
        ([*BURNED, "close", *ROUND], "betting_open"),  # the round is over: the next one's bets
        ([*BURNED, "close", *ROUND, "close", "?"], "paused"),  # an unreadable card
        ([*BURNED, "fault"], "paused"),
        ([*BURNED, "fault", "resume"], "betting_open"),
        ([*BURNED, "close", "9S", "void"], "betting_open"),
        ([*BURNED, "close", *ROUND, "end"], "shuffling"),  # between shoes
    ],
)
def test_the_status_in_a_players_words(words: list[str], status: str) -> None:
    assert status_of(snapshot_after(words)) == status


def test_an_ungated_table_takes_bets_until_its_first_card() -> None:
    assert status_of(snapshot_after(BURNED, gated=False)) == "betting_open"
    assert status_of(snapshot_after([*BURNED, "9S"], gated=False)) == "dealing"


def test_a_station_that_cannot_record_pauses_the_table_for_players() -> None:
    snapshot = snapshot_after([*BURNED, "close"])
    assert status_of(snapshot, writable=False) == "paused"
    assert status_of(snapshot_after(["shoe", "AS", "2S", "end"]), writable=False) == "shuffling"


def test_a_hand_deciding_is_dealing() -> None:
    # Chemin de fer: the ponte's 5 is an option.
    snapshot = snapshot_after(["shoe", "close", "2H", "KD", "3S", "7D"], game="chemin_de_fer")
    assert snapshot.option is not None and status_of(snapshot) == "dealing"


def shoe_of(game: str, seed: int) -> TableSnapshot:
    """A whole simulated shoe of `game`, its last snapshot."""
    table = Table(game=game)
    for event in simulate(seed, game=game):
        table.apply(event)
    return take(table, 1, "t1", None)


@pytest.mark.parametrize("game", ["punto_banco", "chemin_de_fer"])
def test_the_marks_are_the_roads_own(game: str) -> None:
    snapshot = shoe_of(game, 5)
    roads = game_scoreboards(game, snapshot.results)
    drawn = board(snapshot, roads)
    check_payload({**SETTINGS, **drawn})
    assert drawn["status"] == "shuffling" and drawn["shoe"] == 1
    for name in ("bead_plate", "big_road", "big_eye_boy", "small_road", "cockroach_pig"):
        assert len(drawn["roads"][name]) == len(roads[name]) > 0
        for mark, cell in zip(drawn["roads"][name], roads[name], strict=True):
            assert mark == {key: cell[key] for key in mark}  # the same values, fewer keys
    assert drawn["roads"]["predictions"] == roads["predictions"]
    assert drawn["counts"] == {**roads["counts"], "voided": len(snapshot.voided)}
    last: Mapping[str, Any] = snapshot.results[-1]
    assert drawn["last"]["round"] == last["round"] and drawn["last"]["winner"] == last["winner"]


def test_the_banque_board_has_a_plate_per_tableau_and_the_banks() -> None:
    snapshot = shoe_of("baccarat_banque", 8)
    roads = game_scoreboards("baccarat_banque", snapshot.results)
    drawn = board(snapshot, roads)
    check_payload({**SETTINGS, **drawn})
    for tableau in ("tableau1", "tableau2"):
        plate = drawn["roads"][tableau]["bead_plate"]
        assert [(b["x"], b["y"], b["outcome"], b["total"]) for b in plate] == [
            (b["x"], b["y"], b["outcome"], b["total"]) for b in roads[tableau]["bead_plate"]
        ]
    bank = drawn["roads"]["bank"]
    assert len(bank) == len(snapshot.results)
    results: list[Mapping[str, Any]] = list(snapshot.results)
    for mark, result in zip(bank, results, strict=True):
        assert mark["round"] == result["round"] and mark["total"] == result["banker_total"]
        assert mark["natural"] == ("banker" in result["naturals"])
        assert mark["outcome"] == bank_outcome(
            result["tableau1_outcome"], result["tableau2_outcome"]
        )
    counts = drawn["counts"]
    assert sum(counts["bank"].values()) == counts["rounds"] == len(snapshot.results)
    assert counts["bank"]["win"] == sum(b["outcome"] == "win" for b in bank)
    assert drawn["last"]["bank"] == bank[-1]["outcome"]


@pytest.mark.parametrize(
    ("tableau1", "tableau2", "bank"),
    [
        ("lose", "lose", "win"),
        ("lose", "tie", "win"),
        ("win", "win", "lose"),
        ("tie", "win", "lose"),
        ("win", "lose", "even"),
        ("tie", "tie", "even"),
    ],
)
def test_how_the_bank_fared(tableau1: str, tableau2: str, bank: str) -> None:
    assert bank_outcome(tableau1, tableau2) == bank


def test_the_board_carries_no_card_and_no_code() -> None:
    """A suspended round's board: the cards out, the code and its words stay off it."""
    snapshot = snapshot_after([*BURNED, "close", *ROUND, "close", "9H", "?"])
    assert snapshot.suspension is not None
    drawn = board(snapshot, game_scoreboards("punto_banco", snapshot.results))
    check_payload({**SETTINGS, **drawn})
    text = repr(drawn)
    for secret in ("9H", "9S", "KH", "UNREADABLE", "unreadable", "reader"):
        assert secret not in text
