"""The dashboard at the table: the reader field as live as the table, a phone's width,
the odds while they are worked out, cards that add up, where a card read by eye goes,
the demo bot told apart from a person, the previous shoe through the shuffle, plurals and
the derived roads' marks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Locator, Page, Route, expect

from drivers.sim.bot import SimReader, SimSettings
from station.core.words import EXPLANATIONS
from station.shared.config import TokenEntry
from station.shared.tokens import new_token, token_hash
from tests.browser.pit import (
    BURN,
    ROUND_1,
    action,
    confirm,
    deal_rounds,
    journal_rows,
    login,
    of_type,
    send,
    start_round,
    texts,
)
from tests.readerkit import SwitchReader, wait_until
from tests.service.kit import Running, make_config, serve

PHONE = {"width": 390, "height": 844}


def test_the_reader_field_follows_the_reader_live(page: Page, tmp_path: Path) -> None:
    """The reader's status comes with every published state: a `fault` shows the reader
    disconnected at once (and the header's Live is no longer all green), and its
    reconnection notice (no table event) connected again, with no round or shoe changing
    in between. Connected, the field says only that: a reader's own running words stay in
    its title."""
    config, tokens = make_config(tmp_path, allow_rig=True)
    reader = SwitchReader()
    with serve(config, tokens, reader) as live:
        start_round(live)
        login(page, live, "supervisor")
        field = page.locator("#p-reader")
        conn = page.locator("#conn")
        expect(field).to_have_text("switch: connected")
        expect(field).to_have_attribute("title", "reading from the switch")
        reader.drop()  # the port died; the reader's fault comes through the rig
        send(live, {"type": "fault", "detail": "reader port lost"})
        expect(page.locator("#banner-reason")).to_have_text(EXPLANATIONS["SCANNER_FAULT"])
        expect(field).to_have_text(
            "switch: disconnected (lost: the cable was pulled) · a fault was reported"
        )
        expect(field).to_have_class("warn")
        expect(conn).to_have_text("Live · reader disconnected")
        expect(conn).to_have_class("conn conn-live conn-warn")
        reader.reconnect()  # a notice row only: the table stays suspended
        expect(field).to_have_text("switch: connected · a fault was reported")
        expect(conn).to_have_text("Live")
        expect(conn).to_have_class("conn conn-live")
        expect(page.locator("#banner")).to_be_visible()
        confirm(page, action(page, "resume", "#banner"))
        expect(field).to_have_text("switch: connected")
        expect(field).not_to_have_class("warn")


def overflow_report(page: Page) -> dict[str, Any]:
    """What sticks out of a 390 px page: the page's own width, each panel's, the login's,
    and each table that is wider than its box without scrolling inside it."""
    report: dict[str, Any] = page.evaluate("""() => {
        const vw = document.documentElement.clientWidth;
        const out = (el) => el.getBoundingClientRect().right > vw + 0.5
                            || el.getBoundingClientRect().left < -0.5;
        const cut = [];
        for (const table of document.querySelectorAll('main table')) {
            const box = table.parentElement;
            const scrolls = ['auto', 'scroll'].includes(getComputedStyle(box).overflowX);
            if (table.scrollWidth > box.clientWidth + 1 && !scrolls) cut.push(box.parentElement.id);
        }
        const visible = (el) => el.offsetParent !== null;
        const shown = [...document.querySelectorAll(
            '.panel, #banner, .top, #login button, #login input, #logout, button.act, select')]
            .filter(visible);
        return {page: document.documentElement.scrollWidth, viewport: vw, cut,
                sticking_out: shown.filter(out).map((el) => el.id || el.className)};
    }""")
    return report


def newest_cell_in_view(page: Page, road: str, cell: str) -> bool:
    """Whether the road's newest cell (its last drawn) lies inside the road's visible box."""
    seen: bool = page.evaluate(
        """([road, cell]) => {
        const box = document.getElementById(road).getBoundingClientRect();
        const cells = document.querySelectorAll(`#${road} ${cell}`);
        const last = cells[cells.length - 1].getBoundingClientRect();
        return last.left >= box.left - 0.5 && last.right <= box.right + 0.5;
    }""",
        [road, cell],
    )
    return seen


def test_a_phone_reaches_everything(page: Page, station: Running) -> None:
    """At 390 px nothing is cut off: the login button, every panel and the banner fit the
    width; a table wider than its panel scrolls inside it; each road is scrolled to its
    newest cell (not to the empty columns kept for what comes)."""
    page.set_viewport_size(PHONE)
    page.goto(f"{station.url}/")
    button = page.locator("#login-button")
    expect(button).to_be_enabled()
    box = button.bounding_box()
    assert box is not None and box["x"] + box["width"] <= PHONE["width"]
    assert button.evaluate("b => b.scrollWidth <= b.clientWidth")  # its words not clipped
    assert overflow_report(page)["sticking_out"] == []

    deal_rounds(station, seed=5, rounds=40, faults={"unreadable": 0.03})
    send(station, {"type": "close_bets"})
    send(station, {"type": "card", "card": None})  # suspended: the banner's buttons too
    login(page, station, "supervisor")
    expect(page.locator("#road-bead g.bead")).to_have_count(40)
    expect(page.locator("#history-body tr")).to_have_count(40)
    expect(page.locator("#banner")).to_be_visible()
    report = overflow_report(page)
    assert report["page"] <= PHONE["width"], report
    assert report["sticking_out"] == [] and report["cut"] == [], report
    big = page.locator("#road-big")
    assert big.evaluate("b => b.clientWidth") > 300  # a road, not a 44 px sliver
    assert big.evaluate("b => b.scrollWidth > b.clientWidth && b.scrollLeft > 0")
    for road, cell in (
        ("road-big", "g.big"),
        ("road-bead", "g.bead"),
        ("road-big_eye_boy", "g.mark"),
        ("road-small_road", "g.mark"),
        ("road-cockroach_pig", "g.mark"),
    ):
        assert newest_cell_in_view(page, road, cell), road
    # ... and the journal fits a phone: each row on two lines, its verdict on the screen
    # without scrolling sideways
    journal = page.locator("#journal .scroll")
    assert journal.evaluate("b => b.scrollWidth <= b.clientWidth")
    assert journal.evaluate("""(b) => [...b.querySelectorAll('tbody tr')].every((row) => {
        const cell = row.querySelector('td.verdict').getBoundingClientRect();
        const box = b.getBoundingClientRect();
        return cell.width > 100 && cell.left >= box.left - 1 && cell.right <= box.right + 1; })""")
    # turned to a desktop's width, the roads still show their newest cells
    page.set_viewport_size({"width": 1280, "height": 900})
    page.wait_for_timeout(100)
    assert newest_cell_in_view(page, "road-big", "g.big")


def test_the_odds_say_they_are_coming_and_when_they_failed(page: Page, station: Running) -> None:
    held: list[Route] = []
    page.route("**/api/odds", lambda route: held.append(route))
    start_round(station)
    login(page, station, "viewer")
    status = page.locator("#odds-status")
    expect(status).to_have_text("working out the odds…")
    expect(page.locator("#odds-body tr")).to_have_count(0)
    for _ in range(200):  # Playwright hands the request over while it waits
        if held:
            break
        page.wait_for_timeout(25)
    assert held, "the page did not ask for the odds"
    held[0].continue_()
    page.unroute("**/api/odds")
    expect(page.locator("#odds-body tr").first).to_be_visible()
    expect(status).to_have_text("")
    page.route(
        "**/api/odds",
        lambda route: route.fulfill(status=503, json={"detail": "the station is starting"}),
    )
    for card, _ in ROUND_1:  # the round ends: the odds are asked for again, and fail
        send(station, {"type": "card", "card": card})
    expect(status).to_have_text(
        "The odds could not be worked out: the station is starting. "
        "They are asked for again when a round opens or ends."
    )
    expect(status).to_have_class("status error")
    expect(page.locator("#odds-body tr").first).to_be_visible()  # the last answer stays


def test_the_cards_add_up_in_words(page: Page, station: Running) -> None:
    """An unreadable card is out of the shoe but never identified: the progress and the
    odds say the same numbers, and how they add up. Once betting is closed the odds are
    the ones the round was bet at, and the note says so rather than counts that the
    round's cards would contradict."""
    start_round(station)
    send(station, {"type": "card", "card": "9S"})
    send(station, {"type": "card", "card": None})
    login(page, station, "viewer")
    expect(page.locator("#p-cards")).to_have_text("5 out (1 unreadable), 411 left of 416")
    odds = httpx.get(f"{station.url}/api/odds", headers=station.headers("viewer")).json()
    assert odds["odds"]["cards_left"] == 413 == 416 - len(BURN)  # as when betting closed
    expect(page.locator("#odds-note")).to_contain_text(
        "the odds round 1 was bet at, over the 413 cards not seen when betting closed ·"
    )
    expect(page.locator("#odds-note")).not_to_contain_text("left in the shoe")
    send(station, {"type": "resume", "card": "2D"})
    for card, _ in ROUND_1[2:]:
        send(station, {"type": "card", "card": card})
    expect(page.locator("#p-cards")).to_have_text("8 out (1 unreadable), 408 left of 416")
    expect(page.locator("#odds-note")).to_contain_text(
        "over the 409 cards not seen: 408 left in the shoe + 1 unreadable (out, never identified) ·"
    )


def test_the_resume_confirmation_names_the_slot(page: Page, station: Running) -> None:
    start_round(station)
    for card in ("9S", "2D", "KH"):  # P1 B1 P2: the banker's second card is due
        send(station, {"type": "card", "card": card})
    send(station, {"type": "card", "card": None, "raw": "NR"})
    login(page, station, "supervisor")
    expect(page.locator("#picker-legend")).to_have_text(
        "Card read by eye, for the banker second card (B2)"
    )
    page.select_option("#pick-rank", "7")
    page.select_option("#pick-suit", "H")
    confirm(
        page,
        page.locator("#resume-card"),
        words="Resume with 7♥, read by eye, as the banker second card (B2)?",
    )
    expect(page.locator("#banner")).to_be_hidden()
    [resume] = of_type(journal_rows(station), "resume")
    assert resume["verdict"]["role"] == "B2" and resume["event"]["card"] == "7H"


def test_the_demo_bot_and_a_person_of_the_same_name_are_told_apart(
    page: Page,
    tmp_path: Path,
) -> None:
    """The demo bot journals as "demo-supervisor", the demo's supervisor token has the same
    name: the bot's rows carry a "demo bot" badge, the person's the token's name alone."""
    config, tokens = make_config(tmp_path, allow_rig=True)
    person = new_token()
    entry = TokenEntry(name="demo-supervisor", role="supervisor", sha256=token_hash(person))
    config = config.model_copy(
        update={"api": config.api.model_copy(update={"tokens": (*config.api.tokens, entry)})}
    )
    slow = SimSettings(
        seed=1,
        card_interval=600,
        betting_time=600,
        shuffle_time=600,
        fault_chance=0,
        supervisor_after=0.2,
    )
    with serve(config, tokens, SimReader(settings=slow)) as live:
        wait_until(lambda: live.station.snapshot.in_play, what="the bot's shoe")
        send(live, {"type": "fault", "detail": "the rig pulled the cable"})
        wait_until(lambda: of_type(journal_rows(live), "resume"), what="the bot's resume")
        page.goto(f"{live.url}/")
        page.fill("#token", person)
        page.click("#login button[type=submit]")
        expect(page.locator("#who-name")).to_have_text("demo-supervisor (supervisor)")
        confirm(page, action(page, "end_shoe"))
        expect(page.locator("#last-action")).to_contain_text("end shoe by demo-supervisor (row")
        rows = journal_rows(live)
        [bot_resume] = of_type(rows, "resume")
        [bot_shoe] = of_type(rows, "shoe")
        [person_end] = of_type(rows, "end_shoe")
        assert (bot_resume["source"], bot_resume["actor"]) == ("reader", "demo-supervisor")
        assert (person_end["source"], person_end["actor"]) == ("api", "demo-supervisor")

        def actor_cell(row: dict[str, Any]) -> Locator:
            return page.locator(f"#journal-body tr[data-seq='{row['seq']}'] td.actor")

        bot_cell = actor_cell(bot_resume)
        expect(bot_cell).to_have_text("demo-supervisor demo bot")
        expect(bot_cell.locator(".badge")).to_have_text("demo bot")
        expect(actor_cell(bot_shoe)).to_have_text("demo-dealer demo bot")
        person_cell = actor_cell(person_end)
        expect(person_cell).to_have_text("demo-supervisor")
        expect(person_cell.locator(".badge")).to_have_count(0)
        choices = texts(page.locator("#j-actor option"))
        assert "demo-supervisor" in choices and "demo-supervisor (demo bot)" in choices
        page.select_option("#j-actor", "demo-supervisor (demo bot)")
        expect(page.locator("#journal-body tr")).to_have_count(1)
        expect(page.locator("#journal-body tr")).to_contain_text("resume")


def test_the_previous_shoe_stays_until_the_new_one_has_a_result(
    page: Page,
    station: Running,
) -> None:
    deal_rounds(station, seed=3, rounds=3, faults={})
    login(page, station, "supervisor")
    expect(page.locator("#history-shoe")).to_have_text("shoe #1, 3 rounds")
    confirm(page, action(page, "end_shoe"))
    confirm(page, action(page, "shoe"))
    expect(page.locator("#history-shoe")).to_have_text(
        "shoe #2: no round yet · previous shoe #1, 3 rounds (finished)"
    )
    expect(page.locator("#history-body tr")).to_have_count(3)
    expect(page.locator("#road-bead g.bead")).to_have_count(3)
    expect(page.locator("#road-counts")).to_contain_text("previous shoe #1 (finished): B ")
    expect(page.locator("#recent li")).to_have_count(0)  # this shoe's results: none yet
    start_burn_and_round(station)
    expect(page.locator("#history-shoe")).to_have_text("shoe #2, 1 round")  # one, not "1 rounds"
    expect(page.locator("#history-body tr")).to_have_count(1)
    expect(page.locator("#road-bead g.bead")).to_have_count(1)
    expect(page.locator("#road-bead svg")).to_have_attribute("aria-label", "Bead plate, 1 round")
    expect(page.locator("#road-counts")).not_to_contain_text("previous")


def start_burn_and_round(live: Running) -> None:
    """The burn of a shoe already started, and round 1 (the player wins 9 to 7)."""
    for card in ("2H", "KS", "QD"):
        send(live, {"type": "card", "card": card})
    send(live, {"type": "close_bets"})
    for card, _ in ROUND_1:
        send(live, {"type": "card", "card": card})


def test_a_derived_roads_mark_has_one_shape_in_both_colours(
    page: Page,
    station: Running,
) -> None:
    """Big eye boy: hollow circles, small road: solid dots, cockroach pig: slashes, red
    or blue alike (a colour never changes the shape)."""
    deal_rounds(station, seed=11, rounds=30, faults={})
    login(page, station, "viewer")
    expect(page.locator("#road-bead g.bead")).to_have_count(30)
    expected = {
        "big_eye_boy": ("circle", "hollow"),
        "small_road": ("circle", "solid"),
        "cockroach_pig": ("line", "hollow"),
    }
    for road, (tag, fill) in expected.items():
        shapes = page.evaluate(
            """(road) => [...document.querySelectorAll(`#road-${road} g.mark`)]
            .map((g) => { const m = g.querySelector('.mark-shape');
                return [g.classList.contains('red') ? 'red' : 'blue', m.tagName,
                        [null, 'none'].includes(m.getAttribute('fill')) ? 'hollow' : 'solid',
                        m.getAttribute('stroke-dasharray')]; })""",
            road,
        )
        colours = {c for c, *_ in shapes}
        assert colours == {"red", "blue"}, (road, colours)
        assert {tuple(s[1:]) for s in shapes} == {(tag, fill, None)}, road
