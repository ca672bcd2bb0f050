"""A table's game and settings: defaults per game, the burn (`reveal`, `none`), the cut
policy `stop`, and what the table shows of a cercle round (its snapshot, `due`,
`option`, `held`, `expecting`, `actions`); `station replay --game --burn --cut-policy`."""

from __future__ import annotations

import json
from typing import Any

import pytest

from station.core.games import BACCARAT_BANQUE, CHEMIN_DE_FER, GAMES, PUNTO_BANCO
from station.core.snapshot import take
from station.core.table import Table
from tests.conftest import run_station


def apply_all(table: Table, events: list[dict[str, Any]]) -> list[Any]:
    return [table.apply(e) for e in events]


def card(code: str | None) -> dict[str, Any]:
    return {"type": "card", "card": code}


# -- settings ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "decks", "burn", "cut_policy"),
    [
        ("punto_banco", 8, "reveal", "one_more"),
        ("chemin_de_fer", 6, "none", "stop"),
        ("baccarat_banque", 6, "none", "stop"),
    ],
)
def test_each_game_has_its_defaults(game: str, decks: int, burn: str, cut_policy: str) -> None:
    table = Table(game=game)
    assert table.game is GAMES[game] and table.game.name == game
    assert (table.decks, table.burn, table.cut_policy, table.gated) == (
        decks,
        burn,
        cut_policy,
        True,
    )
    assert Table(game=GAMES[game]).game is GAMES[game]
    set_ = Table(game=game, decks=2, gated=False, cut_policy="last_round", burn="reveal")
    assert (set_.decks, set_.gated, set_.cut_policy, set_.burn) == (
        2,
        False,
        "last_round",
        "reveal",
    )


def test_the_old_keyword_callers_still_get_punto_banco() -> None:
    table = Table(decks=1, gated=False, cut_policy="last_round")
    assert table.game is PUNTO_BANCO and table.burn == "reveal" and table.decks == 1


@pytest.mark.parametrize(
    "bad",
    [
        {"game": "baccarat"},
        {"game": "chemin_de_fer", "burn": "some"},
        {"cut_policy": "never"},
        {"decks": 0},
    ],
)
def test_bad_settings_are_refused_with_the_choices(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="must be"):
        Table(**bad)


def test_the_games_hands_and_roles() -> None:
    assert CHEMIN_DE_FER.hands == PUNTO_BANCO.hands == ("player", "banker")
    assert BACCARAT_BANQUE.hands == ("tableau1", "tableau2", "banker")
    assert CHEMIN_DE_FER.roles == ("P1", "B1", "P2", "B2", "P3", "B3")
    assert BACCARAT_BANQUE.roles == (
        "T1.1", "T2.1", "B.1", "T1.2", "T2.2", "B.2", "T1.3", "T2.3", "B.3",
    )  # fmt: skip
    assert set(BACCARAT_BANQUE.role_words) == set(BACCARAT_BANQUE.roles)


# -- burn none, cut policy stop --------------------------------------------------------------


@pytest.mark.parametrize("game", list(GAMES))
def test_burn_none_deals_at_once(game: str) -> None:
    table = Table(game=game, burn="none")
    assert apply_all(table, [{"type": "shoe"}])[0]["ok"]
    assert table.due() == "close_bets" and table.burn_complete
    assert table.apply(card("5S"))["error"] == "UNEXPECTED_CARD"  # never BURN_EXCESS
    table.apply({"type": "void"})
    assert table.apply({"type": "close_bets"})["round"] == 1
    ungated = Table(game=game, burn="none", gated=False)
    ungated.apply({"type": "shoe"})
    assert ungated.due() == game_first_role(game)
    assert ungated.apply(card("5S"))["role"] == game_first_role(game)


def game_first_role(game: str) -> str:
    return GAMES[game].deal[0][0]


@pytest.mark.parametrize("game", list(GAMES))
def test_a_stop_cut_during_the_burn_or_between_rounds_finishes_the_shoe(game: str) -> None:
    table = Table(game=game, burn="reveal", cut_policy="stop")
    apply_all(table, [{"type": "shoe"}, card("3S"), card("4S")])  # the burn under way
    assert table.apply({"type": "cut"})["ok"] and not table.in_play
    assert table.apply(card("5S"))["error"] == "NO_ACTIVE_SHOE"
    table = Table(game=game, burn="none", cut_policy="stop")
    apply_all(table, [{"type": "shoe"}, {"type": "close_bets"}])
    assert table.apply({"type": "cut"})["ok"] and table.in_play  # round 1 opened: the last
    assert table.last_round == 1
    assert table.apply({"type": "void"})["voided_round"] == 1 and not table.in_play


def test_a_stop_cut_while_suspended_keeps_the_suspension_past_the_shoe() -> None:
    table = Table(game="chemin_de_fer")
    apply_all(table, [{"type": "shoe"}, {"type": "fault"}])
    cut = table.decide({"type": "cut"})
    assert cut.verdict["ok"] and not cut.cleared and not table.in_play
    assert table.suspension is not None and table.due() == "shoe"
    assert set(table.actions()) == {"shoe", "resume", "void"}
    assert table.apply({"type": "end_shoe"})["error"] == "NO_ACTIVE_SHOE"
    shoe = table.decide({"type": "shoe"})  # the next shoe starts unsuspended
    assert shoe.verdict["ok"] and shoe.cleared and table.suspension is None


# -- the views and the snapshot -------------------------------------------------------------

OPTION_DEAL = [card(c) for c in ["2S", "2D", "KD", "3H", "AH", "7D"]]  # tableau 1: 5


def banque_at_option() -> Table:
    table = Table(game="baccarat_banque")
    apply_all(table, [{"type": "shoe"}, {"type": "close_bets"}, *OPTION_DEAL])
    return table


def test_the_snapshot_of_a_banque_round() -> None:
    table = Table(game="baccarat_banque")
    apply_all(table, [{"type": "shoe"}, {"type": "close_bets"}, *OPTION_DEAL[:4]])
    state = take(table, 6, "t1", None).to_dict()
    assert state["game"] == "baccarat_banque" and state["burn"] == "none"
    assert state["hands"] == ("tableau1", "tableau2", "banker")
    assert state["round"] == {
        "number": 1,
        "tableau1": ["2S", "3H"],
        "tableau2": ["2D"],
        "banker": ["KD"],
        "due": "T2.2",
    }
    assert state["due"] == "T2.2" and state["expecting"] == "tableau 2 second card"
    assert state["option"] is None and state["held"] is None


def test_an_option_in_the_views_and_the_snapshot() -> None:
    table = banque_at_option()
    option = {
        "hand": "tableau1",
        "total": 5,
        "words": "tableau 1: option on 5, draw or stand?",
        "against": [],
    }
    assert table.due() == "decision" and table.option() == option
    assert table.expecting() == option["words"]
    assert table.actions() == ("void", "end_shoe", "decision")
    state = take(table, 8, "t1", None).to_dict()
    assert state["option"] == option and state["actions"] == ("void", "end_shoe", "decision")
    assert state["round"]["due"] == "decision"
    # Held: the option stays shown, the table waits for a supervisor.
    table.apply(card("9C"))
    state = take(table, 9, "t1", 9).to_dict()
    assert state["held"] == "9C" and state["option"] == option and state["due"] is None
    assert state["suspension"]["code"] == "DECISION_MISSING"
    assert (
        "hold" in state["suspension"]["explanation"] or "held" in state["suspension"]["explanation"]
    )
    assert state["actions"] == ("resume", "void", "end_shoe")


def test_the_banker_option_says_what_it_is_against() -> None:
    table = Table(game="chemin_de_fer")
    apply_all(
        table,
        [
            {"type": "shoe"},
            {"type": "close_bets"},
            *(card(c) for c in ["AS", "KD", "3H", "3D", "9C"]),
        ],
    )
    assert table.option() == {
        "hand": "banker",
        "total": 3,
        "words": "banker: option on 3 against the ponte's third card 9, draw or stand?",
        "against": [{"hand": "player", "third": 9}],  # the same, as codes for the screens
    }
    banque = Table(game="baccarat_banque")
    deal = ["2S", "3S", "KD", "2H", "AH", "4D", "AC", "2C"]
    apply_all(banque, [{"type": "shoe"}, {"type": "close_bets"}, *(card(c) for c in deal)])
    assert banque.option()["words"] == (  # type: ignore[index]
        "banker: option on 4 against tableau 1's third card 1 and tableau 2's third card 2, "
        "draw or stand?"
    )
    assert banque.option()["against"] == [  # type: ignore[index]
        {"hand": "tableau1", "third": 1},
        {"hand": "tableau2", "third": 2},
    ]


def test_a_punto_banco_snapshot_keeps_its_shape() -> None:
    table = Table()
    apply_all(table, [{"type": "shoe"}, card("AS"), card("2S"), {"type": "close_bets"}, card("9H")])
    state = take(table, 5, "t1", None).to_dict()
    assert state["round"] == {"number": 1, "player": ["9H"], "banker": [], "due": "B1"}
    assert (state["game"], state["hands"], state["burn"]) == (
        "punto_banco",
        ("player", "banker"),
        "reveal",
    )
    assert state["option"] is None and state["held"] is None


def test_a_banque_result_is_the_last_result() -> None:
    table = Table(game="baccarat_banque")
    deal = ["4S", "5S", "KD", "5H", "KH", "8D"]
    apply_all(table, [{"type": "shoe"}, {"type": "close_bets"}, *(card(c) for c in deal)])
    snap = take(table, 8, "t1", None)
    assert snap.last_result == {
        "round": 1,
        "tableau1": ["4S", "5H"],
        "tableau2": ["5S", "KH"],
        "banker": ["KD", "8D"],
        "tableau1_total": 9,
        "tableau2_total": 5,
        "banker_total": 8,
        "tableau1_outcome": "win",
        "tableau2_outcome": "lose",
        "naturals": ["tableau1", "banker"],
    }
    assert snap.results == tuple(table.results)


# -- station replay ---------------------------------------------------------------------------


def replay(*args: str, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    data = "".join(json.dumps(e) + "\n" for e in events).encode()
    out = run_station("replay", *args, stdin=data)
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


def test_replay_takes_the_games_decks_unless_told() -> None:
    six = [{"type": "shoe"}, {"type": "close_bets"}, *[card("AS")] * 7]
    rows = replay("--game", "chemin_de_fer", "--ungated", events=six)
    assert [r["error"] for r in rows][-2:] == [None, "EXCESS_COPIES"]  # the 7th of 6 decks
    rows = replay("--game", "chemin_de_fer", "--decks", "8", events=six)
    assert rows[-1]["error"] != "EXCESS_COPIES"


def test_replay_takes_burn_and_cut_policy_flags() -> None:
    events = [{"type": "shoe"}, card("5S"), {"type": "cut"}, card("6S")]
    rows = replay("--burn", "none", "--cut-policy", "stop", events=events)
    assert [r["error"] for r in rows] == [None, "UNEXPECTED_CARD", None, "NO_ACTIVE_SHOE"]
    rows = replay("--game", "chemin_de_fer", "--burn", "reveal", events=events)
    assert [r["role"] for r in rows][:2] == [None, "burn_reveal"]


def test_replay_says_why_a_decision_is_bad_input_at_this_game() -> None:
    rows = replay(
        "--game", "chemin_de_fer", events=[{"type": "decision", "hand": "tableau1", "draw": True}]
    )
    assert rows[0]["error"] == "BAD_INPUT" and "player, banker" in rows[0]["reason"]


@pytest.mark.parametrize(
    "args",
    [
        ["--game", "faro"],
        ["--burn", "half"],
        ["--cut-policy", "never"],
        ["--game", "baccarat_banque", "--odds"],
    ],
)
def test_replay_refuses_bad_game_options(args: list[str]) -> None:
    out = run_station("replay", *args, stdin=b"")
    assert out.returncode == 2 and out.stderr and out.stdout == b""
