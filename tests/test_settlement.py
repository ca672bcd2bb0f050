"""Settlement bet by bet against rounds worked by hand (stake 10 on every bet)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from station.core import paytables
from station.core.results import round_result
from station.core.settlement import Bet, BetError, exact_amount, settle

TRADITIONAL = paytables.load("traditional")
NO_COMMISSION = paytables.load("no_commission")
ALL_BETS = list(TRADITIONAL.bets)

# (player cards, banker cards, {bet: net won on a stake of 10}, no-commission banker net).
# Bets not listed lose their 10.
HANDS = {
    "player natural 9 beats 7": (
        ["4S", "5H"],
        ["3D", "4C"],
        {"player": 10, "player_natural": 35, "player_bonus": 10},
        -10,
    ),
    "banker wins with 6 on three cards, banker pair": (
        ["2S", "3H", "7D"],
        ["3D", "3C", "KH"],
        {
            "banker": "9.5",
            "banker_pair": 110,
            "either_pair": 50,
            "banker_bonus": 10,
            "lucky_six": 200,
            "lucky_six_3": 500,
        },
        5,
    ),
    "banker wins with 6 on two cards by 3": (
        ["TS", "4H", "9C"],
        ["KD", "6S"],
        {"banker": "9.5", "lucky_six": 120, "lucky_six_2": 220},
        5,
    ),
    "player 7 on two cards over banker 6: four cards": (
        ["6S", "AH"],
        ["6D", "KC"],
        {"player": 10, "lucky_seven": 60, "lucky_seven_2": 150, "super_lucky_seven": 300},
        -10,
    ),
    "player 7 over banker 6: five cards": (
        ["3C", "4C"],
        ["2S", "3D", "AH"],
        {"player": 10, "lucky_seven": 60, "lucky_seven_2": 150, "super_lucky_seven": 400},
        -10,
    ),
    "player 7 on three cards over banker 6: six cards, banker pair": (
        ["TS", "2S", "5D"],
        ["2C", "2D", "2H"],
        {
            "player": 10,
            "banker_pair": 110,
            "either_pair": 50,
            "lucky_seven": 150,
            "lucky_seven_3": 300,
            "super_lucky_seven": 1000,
        },
        -10,
    ),
    "natural tie 8-8, banker pair": (
        ["3S", "5S"],
        ["4H", "4D"],
        {
            "player": 0,
            "banker": 0,
            "tie": 80,
            "banker_pair": 110,
            "either_pair": 50,
            "player_natural": 35,
            "banker_natural": 35,
            "player_bonus": 0,
            "banker_bonus": 0,
        },
        0,
    ),
    "natural tie, both hands pair, banker perfect pair: either and perfect pay once": (
        ["4S", "4H"],
        ["9D", "9D"],
        {
            "player": 0,
            "banker": 0,
            "tie": 80,
            "player_pair": 110,
            "banker_pair": 110,
            "either_pair": 50,
            "perfect_pair": 250,
            "player_natural": 35,
            "banker_natural": 35,
            "player_bonus": 0,
            "banker_bonus": 0,
        },
        0,
    ),
    "non-natural tie 6-6 loses the bonuses": (
        ["AS", "5D"],
        ["3S", "3S"],
        {
            "player": 0,
            "banker": 0,
            "tie": 80,
            "banker_pair": 110,
            "either_pair": 50,
            "perfect_pair": 250,
        },
        0,
    ),
    "player wins by 9 without a natural": (
        ["TS", "KS", "9H"],
        ["QH", "JD", "TC"],
        {"player": 10, "player_bonus": 300},
        -10,
    ),
    "banker 8 on three cards (not a natural) by 8, player perfect pair": (
        ["7H", "7H", "6C"],
        ["2D", "AS", "5S"],
        {
            "banker": "9.5",
            "player_pair": 110,
            "either_pair": 50,
            "perfect_pair": 250,
            "banker_bonus": 100,
        },
        10,
    ),
}


@pytest.mark.parametrize("name", list(HANDS))
def test_every_bet_on_a_hand_worked_round(name: str) -> None:
    player, banker, wins, nc_banker = HANDS[name]
    result = round_result(7, player, banker)
    settled = settle(TRADITIONAL, 7, result, [{"bet": b, "stake": "10"} for b in ALL_BETS])
    got = {s.bet: s.net for s in settled}
    expected = {b: Decimal(str(wins.get(b, -10))) for b in ALL_BETS}
    assert got == expected
    for s in settled:
        assert s.returned == s.stake + s.net
        assert s.outcome == ("win" if s.net > 0 else "push" if s.net == 0 else "loss")
    (nc,) = settle(NO_COMMISSION, 7, result, [{"bet": "banker", "stake": 10}])
    assert nc.net == Decimal(nc_banker)


def test_outcome_keys_name_what_happened() -> None:
    result = round_result(3, ["TS", "KS", "9H"], ["QH", "JD", "TC"])
    keys = {
        s.bet: s.key
        for s in settle(
            TRADITIONAL, 3, result, [Bet("player_bonus", Decimal(1)), Bet("player", Decimal(1))]
        )
    }
    assert keys == {"player_bonus": "win_by_9", "player": "win"}


def test_amounts_are_exact_decimals() -> None:
    result = round_result(1, ["TS", "4H", "9C"], ["KD", "6S"])  # banker wins with 6
    (trad,) = settle(TRADITIONAL, 1, result, [{"bet": "banker", "stake": "12.50"}])
    (nc,) = settle(NO_COMMISSION, 1, result, [{"bet": "banker", "stake": "12.50"}])
    assert (trad.net, trad.returned) == (Decimal("11.875"), Decimal("24.375"))
    assert str(nc.net) == "6.25" and str(nc.returned) == "18.75"
    (six,) = settle(TRADITIONAL, 1, result, [{"bet": "lucky_six", "stake": "0.10"}])
    assert str(six.net) == "1.20"  # keeps the stake's cents
    (loss,) = settle(TRADITIONAL, 1, result, [{"bet": "player", "stake": 12.5}])
    assert (str(loss.stake), str(loss.net), str(loss.returned)) == ("12.5", "-12.5", "0.0")


def test_bets_out_of_their_rounds_are_refused() -> None:
    result = round_result(41, ["4S", "5H"], ["3D", "4C"])
    bets = [{"bet": b, "stake": 5} for b in ("player_bonus", "player_natural", "player_pair")]
    got = {s.bet: (s.outcome, s.returned) for s in settle(TRADITIONAL, 41, result, bets)}
    assert got["player_bonus"] == ("refused", Decimal(5))  # open in rounds 1-40
    assert got["player_natural"] == ("win", Decimal("22.5"))
    round_51 = {**result, "round": 51}
    outcomes = [s.outcome for s in settle(TRADITIONAL, 51, round_51, bets)]  # type: ignore[arg-type]
    assert outcomes == ["refused", "refused", "loss"]
    round_61 = {**result, "round": 61}
    (pair,) = settle(TRADITIONAL, 61, round_61, bets[2:])  # type: ignore[arg-type]
    assert pair.outcome == "refused" and "rounds 1-60" in (pair.reason or "")


def test_a_bet_the_table_does_not_offer_is_refused_with_its_stake() -> None:
    result = round_result(1, ["4S", "5H"], ["3D", "4C"])
    (s,) = settle(TRADITIONAL, 1, result, [{"bet": "dragon_7", "stake": "3"}])
    assert (s.outcome, s.net, s.returned) == ("refused", 0, Decimal(3))
    assert "offers no bet 'dragon_7'" in (s.reason or "")


def test_a_voided_round_refunds_everything_but_refused_bets_stay_refused() -> None:
    bets = [
        {"bet": "banker", "stake": 10},
        {"bet": "tie", "stake": "2.5"},
        {"bet": "player_bonus", "stake": 1},
    ]
    settled = settle(TRADITIONAL, 45, None, bets)
    assert [(s.outcome, s.net, s.returned) for s in settled] == [
        ("refund", 0, Decimal(10)),
        ("refund", 0, Decimal("2.5")),
        ("refused", 0, Decimal(1)),
    ]
    assert settled[0].reason == "round 45 was voided"
    assert settled[0].to_json()["returned"] == "10"


@pytest.mark.parametrize(
    ("bet", "message"),
    [
        ({"bet": "banker", "stake": "ten"}, "is not an amount"),
        ({"bet": "banker", "stake": -5}, "positive"),
        ({"bet": "banker", "stake": 0}, "positive"),
        ({"bet": "banker", "stake": True}, "is not an amount"),
        ({"bet": "banker", "stake": "NaN"}, "positive"),
        ({"bet": "banker"}, "is not an amount"),
        ({"stake": 5}, "needs its name"),
        (["banker", 5], "a bet is"),
    ],
)
def test_malformed_bets_are_errors(bet: object, message: str) -> None:
    result = round_result(1, ["4S", "5H"], ["3D", "4C"])
    with pytest.raises(BetError, match=message):
        settle(TRADITIONAL, 1, result, [bet])  # type: ignore[list-item]


def test_the_result_must_be_of_the_round_settled() -> None:
    result = round_result(2, ["4S", "5H"], ["3D", "4C"])
    with pytest.raises(ValueError, match="round 2, not round 3"):
        settle(TRADITIONAL, 3, result, [])
    with pytest.raises(ValueError, match="round_number"):
        settle(TRADITIONAL, 0, None, [])


def test_exact_amount_refuses_what_is_not_decimal_money() -> None:
    from fractions import Fraction

    assert exact_amount(Fraction(95, 4)) == Decimal("23.75")
    with pytest.raises(ValueError, match="not an exact decimal"):
        exact_amount(Fraction(1, 3))
