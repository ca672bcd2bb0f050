"""Decisions in every state of a round, for every game, and a resume that carries one
(shared/spec/games.md, "Decisions" and "Resume with a decision")."""

from __future__ import annotations

from typing import Any

import pytest

from station.core import events as ev
from station.core.table import Table
from station.core.verdicts import Verdict
from tests.tablekit import card_of

GAMES = ["punto_banco", "chemin_de_fer", "baccarat_banque"]

#: A round of each game whose first hand must draw (total 3) and whose banker has 7.
MUST_DRAW = {
    "punto_banco": ["2S", "KD", "AH", "7D"],
    "chemin_de_fer": ["2S", "KD", "AH", "7D"],
    "baccarat_banque": ["2S", "6S", "KD", "AH", "KS", "7D"],  # tableau 2: 6, stands
}
#: A round whose first hand has the option (5); punto banco has none (5 must draw).
OPTION = {
    "chemin_de_fer": ["2S", "KD", "3H", "7D"],
    "baccarat_banque": ["2S", "6S", "KD", "3H", "KS", "7D"],
}
FIRST = {"punto_banco": "player", "chemin_de_fer": "player", "baccarat_banque": "tableau1"}
THIRD = {"punto_banco": "P3", "chemin_de_fer": "P3", "baccarat_banque": "T1.3"}


def card(code: str | None) -> dict[str, Any]:
    return {"type": "card", "card": code}


def decide(draw: bool, hand: str | None = None) -> dict[str, Any]:
    return dict(ev.decision(draw, hand))


def table_at(game: str, cards: list[str], *, close: bool = True) -> Table:
    """A shoe in play (the burn done where the game has one), round 1 opened, `cards`."""
    table = Table(game=game)
    table.apply({"type": "shoe"})
    if table.burn == "reveal":
        table.apply(card("AC"))
        table.apply(card("2C"))
    if close:
        assert table.apply({"type": "close_bets"})["round"] == 1
    for code in cards:
        assert table.apply(card(code))["ok"], code
    return table


def state(table: Table) -> tuple[Any, ...]:
    """Everything a decision could change."""
    rnd = table.round
    return (
        table.due(),
        table.option(),
        table.held,
        None if rnd is None else (rnd.due, rnd.turn, [list(c) for c in rnd.cards]),
        len(table.results),
        table.suspension,
        dict(table.copies),
        table.in_play,
    )


def refused(table: Table, event: dict[str, Any], code: str) -> None:
    before = state(table)
    verdict = table.apply(event)
    assert verdict["error"] == code and not verdict["ok"], (event, verdict)
    assert verdict["round"] is None and verdict["role"] is None
    assert state(table) == before, "a rejection changes nothing"


def accepted_unchanged(table: Table, event: dict[str, Any]) -> Verdict:
    before = state(table)
    verdict = table.apply(event)
    assert verdict["ok"] and verdict["role"] is None and verdict["result"] is None, verdict
    assert verdict["round"] == 1
    assert state(table) == before, "an agreeing decision changes nothing"
    return verdict


# -- before a turn is open ------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES)
def test_no_decision_before_the_first_cards_are_all_placed(game: str) -> None:
    table = Table(game=game)
    refused(table, decide(True), "NO_ACTIVE_SHOE")
    table = table_at(game, [], close=False)  # a shoe in play, no round opened
    refused(table, decide(True), "DECISION_NOT_ALLOWED")
    table = table_at(game, [])  # a round opened, no card placed
    refused(table, decide(True, FIRST[game]), "DECISION_NOT_ALLOWED")
    for placed in range(1, len(MUST_DRAW[game])):  # the deal under way
        table = table_at(game, MUST_DRAW[game][:placed])
        for hand in (None, FIRST[game], "banker"):
            for draw in (True, False):
                refused(table, decide(draw, hand), "DECISION_NOT_ALLOWED")


@pytest.mark.parametrize("game", GAMES)
def test_malformed_decisions_are_bad_input_first(game: str) -> None:
    table = Table(game=game)  # no shoe: BAD_INPUT comes before NO_ACTIVE_SHOE
    other = "tableau1" if game != "baccarat_banque" else "player"
    for event in (
        {"type": "decision", "hand": other, "draw": True},
        {"type": "decision", "hand": "Banker", "draw": True},
        {"type": "decision", "draw": 1},
        {"type": "decision", "draw": None},
        {"type": "decision", "hand": FIRST[game]},
        {"type": "decision", "hand": 0, "draw": False},
    ):
        refused(table, event, "BAD_INPUT")
        assert table.bad_input_reason(event)
    assert table.bad_input_reason(decide(True, FIRST[game])) is None


# -- at the turns --------------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES)
def test_at_a_must_draw_turn_drawing_agrees_standing_contradicts(game: str) -> None:
    table = table_at(game, MUST_DRAW[game])
    assert table.due() == THIRD[game]
    refused(table, decide(False), "DECISION_NOT_ALLOWED")
    refused(table, decide(False, FIRST[game]), "DECISION_NOT_ALLOWED")
    refused(table, decide(True, "banker"), "DECISION_NOT_ALLOWED")  # out of turn
    refused(table, decide(False, "banker"), "DECISION_NOT_ALLOWED")
    accepted_unchanged(table, decide(True))
    accepted_unchanged(table, decide(True, FIRST[game]))  # repeated
    assert table.actions()[-1] != "decision"  # no option waits
    # The third card (a 9) ends the first hand's turn: it stays fixed as drawn.
    third = table.apply(card("9C"))
    assert third["role"] == THIRD[game]
    if third["result"] is None:
        accepted_unchanged(table, decide(True, FIRST[game]))
        refused(table, decide(False, FIRST[game]), "DECISION_NOT_ALLOWED")


@pytest.mark.parametrize("game", GAMES)
def test_after_the_round_every_decision_is_refused(game: str) -> None:
    table = table_at(game, ["9S", "KD", "KH", "7D"] if game != "baccarat_banque" else [])
    if game == "baccarat_banque":  # the banker's natural ends the round
        for code in ["2S", "3S", "9D", "4H", "5H", "KC"]:
            table.apply(card(code))
    assert table.round is None and table.results
    for hand in (None, FIRST[game], "banker"):
        refused(table, decide(True, hand), "DECISION_NOT_ALLOWED")
        refused(table, decide(False, hand), "DECISION_NOT_ALLOWED")


def test_punto_banco_never_waits_for_a_decision() -> None:
    """Every two-card deal (and every third card): each turn is M or F."""
    for player in range(8):
        for banker in range(8):
            for third in range(10):
                table = table_at("punto_banco", [card_of(player, "S"), card_of(banker, "D")])
                table.apply(card("KH"))
                table.apply(card("KC"))
                assert table.due() != "decision" and table.option() is None
                if table.round is not None:
                    table.apply(card(card_of(third, "H")))
                    assert table.due() != "decision" and table.option() is None


@pytest.mark.parametrize("game", ["chemin_de_fer", "baccarat_banque"])
def test_at_an_option_each_answer_and_then_only_that_answer(game: str) -> None:
    for draw in (True, False):
        table = table_at(game, OPTION[game])
        assert table.due() == "decision" and "decision" in table.actions()
        refused(table, decide(not draw, "banker"), "DECISION_NOT_ALLOWED")  # out of turn
        verdict = table.apply(decide(draw, None if draw else FIRST[game]))
        assert verdict["ok"] and verdict["round"] == 1 and verdict["role"] is None
        refused(table, decide(not draw, FIRST[game]), "DECISION_NOT_ALLOWED")  # the other
        if table.round is not None:
            accepted_unchanged(table, decide(draw, FIRST[game]))  # repeated
        if draw:
            assert table.due() == THIRD[game] and table.option() is None
        else:  # banque: tableau 2 stands on 6; the banker's 7 stands: complete
            assert verdict["result"] is not None and table.round is None


def test_a_settled_tableau_stands_once_its_turn_comes() -> None:
    # tableau 1: 2S 3H = 5 (option); tableau 2: 9S KH natural; banker: KD 4D = 4.
    table = table_at("baccarat_banque", ["2S", "9S", "KD", "3H", "KH", "4D"])
    refused(table, decide(False, "tableau2"), "DECISION_NOT_ALLOWED")  # not yet its turn
    assert table.apply(decide(False, "tableau1"))["ok"]
    assert table.due() == "B.3"  # banker 4 against a tableau 1 that stood: M
    accepted_unchanged(table, decide(False, "tableau2"))  # standing on a natural agrees
    refused(table, decide(True, "tableau2"), "DECISION_NOT_ALLOWED")  # drawing on it
    accepted_unchanged(table, decide(True))  # the banker's turn: drawing at M


@pytest.mark.parametrize("game", GAMES)
def test_a_suspended_table_refuses_a_decision(game: str) -> None:
    table = table_at(game, MUST_DRAW[game])
    table.apply({"type": "fault"})
    refused(table, decide(True), "SUSPENDED")
    refused(table, {"type": "decision", "draw": "yes"}, "BAD_INPUT")


# -- a card while an option waits ----------------------------------------------------------


@pytest.mark.parametrize("game", ["chemin_de_fer", "baccarat_banque"])
def test_a_card_at_an_option_is_held(game: str) -> None:
    table = table_at(game, OPTION[game])
    verdict = table.decide(card("4C"))
    assert verdict.verdict["error"] == "DECISION_MISSING" and verdict.began
    assert table.held == "4C" and table.copies["4C"] == 1
    assert table.option() is not None  # still shown: the supervisor's resume may answer
    assert table.due() is None and "decision" not in table.actions()
    assert table.apply(card("5C"))["error"] == "CARD_WHILE_SUSPENDED"
    assert table.held == "4C"  # the first flagged card stays the held one
    # An unreadable card at an option is UNREADABLE_CARD (it cannot be held).
    other = table_at(game, OPTION[game])
    assert other.apply(card("??"))["error"] == "UNREADABLE_CARD" and other.held is None
    # A plain resume discards the held card; the option still waits.
    assert table.decide({"type": "resume"}).cleared
    assert table.held is None and table.due() == "decision"


# -- resume with a decision ------------------------------------------------------------------


def held_at_option(game: str = "chemin_de_fer") -> Table:
    table = table_at(game, OPTION[game])
    assert table.apply(card("4C"))["error"] == "DECISION_MISSING"
    return table


def resume(decision: object, card_code: object = None, **extra: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "resume", "decision": decision, **extra}
    if card_code is not None:
        event["card"] = card_code
    return event


def test_resume_checks_not_suspended_first() -> None:
    table = table_at("chemin_de_fer", OPTION["chemin_de_fer"])
    for decision in ({"draw": True}, "yes", {"hand": "x"}, {}):
        refused(table, resume(decision), "NOT_SUSPENDED")


def test_resume_checks_the_decision_then_the_card_while_held_then_the_shoe() -> None:
    table = held_at_option()
    for decision in (
        "yes",
        1,
        [],
        {},
        {"hand": "player"},
        {"draw": "no"},
        {"hand": "x", "draw": 1},
    ):
        refused(table, resume(decision), "BAD_INPUT")
    refused(table, resume({"draw": True}, "9S"), "BAD_INPUT")  # a card while one is held
    refused(table, resume({"draw": True}, None, card="??"), "BAD_INPUT")  # unreadable counts
    # After a stop cut finished the shoe (between rounds, suspended): NO_ACTIVE_SHOE.
    after = table_at("chemin_de_fer", ["9S", "KD", "KH", "7D"])
    after.apply({"type": "fault"})
    after.apply({"type": "cut"})
    assert not after.in_play and after.suspension is not None
    refused(after, resume({"draw": "x"}), "BAD_INPUT")  # malformed comes first
    refused(after, resume({"draw": True}), "NO_ACTIVE_SHOE")
    refused(after, {"type": "resume", "card": "9S"}, "NO_ACTIVE_SHOE")
    assert after.decide({"type": "resume"}).cleared and after.suspension is None


def test_resume_refuses_a_decision_that_does_not_answer_the_held_option() -> None:
    table = held_at_option()
    refused(table, resume({"hand": "banker", "draw": True}), "DECISION_NOT_ALLOWED")  # turn
    refused(table, resume({"hand": "player", "draw": False}), "DECISION_NOT_ALLOWED")  # ends it
    # Banque: tableau 1 drew at M (a 2: 3+2... its turn is over), tableau 2's option holds
    # a card; confirming tableau 1 is a fine decision but answers nothing.
    banque = table_at("baccarat_banque", ["2S", "2D", "KD", "AH", "3C", "7D", "2C"])
    assert banque.due() == "decision" and banque.option()["hand"] == "tableau2"  # type: ignore[index]
    assert banque.apply(card("9C"))["error"] == "DECISION_MISSING"
    refused(banque, resume({"hand": "tableau1", "draw": True}), "DECISION_NOT_ALLOWED")
    refused(banque, resume({"hand": "tableau1", "draw": False}), "DECISION_NOT_ALLOWED")
    placed = banque.decide(resume({"draw": True}))
    assert placed.verdict["role"] == "T2.3" and placed.cleared and not placed.began
    assert banque.copies["9C"] == 1  # counted once, when it came out


def test_resume_with_a_card_refuses_a_decision_that_would_complete_the_round() -> None:
    table = table_at("chemin_de_fer", OPTION["chemin_de_fer"])
    table.apply(card(None))  # unreadable: suspended, nothing held
    refused(table, resume({"draw": False}, "9S"), "DECISION_NOT_ALLOWED")
    # Without a card, the decision may complete the round: the resume's verdict carries it.
    verdict = table.decide(resume({"draw": False}))
    assert verdict.cleared and verdict.verdict["result"] is not None
    assert verdict.verdict["round"] == 1 and verdict.verdict["role"] is None


def test_resume_with_a_decision_and_a_card_places_the_card_after_the_decision() -> None:
    table = table_at("chemin_de_fer", OPTION["chemin_de_fer"])
    table.apply({"type": "fault"})
    verdict = table.apply(resume({"hand": "player", "draw": True, "note": "ignored"}, "4C"))
    assert verdict["role"] == "P3" and verdict["result"] is not None
    assert table.copies["4C"] == 1


def test_a_null_decision_is_a_plain_resume() -> None:
    table = held_at_option()
    verdict = table.decide(resume(None))
    assert verdict.verdict == {**verdict.verdict, "ok": True, "error": None, "role": None}
    assert verdict.cleared and table.held is None and table.due() == "decision"


def test_a_held_card_meets_the_next_option_and_is_held_again() -> None:
    # tableau 1: 5 (option), tableau 2: 2D 3C = 5 (option), banker 7.
    table = table_at("baccarat_banque", ["2S", "2D", "KD", "3H", "3C", "7D"])
    table.apply(card("9C"))
    again = table.decide(resume({"hand": "tableau1", "draw": False}))
    assert again.verdict["error"] == "DECISION_MISSING" and again.cleared and again.began
    assert table.held == "9C" and table.option()["hand"] == "tableau2"  # type: ignore[index]
    assert table.copies["9C"] == 1
    done = table.apply(resume({"hand": "tableau2", "draw": True}))
    assert done["role"] == "T2.3" and done["result"] is not None


@pytest.mark.parametrize("way", [{"type": "void"}, {"type": "end_shoe"}, {"type": "resume"}])
def test_every_other_way_out_discards_the_held_card(way: dict[str, Any]) -> None:
    table = held_at_option()
    assert table.decide(way).cleared and table.held is None


def test_a_resume_with_a_card_and_no_decision_discards_the_held_card() -> None:
    table = held_at_option()
    verdict = table.decide({"type": "resume", "card": "5C"})
    assert verdict.cleared and verdict.began  # the option still waits: 5C is held now
    assert verdict.verdict["error"] == "DECISION_MISSING" and table.held == "5C"
