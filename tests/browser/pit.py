"""What the browser tests do at the table: log in, confirm, and deal through the rig."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from playwright.sync_api import Locator, Page, expect

from drivers.sim.stream import simulate
from station.api import create_app
from station.core.events import EVENT_ROLES
from station.live.config import StationConfig
from station.live.service import Station
from station.shared.tokens import TokenStore
from tests.service.kit import Running

# The burn reveal 2H burns two cards; then round 1: player 9S KH = 9 (natural), banker
# 2D 5C = 7: the player wins 9 to 7.
BURN = ["2H", "KS", "QD"]
ROUND_1 = [("9S", "player"), ("2D", "banker"), ("KH", "player"), ("5C", "banker")]


def login(page: Page, live: Running, role: str) -> None:
    page.goto(f"{live.url}/")
    page.fill("#token", live.tokens[role])
    page.click("#login button[type=submit]")
    expect(page.locator("#who-name")).to_have_text(f"test-{role} ({role})")
    expect(page.locator("#conn")).to_have_text("Live")


def confirm(page: Page, button: Locator, ok: bool = True, words: str | None = None) -> None:
    """Click an action button and answer the confirmation dialog."""
    button.click()
    dialog = page.locator("#confirm")
    expect(dialog).to_be_visible()
    if words is not None:
        expect(page.locator("#confirm-text")).to_contain_text(words)
    page.click("#confirm-ok" if ok else "#confirm-cancel")
    expect(dialog).to_be_hidden()


def action(page: Page, event: str, where: str = "#table-actions") -> Locator:
    """The plain button of `event` (not the resume with a card or with a decision)."""
    plain = ":not([data-with-card]):not([data-with-decision])"
    return page.locator(f"{where} button.act[data-event={event}]{plain}")


def send(live: Running, event: dict[str, Any]) -> dict[str, Any]:
    """Post an event with the least role that may send it (as the pit would)."""
    role = EVENT_ROLES[event["type"]]
    answer: dict[str, Any] = live.post(event, role).json()
    return answer


def start_round(live: Running) -> None:
    """A shoe, its burn, and betting closed for round 1."""
    assert send(live, {"type": "shoe"})["ok"]
    for card in BURN:
        assert send(live, {"type": "card", "card": card})["ok"]
    assert send(live, {"type": "close_bets"})["round"] == 1


def deal_rounds(live: Running, seed: int, rounds: int, faults: dict[str, float]) -> None:
    """Deal a simulated shoe through the API until `rounds` rounds are complete (the shoe
    stays in play); every suspension it makes is resolved by its own supervisor."""
    done = 0
    for event in simulate(seed, decks=live.station.config.table.decks, faults=faults):
        clean = {k: v for k, v in event.items() if k not in ("actor", "expect", "fault")}
        verdict = send(live, clean)
        assert verdict["error"] == event.get("expect"), (event, verdict)
        done += verdict["result"] is not None
        if done == rounds:
            return
    raise AssertionError(f"the shoe ended before {rounds} rounds")


@contextmanager
def serve_on(config: StationConfig, tokens: dict[str, str], port: int) -> Iterator[Running]:
    """The station under uvicorn on a given port (to stop it and start it again there)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    config = config.model_copy(
        update={"api": config.api.model_copy(update={"bind": f"127.0.0.1:{port}"})}
    )
    station = Station(config)
    app = create_app(station, TokenStore(config.api.tokens, config.api.token_file))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not (server.started and station.ready):
            assert station.fatal is None, station.fatal
            assert time.monotonic() < deadline, "the station did not get ready"
            time.sleep(0.01)
        yield Running(f"http://127.0.0.1:{port}", station, tokens, app)
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def texts(locator: Locator) -> list[str]:
    return [t.strip() for t in locator.all_inner_texts()]


def cards_in(page: Page, side: str) -> list[str | None]:
    return [c.get_attribute("data-card") for c in page.locator(f"#{side}-cards .card").all()]


def journal_rows(live: Running, role: str = "viewer") -> list[dict[str, Any]]:
    import httpx

    rows: list[dict[str, Any]] = httpx.get(
        f"{live.url}/api/journal?limit=1000", headers=live.headers(role)
    ).json()["events"]
    return rows


def of_type(rows: Iterable[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [r for r in rows if r["event"]["type"] == kind]
