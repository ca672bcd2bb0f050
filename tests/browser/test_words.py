"""The pages' words (station/web/format.js) as Chromium runs them: what a supervisor reads
where the station's data alone would puzzle them (issue 27): who acted, what a quiet
verdict did, why a tableau won on equal points, a reader's trouble, the clock."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page

from tests.service.kit import Running


def words(page: Page, station: Running, fn: str, arg: Any = None) -> Any:
    """`fn` (a JavaScript function of format.js and `arg`) run in a page of the station."""
    if page.url == "about:blank":
        page.goto(f"{station.url}/")
    script = (
        f"async (arg) => {{ const f = await import('/web/format.js'); return ({fn})(f, arg); }}"
    )
    return page.evaluate(script, arg)


def test_every_row_not_a_persons_carries_the_same_badge(page: Page, station: Running) -> None:
    """The demo's sim reader is the demo bot on every row it sends, cards and decisions
    alike; a reader's or the station's own rows keep their badge even when their name
    says the same."""
    rows = {
        "person": {"source": "api", "actor": "ana"},
        "card": {"source": "reader", "actor": "sim", "event": {"type": "card"}},
        "decision": {"source": "reader", "actor": "demo-dealer", "event": {"type": "decision"}},
        "close": {"source": "reader", "actor": "demo-dealer", "event": {"type": "close_bets"}},
        "fault": {"source": "reader", "actor": "reader", "event": {"type": "fault"}},
        "restart": {"source": "station", "actor": "station", "event": {"type": "restart"}},
    }
    said = words(
        page,
        station,
        """(f, rows) => Object.fromEntries(["sim", "serial"].map((driver) => [driver,
            Object.fromEntries(Object.entries(rows).map(([k, r]) =>
                [k, f.actorText(r, driver)]))]))""",
        rows,
    )
    assert said["sim"] == {
        "person": "ana",
        "card": "sim (demo bot)",
        "decision": "demo-dealer (demo bot)",
        "close": "demo-dealer (demo bot)",
        "fault": "demo bot",
        "restart": "station",
    }
    assert said["serial"] == {
        "person": "ana",
        "card": "sim (reader)",
        "decision": "demo-dealer (reader)",
        "close": "demo-dealer (reader)",
        "fault": "reader",
        "restart": "station",
    }
    station_row = {"source": "station", "actor": "station"}
    assert words(page, station, "(f, r) => f.actorOf(r, null)", station_row) == {
        "name": None,
        "badge": "station",
    }


def test_a_quiet_verdict_says_what_it_did(page: Page, station: Running) -> None:
    quiet = {"ok": True, "error": None, "role": None, "round": None, "result": None}
    said = words(
        page,
        station,
        "(f, v) => ['fault', 'restart', 'shoe'].map((type) => f.verdictText(v, {type}))",
        quiet,
    )
    assert said == [
        "recorded: no shoe in play, nothing to suspend",
        "no shoe in play: nothing to check",
        "ok",
    ]


def test_a_natural_beating_a_drawn_nine_says_why(page: Page, station: Running) -> None:
    result = {
        "tableau1_outcome": "win",
        "tableau1_total": 9,
        "tableau2_outcome": "lose",
        "tableau2_total": 4,
        "banker_total": 9,
        "naturals": ["tableau1"],
    }
    assert words(page, station, "(f, r) => f.banqueWords(r)", result) == (
        "Tableau 1 wins 9 to 9: its natural beats the banker's drawn 9 · tableau 2 loses "
        "4 to 9 · natural: tableau 1"
    )
    eight = {**result, "tableau1_total": 8}
    assert words(page, station, "(f, r) => f.banqueWords(r)", eight).startswith(
        "Tableau 1 wins 8 to 9: its natural beats the banker's drawn 9 ·"
    )


def test_a_missing_serial_device_in_words_with_a_countdown(page: Page, station: Running) -> None:
    """No errno codes, and "retrying in 10 s" counted down from when the station said it,
    starting over once it is due (the wait stays at its longest while the device is
    away)."""
    reader = {
        "driver": "serial",
        "connected": False,
        "detail": "cannot open the reader port /dev/ttyUSB0: [Errno 2] could not open port "
        "/dev/ttyUSB0: [Errno 2] No such file or directory: '/dev/ttyUSB0'; retrying in 10 s",
    }
    said = words(
        page,
        station,
        "(f, r) => [0, 3000, 9500, 12000].map((ms) => f.readerWords(r, 1000, 1000 + ms))",
        reader,
    )
    plain = (
        "serial: disconnected (cannot open the reader port /dev/ttyUSB0: not there (is it "
        "plugged in?))"
    )
    assert said == [f"{plain} · trying again in {s} s" for s in (10, 7, 1, 8)]
    connected = {"driver": "sim", "connected": True, "detail": "betting open for round 6"}
    assert words(page, station, "(f, r) => f.readerWords(r, 0, 0)", connected) == "sim: connected"


def test_times_are_on_the_24_hour_clock(page: Page, station: Running) -> None:
    said = words(
        page,
        station,
        """(f) => [f.clock(new Date(2026, 0, 2, 0, 4, 5)), f.clock(new Date(2026, 0, 2, 18, 4, 5)),
                   f.moment(new Date(2026, 0, 2, 18, 4, 5), new Date(2026, 0, 2, 20, 0, 0)),
                   f.moment(new Date(2026, 0, 2, 18, 4, 5), new Date(2026, 0, 3, 9, 0, 0))]""",
    )
    assert said[:3] == ["00:04:05", "18:04:05", "18:04:05"]  # today: the time alone
    assert said[3].endswith(" 18:04:05") and "2" in said[3]  # another day: with its date
