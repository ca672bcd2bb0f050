"""The staff's screens and the players' display in every language, in Chromium against
real services: a supervisor dashboard on a suspended table (the card, the banner, the
resume, the journal's notices) and with the station's integrity alerts, the floor view
with a suspended table and a gap alert, a floor with an alert of every code, a station's
alerts and a table whose state is not known, and a station's protection alert, the
display of a shoe with a voided round and a long table name.

Under the pseudo-language (`?lang=qps`: every piece of catalogue text between ⟦ ⟧) no
visible text comes from anywhere but the catalogue (what is left is data: names, card
codes, numbers, the station's codes). In English, French and both Chinese scripts, at a
desktop's and a phone's size (the display: landscape and portrait), no text overflows
its box; the screenshots go to docs/i18n/ with STATION_SCREENSHOTS=1 (looked at when
they change, then committed)."""

from __future__ import annotations

import asyncio
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from station.floor.alerts import (
    EPOCH,
    FORGED_MESSAGE,
    FORGED_ROW,
    HELD_FULL,
    NEW_KEY,
    ROLLBACK,
    STALE_HEARTBEAT,
)
from station.floor.archive import Archive
from station.floor.holding import UNSIGNED, full_words
from station.floor.said import CODES as SAID_CODES
from station.floor.said import Said
from station.floor.witness import Witness
from station.live.display_config import DashboardConfig
from station.live.journal import Journal
from station.shared.messages import Heartbeat
from tests.browser.pit import deal_rounds, send
from tests.browser.test_floor import floor, running  # noqa: F401  (the floor's fixtures)
from tests.displaykit import deal, display_config, shoe_events, words
from tests.floor.floorkit import (
    RunningFloor,
    floor_config,
    heartbeat,
    make_journal,
    publish_rows,
    serve_floor,
    station_alert,
    wait_for,
)
from tests.floor.floorkit import shoe_events as floor_events
from tests.floor.kit import SITE, FloorBroker
from tests.floor.test_protection import weak_shuffle_notice
from tests.protection.test_live import config_for
from tests.protection.test_live import deal as protection_deal
from tests.protection.test_watch import shoes_events
from tests.readerkit import wait_until
from tests.service.kit import Running, make_config, serve

DOCS = Path(__file__).resolve().parents[2] / "docs" / "i18n"
SCRATCH = Path(tempfile.gettempdir()) / "station-i18n-screenshots"
LANGUAGES = ("en", "fr", "zh-Hant", "zh-Hans")
STAFF_SIZES = {"desktop": (1366, 768), "phone": (390, 844)}
DISPLAY_SIZES = {"landscape": (1920, 1080), "portrait": (1080, 1920)}
LONG_NAME = "Salon Privé · Table 7"

#: Every visible text of the page (text nodes, and the labels a screen reader reads) with
#: where it is, and every element whose text is cut or sticks out of its box.
LOOK = r"""() => {
  const visible = (el) => el && el.getClientRects().length > 0
    && getComputedStyle(el).visibility !== "hidden";
  const texts = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!n.textContent.trim() || !visible(el) || el.closest("#language, script, style")) continue;
    texts.push({ where: el.id || el.className || el.tagName, text: n.textContent.trim() });
  }
  for (const el of document.body.querySelectorAll("*")) { // words a style sheet adds
    if (!visible(el)) continue;
    for (const pseudo of ["::before", "::after"]) {
      const content = getComputedStyle(el, pseudo).content;
      const attr = /^attr\(([\w-]+)\)$/.exec(content);
      const quoted = /^".*"$/.test(content) ? content.slice(1, -1) : "";
      const text = (attr ? el.getAttribute(attr[1]) : quoted) || "";
      const where = `${el.id || el.className}${pseudo}`;
      if (text.trim()) texts.push({ where, text: text.trim() });
    }
  }
  for (const el of document.querySelectorAll("[aria-label], [title]")) {
    if (!visible(el) || el.closest("#language")) continue;
    for (const name of ["aria-label", "title"]) {
      const v = el.getAttribute(name);
      if (v && v.trim()) texts.push({ where: `${el.id || el.tagName}@${name}`, text: v.trim() });
    }
  }
  const vw = document.documentElement.clientWidth;
  const cut = [];
  for (const el of document.body.querySelectorAll("*")) {
    const own = [...el.childNodes].some((c) => c.nodeType === 3 && c.textContent.trim());
    if (!visible(el) || el.closest("svg") || !own) continue;
    const style = getComputedStyle(el);
    const scrolls = (v) => v === "auto" || v === "scroll";
    const r = el.getBoundingClientRect();
    const clipped = style.overflowX !== "visible" && !scrolls(style.overflowX)
      && el.scrollWidth > el.clientWidth + 1;
    const clippedY = style.overflowY !== "visible" && !scrolls(style.overflowY)
      && el.scrollHeight > el.clientHeight + 2;
    const inScroller = el.closest(".scroll, .scroll-x, .road, .box, table");
    const out = !inScroller && (r.right > vw + 1 || r.left < -1);
    const where = el.id || el.className || el.tagName;
    if (clipped || clippedY || out) {
      cut.push({ where, text: el.textContent.trim().slice(0, 60), clipped, clippedY, out });
    }
  }
  return { texts, cut, page: document.documentElement.scrollWidth, viewport: vw };
}"""

#: What may show outside the catalogue's ⟦ ⟧: data (names, ids, card codes, numbers,
#: the station's codes like UNREADABLE_CARD, a fingerprint, a path) and punctuation.
DATA = [
    r"test-\w+",
    r"site-\d",
    r"t-test",
    r"table-\d",
    r"(10|[2-9AJQK])[♠♥♦♣]",
    r"\b([PB][123]|T[12]\.[123]|B\.[123])\b",
    r"\b[A-Z][A-Z0-9_]{2,}\b",
    r"\b[0-9a-f]{8,}\b",
    r"/[\w./#=-]*",
    r"\b(sim|none|serial)\b",
    r"Salon Privé · Table 7|Table 7",
    r"\bs\b",
    r"\d(\.\d+)?E-?\d+",  # a probability, Intl's scientific form
]


def foreign(texts: list[dict[str, str]], also: tuple[str, ...] = ()) -> list[dict[str, str]]:
    """The texts that hold a letter outside the catalogue's ⟦ ⟧ and outside the data."""
    left = []
    for t in texts:
        rest = re.sub(r"⟦[^⟦⟧]*⟧", " ", t["text"])
        for pattern in [*also, *DATA]:  # the caller's data first: it may hold an id
            rest = re.sub(pattern, " ", rest)
        if re.search(r"[^\W\d_]", rest):
            left.append({**t, "left": rest.strip()})
    return left


def look(page: Page) -> dict[str, Any]:
    answer: dict[str, Any] = page.evaluate(LOOK)
    return answer


def no_overflow(page: Page, what: str) -> None:
    seen = look(page)
    assert seen["page"] <= seen["viewport"] + 1, f"{what}: the page scrolls sideways"
    assert seen["cut"] == [], f"{what}: text cut or out of its box: {seen['cut']}"


def shot(page: Page, name: str) -> None:
    """The page as a picture: into docs/i18n/ with STATION_SCREENSHOTS=1 (to look at and
    commit), else into a scratch folder (a test run leaves the tree as it was)."""
    folder = DOCS if os.environ.get("STATION_SCREENSHOTS") == "1" else SCRATCH
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


# -- the supervisor dashboard on a suspended table ----------------------------------------


@pytest.fixture
def suspended(live: Running) -> Running:
    """Three rounds dealt, then a card the reader could not identify: suspended."""
    deal_rounds(live, seed=3, rounds=3, faults={})
    send(live, {"type": "close_bets"})
    send(live, {"type": "card", "card": None})
    return live


def dashboard(browser: Browser, live: Running, lang: str, size: tuple[int, int]) -> Page:
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    context.set_default_timeout(10_000)
    page = context.new_page()
    page.goto(f"{live.url}/?lang={lang}")
    page.fill("#token", live.tokens["supervisor"])
    page.click("#login button[type=submit]")
    expect(page.locator("#banner")).to_be_visible()
    expect(page.locator("#conn")).to_have_class(re.compile(r"conn-live"))
    expect(page.locator("#journal-body tr").first).to_be_visible()
    expect(page.locator("#odds-body tr").first).to_be_visible()
    expect(page.locator("#pace-body tr").first).to_be_visible()  # read a second after
    return page


def test_the_dashboard_shows_no_word_outside_the_catalogue(
    browser: Browser, suspended: Running
) -> None:
    page = dashboard(browser, suspended, "qps", STAFF_SIZES["desktop"])
    page.select_option("#pick-rank", "7")
    page.select_option("#pick-suit", "H")
    page.click("#resume-card")  # the confirmation's words too
    expect(page.locator("#confirm")).to_be_visible()
    # The journal's notices too: each fixed message said from the catalogue.
    notices = [t for t in look(page)["texts"] if t["text"].startswith("⟦notice: ⟧")]
    assert notices, "the journal shows the station's notices"
    left = foreign(look(page)["texts"])
    assert left == [], "\n".join(f"{t['where']}: {t['text']!r} -> {t['left']!r}" for t in left)
    page.context.close()


def raise_integrity_alerts(live: Running) -> None:
    """The station's three integrity alerts, raised on its own loop as its checks raise
    them: a discontinuity found at start (its words made by the station), forged outbox
    entries and webhooks withheld after the floor's rows (figures as they send them)."""
    station, loop = live.station, live.station.loop
    assert loop is not None

    async def alerts() -> None:
        station._discontinuity_alert("ABC_1 ABC_2", 12)
        station.alert(
            "OUTBOX_FORGED", "English words", {"count": 2, "first": "ABC_1", "detail": "ABC_2"}
        )
        figures = {"detail": "ABC_1", "count": 3, "after": 9, "epoch": 1, "variant": "held"}
        station.alert("WEBHOOKS_WITHHELD", "English words", figures)

    asyncio.run_coroutine_threadsafe(alerts(), loop).result(10)


def test_the_dashboards_integrity_alerts_are_said_in_the_catalogues_words(
    browser: Browser, suspended: Running
) -> None:
    """The banner says each integrity alert as a whole sentence from the catalogue (what
    the station found, its `detail`, is its own record: data here); in traditional Chinese
    the discontinuity reads as the catalogue says it."""
    raise_integrity_alerts(suspended)
    page = dashboard(browser, suspended, "qps", STAFF_SIZES["desktop"])
    items = page.locator("#integrity-alerts li")
    expect(items).to_have_count(3)
    texts = [t for t in look(page)["texts"] if t["where"] == "LI" and "⟦" in t["text"]]
    said = [t for t in texts if "station journal" in t["text"]]
    assert len(said) >= 2 and not [t for t in texts if "English words" in t["text"]]
    banner = page.locator("#integrity-banner")
    expect(banner).to_contain_text("⟦STATION ALERT")
    shown = look(page)["texts"]
    whole = [t for t in shown if t["where"] in ("integrity-banner-title", "detail advice")]
    left = foreign(said + whole + [t for t in texts if "ABC_" in t["text"]], also=(r"ABC_\d",))
    assert left == [], "\n".join(f"{t['where']}: {t['text']!r} -> {t['left']!r}" for t in left)
    page.context.close()
    page = dashboard(browser, suspended, "zh-Hant", STAFF_SIZES["desktop"])
    sentence = words()["zh-Hant"]["integrity.said.JOURNAL_DISCONTINUITY"].split("{")[0]
    expect(page.locator("#integrity-alerts")).to_contain_text(sentence)
    expect(page.locator("#integrity-alerts")).to_contain_text("第 12 行")
    no_overflow(page, "dashboard zh-Hant integrity alerts")
    shot(page, "dashboard-zh-Hant-integrity")
    page.context.close()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_dashboard_fits_in_every_language(
    browser: Browser, suspended: Running, lang: str
) -> None:
    for size_name, size in STAFF_SIZES.items():
        page = dashboard(browser, suspended, lang, size)
        expect(page.locator("html")).to_have_attribute("lang", lang)
        if lang != "en":
            expect(page.locator("#banner-reason")).to_have_text(
                words()[lang]["error.UNREADABLE_CARD"]
            )
        no_overflow(page, f"dashboard {lang} {size_name}")
        shot(page, f"dashboard-{lang}-{size[0]}")
        page.context.close()


@pytest.mark.parametrize(
    ("lang", "suit", "question", "done"),
    [
        ("fr", "♥ cœur", "Reprendre avec 7♥, lue à l’œil", "reprise 7♥ par test-supervisor"),
        ("zh-Hant", "♥ 紅心", "以目視所見的 7♥ 恢復", "恢復 7♥，由 test-supervisor"),
    ],
)
def test_a_supervisor_resumes_with_the_card_read_by_eye_in_their_language(
    browser: Browser, suspended: Running, lang: str, suit: str, question: str, done: str
) -> None:
    """From the card to the resume without an English word: the banner, the picker, the
    question, the line that says it was done."""
    page = dashboard(browser, suspended, lang, STAFF_SIZES["desktop"])
    table = words()[lang]
    expect(page.locator("#banner-title")).to_have_text(table["dash.suspended_title"])
    expect(page.locator("#banner-detail")).to_contain_text(table["dash.banner_unreadable_enter"])
    page.select_option("#pick-rank", "7")
    page.select_option("#pick-suit", "H")
    expect(page.locator("#pick-suit option:checked")).to_have_text(suit)
    page.click("#resume-card")
    expect(page.locator("#confirm-text")).to_contain_text(question)
    page.click("#confirm-ok")
    expect(page.locator("#banner")).to_be_hidden()
    expect(page.locator("#last-action")).to_contain_text(done)
    page.context.close()


def test_the_language_is_remembered_per_person(browser: Browser, suspended: Running) -> None:
    """The header's switch: chosen once, the page comes back in it (localStorage), over
    the browser's own language; the token is kept."""
    context = browser.new_context(locale="fr-FR", viewport={"width": 1366, "height": 768})
    page = context.new_page()
    page.goto(f"{suspended.url}/")
    expect(page.locator("html")).to_have_attribute("lang", "fr")  # the browser's language
    page.fill("#token", suspended.tokens["supervisor"])
    page.click("#login button[type=submit]")
    expect(page.locator("#who-name")).to_have_text("test-supervisor (chef de table)")
    page.select_option("#language", "zh-Hant")
    expect(page.locator("html")).to_have_attribute("lang", "zh-Hant")
    expect(page.locator("#banner-title")).to_have_text("枱面暫停")
    expect(page.locator("#who-name")).to_have_text("test-supervisor（主管）")
    page.goto(f"{suspended.url}/")
    expect(page.locator("#event-resume, button.act[data-event=resume]").first).to_have_text("恢復")
    context.close()


# -- the floor view -------------------------------------------------------------------------


def floor_page(browser: Browser, running: RunningFloor, lang: str, size: tuple[int, int]) -> Page:  # noqa: F811
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    context.set_default_timeout(10_000)
    page = context.new_page()
    page.goto(f"{running.url}/?lang={lang}")
    page.fill("#token", running.tokens["supervisor"])
    page.click("#login button[type=submit]")
    expect(page.locator(".tcard").first).to_be_visible()
    expect(page.locator("#alerts li").first).to_be_visible()
    return page


@pytest.mark.floor
def test_the_floor_shows_no_word_outside_the_catalogue(
    browser: Browser,
    running: RunningFloor,  # noqa: F811
) -> None:
    page = floor_page(browser, running, "qps", STAFF_SIZES["desktop"])
    # The gap alert's message too: said from its figures, not as the floor service wrote it.
    left = foreign(look(page)["texts"], also=(r"127\.0\.0\.1:\d+", r"nats://\S+"))
    assert left == [], "\n".join(f"{t['where']}: {t['text']!r} -> {t['left']!r}" for t in left)
    page.context.close()


#: Each alert code's kind (what the floor view names it by) for the floor of every alert.
KIND_OF = {
    "malformed": "malformed",
    "altered": "altered",
    "gap_row": "gap",
    "gap_rows": "gap",
    "chain": "chain",
    "chain_after_gap": "chain",
    "conflict": "conflict",
    "conflict_unarchived": "conflict",
    "late": "late",
    "epoch_restored": EPOCH,
    "epoch_discontinuity": EPOCH,
    "rollback": ROLLBACK,
    "rollback_beat": ROLLBACK,
    "key_waits": NEW_KEY,
    "key_unknown": NEW_KEY,
    "key_named": NEW_KEY,
    "held_full_pending": HELD_FULL,
    "held_full_unsigned": HELD_FULL,
    "protection_off": "protection",
}


def figures_of(code: str) -> dict[str, Any]:
    """Figures of the kind the floor sends for `code`: rows and counts as numbers, a
    decision's time as a time (today's: written as a clock), anything else a data-like
    word (an id, a hash's prefix)."""
    return {
        name: datetime.now(UTC).isoformat() if name == "at" else "ABC_1" if name in TEXTS else 7
        for name in SAID_CODES[code]
    }


#: A station's alerts as its publisher sends them (its `detail`: its record, data here).
STATION_SAID = {
    "foreign": {"stream_seq": 7, "detail": "ABC_1", "after": 8},
    "discontinuity": {"detail": "ABC_1"},
    "conflict": {"detail": "ABC_1"},
}
TEXTS = {"detail", "hash", "have", "prev", "expected", "fp", "named", "by", "table", "ts"}
TEXTS |= {"last", "error"}


def produced() -> list[tuple[str, Said, str]]:
    """A STALE_HEARTBEAT, a heartbeat's ROLLBACK and a HELD_FULL as the floor's own
    producers word them (the witness judging a replayed heartbeat of a refused publisher,
    the held rows' bound): table, words, kind."""
    told: list[tuple[str, Said, str]] = []
    witness = Witness()
    witness.on_forged = lambda table, said, kind: told.append((table, said, kind))
    beat = Heartbeat(
        SITE, "table-91", "2026-12-01T00:00:00Z", 40, "0" * 64, 40, "refused",
        "punto_banco", 1, None, False, None,
    )  # fmt: skip
    assert not witness.fresh("table-91", beat)  # days behind the floor's clock: a replay
    witness.diverged("table-92", replace(beat, table="table-92"), 30)
    full = ("table-93", full_words("table-93", UNSIGNED, 500), HELD_FULL)
    return [*told, full]


@pytest.fixture
def every_alert(
    tmp_path: Path,
    floor: FloorBroker,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[RunningFloor]:
    """The floor of tests/browser/test_floor.py (a suspended table, a table with a real
    gap, one never heard from) whose archive also holds an alert of every code the floor
    service can raise, each raised as the service raises it (`raise_once`, in the
    archive's transaction) for a table of its own."""
    config, tokens = floor_config(tmp_path, floor, monkeypatch, tables=("table-1", "table-2"))
    with Archive(config.archive.path) as archive:
        for i, code in enumerate(SAID_CODES):
            kind = KIND_OF.get(code, FORGED_MESSAGE if "alert" in code else FORGED_ROW)
            kind = STALE_HEARTBEAT if code.startswith("stale_") else kind
            said = Said(code, f"the English words of {code}", figures_of(code))
            assert archive.forged_message(f"table-{i + 3}", said, kind).raised
        for table, said, kind in produced():
            assert archive.forged_message(table, said, kind).raised
    events = floor_events(seed=1, decks=1)
    dealing = make_journal(tmp_path / "t2.db", "table-2", events[:30])
    with serve_floor(config, tokens) as served:
        publish_rows(floor, "table-2", dealing[:20] + dealing[21:])  # row 21 lost: a gap
        wait_for(lambda: served.table("table-2")["held"] == len(dealing) - 21, "the rows")
        heartbeat(floor, "table-2", len(dealing))
        wait_for(lambda: served.table("table-2")["online"], "the heartbeat")
        for code, figures in STATION_SAID.items():  # what its publisher tells the floor
            station_alert(floor, "table-2", code, f"the English words of {code}", figures)
        wait_for(lambda: len(served.table("table-2")["station_alerts"]) == 3, "its alerts")
        yield served


@pytest.mark.floor
def test_every_floor_alert_is_said_in_the_catalogues_words(
    browser: Browser, every_alert: RunningFloor
) -> None:
    """Every alert code's words come from the catalogue (its figures are data), not from
    the service's English message; in French and traditional Chinese the ROLLBACK, the
    STALE_HEARTBEAT and the HELD_FULL read as the catalogue says them."""
    alerts = httpx.get(f"{every_alert.url}/api/floor/alerts", headers=every_alert.headers("viewer"))
    codes = {a["code"] for a in alerts.json()["alerts"]}
    assert {"stale_behind", "rollback_beat", "held_full_unsigned"} <= codes  # as produced
    assert set(SAID_CODES) <= codes | {"gap_row", "gap_rows"} and codes & {"gap_row", "gap_rows"}
    page = floor_page(browser, every_alert, "qps", STAFF_SIZES["desktop"])
    expect(page.locator("#alerts li")).to_have_count(len(SAID_CODES) + 1 + len(produced()))
    expect(page.locator("[data-table=table-2] .salerts li")).to_have_count(len(STATION_SAID))
    texts = look(page)["texts"]
    assert not [t for t in texts if "English words" in t["text"]]
    # data: a heartbeat's own time as it claimed it (evidence, shown as sent)
    iso = r"\d{4}-\d\d-\d\dT[\d:.]+Z"
    left = foreign(texts, also=(r"127\.0\.0\.1:\d+", r"nats://\S+", r"ABC_1", iso))
    assert left == [], "\n".join(f"{t['where']}: {t['text']!r} -> {t['left']!r}" for t in left)
    page.context.close()
    for lang in ("fr", "zh-Hant"):
        page = floor_page(browser, every_alert, lang, STAFF_SIZES["desktop"])
        table = words()[lang]
        for code in ("rollback", "stale_behind", "held_full_unsigned", "forged_unsigned"):
            said = table[f"said.{code}"].split("{")[0]  # the words before the first figure
            expect(page.locator("#alerts")).to_contain_text(said)
        no_overflow(page, f"floor {lang} every alert")
        shot(page, f"floor-{lang}-alerts")
        page.context.close()
    # The gap accepted: the table's line says why its state is not known, from the catalogue.
    accepted = httpx.post(
        f"{every_alert.url}/api/floor/tables/table-2/accept-gap",
        json={"from_seq": 21, "to_seq": 21, "reason": "lost with the broker's disk"},
        headers=every_alert.headers("supervisor"),
    )
    assert accepted.status_code == 200, accepted.text
    assert every_alert.table("table-2")["problem_code"] == "unsure_row"
    page = floor_page(browser, every_alert, "qps", STAFF_SIZES["desktop"])
    problem = page.locator("[data-table=table-2] .problem")
    expect(problem).to_contain_text("⟦ accepted as missing")
    texts = [t for t in look(page)["texts"] if t["where"] == "problem"]
    assert len(texts) == 1 and foreign(texts) == [], texts
    page.context.close()


@pytest.mark.floor
@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_floor_fits_in_every_language(
    browser: Browser,
    running: RunningFloor,  # noqa: F811
    lang: str,
) -> None:
    for size_name, size in STAFF_SIZES.items():
        page = floor_page(browser, running, lang, size)
        if lang != "en":
            expect(page.locator("#suspended-title")).to_have_text(
                words()[lang]["floor.n_suspended_one"].replace("{n}", "1")
            )
        no_overflow(page, f"floor {lang} {size_name}")
        shot(page, f"floor-{lang}-{size[0]}")
        page.context.close()


# -- the players' display ---------------------------------------------------------------------


SIX = [
    {"bet": "banker", "min": 100, "max": 50_000},
    {"bet": "player", "min": 100, "max": 50_000},
    {"bet": "tie", "min": 10, "max": 5_000},
    {"bet": "banker_pair", "min": 10, "max": 2_500},
    {"bet": "player_pair", "min": 10, "max": 2_500},
    {"bet": "either_pair", "min": 10, "max": 2_500},
]


@pytest.fixture
def display_table(tmp_path: Path) -> Iterator[Running]:
    """A long table name, six limits, five rounds and a voided one."""
    config, tokens = display_config(tmp_path, "punto_banco", name=LONG_NAME, limits=SIX, announce=0)
    with serve(config, tokens) as live:
        events = shoe_events("punto_banco", seed=5)
        deal(live, events, 5)
        send(live, {"type": "close_bets"})
        send(live, {"type": "void"})
        yield live


def display(
    browser: Browser, live: Running, lang: str, size: tuple[int, int], token: str | None
) -> Page:
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    context.set_default_timeout(10_000)
    page = context.new_page()
    page.goto(f"{live.url}/display?lang={lang}" + (f"#token={token}" if token else ""))
    return page


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_display_fits_in_every_language(
    browser: Browser, display_table: Running, lang: str
) -> None:
    for size_name, size in DISPLAY_SIZES.items():
        page = display(browser, display_table, lang, size, display_table.tokens["display"])
        expect(page.locator("body")).to_have_attribute("data-drawn", "5")
        name = page.locator("#table-name")
        expect(name).to_have_text(LONG_NAME)
        box = page.evaluate("""() => { const e = document.getElementById('table-name');
            return { sw: e.scrollWidth, cw: e.clientWidth, sh: e.scrollHeight, ch: e.clientHeight,
                     font: getComputedStyle(e).fontSize, wrap: e.className }; }""")
        whole = box["sw"] <= box["cw"] + 1 and box["sh"] <= box["ch"] + 1
        assert whole, f"{lang} {size_name}: the table's name is cut: {box}"
        expect(page.locator("[data-count=voided] .value")).to_have_text("1")
        expect(page.locator("[data-count=voided] .label")).to_have_text(
            words()[lang]["count_voided"]
        )
        rows = page.evaluate("""() => {
            const box = document.getElementById('limits').getBoundingClientRect();
            return [...document.querySelectorAll('.limit')]
              .map((r) => box.bottom - r.getBoundingClientRect().bottom); }""")
        assert len(rows) == 6 and min(rows) >= 2, (
            f"{lang} {size_name}: a limit row touches its box: {rows}"
        )
        no_overflow(page, f"display {lang} {size_name}")
        if lang != "en":
            shot(page, f"display-{lang}-{size_name}")
        page.context.close()


def test_the_display_shows_no_word_outside_the_catalogue(
    browser: Browser, display_table: Running
) -> None:
    page = display(
        browser, display_table, "qps", DISPLAY_SIZES["landscape"], display_table.tokens["display"]
    )
    expect(page.locator("body")).to_have_attribute("data-drawn", "5")
    assert foreign(look(page)["texts"], also=(r"€",)) == []
    page.context.close()


@pytest.mark.parametrize("lang", ["en", "zh-Hant"])
def test_a_bad_token_fills_the_screen(browser: Browser, display_table: Running, lang: str) -> None:
    page = display(browser, display_table, lang, DISPLAY_SIZES["landscape"], "not-a-token")
    expect(page.locator("body")).to_have_attribute("data-connection", "refused")
    line = page.locator("#connection")
    expect(line).to_have_text(words()[lang]["refused"])
    expect(page.locator("#connection-help")).to_be_visible()
    box = line.bounding_box()
    assert box is not None and box["width"] >= 1919 and box["height"] >= 1079, box
    if lang != "en":
        shot(page, f"display-{lang}-refused")
    page.context.close()


# -- a protection alert -----------------------------------------------------------------------


@pytest.fixture
def repeated_shoe(tmp_path: Path) -> Iterator[Running]:
    """Two one-deck shoes, the second in the first's order: SHOE_SEQUENCE and WEAK_SHUFFLE."""
    config, tokens = config_for(tmp_path)
    with serve(config, tokens) as station:
        protection_deal(station, list(shoes_events(["uniform", "none"], decks=1)))
        yield station


def test_a_protection_alert_is_said_from_its_figures(
    browser: Browser, repeated_shoe: Running
) -> None:
    """The banner's sentence is built from the notice's figures in the page's language:
    in English it is the station's own sentence, word for word; under the pseudo-language
    nothing but the earlier shoe's label (its name in the history) is left."""

    def raised() -> list[dict[str, Any]]:
        answer = httpx.get(
            f"{repeated_shoe.url}/api/protection", headers=repeated_shoe.headers("viewer")
        )
        found: list[dict[str, Any]] = answer.json()["alerts"]
        return found

    wait_until(lambda: len(raised()) == 2, what="the protection checks' two alerts")
    alerts = raised()
    assert {a["alert"] for a in alerts} == {"SHOE_SEQUENCE", "WEAK_SHUFFLE"}
    for lang in ("en", "qps", "zh-Hant"):
        context = browser.new_context(viewport={"width": 1366, "height": 768})
        page = context.new_page()
        page.goto(f"{repeated_shoe.url}/?lang={lang}")
        page.fill("#token", repeated_shoe.tokens["viewer"])
        page.click("#login button[type=submit]")
        items = page.locator("#protection-list li")
        expect(items).to_have_count(len(alerts))
        if lang == "en":
            for a in alerts:  # the probability in Intl's scientific form: 2.4E-9 for 2.4e-09
                said = re.sub(r"probability \S+$", "probability", a["message"])
                expect(page.locator("#protection-list")).to_contain_text(said)
        elif lang == "qps":
            labels = tuple(re.escape(a["earlier"]) for a in alerts if a.get("earlier"))
            texts = [t for t in look(page)["texts"] if t["where"] in ("", "LI", "advice", "when")]
            left = foreign(texts, also=labels)
            assert left == [], (labels, left)
        else:
            expect(page.locator("#protection")).to_contain_text("牌序重複")
            expect(page.locator("#protection")).to_contain_text("監控部")
            shot(page, "dashboard-zh-Hant-protection")
        context.close()


def test_the_stations_default_language_for_a_browser_it_does_not_speak(
    browser: Browser, tmp_path: Path
) -> None:
    """`[dashboard] language` for a browser asking for none of the station's languages;
    a browser asking for one of them gets its own."""
    config, tokens = make_config(tmp_path)
    config = config.model_copy(update={"dashboard": DashboardConfig(language="zh-Hant")})
    with serve(config, tokens) as station:
        for locale, lang in (("de-DE", "zh-Hant"), ("fr-CA", "fr")):
            context = browser.new_context(locale=locale)
            page = context.new_page()
            page.goto(f"{station.url}/")
            expect(page.locator("html")).to_have_attribute("lang", lang)
            expect(page.locator("#language")).to_have_value(lang)
            context.close()


@pytest.mark.floor
def test_the_floors_default_language_for_a_browser_it_does_not_speak(
    browser: Browser,
    tmp_path: Path,
    floor: FloorBroker,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`[floor] language` for a browser asking for none of the floor's languages, before
    anyone logs in; a browser asking for one of them gets its own."""
    config, tokens = floor_config(
        tmp_path, floor, monkeypatch, tables=("table-1",), settings={"language": "zh-Hant"}
    )
    with serve_floor(config, tokens) as served:
        for locale, lang in (("de-DE", "zh-Hant"), ("fr-CA", "fr")):
            context = browser.new_context(locale=locale)
            page = context.new_page()
            page.goto(f"{served.url}/")
            expect(page.locator("html")).to_have_attribute("lang", lang)
            expect(page.locator("#language")).to_have_value(lang)
            expect(page.locator("#conn")).to_have_text(words()[lang]["floor.log_in"])
            context.close()


@pytest.mark.floor
def test_a_stations_protection_alert_on_the_floor_is_said_from_its_figures(
    browser: Browser,
    tmp_path: Path,
    floor: FloorBroker,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A station's WEAK_SHUFFLE notice, archived by the floor: its alert is said from the
    notice's figures (riffles, gathering, cards, probability) and its advice, in the page's
    language, as the dashboard says it; under the pseudo-language nothing else is left."""
    events, weak = weak_shuffle_notice()
    make_journal(tmp_path / "c.db", "C", events, decks=1)
    with Journal(tmp_path / "c.db") as journal:
        journal.append([weak])
        rows = list(journal.rows())
    config, tokens = floor_config(tmp_path, floor, monkeypatch, tables=("C",))
    with serve_floor(config, tokens) as served:
        publish_rows(floor, "C", rows)
        wait_for(lambda: served.table("C")["alerts"], "the station's alert")
        for lang in ("qps", "zh-Hant"):
            page = floor_page(browser, served, lang, STAFF_SIZES["desktop"])
            line = page.locator("#alerts li").first
            if lang == "qps":
                expect(line).to_contain_text("⟦the station says (shoe at row ⟧")
                texts = [t for t in look(page)["texts"] if "WEAK_SHUFFLE" in t["text"]]
                left = foreign(texts, also=(r"\bC\b",))  # the table's id
                assert texts and left == [], left
            else:
                expect(line).to_contain_text(words()[lang]["advice.WEAK_SHUFFLE"])
                expect(line).to_contain_text(words()[lang]["protect.riffles_one"].split("{")[0])
                no_overflow(page, f"floor {lang} protection alert")
                shot(page, f"floor-{lang}-protection")
            page.context.close()
