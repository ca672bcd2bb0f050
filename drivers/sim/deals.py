"""The games as the simulated dealer deals them (games.md), in the dealer's own words.

The dealer keeps its own account of each game (hands, the first cards' order, default
decks, burn and cut policy) instead of reading `station.core.games`: a test that runs the
real `Table` over its stream then checks the table against an independent dealer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

CutPolicy = Literal["one_more", "last_round", "stop"]
CUT_POLICIES: tuple[CutPolicy, ...] = ("one_more", "last_round", "stop")
Burn = Literal["reveal", "none"]
BURNS: tuple[Burn, ...] = ("reveal", "none")


@dataclass(frozen=True)
class GameDeal:
    """How the dealer deals a game (games.md), in the dealer's own words."""

    name: str
    hands: tuple[str, ...]  # turn order: the ponte(s) first, the banker last
    first: tuple[tuple[str, str], ...]  # (role, hand) of the first cards, in deal order
    decks: int
    burn: Burn
    cut_policy: CutPolicy
    options: bool  # whether a hand may have an option (so decisions to record)


#: The games the dealer deals, keyed by name (punto banco first).
DEALS: dict[str, GameDeal] = {
    deal.name: deal
    for deal in (
        GameDeal(
            "punto_banco",
            ("player", "banker"),
            (("P1", "player"), ("B1", "banker"), ("P2", "player"), ("B2", "banker")),
            8,
            "reveal",
            "one_more",
            False,
        ),
        GameDeal(
            "chemin_de_fer",
            ("player", "banker"),
            (("P1", "player"), ("B1", "banker"), ("P2", "player"), ("B2", "banker")),
            6,
            "none",
            "stop",
            True,
        ),
        GameDeal(
            "baccarat_banque",
            ("tableau1", "tableau2", "banker"),
            (
                ("T1.1", "tableau1"),
                ("T2.1", "tableau2"),
                ("B.1", "banker"),
                ("T1.2", "tableau1"),
                ("T2.2", "tableau2"),
                ("B.2", "banker"),
            ),
            6,
            "none",
            "stop",
            True,
        ),
    )
}
GAME_NAMES = tuple(DEALS)


def deal_of(game: str) -> GameDeal:
    """The game named `game`; ValueError naming the games otherwise."""
    try:
        return DEALS[game]
    except KeyError:
        raise ValueError(f"unknown game {game!r} (games: {', '.join(GAME_NAMES)})") from None
