"""The drawing rules of a baccarat variant, as data.

The third-card tableau is a table, not nested ifs: a variant (chemin de fer's options,
an EZ-baccarat house rule) is another `Tableau` value, and the state machine never changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

_STOOD = 10  # column index used for "the player stood" in the compiled banker matrix


@dataclass(frozen=True)
class Tableau:
    """When each side draws a third card.

    `banker_draws_on_p3` maps the banker's two-card total to the points of the player's
    third card on which the banker draws; a total that is absent never draws when the
    player drew.
    """

    name: str
    naturals: frozenset[int]
    player_draws_on: frozenset[int]
    banker_draws_if_player_stood: frozenset[int]
    banker_draws_on_p3: Mapping[int, frozenset[int]]
    _banker: tuple[tuple[bool, ...], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Compile to a 10 x 11 matrix (banker total x P3 points, column 10 = player stood)
        # so the hot path is two index operations.
        rows = tuple(
            (
                *(p3 in self.banker_draws_on_p3.get(bt, frozenset()) for p3 in range(10)),
                bt in self.banker_draws_if_player_stood,
            )
            for bt in range(10)
        )
        object.__setattr__(self, "_banker", rows)

    def is_natural(self, player_total: int, banker_total: int) -> bool:
        """A natural on either side ends the round on two cards each."""
        return player_total in self.naturals or banker_total in self.naturals

    def player_draws(self, player_total: int) -> bool:
        return player_total in self.player_draws_on

    def banker_draws(self, banker_total: int, p3_points: int | None) -> bool:
        """Whether the banker draws; `p3_points` is None when the player stood."""
        return self._banker[banker_total][_STOOD if p3_points is None else p3_points]


def _digits(spec: str) -> frozenset[int]:
    """`"0-7,9"` -> {0..7, 9}: the tableau written the way the rule cards print it."""
    values: set[int] = set()
    for part in filter(None, spec.split(",")):
        low, _, high = part.partition("-")
        values.update(range(int(low), int(high or low) + 1))
    return frozenset(values)


#: Punto Banco, the casino game: the only variant a dealer station enforces today.
PUNTO_BANCO = Tableau(
    name="punto_banco",
    naturals=_digits("8-9"),
    player_draws_on=_digits("0-5"),
    banker_draws_if_player_stood=_digits("0-5"),
    banker_draws_on_p3={
        0: _digits("0-9"),
        1: _digits("0-9"),
        2: _digits("0-9"),
        3: _digits("0-7,9"),
        4: _digits("2-7"),
        5: _digits("4-7"),
        6: _digits("6-7"),
        7: _digits(""),
    },
)

TABLEAUX: dict[str, Tableau] = {PUNTO_BANCO.name: PUNTO_BANCO}
