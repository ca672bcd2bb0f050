"""The alert path live: committed cards -> alert notices journaled -> WebSocket, webhook
payload, /api/protection; `suspend_on`; a restart neither repeats nor loses an alert."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from station.live.config import StationConfig, TableConfig
from station.live.protection.config import ProtectionConfig
from tests.protection.test_watch import shoes_events
from tests.service.kit import Running, make_config, serve

pytestmark = pytest.mark.server


def config_for(tmp_path: Path, **protection: Any) -> tuple[StationConfig, dict[str, str]]:
    config, tokens = make_config(tmp_path, allow_rig=True)
    return config.model_copy(
        update={
            "table": TableConfig(id="t-test", decks=1),
            "protection": ProtectionConfig(**protection),
        }
    ), tokens


def deal(running: Running, events: list[dict[str, Any]]) -> None:
    """Submit `events` in order on the station's loop (group-committed: a shoe a second,
    not an fsync an event), as the API would with each event's actor."""
    station = running.station
    loop = station.loop
    assert loop is not None

    async def submit_all() -> list[Any]:
        sent = []
        for event in events:
            fields = {k: v for k, v in event.items() if k != "actor"}
            sent.append(station.submit(fields, "api", str(event.get("actor", "rig"))))
        return await asyncio.gather(*sent)

    rows = asyncio.run_coroutine_threadsafe(submit_all(), loop).result(30)
    assert len(rows) == len(events)


def alerts(running: Running, count: int, timeout: float = 10.0) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while True:
        answer = httpx.get(f"{running.url}/api/protection", headers=running.headers("viewer"))
        found = answer.json()["alerts"]
        if len(found) >= count or time.monotonic() > deadline:
            return list(reversed(found))
        time.sleep(0.05)


def journal_alerts(running: Running) -> list[dict[str, Any]]:
    rows = httpx.get(
        f"{running.url}/api/journal", params={"limit": 1000}, headers=running.headers("viewer")
    ).json()["events"]
    return [r for r in rows if r["event"]["type"] == "notice" and "alert" in r["event"]]


def test_alerts_are_journaled_told_and_survive_a_restart(tmp_path: Path) -> None:
    config, tokens = config_for(tmp_path)
    events = list(shoes_events(["uniform", "riffle:1", "none"], decks=1))
    with serve(config, tokens) as running:
        told: list[dict[str, Any]] = []
        running.station.outbox.webhooks.send = told.append  # type: ignore[method-assign]
        deal(running, events)
        found = alerts(running, 3)
        status = httpx.get(
            f"{running.url}/api/protection", headers=running.headers("viewer")
        ).json()
        assert status["running"] and status["history_shoes"] == 2 and status["k"] == 8
        assert running.station.table.suspension is None  # alerts stop nothing by default
        pace = httpx.get(f"{running.url}/api/pace", headers=running.headers("viewer")).json()
        epoch = running.station.journal.epoch  # type: ignore[union-attr]
        prefix = f"t-test:{epoch.journal}:{epoch.mark}"  # every event id's: journal, epoch
        rounds = sum(1 for e in events if e["type"] == "close_bets")
        assert pace["shift"]["rounds"] == rounds and pace["shoe"]["shoe"] == 3
    # Shoe 2 (one riffle of shoe 1) is weak when half of it is out; shoe 3 repeats shoe 2
    # (from its 8th card) and is weak when half of it is out (a repeat keeps every order).
    assert [a["alert"] for a in found] == ["WEAK_SHUFFLE", "SHOE_SEQUENCE", "WEAK_SHUFFLE"]
    assert "about 1 riffle of the previous shoe" in found[0]["message"]
    assert found[0]["look"] == "half" and found[0]["probability"] < 1e-5
    assert found[1]["start"] == 1 and found[1]["earlier"].startswith("t-test shoe at seq ")
    assert "surveillance" in found[1]["advice"]
    # The webhook, after the notice's commit: its id and seq are the notice's row.
    told = [b for b in told if b["type"] == "protection_alert"]
    assert [b["code"] for b in told] == ["WEAK_SHUFFLE", "SHOE_SEQUENCE", "WEAK_SHUFFLE"]
    assert told[1]["id"] == f"{prefix}:{found[1]['seq']}:protection_alert"
    # Like every webhook body: the row it follows (the notice), its source and actor.
    assert (told[1]["source"], told[1]["actor"]) == ("station", "protection")
    assert told[1]["event"]["type"] == "notice" and told[1]["event"]["alert"] == "SHOE_SEQUENCE"
    with serve(config, tokens) as running:  # the same journal and index
        time.sleep(0.5)
        rows = journal_alerts(running)
        assert [r["event"]["alert"] for r in rows] == [
            "WEAK_SHUFFLE",
            "SHOE_SEQUENCE",
            "WEAK_SHUFFLE",
        ]
        assert all(r["actor"] == "protection" and r["verdict"] is None for r in rows)
        assert len(alerts(running, 3, timeout=1)) == 3


def test_suspend_on_suspends_the_table(tmp_path: Path) -> None:
    config, tokens = config_for(tmp_path, suspend_on=("SHOE_SEQUENCE",))
    events = list(shoes_events(["uniform", "none"], decks=1))
    with serve(config, tokens) as running:
        deal(running, events[: len(events) // 2 + 30])
        # The repeat from its 8th card, then (half the shoe out) its weak shuffle.
        assert [a["alert"] for a in alerts(running, 2)] == ["SHOE_SEQUENCE", "WEAK_SHUFFLE"]
        deadline = time.monotonic() + 5
        while running.station.table.suspension is None and time.monotonic() < deadline:
            time.sleep(0.05)
        suspension = running.station.table.suspension
        assert suspension is not None
        state = httpx.get(f"{running.url}/api/state", headers=running.headers("viewer")).json()
        assert state["suspension"]["code"] == "SCANNER_FAULT"


def test_protection_off(tmp_path: Path) -> None:
    config, tokens = config_for(tmp_path, enabled=False)
    with serve(config, tokens) as running:
        answer = httpx.get(f"{running.url}/api/protection", headers=running.headers("viewer"))
        assert answer.json() == {"enabled": False, "running": False, "alerts": []}


def test_an_unusable_index_turns_the_checks_off_not_the_table(tmp_path: Path) -> None:
    foreign = tmp_path / "not-an-index"
    foreign.write_bytes(b"not a database" * 100)
    config, tokens = config_for(tmp_path, index=str(foreign))
    with serve(config, tokens) as running:
        deal(running, list(shoes_events(["uniform"], decks=1))[:10])
        status = httpx.get(f"{running.url}/api/protection", headers=running.headers("viewer"))
        answer = status.json()
        assert answer["running"] is False and "cannot be opened" in answer["error"]
