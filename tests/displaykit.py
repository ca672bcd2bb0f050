"""The table display's test kit: a station with a display token and `[display]` settings,
a simulated shoe of any game dealt through its API a round at a time, and the display's
data as the page gets it (the display's service and browser tests, its screenshots and
its benchmark)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from drivers.sim.stream import simulate
from station.core.events import EVENT_ROLES
from station.live.config import StationConfig, TableConfig
from station.live.display_config import BetLimit, DisplayConfig
from station.shared.catalogue import LANGUAGES, catalogue
from station.shared.config import TokenEntry
from station.shared.tokens import new_token, token_hash
from tests.service.kit import Running, make_config

WEB = Path(__file__).resolve().parent.parent / "station" / "web"


def words() -> dict[str, dict[str, str]]:
    """The screens' catalogues (`station/web/i18n/<lang>.js`), by language."""
    return {language: catalogue(language) for language in LANGUAGES}


#: What a casino prints, by game (the screenshots' and the tests' limits).
LIMITS = {
    "punto_banco": (
        BetLimit(bet="banker", min=100, max=50_000),
        BetLimit(bet="player", min=100, max=50_000),
        BetLimit(bet="tie", min=10, max=5_000),
        BetLimit(bet="banker_pair", min=10, max=2_500),
        BetLimit(bet="player_pair", min=10, max=2_500),
    ),
    "chemin_de_fer": (
        BetLimit(bet="banker", min=500, max=100_000),
        BetLimit(bet="player", min=500, max=100_000),
    ),
    "baccarat_banque": (
        BetLimit(bet="tableau1", min=200, max=50_000),
        BetLimit(bet="tableau2", min=200, max=50_000),
        BetLimit(bet="a_cheval", min=200, max=25_000),
    ),
}


def display_config(
    tmp: Path, game: str = "punto_banco", **display: Any
) -> tuple[StationConfig, dict[str, str]]:
    """A station of `game` (rig tokens allowed: the test deals) with a token per role,
    `display` included, and `[display]` as given (default: the game's limits in EUR)."""
    config, tokens = make_config(tmp, allow_rig=True)
    tokens["display"] = new_token()
    entry = TokenEntry(name="test-display", role="display", sha256=token_hash(tokens["display"]))
    settings = {"name": "Table 7", "currency": "EUR", "limits": LIMITS[game], **display}
    config = config.model_copy(
        update={
            "table": TableConfig(id="t-test", game=game),
            "api": config.api.model_copy(update={"tokens": (*config.api.tokens, entry)}),
            "display": DisplayConfig(**settings),
        }
    )
    return config, tokens


def shoe_events(game: str, seed: int, decks: int | None = None) -> Iterator[dict[str, Any]]:
    """The events of one shoe of `game` as the API takes them (what only the simulator
    says, its actor and fault, left out), each with the error it should get (`expect`)."""
    for event in simulate(seed, decks=decks, game=game):
        clean = {k: v for k, v in event.items() if k not in ("actor", "expect", "fault")}
        yield {**clean, "expect": event.get("expect")}


def deal(live: Running, events: Iterator[dict[str, Any]], rounds: int) -> int:
    """Send `events` until `rounds` more rounds are complete or the events run out (the
    shoe is over), each with the least role that may send it, on one connection; returns
    the rounds completed."""
    done = 0
    with httpx.Client(base_url=live.url) as client:
        for event in events:
            expect = event.pop("expect")
            role = EVENT_ROLES[event["type"]]
            verdict = client.post("/api/events", json=event, headers=live.headers(role)).json()
            assert verdict["error"] == expect, (event, verdict)
            done += verdict["result"] is not None
            if done == rounds:
                break
    return done


def display_data(live: Running, role: str | None = "display") -> dict[str, Any]:
    """GET /api/display with a token of `role` (None: no token)."""
    headers = live.headers(role) if role else {}
    answer = httpx.get(f"{live.url}/api/display", headers=headers)
    assert answer.status_code == 200, answer.text
    data: dict[str, Any] = answer.json()
    return data


def history(live: Running) -> dict[str, Any]:
    """GET /api/history as a viewer (what the display's marks must match)."""
    answer = httpx.get(f"{live.url}/api/history", headers=live.headers("viewer"))
    assert answer.status_code == 200, answer.text
    data: dict[str, Any] = answer.json()
    return data
