"""Paytables: the shipped tables say what the issue says, user files work, bad ones explain."""

from __future__ import annotations

from fractions import Fraction as F
from pathlib import Path

import pytest

from station.core import paytables
from station.core.paytables import LOSE, PUSH, PaytableError, parse_odds

# bet -> (rule, side, {key: net per unit}, rounds); keys not listed lose.
BONUS = {
    "natural_win": F(1),
    "natural_tie": PUSH,
    "win_by_9": F(30),
    "win_by_8": F(10),
    "win_by_7": F(6),
    "win_by_6": F(4),
    "win_by_5": F(2),
    "win_by_4": F(1),
}
EXPECTED = {
    "player": ("player", None, {"win": F(1), "tie": PUSH}, None),
    "banker": ("banker", None, {"win": F(19, 20), "win_with_6": F(19, 20), "tie": PUSH}, None),
    "tie": ("tie", None, {"tie": F(8)}, None),
    "player_pair": ("pair", "player", {"pair": F(11)}, 60),
    "banker_pair": ("pair", "banker", {"pair": F(11)}, 60),
    "either_pair": ("pair", "either", {"pair": F(5), "both": F(5)}, 50),
    "perfect_pair": ("perfect_pair", "either", {"pair": F(25), "both": F(25)}, 50),
    "player_natural": ("natural", "player", {"natural": F(7, 2)}, 50),
    "banker_natural": ("natural", "banker", {"natural": F(7, 2)}, 50),
    "player_bonus": ("bonus", "player", BONUS, 40),
    "banker_bonus": ("bonus", "banker", BONUS, 40),
    "lucky_six": ("lucky_six", None, {"two_cards": F(12), "three_cards": F(20)}, 50),
    "lucky_six_2": ("lucky_six", None, {"two_cards": F(22)}, 50),
    "lucky_six_3": ("lucky_six", None, {"three_cards": F(50)}, 50),
    "lucky_seven": ("lucky_seven", None, {"two_cards": F(6), "three_cards": F(15)}, 50),
    "lucky_seven_2": ("lucky_seven", None, {"two_cards": F(15)}, 50),
    "lucky_seven_3": ("lucky_seven", None, {"three_cards": F(30)}, 50),
    "super_lucky_seven": (
        "super_lucky_seven",
        None,
        {"four_cards": F(30), "five_cards": F(40), "six_cards": F(100)},
        50,
    ),
}


def test_shipped_tables_are_listed() -> None:
    assert paytables.available() == [
        "baccarat_banque",
        "chemin_de_fer",
        "no_commission",
        "traditional",
    ]


def test_traditional_pays_what_the_issue_says() -> None:
    table = paytables.load("traditional")
    assert table.name == "traditional"
    assert list(table.bets) == list(EXPECTED)
    for name, (rule, side, pays, rounds) in EXPECTED.items():
        spec = table[name]
        assert (spec.rule, spec.side, spec.rounds) == (rule, side, rounds), name
        assert spec.pays == {k: pays.get(k, LOSE) for k in paytables.rule_keys(rule, side)}, name


def test_no_commission_changes_only_the_banker_bet() -> None:
    traditional, nc = paytables.load("traditional"), paytables.load("no_commission")
    assert nc.bets["banker"].pays == {"win": F(1), "win_with_6": F(1, 2), "tie": PUSH}
    assert {n: s for n, s in nc.bets.items() if n != "banker"} == {
        n: s for n, s in traditional.bets.items() if n != "banker"
    }


def test_rounds_limit_which_rounds_a_bet_is_open_in() -> None:
    spec = paytables.load("traditional")["player_bonus"]
    assert spec.open_in(1) and spec.open_in(40) and not spec.open_in(41)
    assert paytables.load("traditional")["banker"].open_in(10_000)


def test_a_user_file_can_pay_tie_9_to_1(tmp_path: Path) -> None:
    path = tmp_path / "tie9.toml"
    path.write_text(
        'name = "tie_nine"\nextends = "traditional"\nwithout = ["lucky_six_3"]\n'
        '[bets.tie]\nrule = "tie"\npays = { tie = "9:1" }\n'
    )
    table = paytables.load(str(path))
    assert table.name == "tie_nine" and table["tie"].pays["tie"] == 9
    assert "lucky_six_3" not in table.bets and table["banker"].pays["win"] == F(19, 20)


def test_a_standalone_user_file_and_relative_extends(tmp_path: Path) -> None:
    (tmp_path / "base.toml").write_text(
        '[bets.banker]\nrule = "banker"\npays = { win = "1:1", win_with_6 = "lose" }\n'
        '[bets.ep]\nrule = "perfect_pair"\nside = "either"\n'
        'pays = { pair = "25:1", both = "200:1" }\nrounds = 30\n'
    )
    (tmp_path / "child.toml").write_text(
        'extends = "base.toml"\n[bets.tie]\nrule = "tie"\npays = { tie = 9 }\n'
    )
    base = paytables.load(str(tmp_path / "base.toml"))
    assert base.name == "base"
    assert base["banker"].pays == {"win": 1, "win_with_6": LOSE, "tie": LOSE}
    assert base["ep"].pays == {"pair": 25, "both": 200}
    child = paytables.load(str(tmp_path / "child.toml"))
    assert list(child.bets) == ["banker", "ep", "tie"] and child["tie"].pays["tie"] == 9


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("11:1", F(11)),
        ("0.95:1", F(19, 20)),
        ("1:2", F(1, 2)),
        ("7:2", F(7, 2)),
        (" 6 : 5 ", F(6, 5)),
        ("push", PUSH),
        ("Lose", LOSE),
    ],
)
def test_odds_are_read_exactly(text: str, value: F) -> None:
    assert parse_odds(text) == value


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("11", "is not odds"),
        ("a:b", "is not odds"),
        ("1:0", "is not odds"),
        ("0:1", "more than nothing"),
        ("-1:1", "more than nothing"),
        ("2:3", "not exact decimal"),
        ("inf:1", "is not odds"),
    ],
)
def test_bad_odds_are_refused(text: str, message: str) -> None:
    with pytest.raises(PaytableError, match=message):
        parse_odds(text)


BAD_TABLES = [
    ("x = 1\n", "unknown key"),
    ('[bets.b]\nrule = "roulette"\npays = { win = "1:1" }\n', "is not one of"),
    ('[bets.b]\nrule = "pair"\npays = { pair = "11:1" }\n', "needs side"),
    ('[bets.b]\nrule = "tie"\nside = "player"\npays = { tie = "8:1" }\n', "takes no side"),
    ('[bets.b]\nrule = "tie"\npays = { win = "8:1" }\n', "has no outcome win"),
    ('[bets.b]\nrule = "tie"\npays = { tie = 8.5 }\n', "as a string"),
    ('[bets.b]\nrule = "tie"\npays = { tie = "8:1" }\nrounds = 0\n', "rounds must"),
    ('[bets.b]\nrule = "tie"\n', "pays must be"),
    ('[bets.b]\nrule = "tie"\npays = { tie = "8:1" }\nodds = 3\n', "unknown key"),
    ('[bets.b]\nrule = "pair"\nside = "player"\npays = { both = "8:1" }\n', 'side = "either"'),
    ('name = "x"\n', "offers no bet"),
    ('extends = "traditional"\nwithout = ["dragon"]\n', "does not offer"),
    ('extends = "nowhere"\n', "no paytable 'nowhere'"),
    ("bets = 3\n", "must be a table"),
    ("[bets\n", "not valid TOML"),
]


@pytest.mark.parametrize(("text", "message"), BAD_TABLES)
def test_bad_paytables_say_what_is_wrong(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(PaytableError, match=message):
        paytables.load(str(path))


def test_an_extends_loop_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text('extends = "b.toml"\n')
    (tmp_path / "b.toml").write_text('extends = "a.toml"\n')
    with pytest.raises(PaytableError, match="loop"):
        paytables.load(str(tmp_path / "a.toml"))


def test_an_unknown_name_lists_the_shipped_tables() -> None:
    with pytest.raises(PaytableError, match="no_commission, traditional or the path"):
        paytables.load("european")
