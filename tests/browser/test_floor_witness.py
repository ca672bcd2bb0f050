"""The floor view as witness, in Chromium against a real floor service and nats-server: a
key named by a table's station on first use is shown with its fingerprint, its rows held,
until a supervisor accepts it (a reason required, recorded with who); a table whose
station did not sign a row shows the forged row counted."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from station.shared.signing import SigningKey
from tests.floor.floorkit import (
    RunningFloor,
    floor_config,
    in_thread,
    publish,
    publish_rows,
    serve_floor,
    wait_for,
)
from tests.floor.kit import FloorBroker, ensure_stream, start_broker
from tests.floor.signedkit import events, forged, signed_journal

pytestmark = pytest.mark.floor

KEY = SigningKey.generate()


@pytest.fixture
def floor(tmp_path: Path) -> Iterator[FloorBroker]:
    broker = start_broker(tmp_path / "broker", tables=("table-1",))
    try:
        in_thread(lambda: ensure_stream(broker))
        yield broker
    finally:
        broker.broker.stop()


@pytest.fixture
def running(
    tmp_path: Path, floor: FloorBroker, monkeypatch: pytest.MonkeyPatch
) -> Iterator[RunningFloor]:
    """table-1's station signs its journal; the floor has no key for it (first use)."""
    with signed_journal(tmp_path / "t1.db", "table-1", KEY, events(8)) as journal:
        rows = list(journal.rows())
    config, tokens = floor_config(tmp_path, floor, monkeypatch, tables=("table-1",))
    with serve_floor(config, tokens) as running:
        publish_rows(floor, "table-1", rows)
        wait_for(lambda: running.table("table-1")["held"] == len(rows), "the rows held")
        yield running


def login(page: Page, running: RunningFloor, role: str) -> None:
    page.goto(f"{running.url}/")
    page.fill("#token", running.tokens[role])
    page.click("#login button[type=submit]")
    expect(page.locator("#who-name")).to_have_text(f"test-{role} ({role})")


def test_a_supervisor_accepts_the_key_a_station_named(
    page: Page, running: RunningFloor, floor: FloorBroker
) -> None:
    fingerprint = KEY.public.fingerprint
    login(page, running, "viewer")
    card = page.locator(".tcard[data-table='table-1']")
    expect(card.locator(".key-pending")).to_contain_text(f"key {fingerprint} named by the station")
    expect(card.locator(".talerts li")).to_contain_text("new_key: the table's station names key")
    expect(page.locator("button.accept-key")).to_have_count(0)  # a viewer decides nothing
    page.click("#logout")
    login(page, running, "supervisor")
    button = card.locator("button.accept-key")
    expect(button).to_have_text(f"Accept key {fingerprint[:8]}…")
    button.click()
    expect(page.locator("#decide-text")).to_contain_text(f"its station names key {fingerprint}")
    page.fill("#decide-reason", "compared with `station key show` at the table")
    page.click("#decide-ok")
    expect(card.locator(".accepted li")).to_contain_text(
        f"key {fingerprint} accepted by test-supervisor"
    )
    expect(card.locator(".key-trusted")).to_contain_text(f"key {fingerprint[:16]}… (accepted)")
    expect(card.locator("button.accept-key")).to_have_count(0)
    table = running.table("table-1")
    assert (
        table["held"] == 0 and table["signed"] and table["archived_seq"] == 9
    )  # its first row and 8 events
    [decision] = [d for d in table["accepted"] if d["kind"] == "accept_key"]
    assert decision["by"] == "test-supervisor" and decision["hash"] == fingerprint
    # A row the station did not sign: held, counted on the card, alerted.
    last = running.service.archive.row("table-1", 9) if running.service.archive else None
    assert last is not None
    publish(floor, "table-1", [forged("table-1", last)])
    expect(card.locator(".behind.lagging", has_text="forged")).to_have_text("1 forged rows held")
    expect(card.locator(".talerts li")).to_contain_text("FORGED_ROW: row 10 is unsigned")
