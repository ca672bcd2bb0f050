"""Baccarat banque's roads: a bead plate per tableau, from each tableau's outcome against
the banker (issue 10); chemin de fer keeps punto banco's roads (its results have `winner`)."""

from __future__ import annotations

from typing import Any

import pytest

from station.core.results import round_result
from station.core.roads import RoadError, banque_scoreboards, game_scoreboards, scoreboards


def banque(n: int, t1: str, t2: str, naturals: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "round": n,
        "tableau1_outcome": t1,
        "tableau2_outcome": t2,
        "tableau1_total": 5,
        "tableau2_total": 8 if "tableau2" in naturals else 3,
        "banker_total": 4,
        "naturals": list(naturals),
    }


def test_a_bead_plate_per_tableau_six_to_a_column() -> None:
    outcomes = ["win", "lose", "tie", "win", "win", "lose", "tie"]
    results = [
        banque(i + 1, o, "lose", ("tableau2",) if i == 6 else ()) for i, o in enumerate(outcomes)
    ]
    boards = banque_scoreboards(results)
    assert boards["game"] == "baccarat_banque" and boards["rows"] == 6
    plate = boards["tableau1"]["bead_plate"]
    assert [(b["x"], b["y"], b["round"], b["outcome"]) for b in plate] == [
        (0, 0, 1, "win"),
        (0, 1, 2, "lose"),
        (0, 2, 3, "tie"),
        (0, 3, 4, "win"),
        (0, 4, 5, "win"),
        (0, 5, 6, "lose"),
        (1, 0, 7, "tie"),
    ]
    assert plate[0] == {
        "x": 0,
        "y": 0,
        "round": 1,
        "outcome": "win",
        "total": 5,
        "banker_total": 4,
        "natural": False,
        "banker_natural": False,
    }
    assert boards["tableau1"]["counts"] == {
        "rounds": 7,
        "win": 3,
        "lose": 2,
        "tie": 2,
        "natural": 0,
    }
    assert boards["tableau2"]["counts"] == {
        "rounds": 7,
        "win": 0,
        "lose": 7,
        "tie": 0,
        "natural": 1,
    }
    assert boards["tableau2"]["bead_plate"][6]["natural"] is True
    assert boards["counts"] == {"rounds": 7, "banker_natural": 0}


def test_a_banker_natural_is_marked_on_both_plates() -> None:
    boards = banque_scoreboards([banque(1, "lose", "tie", ("banker",))], rows=3)
    assert boards["counts"]["banker_natural"] == 1
    assert all(boards[t]["bead_plate"][0]["banker_natural"] for t in ("tableau1", "tableau2"))
    assert banque_scoreboards([])["tableau1"] == {
        "bead_plate": [],
        "counts": {"rounds": 0, "win": 0, "lose": 0, "tie": 0, "natural": 0},
    }


def test_an_outcome_that_is_not_one_is_refused() -> None:
    with pytest.raises(RoadError, match="round 4: tableau2_outcome must be win, lose or tie"):
        banque_scoreboards([banque(4, "win", "won")])


def test_each_game_gets_its_roads() -> None:
    chemin = [round_result(1, ["2S", "3H"], ["KD", "7D"])]  # the banker wins
    assert game_scoreboards("chemin_de_fer", chemin) == scoreboards(chemin)
    assert game_scoreboards("punto_banco", chemin)["bead_plate"][0]["winner"] == "banker"
    results = [banque(1, "win", "tie")]
    assert game_scoreboards("baccarat_banque", results) == banque_scoreboards(results)
