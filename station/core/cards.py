"""Playing cards: canonical codes, points and burn values.

A card is represented everywhere by its canonical code, a two-character string: rank
(`A 2-9 T J Q K`) then suit (`S H D C`), e.g. `AS`, `TD`, `KH`. Strings are hashable,
print well in journals and JSON, and need no conversion at the edges.
"""

from __future__ import annotations

RANKS = "A23456789TJQK"
SUITS = "SHDC"
ALL_CARDS: tuple[str, ...] = tuple(rank + suit for suit in SUITS for rank in RANKS)

#: Baccarat points: A = 1, 2..9 face value, T J Q K = 0.
POINTS: dict[str, int] = {c: min(RANKS.index(c[0]) + 1, 10) % 10 for c in ALL_CARDS}
#: Burn value of the first card of a shoe: A = 1, 2..9 face value, T J Q K = 10.
BURN_VALUE: dict[str, int] = {c: min(RANKS.index(c[0]) + 1, 10) for c in ALL_CARDS}


def _spellings() -> dict[str, str]:
    """Every exact spelling accepted without stripping: any letter case, `10` for `T`."""
    table: dict[str, str] = {}
    for code in ALL_CARDS:
        rank, suit = code[0], code[1]
        ranks = {rank, rank.lower()} | ({"10"} if rank == "T" else set())
        for r in ranks:
            for s in (suit, suit.lower()):
                table[r + s] = code
    return table


_SPELLINGS = _spellings()


def parse_card(text: object) -> str | None:
    """The canonical code of a card written as `AS`, `10h`, ` td `...; None if it is not one.

    Anything that is not a string naming a card (None, "", "??", a number) is unreadable:
    the caller decides what an unreadable card means, this never raises.
    """
    if type(text) is not str:
        return None
    code = _SPELLINGS.get(text)
    if code is None:
        code = _SPELLINGS.get(text.strip())
    return code


def points(card: str) -> int:
    """Baccarat points of a canonical card code."""
    return POINTS[card]


def hand_total(cards: list[str]) -> int:
    """A hand's total: the sum of its points, mod 10."""
    return sum(POINTS[c] for c in cards) % 10
