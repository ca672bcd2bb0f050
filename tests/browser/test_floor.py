"""The floor view in Chromium against a real floor service and a real nats-server: the
login, every table at a glance, a suspended table highlighted (and named in the banner),
an offline table, the link to a table's own dashboard, and a gap alert."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from playwright.sync_api import Page, expect

from station.live.config import TableConfig
from station.live.journal import Journal
from station.shared.rows import Pending
from tests.conftest import run_station
from tests.floor.floorkit import (
    RunningFloor,
    floor_config,
    heartbeat,
    in_thread,
    make_journal,
    publish_rows,
    serve_floor,
    shoe_events,
    wait_for,
)
from tests.floor.kit import FloorBroker, ensure_stream, start_broker

pytestmark = pytest.mark.floor


@pytest.fixture
def floor(tmp_path: Path) -> Iterator[FloorBroker]:
    broker = start_broker(tmp_path / "broker", tables=("table-1", "table-2", "table-3"))
    try:
        in_thread(lambda: ensure_stream(broker))
        yield broker
    finally:
        broker.broker.stop()


@pytest.fixture
def running(
    tmp_path: Path, floor: FloorBroker, monkeypatch: pytest.MonkeyPatch
) -> Iterator[RunningFloor]:
    """Three tables: table-1 suspended on an unreadable card, table-2 dealing, table-3
    never heard from (offline)."""
    events = shoe_events(seed=1, decks=1)
    at = next(i for i, e in enumerate(events) if e["type"] == "close_bets")
    suspended = make_journal(
        tmp_path / "t1.db", "table-1", [*events[: at + 2], {"type": "card", "card": "NR"}]
    )
    dealing = make_journal(tmp_path / "t2.db", "table-2", events[:40])
    config, tokens = floor_config(
        tmp_path, floor, monkeypatch, tables=("table-1", "table-2", "table-3")
    )
    tables = tuple(
        t.model_copy(update={"dashboard": "http://127.0.0.1:8001/"}) if t.id == "table-1" else t
        for t in config.table
    )
    config = config.model_copy(update={"table": tables})
    with serve_floor(config, tokens) as running:
        publish_rows(floor, "table-1", suspended)
        publish_rows(floor, "table-2", dealing[:20] + dealing[21:])  # row 21 lost
        wait_for(lambda: running.table("table-2")["held"] == len(dealing) - 21, "the rows")
        heartbeat(floor, "table-1", len(suspended))
        heartbeat(floor, "table-2", len(dealing))
        wait_for(lambda: running.table("table-2")["online"], "the heartbeats")
        yield running


def login(page: Page, running: RunningFloor, role: str) -> None:
    page.goto(f"{running.url}/")
    page.fill("#token", running.tokens[role])
    page.click("#login button[type=submit]")
    expect(page.locator("#who-name")).to_have_text(f"test-{role} ({role})")
    expect(page.locator("#conn")).to_contain_text("Live")


def test_the_floor_needs_a_login(page: Page, running: RunningFloor) -> None:
    page.goto(f"{running.url}/")
    expect(page.locator("#main")).to_be_hidden()
    expect(page.locator("#conn")).to_contain_text("Log in")
    page.fill("#token", "not-a-token")
    page.click("#login button[type=submit]")
    expect(page.locator("#login-error")).to_contain_text("not known")
    expect(page.locator("#main")).to_be_hidden()
    page.fill("#token", running.tokens["rig"])
    page.click("#login button[type=submit]")
    expect(page.locator("#conn")).to_contain_text("A rig token cannot see the floor")
    expect(page.locator("#main")).to_be_hidden()
    page.click("#logout")
    login(page, running, "viewer")
    expect(page.locator(".tcard")).to_have_count(3)
    page.click("#logout")
    expect(page.locator("#main")).to_be_hidden()
    assert page.evaluate("sessionStorage.getItem('station-token')") is None


def test_a_suspended_table_is_highlighted(page: Page, running: RunningFloor) -> None:
    login(page, running, "viewer")
    one = page.locator(".tcard[data-table='table-1']")
    two = page.locator(".tcard[data-table='table-2']")
    three = page.locator(".tcard[data-table='table-3']")
    expect(one).to_have_class("tcard suspended online-now")
    expect(one.locator(".state")).to_have_text("SUSPENDED: the reader could not identify the card")
    expect(one.locator(".ident")).to_have_text("Punto Banco")  # its name is its id
    expect(page.locator("#conn")).to_have_text(re.compile(r"^Live · \d\d:\d\d:\d\d$"))  # 24 h
    expect(page.locator("#suspended")).to_be_visible()
    expect(page.locator("#suspended-title")).to_have_text("1 TABLE SUSPENDED")
    expect(page.locator("#suspended-list li")).to_have_text(
        ["table-1: the reader could not identify the card"]
    )
    color = one.evaluate("el => getComputedStyle(el).borderTopColor")
    assert color == "rgb(183, 28, 28)"  # --alarm
    link = one.locator("h2 a")
    expect(link).to_have_attribute("href", "http://127.0.0.1:8001/")
    # Table 2 deals on, its rows after the lost one held, the gap alerted.
    expect(two).not_to_have_class("suspended")
    expect(two).to_have_class("tcard online-now alerted")
    expect(two.locator(".talerts li")).to_contain_text("gap: row 22 arrived")
    expect(page.locator("#alerts li.open")).to_have_count(1)
    expect(two.locator(".beads li").first).to_be_visible()
    # Table 3 was never heard from.
    expect(three).to_have_class("tcard offline")
    expect(three.locator(".online")).to_have_text("offline · never heard")
    expect(page.locator("#summary")).to_contain_text("3 tables · 2 online · 1 suspended")


def test_a_table_that_cannot_write_its_journal_is_highlighted(
    page: Page, running: RunningFloor, floor: FloorBroker
) -> None:
    login(page, running, "viewer")
    two = page.locator(".tcard[data-table='table-2']")
    expect(two).to_have_class("tcard online-now alerted")
    words = "the journal cannot be written: disk full; free space on /var/lib/baccarat-station"
    heartbeat(floor, "table-2", 40, journal=words)
    expect(two).to_have_class("tcard suspended online-now alerted")
    expect(two.locator(".state")).to_have_text(f"SUSPENDED: {words}")
    expect(page.locator("#suspended-title")).to_have_text("2 TABLES SUSPENDED")
    expect(page.locator("#suspended-list li[data-table='table-2']")).to_have_text(
        f"table-2: {words}"
    )
    heartbeat(floor, "table-2", 40)  # written again
    expect(two).to_have_class("tcard online-now alerted")
    expect(page.locator("#suspended-title")).to_have_text("1 TABLE SUSPENDED")


@pytest.fixture
def banque_floor(
    tmp_path: Path, floor: FloorBroker, monkeypatch: pytest.MonkeyPatch
) -> Iterator[RunningFloor]:
    """One baccarat banque table (table-1) that has dealt some rounds."""
    done = run_station("simulate", "--game", "baccarat_banque", "--seed", "4", "--shoes", "1")
    assert done.returncode == 0, done.stderr
    events = [
        {k: v for k, v in orjson.loads(line).items() if k not in ("actor", "expect", "fault")}
        for line in done.stdout.splitlines()
    ][:60]
    table = TableConfig(game="baccarat_banque").new_table()
    with Journal(tmp_path / "t1.db") as journal:
        journal.start("table-1", table)
        for event in events:
            journal.append([Pending("api", "test", event, dict(table.decide(event).verdict))])
        rows = list(journal.rows())
    config, tokens = floor_config(tmp_path, floor, monkeypatch, tables=("table-1",))
    with serve_floor(config, tokens) as running:
        publish_rows(floor, "table-1", rows)
        wait_for(lambda: running.table("table-1")["archived_seq"] == len(rows), "the rows")
        yield running


def test_a_banque_table_shows_each_tableaus_outcome(page: Page, banque_floor: RunningFloor) -> None:
    """A banque round has no one winner: its bead gives tableau 1's and tableau 2's
    outcomes against the banker (W, L, T), as the dashboard's last results do."""
    login(page, banque_floor, "viewer")
    results = banque_floor.table("table-1")["results"]
    assert results and all(r["outcomes"] for r in results)
    letter = {"win": "W", "lose": "L", "tie": "T"}
    beads = page.locator(".tcard[data-table='table-1'] .beads li")
    expect(beads).to_have_text(
        [letter[r["outcomes"]["tableau1"]] + letter[r["outcomes"]["tableau2"]] for r in results]
    )
    last = results[-1]
    said = {"win": "wins", "lose": "loses", "tie": "ties"}  # the catalogue's, by the codes
    expect(beads.last).to_have_attribute(
        "title",
        f"Round {last['round']}: tableau 1 {said[last['outcomes']['tableau1']]}, "
        f"tableau 2 {said[last['outcomes']['tableau2']]} "
        f"(tableau 1 {last['totals']['tableau1']}, tableau 2 {last['totals']['tableau2']}, "
        f"banker {last['totals']['banker']})",
    )
    # ... said in words beside the beads, as the dashboard's last results are
    expect(page.locator(".tcard[data-table='table-1'] .legend")).to_have_text(
        "Each round: tableau 1's letter, then tableau 2's, against the banker: W wins, "
        "L loses, T ties."
    )


def test_a_supervisor_acknowledges_and_accepts_a_gap(page: Page, running: RunningFloor) -> None:
    """The buttons are a supervisor's only; each asks for a reason and a confirmation,
    and the floor shows who decided what, and why."""
    login(page, running, "viewer")
    two = page.locator(".tcard[data-table='table-2']")
    expect(two.locator(".talerts li")).to_contain_text("gap: row 22 arrived")
    expect(page.locator("button.decide")).to_have_count(0)
    page.click("#logout")
    login(page, running, "supervisor")
    # Acknowledge the gap alert: the dialog wants a reason; Cancel decides nothing.
    two.locator("button.acknowledge").click()
    expect(page.locator("#decide")).to_be_visible()
    expect(page.locator("#decide-text")).to_contain_text("It stays open and in the history")
    page.click("#decide-cancel")
    expect(page.locator("#decide")).to_be_hidden()
    assert running.table("table-2")["alerts"][0]["acknowledged"] is None
    two.locator("button.acknowledge").click()
    page.click("#decide-ok")  # empty: the browser's own check keeps the dialog open
    expect(page.locator("#decide")).to_be_visible()
    page.fill("#decide-reason", "   ")
    page.click("#decide-ok")
    expect(page.locator("#decide-error")).to_contain_text("Give a reason")
    page.fill("#decide-reason", "the station's network is being checked")
    page.click("#decide-ok")
    expect(page.locator("#decide")).to_be_hidden()
    expect(two.locator(".talerts li.acknowledged")).to_contain_text(
        "acknowledged by test-supervisor"
    )
    expect(two.locator("button.acknowledge")).to_have_count(0)
    # Accept the gap: the table goes on from row 22, the decision on its line.
    gap = two.locator("button.accept-gap")
    expect(gap).to_have_text("Accept gap (row 21)…")
    gap.click()
    expect(page.locator("#decide-text")).to_contain_text("accept row 21 as missing")
    page.fill("#decide-reason", "row 21 lost with the broker's disk")
    page.click("#decide-ok")
    expect(two.locator(".accepted li")).to_contain_text(
        "row 21 accepted as missing by test-supervisor"
    )
    expect(two.locator("button.accept-gap")).to_have_count(0)
    # The floor does not guess the table's state without row 21: no false suspension.
    expect(two.locator(".state")).to_have_text("State not known until the next shoe")
    expect(two.locator(".problem")).to_contain_text("row 21 accepted as missing")
    expect(page.locator("#suspended-title")).to_have_text("1 TABLE SUSPENDED")
    expect(two.locator(".talerts")).to_have_count(0)
    expect(page.locator("#alerts li.resolved")).to_contain_text("resolved by test-supervisor")
    table = running.table("table-2")
    assert table["held"] == 0 and table["archived_seq"] == 41
    [decision] = [d for d in table["accepted"] if d["kind"] == "accept_gap"]
    assert decision["reason"] == "row 21 lost with the broker's disk"
