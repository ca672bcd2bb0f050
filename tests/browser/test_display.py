"""The table's display (issue 26) in Chromium against a live station: a simulated shoe of
each game dealt through the API while a landscape (1920x1080) and a portrait (1080x1920)
screen watch. Every mark in the DOM is one of /api/history's drawn roads; the status
words follow betting, dealing, suspension and the shuffle; every message the page gets is
inside the allow-list; the page loads nothing from outside the station; its memory stays
flat over the shoe; it reconnects after a station restart and after a silent network; a
display token reads nothing else; the words are each language's."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
from playwright.sync_api import Browser, Page, WebSocket, expect

import station.api.display
from tests.browser.cable import Cable
from tests.browser.pit import send, serve_on
from tests.display_payload import check_message
from tests.displaykit import deal, display_config, history, shoe_events, words
from tests.netkit import free_port
from tests.service.kit import Running, serve

WORDS = words()
SCREENS = {"landscape": (1920, 1080), "portrait": (1080, 1920)}
DERIVED = ("big_eye_boy", "small_road", "cockroach_pig")


@dataclass
class Screen:
    """A display page, with every message its socket got and every URL it asked for."""

    page: Page
    messages: list[dict[str, Any]] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def socket(self, ws: WebSocket) -> None:
        self.urls.append(ws.url)
        ws.on("framereceived", lambda frame: self.messages.append(orjson.loads(frame)))


def screen(
    browser: Browser,
    url: str,
    orientation: str = "landscape",
    token: str | None = None,
    lang: str | None = None,
) -> Screen:
    width, height = SCREENS[orientation]
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(10_000)
    page = context.new_page()
    shown = Screen(page)
    page.on("pageerror", lambda exc: shown.errors.append(str(exc)))
    page.on("request", lambda request: shown.urls.append(request.url))
    page.on("websocket", shown.socket)
    query = f"?lang={lang}" if lang else ""
    fragment = f"#token={token}" if token else ""
    page.goto(f"{url}/display{query}{fragment}")
    return shown


def live_on(shown: Screen) -> None:
    expect(shown.page.locator("body")).to_have_attribute("data-connection", "live")


def status(shown: Screen, expected: str, lang: str = "en") -> None:
    locator = shown.page.locator("#status")
    expect(locator).to_have_attribute("data-status", expected)
    expect(locator).to_have_text(WORDS[lang][f"status_{expected}"])


def dom_marks(page: Page) -> list[tuple[Any, ...]]:
    """Every drawn mark: (road, col, row, mark, ties) from its data attributes."""
    marks: list[list[Any]] = page.evaluate(
        """() => [...document.querySelectorAll("g[data-road]")].map((g) => [g.dataset.road,
             Number(g.dataset.col), Number(g.dataset.row), g.dataset.mark,
             g.dataset.ties === undefined ? null : Number(g.dataset.ties)])"""
    )
    return sorted(tuple(m) for m in marks)


def bank_of(tableau1: str, tableau2: str) -> str:
    """How the bank fared (docs/display.md's words): more tableaux beaten than lost is a win."""
    net = [tableau1, tableau2].count("lose") - [tableau1, tableau2].count("win")
    return "win" if net > 0 else "lose" if net < 0 else "even"


def history_marks(live: Running) -> list[tuple[Any, ...]]:
    """/api/history's drawn roads of this shoe, as the display must show them."""
    roads = history(live)["roads"]
    out: list[tuple[Any, ...]] = []
    if roads.get("game") == "baccarat_banque":
        plates = {t: roads[t]["bead_plate"] for t in ("tableau1", "tableau2")}
        for t, plate in plates.items():
            out += [(f"{t}.bead_plate", b["x"], b["y"], b["outcome"], None) for b in plate]
        for one, two in zip(plates["tableau1"], plates["tableau2"], strict=True):
            out.append(("bank", one["x"], one["y"], bank_of(one["outcome"], two["outcome"]), None))
        return sorted(out)
    out += [("bead_plate", b["x"], b["y"], b["winner"], None) for b in roads["bead_plate"]]
    for i, c in enumerate(roads["big_road"]):
        ties = c["ties"] + (roads["leading_ties"] if i == 0 else 0)
        out.append(("big_road", c["x"], c["y"], c["winner"], ties))
    for name in DERIVED:
        out += [(name, m["x"], m["y"], m["colour"], None) for m in roads[name]]
    return sorted(out)


def same_marks(live: Running, screens: list[Screen]) -> None:
    expected = history_marks(live)
    rounds = history(live)["roads"]["counts"]["rounds"]
    for shown in screens:
        expect(shown.page.locator("body")).to_have_attribute("data-drawn", str(rounds))
        assert dom_marks(shown.page) == expected


def checked(screens: list[Screen], station_url: str) -> None:
    """Every message inside the allow-list; every URL the station's; no page error."""
    ws_url = station_url.replace("http://", "ws://")
    for shown in screens:
        assert shown.messages
        for message in shown.messages:
            check_message(message)
        outside = [u for u in shown.urls if not u.startswith((station_url, ws_url))]
        assert outside == []
        assert shown.errors == []


@contextmanager
def table(tmp_path: Path, game: str, **display: Any) -> Iterator[Running]:
    config, tokens = display_config(tmp_path, game, **{"announce": 2.0, **display})
    with serve(config, tokens) as live:
        yield live


@pytest.mark.parametrize("game", ["punto_banco", "chemin_de_fer", "baccarat_banque"])
def test_a_whole_shoe_on_both_screens(browser: Browser, tmp_path: Path, game: str) -> None:
    with table(tmp_path, game) as live:
        screens = [
            screen(browser, live.url, orientation, live.tokens["display"])
            for orientation in SCREENS
        ]
        for shown in screens:
            live_on(shown)
            status(shown, "shuffling")
        events = shoe_events(game, 21)
        burned = game == "punto_banco"
        first = next(events)
        assert first["type"] == "shoe"
        send(live, {"type": "shoe"})
        for shown in screens:
            status(shown, "new_shoe" if burned else "betting_open")
        # Round 1, event by event; then a suspension between rounds and one in a round.
        for event in events:
            expect_error = event.pop("expect")
            verdict = send(live, event)
            assert verdict["error"] == expect_error
            snapshot = live.station.snapshot
            if event["type"] == "close_bets":
                now = "no_more_bets"
            elif verdict["result"] is not None:
                now = "betting_open"
            elif snapshot.reveal_due or snapshot.burns_due:
                now = "new_shoe"
            elif snapshot.round is not None:
                now = "dealing"
            else:
                now = "betting_open"  # the burn is over
            for shown in screens:
                status(shown, now)
            if verdict["result"] is not None:
                break
        same_marks(live, screens)
        announced = screens[0].page.locator("#announce")
        expect(announced).to_be_visible()
        expect(announced).to_have_attribute("data-round", "1")
        expect(announced).to_be_hidden()  # after [display] announce (2 s here)
        send(live, {"type": "fault", "detail": "port lost"})  # between rounds
        for shown in screens:
            status(shown, "paused")
        send(live, {"type": "resume"})
        for shown in screens:
            status(shown, "betting_open")
        close = next(events)
        assert close.pop("expect") is None and close["type"] == "close_bets"
        assert send(live, close)["ok"]
        for shown in screens:
            status(shown, "no_more_bets")
        send(live, {"type": "fault", "detail": "port lost"})  # in a round
        for shown in screens:
            status(shown, "paused")
        send(live, {"type": "resume"})
        for shown in screens:
            status(shown, "no_more_bets")
        heap = Heap(screens[0].page)
        for rounds in (9, 20):
            assert deal(live, events, rounds) == rounds
            same_marks(live, screens)
            if rounds == 9:
                early = heap.used()
        deal(live, events, 1000)  # to the shoe's end
        assert not live.station.snapshot.in_play
        for shown in screens:
            status(shown, "shuffling")
        same_marks(live, screens)
        # Flat memory: the page keeps the last payload only; a whole shoe's roads (every
        # road at its longest) cost it well under a megabyte more than ten rounds did.
        assert heap.used() - early < 1_000_000, (early, heap.used())
        checked(screens, live.url)


class Heap:
    """A page's JavaScript heap, measured after a garbage collection (Chrome DevTools)."""

    def __init__(self, page: Page) -> None:
        self.cdp = page.context.new_cdp_session(page)
        self.cdp.send("Performance.enable")

    def used(self) -> float:
        self.cdp.send("HeapProfiler.collectGarbage")
        metrics = self.cdp.send("Performance.getMetrics")["metrics"]
        return float(next(m["value"] for m in metrics if m["name"] == "JSHeapUsedSize"))


def test_the_screen_reconnects_after_a_station_restart(browser: Browser, tmp_path: Path) -> None:
    """The station stops: the screen says it is connecting and keeps what it drew; the
    station is back (its shoe in play, so the table is paused until a supervisor resumes):
    the screen is live again by itself, with the same marks."""
    config, tokens = display_config(tmp_path)
    port = free_port()
    events = shoe_events("punto_banco", 5)
    with serve_on(config, tokens, port) as live:
        shown = screen(browser, live.url, "portrait", tokens["display"])
        live_on(shown)
        deal(live, events, 6)
        same_marks(live, [shown])
        drawn = dom_marks(shown.page)
        url = live.url
    expect(shown.page.locator("body")).to_have_attribute("data-connection", "connecting")
    expect(shown.page.locator("#connection")).to_have_text(WORDS["en"]["connecting"])
    assert dom_marks(shown.page) == drawn  # nothing lost while the station is away
    time.sleep(1)
    assert dom_marks(shown.page) == drawn
    with serve_on(config, tokens, port) as live:
        live_on(shown)
        expect(shown.page.locator("#connection")).to_be_hidden()
        status(shown, "paused")  # STATION_RESTART in a shoe: the players see a pause only
        assert dom_marks(shown.page) == drawn == history_marks(live)
        send(live, {"type": "resume"})
        status(shown, "betting_open")
        deal(live, events, 2)
        same_marks(live, [shown])
    checked([shown], url)


def test_the_screen_reconnects_after_a_silent_network(
    browser: Browser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cable pulled says nothing: the page notices the station's silence (three missed
    signs of life), says it is connecting, and is live again once the cable is back."""
    monkeypatch.setattr(station.api.display, "KEEPALIVE", 0.5)
    config, tokens = display_config(tmp_path)
    with serve(config, tokens) as live, Cable(int(live.url.rpartition(":")[2])) as cable:
        url = f"http://127.0.0.1:{cable.port}"
        shown = screen(browser, url, "landscape", tokens["display"])
        live_on(shown)
        deal(live, shoe_events("punto_banco", 9), 3)
        same_marks(live, [shown])
        drawn = dom_marks(shown.page)
        cable.silence()
        pulled = time.monotonic()
        expect(shown.page.locator("body")).to_have_attribute("data-connection", "connecting")
        assert time.monotonic() - pulled < 5
        assert dom_marks(shown.page) == drawn
        cable.restore()
        live_on(shown)
        send(live, {"type": "close_bets"})
        status(shown, "no_more_bets")
        checked([shown], url)


def test_the_token_is_given_once_in_the_fragment(browser: Browser, tmp_path: Path) -> None:
    config, tokens = display_config(tmp_path)
    with serve(config, tokens) as live:
        shown = screen(browser, live.url, "landscape", tokens["display"])
        live_on(shown)
        page = shown.page
        assert page.evaluate("location.hash") == ""  # wiped from the address at once
        assert page.evaluate("localStorage.getItem('baccarat-display-token')") == tokens["display"]
        page.goto(f"{live.url}/display")  # a restart of the kiosk: no fragment, still live
        live_on(shown)
        assert tokens["display"] not in "".join(shown.urls[:2])  # never in a page's URL
        checked([shown], live.url)


def test_a_screen_without_a_good_token_says_so(browser: Browser, tmp_path: Path) -> None:
    config, tokens = display_config(tmp_path)
    with serve(config, tokens) as live:
        for token in (None, "not-a-token"):
            shown = screen(browser, live.url, "landscape", token)
            line = shown.page.locator("#connection")
            expect(shown.page.locator("body")).to_have_attribute("data-connection", "refused")
            expect(line).to_have_text(WORDS["en"]["refused"])
            assert shown.page.locator("g[data-road]").count() == 0


def test_a_public_screen_needs_no_token(browser: Browser, tmp_path: Path) -> None:
    with table(tmp_path, "punto_banco", public=True) as live:
        shown = screen(browser, live.url, "portrait")
        live_on(shown)
        deal(live, shoe_events("punto_banco", 2), 4)
        same_marks(live, [shown])


def test_a_display_token_reads_nothing_else(browser: Browser, tmp_path: Path) -> None:
    """From the page's own origin, with the page's own token: every other read is refused,
    and so is the dashboard's feed."""
    with table(tmp_path, "punto_banco") as live:
        shown = screen(browser, live.url, "landscape", live.tokens["display"])
        live_on(shown)
        statuses = shown.page.evaluate(
            """async (paths) => {
                const token = localStorage.getItem("baccarat-display-token");
                const out = {};
                for (const path of paths) {
                  const r = await fetch(path, { headers: { Authorization: `Bearer ${token}` } });
                  out[path] = r.status;
                }
                const post = await fetch("/api/events", {
                  method: "POST", body: '{"type":"shoe"}',
                  headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
                });
                out.post = post.status;
                out.live = await new Promise((done) => {
                  const ws = new WebSocket(`ws://${location.host}/api/live?token=${token}`);
                  ws.onmessage = () => done("message");
                  ws.onclose = (ev) => done(ev.code);
                });
                out.display = (await fetch("/api/display", {
                  headers: { Authorization: `Bearer ${token}` } })).status;
                return out;
            }""",
            ["/api/state", "/api/history", "/api/odds", "/api/journal", "/api/export", "/metrics"],
        )
        assert statuses == {
            "/api/state": 403,
            "/api/history": 403,
            "/api/odds": 403,
            "/api/journal": 403,
            "/api/export": 403,
            "/metrics": 403,
            "post": 403,
            "live": 1008,
            "display": 200,
        }


def test_the_dashboard_sends_a_display_token_to_its_screen(
    browser: Browser, tmp_path: Path
) -> None:
    """A display token typed into the dashboard's login is not kept (every read would be
    refused): the login says it is a display token and links to /display with it, and
    the link opens a live display. A display token left in the tab is dropped the same
    way on the next visit."""
    with table(tmp_path, "punto_banco") as live:
        token = live.tokens["display"]
        page = browser.new_page()
        page.goto(f"{live.url}/")
        page.fill("#token", token)
        page.click("#login button[type=submit]")
        error = page.locator("#login-error")
        expect(error).to_contain_text("This is a display token")
        expect(page.locator("#login")).to_be_visible()
        expect(page.locator("#main")).to_be_hidden()
        assert page.evaluate("() => sessionStorage.length") == 0
        link = error.locator("a")
        assert link.get_attribute("href") == f"{live.url}/display#token={token}"
        # A tab that kept a display token from before (set by hand here) forgets it too.
        page.evaluate("(t) => sessionStorage.setItem('station-token', t)", token)
        page.reload()
        expect(error).to_contain_text("This is a display token")
        link.click()
        expect(page.locator("body")).to_have_attribute("data-connection", "live")
        assert page.evaluate("() => sessionStorage.length") == 0
        page.close()


@pytest.mark.parametrize("lang", ["fr", "zh-Hant", "zh-Hans"])
def test_each_language(browser: Browser, tmp_path: Path, lang: str) -> None:
    """The URL's language wins over the station's; every word shown is that language's."""
    with table(tmp_path, "punto_banco", language="fr" if lang != "fr" else "en") as live:
        shown = screen(browser, live.url, "landscape", live.tokens["display"], lang)
        live_on(shown)
        deal(live, shoe_events("punto_banco", 3), 2)
        send(live, {"type": "close_bets"})
        page, table_words = shown.page, WORDS[lang]
        status(shown, "no_more_bets", lang)
        assert page.evaluate("document.documentElement.lang") == lang
        expect(page.locator("#game-name")).to_have_text(table_words["game_punto_banco"])
        expect(page.locator("[data-count=banker] .label")).to_have_text(
            table_words["letter_banker"]
        )
        expect(page.locator("[data-bet=tie] .bet")).to_have_text(table_words["bet_tie"])
        caption = page.locator("[data-shows=cockroach_pig] h2")
        expect(caption).to_have_text(table_words["road_cockroach_pig"])
        expect(page.locator(".ask-row.banker .ask-side")).to_have_text(table_words["ask_banker"])


def test_the_stations_language_and_number_format(browser: Browser, tmp_path: Path) -> None:
    with table(tmp_path, "punto_banco", language="fr", currency="EUR", locale="fr-FR") as live:
        shown = screen(browser, live.url, "landscape", live.tokens["display"])
        live_on(shown)
        status(shown, "shuffling", "fr")
        banker = shown.page.locator("[data-bet=banker]")
        expect(banker.locator(".bet")).to_have_text("Banque")
        # French writes 50 000 € (a narrow no-break space between the thousands)
        expect(banker.locator(".max")).to_have_text("50\u202f000\u00a0€")
        expect(banker.locator(".min")).to_have_text("100\u00a0€")
