"""A shorthand for writing event sequences in tests.

`play(["shoe", "AS", "2S", "close", "9H", ...])` runs the events through a fresh Table
and returns the verdicts. Words: `shoe`, `cut`, `close` (close_bets), `void`, `end`
(end_shoe), `fault`, `restart`, `resume`, `resume:7H` (resume with a card read by eye),
`?` (an unreadable card); anything else is a card code.
"""

from __future__ import annotations

from typing import Any

from station.core.table import Table
from station.core.verdicts import Verdict

WORDS: dict[str, dict[str, Any]] = {
    "shoe": {"type": "shoe"},
    "cut": {"type": "cut"},
    "close": {"type": "close_bets"},
    "void": {"type": "void"},
    "end": {"type": "end_shoe"},
    "fault": {"type": "fault", "detail": "port lost"},
    "restart": {"type": "restart"},
    "resume": {"type": "resume"},
    "?": {"type": "card", "card": None},
}

#: A shoe start whose burn is over: reveal AS (burn one), burn 2S.
BURNED = ["shoe", "AS", "2S"]


def event(word: str) -> dict[str, Any]:
    if word in WORDS:
        return dict(WORDS[word])
    if word.startswith("resume:"):
        return {"type": "resume", "card": word.split(":", 1)[1]}
    return {"type": "card", "card": word}


def play(words: list[str], table: Table | None = None, **options: Any) -> list[Verdict]:
    table = table if table is not None else Table(**options)
    return [table.apply(event(w)) for w in words]


def card_of(points: int, suit: str = "S") -> str:
    """A card worth `points` (0 -> a ten)."""
    return ("T" if points == 0 else "A23456789"[points - 1]) + suit


def two_cards(total: int, suit: str) -> tuple[str, str]:
    """Two cards of one suit making a two-card `total`, without pairs where avoidable."""
    first = 0 if total != 0 else 5
    second = (total - first) % 10
    return card_of(first, suit) if first else "K" + suit, card_of(second, suit)


def errors(verdicts: list[Verdict]) -> list[str | None]:
    return [v["error"] for v in verdicts]


def roles(verdicts: list[Verdict]) -> list[str | None]:
    return [v["role"] for v in verdicts]
