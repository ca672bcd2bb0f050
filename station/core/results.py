"""The result of a completed round: everything settlement and the scoreboards need.

A result is a plain JSON-ready dict (typed as `RoundResult`, or `BanqueResult` for
baccarat banque) because it travels as is into replay output, the journal, the API and
webhooks.
"""

from __future__ import annotations

from typing import Literal, TypedDict

from station.core.cards import POINTS

Winner = Literal["player", "banker", "tie"]


class RoundResult(TypedDict):
    round: int
    player: list[str]
    banker: list[str]
    player_total: int
    banker_total: int
    winner: Winner
    player_natural: bool
    banker_natural: bool
    player_pair: bool
    banker_pair: bool
    player_perfect_pair: bool
    banker_perfect_pair: bool
    player_cards: int
    banker_cards: int
    margin: int
    banker_wins_with_6: bool
    player_wins_with_7: bool


def round_result(number: int, player: list[str], banker: list[str]) -> RoundResult:
    """Score a completed round. `player` and `banker` are the hands in dealing order."""
    p1, p2 = player[0], player[1]
    b1, b2 = banker[0], banker[1]
    player_two = (POINTS[p1] + POINTS[p2]) % 10
    banker_two = (POINTS[b1] + POINTS[b2]) % 10
    pt = (player_two + (POINTS[player[2]] if len(player) > 2 else 0)) % 10
    bt = (banker_two + (POINTS[banker[2]] if len(banker) > 2 else 0)) % 10
    winner: Winner = "player" if pt > bt else "banker" if bt > pt else "tie"
    return {
        "round": number,
        "player": list(player),
        "banker": list(banker),
        "player_total": pt,
        "banker_total": bt,
        "winner": winner,
        "player_natural": len(player) == 2 and player_two >= 8,
        "banker_natural": len(banker) == 2 and banker_two >= 8,
        "player_pair": p1[0] == p2[0],
        "banker_pair": b1[0] == b2[0],
        "player_perfect_pair": p1 == p2,
        "banker_perfect_pair": b1 == b2,
        "player_cards": len(player),
        "banker_cards": len(banker),
        "margin": abs(pt - bt),
        "banker_wins_with_6": winner == "banker" and bt == 6,
        "player_wins_with_7": winner == "player" and pt == 7,
    }


Outcome = Literal["win", "lose", "tie"]


class BanqueResult(TypedDict):
    """A completed round of baccarat banque: each tableau against the banker."""

    round: int
    tableau1: list[str]
    tableau2: list[str]
    banker: list[str]
    tableau1_total: int
    tableau2_total: int
    banker_total: int
    tableau1_outcome: Outcome
    tableau2_outcome: Outcome
    #: The hands with a natural (8 or 9 on two cards), in deal order.
    naturals: list[str]


#: The result of a round of any game (chemin de fer's has punto banco's shape).
GameResult = RoundResult | BanqueResult


def _total(cards: list[str]) -> int:
    return sum(POINTS[c] for c in cards) % 10


def _natural(cards: list[str]) -> bool:
    return (POINTS[cards[0]] + POINTS[cards[1]]) % 10 >= 8


def banque_result(
    number: int, tableau1: list[str], tableau2: list[str], banker: list[str]
) -> BanqueResult:
    """Score a completed round of baccarat banque. A tableau with a natural wins unless the
    banker has one too (then the totals decide); it is never compared with a third banker
    card. Otherwise the higher total wins."""
    banker_natural = _natural(banker)
    bt = _total(banker)

    def outcome(cards: list[str]) -> Outcome:
        total = _total(cards)
        if _natural(cards) and not banker_natural:
            return "win"
        return "win" if total > bt else "lose" if total < bt else "tie"

    hands = {"tableau1": tableau1, "tableau2": tableau2, "banker": banker}
    return {
        "round": number,
        "tableau1": list(tableau1),
        "tableau2": list(tableau2),
        "banker": list(banker),
        "tableau1_total": _total(tableau1),
        "tableau2_total": _total(tableau2),
        "banker_total": bt,
        "tableau1_outcome": outcome(tableau1),
        "tableau2_outcome": outcome(tableau2),
        "naturals": [name for name, cards in hands.items() if _natural(cards)],
    }
