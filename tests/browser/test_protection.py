"""The protection alert end to end: cards posted, the alert journaled, pushed on the
WebSocket, shown in its banner with the advice; back after a reload; "Seen" hides it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.pit import login
from tests.protection.test_live import config_for, deal
from tests.protection.test_watch import shoes_events
from tests.service.kit import Running, serve


@pytest.fixture
def one_deck(tmp_path: Path) -> Iterator[Running]:
    config, tokens = config_for(tmp_path)
    with serve(config, tokens) as running:
        yield running


def test_a_repeated_shoe_raises_the_protection_banner(page: Page, one_deck: Running) -> None:
    events = list(shoes_events(["uniform", "none"], decks=1))
    half = len(events) // 2
    deal(one_deck, events[:half])
    login(page, one_deck, "viewer")
    banner = page.locator("#protection")
    expect(banner).to_be_hidden()
    deal(one_deck, events[half:])  # the second shoe repeats the first: live on the page
    expect(banner).to_be_visible()
    # the repeat is SHOE_SEQUENCE; a shoe in the previous one's order is also a shuffle
    # that did not happen (WEAK_SHUFFLE, about 0 riffles): both are listed, in either order
    items = page.locator("#protection-list li")
    expect(items.filter(has_text="SHOE_SEQUENCE")).to_have_count(1)
    expect(banner).to_contain_text("call surveillance")
    page.reload()
    expect(banner).to_be_visible()  # from /api/protection after a reload
    page.locator("#protection-seen").click()
    expect(banner).to_be_hidden()


def test_the_pace_panel_counts_the_shoe_and_the_shift(page: Page, one_deck: Running) -> None:
    events = list(shoes_events(["uniform"], decks=1))
    login(page, one_deck, "viewer")
    deal(one_deck, events)
    rounds = sum(1 for e in events if e["type"] == "close_bets")
    rows = page.locator("#pace-body tr")
    expect(rows.first).to_contain_text(f"Rounds{rounds}{rounds}")
    expect(page.locator("#pace-shift")).to_have_text("last 8 h")
