"""The suspension banner with more later errors than the state keeps: the last few are
listed, the rest counted."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.browser.pit import login, send, start_round
from tests.service.kit import Running


def test_the_banner_counts_the_later_errors_it_does_not_list(page: Page, station: Running) -> None:
    start_round(station)
    send(station, {"type": "card", "card": None})
    for i in range(12):
        assert send(station, {"type": "card", "card": f"?{i}"})["error"] == "UNREADABLE_CARD"
    login(page, station, "viewer")
    later = page.locator("#banner-later li")
    expect(later).to_have_count(11)
    expect(later.nth(0)).to_contain_text("then UNREADABLE_CARD (?2)")
    expect(later.nth(10)).to_have_text("and 2 more (the journal has them all)")
