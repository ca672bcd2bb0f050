"""The drawing rules, case by case: the player rule and all 8 x 10 banker cases.

The expected draws are written out here from the spec's table, independently of
station.core.rules, and checked through the real state machine.
"""

from __future__ import annotations

import pytest

from tests.tablekit import BURNED, card_of, play, roles, two_cards

# The spec's banker table: banker two-card total -> P3 points on which the banker draws.
BANKER_DRAWS_ON = {
    0: set(range(10)),
    1: set(range(10)),
    2: set(range(10)),
    3: {0, 1, 2, 3, 4, 5, 6, 7, 9},
    4: {2, 3, 4, 5, 6, 7},
    5: {4, 5, 6, 7},
    6: {6, 7},
    7: set(),
}


def deal(player_total: int, banker_total: int, *more: str) -> list[str | None]:
    """Roles given to P1 B1 P2 B2 (making the two totals) and then the `more` cards."""
    p1, p2 = two_cards(player_total, "H")
    b1, b2 = two_cards(banker_total, "D")
    verdicts = play([*BURNED, "close", p1, b1, p2, b2, *more])
    return roles(verdicts[4:])


@pytest.mark.parametrize("banker_total", range(8))
@pytest.mark.parametrize("p3", range(10))
def test_banker_draws_by_tableau_after_player_drew(banker_total: int, p3: int) -> None:
    # Player 0..5 draws; use 3 so it never is a natural.
    got = deal(3, banker_total, card_of(p3, "C"), "9C")
    assert got[:5] == ["P1", "B1", "P2", "B2", "P3"]
    expected_sixth = "B3" if p3 in BANKER_DRAWS_ON[banker_total] else None
    assert got[5] == expected_sixth


@pytest.mark.parametrize("player_total", range(8))
def test_player_draws_on_0_to_5_stands_on_6_7(player_total: int) -> None:
    got = deal(player_total, 7, "9C")  # banker 7: stands whatever happens
    assert got[4] == ("P3" if player_total <= 5 else None)


@pytest.mark.parametrize("banker_total", range(8))
def test_banker_when_player_stood(banker_total: int) -> None:
    got = deal(6, banker_total, "9C")
    assert got[4] == ("B3" if banker_total <= 5 else None)


@pytest.mark.parametrize("natural", [8, 9])
@pytest.mark.parametrize("other", [0, 3, 5, 6, 7])
def test_a_natural_on_either_side_ends_the_round(natural: int, other: int) -> None:
    assert deal(natural, other, "9C")[4] is None
    assert deal(other, natural, "9C")[4] is None


def test_results_report_totals_winner_and_flags() -> None:
    # Player 2+2 = 4 draws a ten; banker 3 draws on a P3 of 0 and makes 6.
    verdicts = play([*BURNED, "close", "2H", "3D", "2S", "KD", "KC", "3C"])
    result = verdicts[-1]["result"]
    assert result is not None
    assert result["player"] == ["2H", "2S", "KC"]
    assert result["banker"] == ["3D", "KD", "3C"]
    assert (result["player_total"], result["banker_total"], result["winner"]) == (4, 6, "banker")
    assert result["player_pair"] and not result["player_perfect_pair"]
    assert not result["banker_pair"]
    assert result["banker_wins_with_6"] and not result["player_wins_with_7"]
    assert (result["player_cards"], result["banker_cards"], result["margin"]) == (3, 3, 2)
    assert not result["player_natural"] and not result["banker_natural"]


def test_result_flags_naturals_perfect_pairs_and_lucky_seven() -> None:
    verdicts = play([*BURNED, "close", "7H", "4D", "KH", "4D"])
    result = verdicts[-1]["result"]
    assert result is not None
    # Player 7 stands; banker 8 is a natural: the round ends on four cards.
    assert result["banker_natural"] and not result["player_natural"]
    assert result["banker_perfect_pair"] and result["banker_pair"]
    assert result["winner"] == "banker" and result["margin"] == 1
    verdicts = play([*BURNED, "close", "7H", "3D", "KH", "3C"])
    result = verdicts[-1]["result"]
    assert result is not None and result["player_wins_with_7"] and result["banker_total"] == 6
