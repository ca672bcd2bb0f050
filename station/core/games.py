"""The games a table can play (punto banco, chemin de fer, baccarat banque), as data.

A `Game` says which hands a round has, in what order their cards are dealt, the table
settings it defaults to, and when each hand draws, as three tables printed the way the
rule cards print them (shared/spec/games.md):

- the **ponte rule**: a ponte hand's two-card total (0-9) -> a verdict;
- the **banker cells**: the banker's two-card total (row 0-9) x the points of one ponte
  hand's third card (columns 0-9) or `S` when that hand stood (column 10) -> a verdict;
- the **combination**: the two cells of the banker against two live tableaux -> a verdict.

A verdict is `M` (must draw), `F` (must stand) or `O` (option: the hand decides, the
dealer records it with a `decision` event). The table's state machine
(`station.core.table`) walks the turns of a round (`station.core.turns`) and asks its
game; it holds no rule of its own, so a variant is another `Game` value.

Punto banco's ponte rule and banker cells are compiled from its third-card tableau
(`station.core.rules.PUNTO_BANCO`): every cell is M or F, so a punto banco table never
waits for a decision.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from station.core.rules import PUNTO_BANCO as PUNTO_BANCO_TABLEAU
from station.core.rules import Tableau

Verdict = Literal["M", "F", "O"]
Burn = Literal["reveal", "none"]
CutPolicy = Literal["one_more", "last_round", "stop"]

#: `reveal`: the burn of dealing-rules.md (a burn reveal, then its burn value in burns);
#: `none`: rounds start at once.
BURNS: tuple[Burn, ...] = ("reveal", "none")
#: When the cut card comes out: `one_more` round after the one being dealt, that round is
#: the `last_round`, or `stop` (the round in progress is the last; none: the shoe ends).
CUT_POLICIES: tuple[CutPolicy, ...] = ("one_more", "last_round", "stop")

#: Column of the banker cells for a ponte hand that stood (`S`).
STOOD = 10

MUST_DRAW: Verdict = "M"
MUST_STAND: Verdict = "F"
OPTION: Verdict = "O"


@dataclass(frozen=True)
class Game:
    """One game: its hands, its deal, its default settings and its drawing rules.

    `hands` are in deal and turn order, the banker last (every game has one banker and
    one or two ponte hands). `deal` gives each first card's role and the index of its
    hand; `thirds` the role of each hand's third card.
    """

    name: str
    #: The words for the game ("chemin de fer").
    title: str
    hands: tuple[str, ...]
    #: The roles of a round's first cards, in deal order, with the index of their hand.
    deal: tuple[tuple[str, int], ...]
    #: The role of each hand's third card (same order as `hands`).
    thirds: tuple[str, ...]
    decks: int
    burn: Burn
    cut_policy: CutPolicy
    #: A ponte hand's two-card total (index) -> its verdict.
    ponte: str
    #: The banker's two-card total (row) x the ponte hand's third card (0-9, or STOOD).
    banker: tuple[str, ...]
    #: The banker's two cells against two live tableaux -> its verdict.
    combination: Mapping[tuple[str, str], str]
    #: What people call each hand ("tableau 1").
    hand_words: Mapping[str, str]
    #: What people call each role ("tableau 1 third card").
    role_words: Mapping[str, str]

    def __post_init__(self) -> None:
        if self.hands[-1] != "banker" or len(self.hands) not in (2, 3):
            raise ValueError(f"{self.name}: the hands are one or two pontes, then the banker")
        if len(self.ponte) != 10 or set(self.ponte) - {"M", "F", "O"}:
            raise ValueError(f"{self.name}: the ponte rule needs 10 verdicts M, F or O")
        if self.ponte[8:] != "FF":  # a tableau settled by its natural passes its turn
            raise ValueError(f"{self.name}: a natural (8, 9) must stand (F)")
        if len(self.banker) != 10 or any(len(row) != 11 for row in self.banker):
            raise ValueError(f"{self.name}: the banker cells are 10 rows of 11 verdicts")
        if any(set(row) - {"M", "F", "O"} for row in self.banker):
            raise ValueError(f"{self.name}: a banker cell is M, F or O")
        if len(self.thirds) != len(self.hands):
            raise ValueError(f"{self.name}: one third-card role per hand")

    @property
    def banker_index(self) -> int:
        """The banker's index in `hands` (the last)."""
        return len(self.hands) - 1

    @property
    def roles(self) -> tuple[str, ...]:
        """Every role of a round, in deal order (the first cards, then the third cards)."""
        return (*(role for role, _ in self.deal), *self.thirds)

    def ponte_verdict(self, total: int) -> str:
        """The ponte rule on a ponte hand's two-card total."""
        return self.ponte[total]

    def banker_cell(self, banker_total: int, third: int | None) -> str:
        """The banker's cell against one ponte hand: `third` is the points of its third
        card, None when it stood."""
        return self.banker[banker_total][STOOD if third is None else third]

    def combine(self, cells: list[str]) -> str:
        """The banker's verdict against the cells of the live ponte hands (one or two)."""
        verdict = cells[0]
        for cell in cells[1:]:
            verdict = self.combination[verdict, cell]
        return verdict


def _combination() -> Mapping[tuple[str, str], str]:
    """Drawing is allowed unless a cell says F, standing unless a cell says M: both allowed
    is O, only one is that one, neither (M against F) is O, the banker's choice."""
    table = {
        ("M", "M"): "M",
        ("M", "O"): "M",
        ("M", "F"): "O",
        ("O", "M"): "M",
        ("O", "O"): "O",
        ("O", "F"): "F",
        ("F", "M"): "O",
        ("F", "O"): "F",
        ("F", "F"): "F",
    }
    return MappingProxyType(table)


COMBINATION = _combination()

#: The cercle games' ponte rule: 0-4 must draw, 5 option, 6-7 must stand (8-9 are
#: naturals, never asked).
CERCLE_PONTE = "MMMMMOFFFF"

#: The cercle games' banker cells, as the spec prints them (rows 8 and 9 are naturals,
#: never asked). Columns: the ponte's third card 0..9, then S (it stood).
CERCLE_BANKER: tuple[str, ...] = (
    # 0123456789S
    "MMMMMMMMMMM",  # 0
    "MMMMMMMMMMM",  # 1
    "MMMMMMMMMMM",  # 2
    "MMMMMMMMFOM",  # 3
    "FFMMMMMMFFM",  # 4
    "FFFFOMMMFFM",  # 5
    "FFFFFFMMFFF",  # 6
    "FFFFFFFFFFF",  # 7
    "FFFFFFFFFFF",  # 8 (a natural)
    "FFFFFFFFFFF",  # 9 (a natural)
)  # fmt: skip


def _ponte_of(tableau: Tableau) -> str:
    return "".join("M" if tableau.player_draws(t) else "F" for t in range(10))


def _banker_of(tableau: Tableau) -> tuple[str, ...]:
    return tuple(
        "".join(
            "M" if tableau.banker_draws(bt, None if col == STOOD else col) else "F"
            for col in range(11)
        )
        for bt in range(10)
    )


_PB_ROLE_WORDS = {
    "P1": "player first card",
    "B1": "banker first card",
    "P2": "player second card",
    "B2": "banker second card",
    "P3": "player third card",
    "B3": "banker third card",
}
_TWO_HANDS = (("P1", 0), ("B1", 1), ("P2", 0), ("B2", 1))

PUNTO_BANCO = Game(
    name="punto_banco",
    title="punto banco",
    hands=("player", "banker"),
    deal=_TWO_HANDS,
    thirds=("P3", "B3"),
    decks=8,
    burn="reveal",
    cut_policy="one_more",
    ponte=_ponte_of(PUNTO_BANCO_TABLEAU),
    banker=_banker_of(PUNTO_BANCO_TABLEAU),
    combination=COMBINATION,
    hand_words=MappingProxyType({"player": "player", "banker": "banker"}),
    role_words=MappingProxyType(_PB_ROLE_WORDS),
)

CHEMIN_DE_FER = Game(
    name="chemin_de_fer",
    title="chemin de fer",
    hands=("player", "banker"),
    deal=_TWO_HANDS,
    thirds=("P3", "B3"),
    decks=6,
    burn="none",
    cut_policy="stop",
    ponte=CERCLE_PONTE,
    banker=CERCLE_BANKER,
    combination=COMBINATION,
    hand_words=MappingProxyType({"player": "the ponte", "banker": "banker"}),
    role_words=MappingProxyType(_PB_ROLE_WORDS),
)

BACCARAT_BANQUE = Game(
    name="baccarat_banque",
    title="baccarat banque",
    hands=("tableau1", "tableau2", "banker"),
    deal=(("T1.1", 0), ("T2.1", 1), ("B.1", 2), ("T1.2", 0), ("T2.2", 1), ("B.2", 2)),
    thirds=("T1.3", "T2.3", "B.3"),
    decks=6,
    burn="none",
    cut_policy="stop",
    ponte=CERCLE_PONTE,
    banker=CERCLE_BANKER,
    combination=COMBINATION,
    hand_words=MappingProxyType(
        {"tableau1": "tableau 1", "tableau2": "tableau 2", "banker": "banker"}
    ),
    role_words=MappingProxyType(
        {
            "T1.1": "tableau 1 first card",
            "T2.1": "tableau 2 first card",
            "B.1": "banker first card",
            "T1.2": "tableau 1 second card",
            "T2.2": "tableau 2 second card",
            "B.2": "banker second card",
            "T1.3": "tableau 1 third card",
            "T2.3": "tableau 2 third card",
            "B.3": "banker third card",
        }
    ),
)

#: Every game by name.
GAMES: Mapping[str, Game] = MappingProxyType(
    {g.name: g for g in (PUNTO_BANCO, CHEMIN_DE_FER, BACCARAT_BANQUE)}
)
#: The game names, punto banco (the default) first.
GAME_NAMES: tuple[str, ...] = tuple(GAMES)
#: Every hand name of every game (what a `decision`'s `hand` may name at some table).
HAND_NAMES: tuple[str, ...] = tuple(dict.fromkeys(h for g in GAMES.values() for h in g.hands))


def game_named(game: str | Game) -> Game:
    """The game called `game` (or `game` itself); ValueError naming the choices."""
    if isinstance(game, Game):
        return game
    found = GAMES.get(game) if isinstance(game, str) else None
    if found is None:
        raise ValueError(f"game must be one of {', '.join(GAME_NAMES)}, got {game!r}")
    return found


#: What a table recorded before the cercle games played (its settings say no game, burn).
BEFORE_GAMES: Mapping[str, str] = MappingProxyType({"game": "punto_banco", "burn": "reveal"})


def settings_of(recorded: Mapping[str, Any]) -> dict[str, Any]:
    """A table's recorded settings (a journal's first row, a stream's `journal.table`); one
    older than the cercle games gets punto banco's game and burn. Here in the core, so
    `station replay` reads a stream's table without loading the journal's store."""
    return {**BEFORE_GAMES, **recorded}


#: The shipped paytable of each game: what a table pays when `[table] paytable` is left out.
GAME_PAYTABLES: dict[str, str] = {
    "punto_banco": "traditional",
    "chemin_de_fer": "chemin_de_fer",
    "baccarat_banque": "baccarat_banque",
}


def game_defaults(name: str) -> dict[str, int | str]:
    """What `[table]` takes from the game `name` for each of its game keys left out: its
    decks, burn, cut policy and shipped paytable (KeyError for no such game). Here beside the
    games, not in the station's config nor the paytables (tomllib, decimal), so a command
    fills its options without importing either."""
    game = GAMES[name]
    return {
        "decks": game.decks,
        "burn": game.burn,
        "cut_policy": game.cut_policy,
        "paytable": GAME_PAYTABLES[name],
    }
