"""The cercle games' drawing rules, cell by cell, through the real state machine.

The expected verdicts are written out here from the tables as shared/spec/games.md prints
them, independently of station.core.games: the ponte rule, all 110 cells of the banker
table (banker totals 0-9 x the ponte's third card 0-9 or S; rows 8 and 9 are naturals,
which end the round before any turn), and the banker against two live tableaux.
"""

from __future__ import annotations

import itertools

import pytest

from station.core.games import BACCARAT_BANQUE, CHEMIN_DE_FER, GAMES, PUNTO_BANCO
from station.core.table import Table
from station.core.verdicts import Verdict
from tests.tablekit import card_of, two_cards

# games.md, "Draw verdicts": the ponte rule on a two-card total (8, 9: naturals).
PONTE = {0: "M", 1: "M", 2: "M", 3: "M", 4: "M", 5: "O", 6: "F", 7: "F"}

# games.md's banker table, row by row as printed (columns 0..9 then S).
PRINTED = {
    "0-2": "M M M M M M M M M M M",
    "3": "M M M M M M M M F O M",
    "4": "F F M M M M M M F F M",
    "5": "F F F F O M M M F F M",
    "6": "F F F F F F M M F F F",
    "7": "F F F F F F F F F F F",
}
COLUMNS: list[int | None] = [*range(10), None]  # None: S, the ponte stood


def printed_cell(banker_total: int, column: int | None) -> str:
    """The spec's cell; "natural" for banker totals 8 and 9 (no turn is ever asked)."""
    if banker_total >= 8:
        return "natural"
    row = "0-2" if banker_total <= 2 else str(banker_total)
    return PRINTED[row].split()[10 if column is None else column]


def run(table: Table, cards: list[str]) -> list[Verdict]:
    return [table.apply({"type": "card", "card": c}) for c in cards]


def opened(game: str) -> Table:
    table = Table(game=game)
    assert table.apply({"type": "shoe"})["ok"] and table.apply({"type": "close_bets"})["ok"]
    return table


def ponte_hand(column: int | None, suit: str) -> list[str]:
    """Two cards and a third worth `column` (total 3: must draw), or total 6 (stands)."""
    if column is None:
        return list(two_cards(6, suit))
    return [*two_cards(3, suit), card_of(column, "C")]


def banker_verdict(table: Table, last: Verdict) -> str:
    """What the banker's turn says, read off the table after the ponte hands' turns."""
    if last["result"] is not None:
        return "F"  # the round is complete: the banker stood
    due = table.due()
    assert due in ("B3", "B.3", "decision"), due
    return "O" if due == "decision" else "M"


@pytest.mark.parametrize("banker_total", range(10))
@pytest.mark.parametrize("column", COLUMNS, ids=lambda c: "S" if c is None else str(c))
def test_every_cell_of_the_banker_table_in_chemin_de_fer(
    banker_total: int, column: int | None
) -> None:
    expected = printed_cell(banker_total, column)
    table = opened("chemin_de_fer")
    ponte = ponte_hand(column, "H")
    b1, b2 = two_cards(banker_total, "D")
    deal = run(table, [ponte[0], b1, ponte[1], b2])
    assert [v["role"] for v in deal] == ["P1", "B1", "P2", "B2"]
    if expected == "natural":
        assert deal[-1]["result"] is not None and table.round is None
        return
    last = run(table, ponte[2:])[-1] if len(ponte) > 2 else deal[-1]
    assert banker_verdict(table, last) == expected
    if expected == "O":
        assert table.option() is not None and table.option()["hand"] == "banker"  # type: ignore[index]


def test_the_game_values_hold_the_printed_tables() -> None:
    """The Game values themselves (what the dashboard and the simulator may read)."""
    for game in (CHEMIN_DE_FER, BACCARAT_BANQUE):
        assert [game.ponte_verdict(t) for t in range(8)] == [PONTE[t] for t in range(8)]
        assert game.ponte_verdict(8) == game.ponte_verdict(9) == "F"  # naturals stand
        for total, column in itertools.product(range(8), COLUMNS):
            assert game.banker_cell(total, column) == printed_cell(total, column)
    assert list(GAMES) == ["punto_banco", "chemin_de_fer", "baccarat_banque"]
    # Punto banco as data: every verdict M or F (no decision is ever waited for).
    assert set(PUNTO_BANCO.ponte) <= {"M", "F"}
    assert all(set(row) <= {"M", "F"} for row in PUNTO_BANCO.banker)


@pytest.mark.parametrize("game", ["chemin_de_fer", "baccarat_banque"])
@pytest.mark.parametrize("total", range(10))
def test_the_ponte_rule(game: str, total: int) -> None:
    """The first hand's two-card total against a banker 7 (which never draws)."""
    table = opened(game)
    first = two_cards(total, "H")
    banker = two_cards(7, "D")
    cards = (
        [first[0], banker[0], first[1], banker[1]]
        if game == "chemin_de_fer"
        else [first[0], "6S", banker[0], first[1], "KS", banker[1]]  # tableau 2: 6, stands
    )
    last = run(table, cards)[-1]
    hand = "player" if game == "chemin_de_fer" else "tableau1"
    if total >= 8:  # a natural: the round ends (chemin de fer) or the tableau is settled
        assert last["result"] is not None
        return
    expected = PONTE[total]
    got = {"P3": "M", "T1.3": "M", "decision": "O"}.get(str(table.due()), "F")
    if got == "F":
        assert last["result"] is not None  # it stood, and so did everyone after it
    assert got == expected
    if expected == "O":
        assert table.option() == {
            "hand": hand,
            "total": total,
            "words": f"{'the ponte' if hand == 'player' else 'tableau 1'}: "
            f"option on {total}, draw or stand?",
            "against": [],
        }


def combined(first: str, second: str) -> str:
    """games.md: drawing is allowed unless a cell says F, standing unless a cell says M;
    both allowed: O; only one: that one; neither (M against F): O."""
    may_draw = "F" not in (first, second)
    may_stand = "M" not in (first, second)
    if may_draw and may_stand:
        return "O"
    if may_draw:
        return "M"
    return "F" if may_stand else "O"


@pytest.mark.parametrize("banker_total", range(8))
def test_the_banker_against_two_live_tableaux(banker_total: int) -> None:
    """Every pair of columns (121) for each banker total: the banker's turn combines the
    two cells as the spec says."""
    for c1, c2 in itertools.product(COLUMNS, COLUMNS):
        table = opened("baccarat_banque")
        t1, t2 = ponte_hand(c1, "H"), ponte_hand(c2, "S")
        b1, b2 = two_cards(banker_total, "D")
        verdicts = run(table, [t1[0], t2[0], b1, t1[1], t2[1], b2, *t1[2:], *t2[2:]])
        assert all(v["ok"] for v in verdicts), verdicts
        expected = combined(printed_cell(banker_total, c1), printed_cell(banker_total, c2))
        assert banker_verdict(table, verdicts[-1]) == expected, (c1, c2)


@pytest.mark.parametrize("banker_total", range(8))
@pytest.mark.parametrize("settled", ["tableau1", "tableau2"])
def test_the_banker_against_one_live_tableau_reads_its_cell(
    banker_total: int, settled: str
) -> None:
    for column in COLUMNS:
        table = opened("baccarat_banque")
        live = ponte_hand(column, "H")
        natural = ["9S", "KS"]
        t1, t2 = (natural, live) if settled == "tableau1" else (live, natural)
        b1, b2 = two_cards(banker_total, "D")
        verdicts = run(table, [t1[0], t2[0], b1, t1[1], t2[1], b2, *live[2:]])
        expected = printed_cell(banker_total, column)
        assert banker_verdict(table, verdicts[-1]) == expected, column
        if verdicts[-1]["result"] is not None:
            assert verdicts[-1]["result"][f"{settled}_outcome"] == "win"  # type: ignore[literal-required]
