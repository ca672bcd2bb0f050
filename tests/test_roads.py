"""The roads on hand-worked shoes: leading ties, long streaks past six rows, where each
derived road starts, and that the derived roads read the logical columns, not the bend."""

from __future__ import annotations

from typing import Any

import pytest

from station.core.results import round_result
from station.core.roads import (
    BigRoad,
    RoadError,
    bend,
    big_road,
    columns_of,
    derived_road,
    predictions,
    scoreboards,
)

R, U = "red", "blue"


def shoe(letters: str) -> list[dict[str, Any]]:
    """Results from letters: B, P, T (and b/p for a banker/player win with that side's pair)."""
    names = {"B": "banker", "P": "player", "T": "tie"}
    out = []
    for i, ch in enumerate(letters.replace(" ", "")):
        out.append(
            {
                "round": i + 1,
                "winner": names[ch.upper()],
                "player_total": 0,
                "banker_total": 0,
                "player_pair": ch == "p",
                "banker_pair": ch == "b",
            }
        )
    return out


def winners(road: BigRoad) -> list[str]:
    return ["".join(c.winner[0].upper() for c in col) for col in road.columns]


# B B | P P P | B | P P | B B B B: column lengths 2, 3, 1, 2, 4, worked out by hand in the
# module docstring's rules (c = column, r = depth, both from 0).
WORKED = "BB PPP B PP BBBB"


def test_big_road_columns() -> None:
    road = big_road(shoe(WORKED))
    assert winners(road) == ["BB", "PPP", "B", "PP", "BBBB"]
    assert road.lengths == [2, 3, 1, 2, 4]
    assert road.leading_ties == 0


def test_big_eye_boy_by_hand() -> None:
    # starts at (c1, r1): col 0 has a row 1 -> red; (c1, r2): col 0 is exactly 2 -> blue;
    # (c2, r0): cols 1, 0 are 3 and 2 -> blue; (c3, r0): 1 vs 3 -> blue; (c3, r1): col 2 is
    # exactly 1 -> blue; (c4, r0): 2 vs 1 -> blue; (c4, r1): col 3 is 2, not 1 -> red;
    # (c4, r2): col 3 is exactly 2 -> blue; (c4, r3): col 3 is not 3 -> red.
    assert derived_road([2, 3, 1, 2, 4], 1) == [R, U, U, U, U, U, R, U, R]


def test_small_road_by_hand() -> None:
    # column 2 has one cell, so the small road starts at (c3, r0): col 2 (1) vs col 0 (2)
    # -> blue; (c3, r1): col 1 is 3, not 1 -> red; (c4, r0): 2 vs 3 -> blue; (c4, r1):
    # col 2 is exactly 1 -> blue; (c4, r2), (c4, r3): col 2 is not 2, not 3 -> red, red.
    assert derived_road([2, 3, 1, 2, 4], 2) == [U, R, U, U, R, R]


def test_cockroach_pig_by_hand() -> None:
    # starts at (c3, r1): col 0 is 2, not 1 -> red; (c4, r0): col 3 (2) vs col 0 (2) -> red;
    # (c4, r1), (c4, r2): col 1 is 3 -> red, red; (c4, r3): col 1 is exactly 3 -> blue.
    assert derived_road([2, 3, 1, 2, 4], 3) == [R, R, R, R, U]


@pytest.mark.parametrize(
    ("lengths", "k", "first"),
    [
        ([1, 2], 1, (1, 1)),  # big eye boy: second cell of column 1
        ([1, 1, 1], 1, (2, 0)),  # ... or, column 1 having one cell, the first of column 2
        ([1, 1, 2], 2, (2, 1)),  # small road: second cell of column 2
        ([1, 1, 1, 1], 2, (3, 0)),
        ([3, 1, 1, 2], 3, (3, 1)),  # cockroach pig: second cell of column 3
        ([3, 1, 1, 1, 1], 3, (4, 0)),
    ],
)
def test_derived_road_starts(lengths: list[int], k: int, first: tuple[int, int]) -> None:
    """A derived road's first mark is for the cell given by the rule, never earlier."""
    cells = [(c, r) for c, n in enumerate(lengths) for r in range(n)]
    before = cells.index(first)
    assert derived_road(lengths, k) != []
    assert len(derived_road(lengths, k)) == len(cells) - before
    # one cell less and the road has not started yet
    shorter = list(lengths)
    shorter[first[0]] = first[1]
    if shorter[-1] == 0:
        shorter.pop()
    assert derived_road(shorter, k) == []


def test_no_derived_road_on_one_column() -> None:
    for k in (1, 2, 3):
        assert derived_road([9], k) == []
        assert derived_road([], k) == []


def test_leading_ties_and_tie_marks() -> None:
    road = big_road(shoe("TT B T T P T"))
    assert road.leading_ties == 2
    assert winners(road) == ["B", "P"]
    assert [c.ties for col in road.columns for c in col] == [2, 1]
    assert [c.round for col in road.columns for c in col] == [3, 6]
    only_ties = big_road(shoe("TTT"))
    assert only_ties.columns == [] and only_ties.leading_ties == 3
    board = scoreboards(shoe("TTT"))
    assert board["big_road"] == [] and board["leading_ties"] == 3
    assert len(board["bead_plate"]) == 3 and board["big_eye_boy"] == []


def test_ties_do_not_break_a_streak() -> None:
    road = big_road(shoe("B T B T T B P"))
    assert winners(road) == ["BBB", "P"]
    assert [c.ties for c in road.columns[0]] == [1, 2, 0]


def test_pairs_stay_on_their_cell() -> None:
    road = big_road(shoe("b P p"))
    assert [(c.banker_pair, c.player_pair) for col in road.columns for c in col] == [
        (True, False),
        (False, False),
        (False, True),
    ]


def test_long_streak_bends_only_in_the_drawing() -> None:
    road = big_road(shoe("B" * 8 + "P" * 6 + "B"))
    assert road.lengths == [8, 6, 1]  # the logical column keeps all 8
    drawn = bend(road.lengths)
    assert drawn[0] == [(0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (1, 5), (2, 5)]
    # the player streak goes down until it meets the banker tail, then turns right above it
    assert drawn[1] == [(1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (2, 4)]
    assert drawn[2] == [(2, 0)]


def test_derived_roads_read_logical_columns_not_the_bend() -> None:
    # B x7 then P x7 then B. Logically the columns are 7 and 7 long, so the new column's
    # first cell is red on the big eye boy. Drawn, the first goes 6 down and the second
    # only 5 (it turns above the first one's tail): reading the drawing would say blue.
    lengths = big_road(shoe("B" * 7 + "P" * 7 + "B")).lengths
    assert lengths == [7, 7, 1]
    drawn_heights = [sum(x == col[0][0] for x, _ in col) for col in bend(lengths)]
    assert drawn_heights[:2] == [6, 5]
    assert derived_road(lengths, 1)[-1] == R
    # cells of the second column at depths 1..6: column 0 is longer -> red each time
    assert derived_road(lengths, 1) == [R] * 6 + [R]


def test_bend_of_a_second_dragon_tail_under_the_first() -> None:
    drawn = bend([7, 7, 7])
    assert drawn[0][-2:] == [(0, 5), (1, 5)]
    assert drawn[1][-3:] == [(1, 4), (2, 4), (3, 4)]
    assert drawn[2][:4] == [(2, 0), (2, 1), (2, 2), (2, 3)]
    assert drawn[2][4:] == [(3, 3), (4, 3), (5, 3)]
    flat = [p for col in drawn for p in col]
    assert len(flat) == len(set(flat)) == 21


def test_columns_of() -> None:
    assert columns_of([R, R, U, R, R, R]) == [[R, R], [U], [R, R, R]]
    assert columns_of([]) == []


def test_predictions() -> None:
    road = big_road(shoe(WORKED))  # lengths 2 3 1 2 4, banker last
    ask = predictions(road)
    # banker: (c4, r4): cols 3, 2, 1 are 2, 1, 3 long, none exactly 4 -> red on all three
    assert ask["banker"] == {"big_eye_boy": R, "small_road": R, "cockroach_pig": R}
    # player: new column 5: col 4 (4) vs cols 3, 2, 1 (2, 1, 3) -> blue on all three
    assert ask["player"] == {"big_eye_boy": U, "small_road": U, "cockroach_pig": U}
    assert predictions(big_road([]))["banker"] == {
        "big_eye_boy": None,
        "small_road": None,
        "cockroach_pig": None,
    }


def test_bead_plate_fills_columns_of_six() -> None:
    board = scoreboards(shoe("BPTBPTB"))
    plate = board["bead_plate"]
    assert [(b["x"], b["y"]) for b in plate] == [
        (0, 0),
        (0, 1),
        (0, 2),
        (0, 3),
        (0, 4),
        (0, 5),
        (1, 0),
    ]
    assert [b["winner"][0] for b in plate] == list("bptbptb")
    assert board["counts"] == {
        "rounds": 7,
        "banker": 3,
        "player": 2,
        "tie": 2,
        "player_pair": 0,
        "banker_pair": 0,
        "natural": 0,
    }


def test_scoreboards_from_real_round_results() -> None:
    rounds = [
        round_result(1, ["9S", "KD"], ["2H", "3C"]),  # player natural 9 v 5
        round_result(2, ["4H", "4D"], ["7S", "QC"]),  # player pair, natural 8 v 7
        round_result(3, ["TS", "7C"], ["KH", "7D"]),  # 7 v 7: tie
        round_result(4, ["2S", "3C"], ["8H", "JD"]),  # banker natural 8 v 5
    ]
    board = scoreboards(rounds)
    assert [b["winner"] for b in board["bead_plate"]] == [r["winner"] for r in rounds]
    assert board["bead_plate"][0]["natural"] is True
    assert board["bead_plate"][1]["player_pair"] is True
    assert sum(c["ties"] for c in board["big_road"]) == 1
    assert [c["winner"] for c in board["big_road"]] == ["player", "player", "banker"]
    assert board["counts"]["tie"] == 1 and board["counts"]["natural"] == 3


def test_derived_road_drawing_uses_its_own_columns() -> None:
    board = scoreboards(shoe(WORKED))
    beb = board["big_eye_boy"]
    # R | U U U U U | R | U | R  -> columns of 1, 5, 1, 1, 1
    assert [(c["x"], c["y"], c["colour"]) for c in beb] == [
        (0, 0, R),
        (1, 0, U),
        (1, 1, U),
        (1, 2, U),
        (1, 3, U),
        (1, 4, U),
        (2, 0, R),
        (3, 0, U),
        (4, 0, R),
    ]
    assert [c["depth"] for c in board["big_road"]] == [0, 1, 0, 1, 2, 0, 0, 1, 0, 1, 2, 3]


def test_bad_winner_is_refused() -> None:
    with pytest.raises(RoadError, match="winner must be banker, player or tie"):
        big_road([{"round": 4, "winner": "dragon"}])
    with pytest.raises(ValueError, match="at least one row"):
        bend([1], rows=0)
