"""The cercle games' bets, bet by bet, against rounds worked by hand (issue 10).

Chemin de fer: the ponte (`player`) 1:1, the banker 1:1 less 5 % commission, ties push.
Baccarat banque: each tableau 1:1, push on its tie; a cheval 1:1 when both tableaux win,
lost when both lose, a push otherwise; the bank's commission on its net winnings of a
round. Every round below is worked out by hand from its cards (A = 1, T J Q K = 0).
"""

from __future__ import annotations

import json
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from station.core import paytables
from station.core.paytables import PaytableError
from station.core.results import round_result
from station.core.settlement import bank_take, settle

CHEMIN = paytables.load("chemin_de_fer")
BANQUE = paytables.load("baccarat_banque")

# Chemin de fer: (ponte's cards, banker's cards, net on 10 on the ponte, net on 10 on
# the banker). round_result scores the hands (chemin de fer's result is punto banco's).
CHEMIN_ROUNDS = {
    # ponte 4+5 = 9 natural, banker 3+4 = 7: the ponte wins.
    "ponte natural 9 over 7": (["4S", "5H"], ["3D", "4C"], "10", "-10"),
    # ponte 2+3 = 5 takes a 9 (option, drew): 4; banker K+6 = 6 stands (against a 9):
    # banker 6 wins.
    "ponte drew to 4, banker 6": (["2S", "3H", "9D"], ["KD", "6C"], "-10", "9.5"),
    # ponte 6+A = 7 stands, banker 4+3 = 7 stands: a tie, both push.
    "seven all": (["6S", "AH"], ["4D", "3C"], "0", "0"),
    # ponte T+K = 0 draws 9: 9; banker Q+J = 0 draws 8: 8: the ponte wins by one.
    "ponte 9 on three cards": (["TS", "KS", "9H"], ["QH", "JD", "8C"], "10", "-10"),
}


@pytest.mark.parametrize("name", list(CHEMIN_ROUNDS))
def test_chemin_de_fer_bets_on_hand_worked_rounds(name: str) -> None:
    ponte, banker, on_ponte, on_banker = CHEMIN_ROUNDS[name]
    result = round_result(4, ponte, banker)
    settled = settle(
        CHEMIN, 4, result, [{"bet": "player", "stake": "10"}, {"bet": "banker", "stake": "10"}]
    )
    assert [(s.bet, s.net) for s in settled] == [
        ("player", Decimal(on_ponte)),
        ("banker", Decimal(on_banker)),
    ]
    for s in settled:
        assert s.returned == s.stake + s.net
        assert s.outcome == ("win" if s.net > 0 else "push" if s.net == 0 else "loss")


def test_chemin_de_fer_commission_is_the_paytables(tmp_path: Path) -> None:
    """4 % commission: a house paytable that extends the shipped one."""
    (tmp_path / "four.toml").write_text(
        'extends = "chemin_de_fer"\n[bets.banker]\nrule = "banker"\n'
        'pays = { win = "0.96:1", tie = "push" }\n'
    )
    four = paytables.load(str(tmp_path / "four.toml"))
    assert four.game == "chemin_de_fer"
    result = round_result(1, ["2S", "3H", "9D"], ["KD", "6C"])  # the banker wins
    (won,) = settle(four, 1, result, [{"bet": "banker", "stake": "25"}])
    assert (won.net, won.returned) == (Decimal("24.00"), Decimal("49.00"))
    (shipped,) = settle(CHEMIN, 1, result, [{"bet": "banker", "stake": "12.50"}])
    assert str(shipped.net) == "11.875"  # exact money, no rounding


def banque(t1: str, t2: str, **more: Any) -> dict[str, Any]:
    """A baccarat banque result (the contract's shape) with these outcomes."""
    return {"round": 9, "tableau1_outcome": t1, "tableau2_outcome": t2, **more}


# Baccarat banque: (tableau 1, tableau 2, banker cards, outcomes worked by hand,
# {bet: net on 10}).
BANQUE_ROUNDS: dict[
    str, tuple[list[str], list[str], list[str], tuple[str, str], dict[str, str]]
] = {
    # T1 4+4 = 8 natural, T2 9+K = 9 natural, banker 3+3 = 6: both tableaux win.
    "both naturals": (
        ["4S", "4H"],
        ["9C", "KD"],
        ["3D", "3C"],
        ("win", "win"),
        {"tableau1": "10", "tableau2": "10", "a_cheval": "10"},
    ),
    # Banker natural 9 (5+4); T1 2+3 = 5, T2 6+A = 7: both lose.
    "banker natural": (
        ["2S", "3H"],
        ["6D", "AC"],
        ["5S", "4D"],
        ("lose", "lose"),
        {"tableau1": "-10", "tableau2": "-10", "a_cheval": "-10"},
    ),
    # T1 6+K = 6 stands, T2 2+2 = 4 draws 3: 7; banker 7+Q = 7 stands: T1 loses, T2 ties.
    "one lost, one tied": (
        ["6H", "KC"],
        ["2D", "2C", "3S"],
        ["7S", "QD"],
        ("lose", "tie"),
        {"tableau1": "-10", "tableau2": "0", "a_cheval": "0"},
    ),
    # T1 A+A = 2 draws 5: 7; T2 3+T = 3 draws K: 3; banker 4+2 = 6 stands (cells against
    # a 5 and a 0 say F at 6): T1 wins, T2 loses.
    "one won, one lost": (
        ["AS", "AD", "5C"],
        ["3H", "TD", "KH"],
        ["4C", "2H"],
        ("win", "lose"),
        {"tableau1": "10", "tableau2": "-10", "a_cheval": "0"},
    ),
    # T1 7+J = 7, T2 5+2 = 7, banker 3+4 = 7: all tie.
    "all sevens": (
        ["7C", "JS"],
        ["5D", "2S"],
        ["3C", "4H"],
        ("tie", "tie"),
        {"tableau1": "0", "tableau2": "0", "a_cheval": "0"},
    ),
}


def points(cards: list[str]) -> int:
    return sum("A23456789".find(c[0]) + 1 for c in cards) % 10


def outcome(tableau: list[str], banker: list[str]) -> str:
    t, b = points(tableau), points(banker)
    return "win" if t > b else "lose" if t < b else "tie"


@pytest.mark.parametrize("name", list(BANQUE_ROUNDS))
def test_baccarat_banque_bets_on_hand_worked_rounds(name: str) -> None:
    t1, t2, bank, outcomes, nets = BANQUE_ROUNDS[name]
    assert (outcome(t1, bank), outcome(t2, bank)) == outcomes  # the working is right
    result = banque(
        *outcomes,
        tableau1=t1,
        tableau2=t2,
        banker=bank,
        tableau1_total=points(t1),
        tableau2_total=points(t2),
        banker_total=points(bank),
    )
    bets = [{"bet": b, "stake": "10"} for b in ("tableau1", "tableau2", "a_cheval")]
    settled = settle(BANQUE, 9, result, bets)
    assert {s.bet: s.net for s in settled} == {b: Decimal(n) for b, n in nets.items()}
    for s in settled:
        assert s.returned == s.stake + s.net


@pytest.mark.parametrize(
    ("t1", "t2", "key"),
    [
        ("win", "win", "both_win"),
        ("lose", "lose", None),
        ("win", "tie", "mixed"),
        ("tie", "win", "mixed"),
        ("win", "lose", "mixed"),
        ("lose", "win", "mixed"),
        ("tie", "tie", "mixed"),
        ("tie", "lose", "mixed"),
        ("lose", "tie", "mixed"),
    ],
)
def test_a_cheval_over_every_pair_of_outcomes(t1: str, t2: str, key: str | None) -> None:
    (s,) = settle(BANQUE, 9, banque(t1, t2), [{"bet": "a_cheval", "stake": "4"}])
    assert s.key == key
    assert s.net == {"both_win": 4, "mixed": 0, None: -4}[key]


def test_the_banks_commission_on_its_net_winnings_of_a_round(tmp_path: Path) -> None:
    """Round: T1 loses, T2 wins. Stakes: T1 30, T2 10, a cheval 20 (a push). The bank
    wins 30, pays 10: net 20. With a 5 % commission the house takes 1.00."""
    bets = [
        {"bet": "tableau1", "stake": "30"},
        {"bet": "tableau2", "stake": "10"},
        {"bet": "a_cheval", "stake": "20"},
    ]
    result = banque("lose", "win")
    assert bank_take(BANQUE, settle(BANQUE, 9, result, bets)).to_json() == {
        "net": "20",
        "commission": "0",
        "kept": "20",
    }  # the shipped table takes none
    (tmp_path / "house.toml").write_text('extends = "baccarat_banque"\nbank_commission = "5%"\n')
    house = paytables.load(str(tmp_path / "house.toml"))
    assert house.bank_commission == Fraction(1, 20)
    take = bank_take(house, settle(house, 9, result, bets))
    assert (take.net, take.commission, take.kept) == (Decimal(20), Decimal("1.00"), Decimal(19))
    # The bank lost the round (T1 and T2 win, 30 + 10 paid, a cheval 20 paid): no commission.
    lost = bank_take(house, settle(house, 9, banque("win", "win"), bets))
    assert (lost.net, lost.commission, lost.kept) == (Decimal(-60), 0, Decimal(-60))
    # Voided: every stake refunded, the bank nets nothing.
    assert bank_take(house, settle(house, 9, None, bets)).net == 0


def test_a_voided_banque_round_refunds_and_other_games_bets_are_refused() -> None:
    settled = settle(BANQUE, 2, None, [{"bet": "tableau1", "stake": "5"}])
    assert [(s.outcome, s.returned) for s in settled] == [("refund", Decimal(5))]
    (refused,) = settle(BANQUE, 9, banque("win", "win"), [{"bet": "banker", "stake": "5"}])
    assert refused.outcome == "refused" and "offers no bet 'banker'" in str(refused.reason)


def test_the_shipped_cercle_paytables() -> None:
    assert paytables.available() == [
        "baccarat_banque",
        "chemin_de_fer",
        "no_commission",
        "traditional",
    ]
    assert (CHEMIN.game, list(CHEMIN.bets)) == ("chemin_de_fer", ["player", "banker"])
    assert CHEMIN["banker"].pays == {
        "win": Fraction(19, 20),
        "win_with_6": Fraction(19, 20),
        "tie": 0,
    }
    assert (BANQUE.game, list(BANQUE.bets)) == (
        "baccarat_banque",
        ["tableau1", "tableau2", "a_cheval"],
    )
    assert BANQUE.bank_commission == 0
    assert paytables.load("traditional").game == "punto_banco"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            'game = "faro"\n[bets.p]\nrule = "player"\npays = { win = "1:1" }',
            "`game` must be one of",
        ),
        (
            'game = "baccarat_banque"\n[bets.p]\nrule = "player"\npays = { win = "1:1" }',
            "bet 'p' has rule player, which a baccarat_banque table cannot settle",
        ),
        (
            '[bets.t]\nrule = "tableau"\nside = "tableau1"\npays = { win = "1:1" }',
            "bet 't' has rule tableau, which a punto_banco table cannot settle",
        ),
        (
            'game = "baccarat_banque"\n[bets.t]\nrule = "tableau"\nside = "banker"\n'
            'pays = { win = "1:1" }',
            "rule tableau needs side = one of tableau1, tableau2",
        ),
        (
            'extends = "traditional"\nbank_commission = "5%"',
            "`bank_commission` is for baccarat_banque paytables",
        ),
        (
            'extends = "baccarat_banque"\nbank_commission = 5',
            'write a percentage as a string, e.g. "5%"',
        ),
        ('extends = "baccarat_banque"\nbank_commission = "100%"', "from 0% to less than 100%"),
        ('extends = "baccarat_banque"\nbank_commission = "NaN%"', "write a percentage"),
        (
            'game = "baccarat_banque"\n[bets.c]\nrule = "a_cheval"\npays = { win = "1:1" }',
            "rule a_cheval has no outcome win; its outcomes are both_win, mixed",
        ),
    ],
)
def test_bad_cercle_paytables_say_what_is_wrong(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(PaytableError, match=None) as caught:
        paytables.load(str(path))
    assert message in str(caught.value)


def test_the_commands_say_odds_are_not_offered_for_a_cercle_game(tmp_path: Path) -> None:
    from tests.conftest import run_station

    odds = run_station("odds", "--paytable", "chemin_de_fer")
    assert odds.returncode == 2
    assert b"odds are offered for punto banco only; this table plays chemin de fer" in odds.stderr
    (tmp_path / "station.toml").write_text('[table]\ngame = "baccarat_banque"\n')
    configured = run_station("odds", "--config", str(tmp_path / "station.toml"))
    assert configured.returncode == 2 and b"baccarat banque" in configured.stderr
    other = run_station(
        "replay", "--game", "baccarat_banque", "--paytable", "traditional", stdin=b""
    )
    assert other.returncode == 2
    assert (
        b"paytable traditional is for punto_banco, but the table plays baccarat_banque"
        in other.stderr
    )
    # The game's own paytable, from --config's [table] game: accepted.
    fine = run_station(
        "replay",
        "--config",
        str(tmp_path / "station.toml"),
        "--paytable",
        "baccarat_banque",
        stdin=b'{"type": "shoe"}\n',
    )
    assert fine.returncode == 0, fine.stderr
    assert json.loads(fine.stdout)["ok"] is True
