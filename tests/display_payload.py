"""The allow-list of the table display's payload (issue 26): every key a payload may have,
and what its value may be. Written here, apart from the code that builds the payload
(`station.core.display`, `station.api.display`), so that a field added there fails the
tests until someone decides a player may see it.

What may reach the screen: the table's name and game, the display's settings (language,
number format, limits), the status in a player's words, the shoe's number, the last
result, the roads as drawn and the counts. Never the cards (dealt or left), odds or edge,
journal rows or seqs, error codes, names of people or tokens.
"""

from __future__ import annotations

from typing import Any

from station.core.display import STATUSES
from station.live.display_config import BETS, LANGUAGES


class Optional:
    """A value that may also be null."""

    def __init__(self, spec: Any) -> None:
        self.spec = spec


class Text:
    """A string of at most `longest` characters (the table's name, a label, a locale)."""

    def __init__(self, longest: int) -> None:
        self.longest = longest


class Each:
    """A list whose every item is `spec`."""

    def __init__(self, spec: Any) -> None:
        self.spec = spec


SIDES = frozenset({"banker", "player", "tie"})
COLOURS = frozenset({"red", "blue"})
OUTCOMES = frozenset({"win", "lose", "tie"})
DERIVED = ("big_eye_boy", "small_road", "cockroach_pig")

SETTINGS = {
    "table": Text(40),
    "language": frozenset(LANGUAGES),
    "locale": Text(35),
    "currency": Text(3),
    "announce": float,
    "limits": Each({"bet": Text(40), "label": Text(24), "min": int, "max": int}),
}
BEAD = {
    "x": int,
    "y": int,
    "round": int,
    "winner": SIDES,
    "player_total": int,
    "banker_total": int,
    "player_pair": bool,
    "banker_pair": bool,
    "natural": bool,
}
PUNTO = {
    **SETTINGS,
    "game": frozenset({"punto_banco", "chemin_de_fer"}),
    "shoe": int,
    "status": frozenset(STATUSES),
    "last": Optional(
        {
            "round": int,
            "winner": SIDES,
            "player_total": int,
            "banker_total": int,
            "player_pair": bool,
            "banker_pair": bool,
            "natural": bool,
        }
    ),
    "roads": {
        "rows": int,
        "bead_plate": Each(BEAD),
        "big_road": Each(
            {
                "x": int,
                "y": int,
                "round": int,
                "winner": frozenset({"banker", "player"}),
                "ties": int,
                "player_pair": bool,
                "banker_pair": bool,
            }
        ),
        "leading_ties": int,
        **{name: Each({"x": int, "y": int, "colour": COLOURS}) for name in DERIVED},
        "predictions": {
            side: {name: Optional(COLOURS) for name in DERIVED} for side in ("banker", "player")
        },
    },
    "counts": {
        "rounds": int,
        "voided": int,
        "banker": int,
        "player": int,
        "tie": int,
        "player_pair": int,
        "banker_pair": int,
        "natural": int,
    },
}
TABLEAU_BEAD = {
    "x": int,
    "y": int,
    "round": int,
    "outcome": OUTCOMES,
    "total": int,
    "banker_total": int,
    "natural": bool,
}
BANQUE = {
    **SETTINGS,
    "game": frozenset({"baccarat_banque"}),
    "shoe": int,
    "status": frozenset(STATUSES),
    "last": Optional(
        {
            "round": int,
            "tableau1_outcome": OUTCOMES,
            "tableau2_outcome": OUTCOMES,
            "tableau1_total": int,
            "tableau2_total": int,
            "banker_total": int,
            "bank": frozenset({"win", "lose", "even"}),
            "naturals": Each(frozenset({"tableau1", "tableau2", "banker"})),
        }
    ),
    "roads": {
        "rows": int,
        "tableau1": {"bead_plate": Each(TABLEAU_BEAD)},
        "tableau2": {"bead_plate": Each(TABLEAU_BEAD)},
        "bank": Each(
            {
                "x": int,
                "y": int,
                "round": int,
                "outcome": frozenset({"win", "lose", "even"}),
                "total": int,
                "natural": bool,
            }
        ),
    },
    "counts": {
        "rounds": int,
        "voided": int,
        "banker_natural": int,
        **{
            t: {"win": int, "lose": int, "tie": int, "natural": int}
            for t in ("tableau1", "tableau2")
        },
        "bank": {"win": int, "lose": int, "even": int},
    },
}
#: What the display's socket sends: a payload, or a sign of life.
MESSAGES = ("display", "alive")


def check_payload(payload: Any) -> None:
    """AssertionError naming the first key or value outside the allow-list."""
    assert isinstance(payload, dict), payload
    spec = BANQUE if payload.get("game") == "baccarat_banque" else PUNTO
    check(payload, spec, "payload")
    for limit in payload["limits"]:
        assert limit["bet"] in BETS or limit["label"], limit


def check_message(message: Any) -> None:
    """A socket message: `{"type": "display", "alive": SECONDS, "display": PAYLOAD}` or
    `{"type": "alive"}`."""
    assert isinstance(message, dict) and message.get("type") in MESSAGES, message
    if message["type"] == "alive":
        assert message == {"type": "alive"}
        return
    assert set(message) == {"type", "alive", "display"}, sorted(message)
    check(message["alive"], float, "alive")
    check_payload(message["display"])


def check(value: Any, spec: Any, where: str) -> None:
    if isinstance(spec, Optional):
        if value is not None:
            check(value, spec.spec, where)
    elif isinstance(spec, dict):
        assert isinstance(value, dict), f"{where}: not an object: {value!r}"
        assert set(value) == set(spec), (
            f"{where}: keys outside the allow-list {sorted(set(value) - set(spec))}, "
            f"missing {sorted(set(spec) - set(value))}"
        )
        for key, inner in spec.items():
            check(value[key], inner, f"{where}.{key}")
    elif isinstance(spec, Each):
        assert isinstance(value, list), f"{where}: not a list: {value!r}"
        for i, item in enumerate(value):
            check(item, spec.spec, f"{where}[{i}]")
    elif isinstance(spec, frozenset):
        assert value in spec, f"{where}: {value!r} is not one of {sorted(spec)}"
    elif isinstance(spec, Text):
        assert isinstance(value, str) and len(value) <= spec.longest, f"{where}: {value!r}"
    elif spec is float:
        assert isinstance(value, int | float) and not isinstance(value, bool), f"{where}: {value!r}"
    else:
        assert type(value) is spec, f"{where}: {value!r} is not {spec.__name__}"
