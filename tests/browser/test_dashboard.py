"""The dashboard in Chromium against a live station: login, a round card by card, the
suspension banner and its resolution, what each role may do, reconnection, the journal,
the roads, history and odds."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
from playwright.sync_api import Page, Route, WebSocketRoute, expect

from station.core.cards import ALL_CARDS
from station.core.words import EXPLANATIONS
from tests.browser.pit import (
    BURN,
    ROUND_1,
    action,
    cards_in,
    confirm,
    deal_rounds,
    journal_rows,
    login,
    of_type,
    send,
    serve_on,
    start_round,
    texts,
)
from tests.netkit import free_port
from tests.service.kit import Running, make_config, serve


def test_login_and_a_round_card_by_card(page: Page, station: Running) -> None:
    page.goto(f"{station.url}/")
    expect(page.locator("#main")).to_be_hidden()  # reads need a token on this station
    expect(page.locator("#conn")).to_contain_text("log in")
    page.fill("#token", "not-a-token")
    page.click("#login button[type=submit]")
    expect(page.locator("#login-error")).to_contain_text("not known")

    login(page, station, "dealer")
    stored = page.evaluate("[sessionStorage.getItem('station-token'), localStorage.length]")
    assert stored == [station.tokens["dealer"], 0]  # the browser session only
    expect(action(page, "resume", "#banner")).to_be_hidden()  # supervisor only
    expect(action(page, "close_bets")).to_be_disabled()  # no shoe yet

    confirm(page, action(page, "shoe"), words="new shoe")
    expect(page.locator("#p-shoe")).to_have_text("#1 in play")
    expect(page.locator("#last-action")).to_contain_text("new shoe by test-dealer")
    for card in BURN:
        send(station, {"type": "card", "card": card})
    expect(page.locator("#p-burn")).to_have_text("reveal 2♥, 2 burned")
    expect(page.locator("#expecting")).to_have_text("close bets")

    confirm(page, action(page, "close_bets"))
    expect(page.locator("#round-title")).to_have_text("Round 1")
    expect(page.locator("#expecting")).to_have_text("player first card")
    dealt: dict[str, list[str | None]] = {"player": [], "banker": []}
    for card, side in ROUND_1:
        send(station, {"type": "card", "card": card})
        dealt[side].append(card)
        expect(page.locator(f"#{side}-cards .card[data-card='{card}']")).to_be_visible()
        assert cards_in(page, "player") == dealt["player"]
        assert cards_in(page, "banker") == dealt["banker"]
    expect(page.locator("#player-total")).to_have_text("9")
    expect(page.locator("#banker-total")).to_have_text("7")
    expect(page.locator("#outcome")).to_have_text("Player wins 9 to 7 · player natural")
    expect(page.locator("#player-hand")).to_have_class("hand player won")
    expect(page.locator("#history-body tr")).to_have_count(1)
    expect(page.locator("#history-body tr td.winner")).to_have_text("player")
    expect(page.locator("#road-bead g.bead.player")).to_have_count(1)
    expect(page.locator("#road-big g.big.player")).to_have_count(1)
    expect(page.locator("#p-rounds")).to_have_text("1")

    page.click("#logout")
    expect(page.locator("#main")).to_be_hidden()
    assert page.evaluate("sessionStorage.getItem('station-token')") is None


def test_the_buttons_follow_the_stations_actions_and_words(page: Page, station: Running) -> None:
    """The page re-derives no rule: a button is enabled only if the state's `actions` has
    its event. Its words are the catalogue's for the event's code, in the page's language,
    not the English sentences /api/explanations also carries for other clients."""
    hide_shoe = True

    def live(ws: WebSocketRoute) -> None:
        server = ws.connect_to_server()

        def from_station(message: str | bytes) -> None:
            m = json.loads(message)
            if hide_shoe and "state" in m:
                m["state"]["actions"] = [a for a in m["state"]["actions"] if a != "shoe"]
            ws.send(json.dumps(m))

        server.on_message(from_station)

    def explanations(route: Route) -> None:
        words = route.fetch().json()
        words["events"]["shoe"].update(confirm="Cards shuffled: deal the shoe?", done="fresh shoe")
        words["errors"] = {code: "in English" for code in words["errors"]}
        route.fulfill(json=words)

    page.route_web_socket(re.compile(r"/api/live"), live)
    page.route("**/api/explanations", explanations)
    login(page, station, "dealer")
    expect(action(page, "close_bets")).to_be_disabled()
    expect(action(page, "shoe")).to_be_disabled()  # no shoe in play, but not offered
    hide_shoe = False
    page.reload()
    expect(page.locator("#conn")).to_have_text("Live")
    confirm(page, action(page, "shoe"), words="Start a new shoe?")
    expect(page.locator("#last-action")).to_contain_text("new shoe by test-dealer")
    expect(page.locator("#p-shoe")).to_have_text("#1 in play")


def test_a_station_that_fails_at_page_load_keeps_the_token(page: Page, station: Running) -> None:
    login(page, station, "supervisor")
    page.route("**/api/whoami", lambda route: route.fulfill(status=503, body="busy"))
    page.reload()
    expect(page.locator("p.fatal")).to_contain_text("could not start")
    page.unroute("**/api/whoami")
    page.reload()  # the token was only kept back, not forgotten
    expect(page.locator("#who-name")).to_have_text("test-supervisor (supervisor)")
    page.route("**/api/whoami", lambda route: route.fulfill(status=401, body="{}"), times=1)
    page.reload()  # a token the station no longer knows is forgotten
    expect(page.locator("#login-error")).to_contain_text("no longer valid")
    assert page.evaluate("sessionStorage.getItem('station-token')") is None


def test_fault_banner_and_the_supervisor_resolves_it(page: Page, station: Running) -> None:
    start_round(station)
    login(page, station, "supervisor")
    banner = page.locator("#banner")
    expect(banner).to_be_hidden()
    assert banner.get_attribute("role") == "alert"
    assert banner.get_attribute("aria-live") == "assertive"

    unreadable = send(station, {"type": "card", "card": None, "raw": "NR"})
    expect(banner).to_be_visible()
    expect(page.locator("#banner-reason")).to_have_text(EXPLANATIONS["UNREADABLE_CARD"])
    expect(page.locator("#banner-detail")).to_contain_text(
        f"UNREADABLE_CARD · card: unreadable (enter it below as read by eye) · since row "
        f"{unreadable['seq']} at "
    )
    expect(page.locator("#expecting")).to_have_text("supervisor (resume or void)")

    with_card = page.locator("#resume-card")
    expect(with_card).to_be_disabled()  # no card picked yet
    page.select_option("#pick-rank", "9")
    page.select_option("#pick-suit", "S")
    expect(with_card).to_be_enabled()
    before = len(journal_rows(station))
    confirm(page, with_card, ok=False, words="9♠")  # cancelled: nothing is sent
    expect(banner).to_be_visible()
    assert len(journal_rows(station)) == before

    confirm(page, with_card, words="9♠")
    expect(banner).to_be_hidden()
    expect(page.locator("#player-cards .card[data-card='9S']")).to_be_visible()
    expect(page.locator("#last-action")).to_contain_text("resume 9♠ by test-supervisor")
    expect(page.locator("#journal-body tr", has_text="resume with 9♠")).to_contain_text(
        "test-supervisor"
    )
    resumes = of_type(journal_rows(station), "resume")
    assert [
        (r["actor"], r["source"], r["event"]["card"], r["verdict"]["role"]) for r in resumes
    ] == [("test-supervisor", "api", "9S", "P1")]

    send(station, {"type": "fault", "detail": "reader unplugged"})
    expect(banner).to_be_visible()
    expect(page.locator("#banner-reason")).to_have_text(EXPLANATIONS["SCANNER_FAULT"])
    expect(action(page, "void")).to_be_hidden()  # in the banner while suspended
    confirm(page, action(page, "void", "#banner"), words="Void the round")
    expect(banner).to_be_hidden()
    expect(page.locator("#p-rounds")).to_have_text("0 (+1 voided: 1)")
    assert of_type(journal_rows(station), "void")[0]["actor"] == "test-supervisor"

    confirm(page, action(page, "end_shoe"), words="End the shoe")
    expect(page.locator("#p-shoe")).to_have_text("#1 finished")
    expect(action(page, "shoe")).to_be_enabled()


def test_viewer_sees_everything_and_can_act_on_nothing(page: Page, station: Running) -> None:
    start_round(station)
    send(station, {"type": "card", "card": "9S"})
    send(station, {"type": "card", "card": None})
    login(page, station, "viewer")
    expect(page.locator("#banner")).to_be_visible()
    expect(page.locator("#banner-reason")).to_have_text(EXPLANATIONS["UNREADABLE_CARD"])
    expect(page.locator("[data-viewer-note]")).to_be_visible()
    expect(page.locator("#player-cards .card[data-card='9S']")).to_be_visible()
    expect(page.locator("#journal-body tr")).not_to_have_count(0)
    assert page.locator("button.act").count() == 11
    expect(page.locator("button.act:visible")).to_have_count(0)
    expect(page.locator("fieldset.picker")).to_be_hidden()
    # and the station itself refuses the viewer's token, whatever the page shows
    status = page.evaluate(
        """async (token) => (await fetch('/api/events', {method: 'POST',
        headers: {Authorization: 'Bearer ' + token}, body: '{"type": "resume"}'})).status""",
        station.tokens["viewer"],
    )
    assert status == 403
    expect(page.locator("#banner")).to_be_visible()


def test_dealer_and_supervisor_see_their_own_actions(page: Page, station: Running) -> None:
    start_round(station)
    send(station, {"type": "card", "card": None})
    login(page, station, "dealer")
    visible = texts(page.locator("button.act:visible"))
    assert visible == ["New shoe", "No more bets"]
    expect(page.locator("[data-viewer-note]")).to_be_visible()
    page.click("#logout")
    page.fill("#token", station.tokens["supervisor"])
    page.click("#login button[type=submit]")
    expect(page.locator("#who-name")).to_have_text("test-supervisor (supervisor)")
    expect(page.locator("#banner button.act:visible")).to_have_count(4)
    expect(page.locator("[data-viewer-note]")).to_be_hidden()


def test_disconnect_is_shown_and_the_page_reconnects(page: Page, tmp_path: Path) -> None:
    config, tokens = make_config(tmp_path, allow_rig=True)
    port = free_port()
    with serve_on(config, tokens, port) as first:
        login(page, first, "supervisor")
        start_round(first)
        expect(page.locator("#round-title")).to_have_text("Round 1")
    expect(page.locator("#conn")).to_contain_text("Disconnected")
    expect(page.locator("#conn")).to_have_class("conn conn-down")
    with serve_on(config, tokens, port):
        # the station journals its restart: mid-shoe, that suspends the table
        expect(page.locator("#conn")).to_have_text("Live")
        expect(page.locator("#banner-reason")).to_have_text(EXPLANATIONS["STATION_RESTART"])
        expect(page.locator("#journal-body tr", has_text="STATION_RESTART")).to_have_count(1)


def test_journal_filters_and_export(page: Page, station: Running) -> None:
    start_round(station)
    send(station, {"type": "card", "card": "AS"})
    send(station, {"type": "close_bets"})  # MISSING_CARD: the round still has cards due
    login(page, station, "supervisor")
    body = page.locator("#journal-body tr")
    expect(body.first).to_contain_text("MISSING_CARD")
    total = body.count()
    page.check("#j-errors")
    expect(body).to_have_count(1)
    expect(body).to_contain_text(EXPLANATIONS["MISSING_CARD"])
    page.uncheck("#j-errors")
    page.select_option("#j-actor", "test-dealer")
    expect(body).to_have_count(3)  # shoe, close_bets, close_bets
    assert set(texts(page.locator("#journal-body td.actor"))) == {"test-dealer"}
    page.select_option("#j-actor", "")
    expect(body).to_have_count(total)

    with page.expect_download() as info:
        page.click("#j-download")
    download = info.value
    assert download.suggested_filename.startswith("t-test-journal-")
    lines = [json.loads(x) for x in Path(download.path()).read_text().splitlines()]
    events = [r for r in journal_rows(station) if r["event"]["type"] != "notice"]
    assert [x["journal"]["seq"] for x in lines] == [r["seq"] for r in events]
    assert lines[-1]["type"] == "close_bets" and lines[-1]["verdict"]["error"] == "MISSING_CARD"
    assert lines[-1]["journal"]["actor"] == "test-dealer"


def test_roads_history_and_odds_of_a_dealt_shoe(page: Page, station: Running) -> None:
    deal_rounds(station, seed=11, rounds=24, faults={"unreadable": 0.05, "early_card": 0.05})
    history = httpx.get(f"{station.url}/api/history", headers=station.headers("viewer")).json()
    rounds = history["rounds"]
    assert len(rounds) == 24
    login(page, station, "viewer")
    expect(page.locator("#history-body tr")).to_have_count(24)
    expect(page.locator("#road-bead g.bead")).to_have_count(24)
    ties = sum(r["winner"] == "tie" for r in rounds)
    expect(page.locator("#road-big g.big")).to_have_count(24 - ties)
    for name in ("big_eye_boy", "small_road", "cockroach_pig"):
        expect(page.locator(f"#road-{name} g.mark")).to_have_count(len(history["roads"][name]))
    counts = history["roads"]["counts"]
    expect(page.locator("#road-counts")).to_contain_text(
        f"B {counts['banker']} · P {counts['player']} · T {counts['tie']}"
    )
    first = page.locator("#history-body tr").last  # newest first
    r1 = rounds[0]
    expect(first).to_contain_text(f"{r1['player_total']} – {r1['banker_total']}")
    odds = httpx.get(f"{station.url}/api/odds", headers=station.headers("viewer")).json()["odds"]
    assert odds["next_round"] == 25
    expect(page.locator("#odds-round")).to_contain_text("round 25")
    expect(page.locator("#odds-body tr")).to_have_count(len(odds["house_edge"]))
    banker = page.locator("#odds-body tr", has_text="Banker (no commission)")
    expect(banker).to_contain_text(
        f"{odds['house_edge']['banker_no_commission'] * 100:.3f}%"
    )  # Intl, en-US


def test_the_odds_panel_highlights_a_player_advantage(page: Page, tmp_path: Path) -> None:
    """A one-deck shoe dealt down to four ranks: a pair is then likely enough that the
    pair bets favour the player, and the panel says so."""
    config, tokens = make_config(tmp_path, allow_rig=True)
    config = config.model_copy(update={"table": config.table.model_copy(update={"decks": 1})})
    kept = {"6", "7", "8", "9"}
    out = [c for c in ALL_CARDS if c[0] not in kept]
    rest = [c for c in ALL_CARDS if c[0] in kept]
    with serve(config, tokens) as live:
        send(live, {"type": "shoe"})
        send(live, {"type": "card", "card": out.pop(out.index("AS"))})  # burns one card
        while out or live.station.snapshot.round is not None:
            if live.station.snapshot.due == "close_bets":
                send(live, {"type": "close_bets"})
            verdict = send(live, {"type": "card", "card": (out or rest).pop(0)})
            assert verdict["ok"], verdict
        odds = httpx.get(f"{live.url}/api/odds", headers=live.headers("viewer")).json()["odds"]
        assert "player_pair" in odds["advantage"]
        login(page, live, "viewer")
        alert = page.locator("#odds-alert")
        expect(alert).to_be_visible()
        expect(alert).to_contain_text("ADVANTAGE")
        expect(alert).to_contain_text("the player has the edge on ")
        expect(alert).to_contain_text("Player pair")
        expect(page.locator("#odds-body tr.advantage", has_text="Player pair")).to_have_count(1)
        expect(page.locator("#odds-body tr.advantage")).to_have_count(len(odds["advantage"]))
