"""Remake the manual's pictures of the table's display (`GET /display`): each game in both
orientations in English, and one picture in each other language.

    .venv/bin/python scripts/display_screenshots.py [--size 1280x720]

A station per game (in this process, journal in a temporary folder, `[display]` with the
game's limits in EUR, public) is dealt a seeded simulated shoe through its API, 30 to 50
rounds; Debian's Chromium, driven by Playwright, then takes the screen at
`--size` (landscape; portrait is the same turned). The layout is in units of the screen's
shorter side, so the pictures at 1280x720 are those of 1920x1080 and 4K, scaled. A picture
is taken with the table taking bets, betting closed or a card out, or just after one more
round, its result announced large.

    docs/display-punto_banco-landscape.png      docs/display-punto_banco-portrait.png
    docs/display-chemin_de_fer-landscape.png    docs/display-chemin_de_fer-portrait.png
    docs/display-baccarat_banque-landscape.png  docs/display-baccarat_banque-portrait.png
    docs/display-fr.png        punto banco, landscape, in French
    docs/display-zh-Hant.png   punto banco, portrait, in traditional Chinese, dealing
    docs/display-zh-Hans.png   baccarat banque, landscape, in simplified Chinese, announcing
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import Browser, sync_playwright  # noqa: E402

from station.core.display import status_of  # noqa: E402
from tests.browser.conftest import ARGS, CHROMIUM  # noqa: E402
from tests.browser.pit import send  # noqa: E402
from tests.displaykit import deal, display_config, shoe_events  # noqa: E402
from tests.service.kit import Running, serve  # noqa: E402

DOCS = ROOT / "docs"
#: Per game: its seed, the rounds dealt first (a 6-deck baccarat banque shoe has about 40),
#: then its pictures in the order taken: (file, orientation, language,
#: moment): the table taking bets ("open"), betting closed ("closed"), a card out
#: ("dealing"), or one more round just over, its result announced ("announce").
PICTURES: dict[str, tuple[int, int, list[tuple[str, str, str, str]]]] = {
    "punto_banco": (
        11,
        46,
        [
            ("display-punto_banco-landscape.png", "landscape", "en", "open"),
            ("display-fr.png", "landscape", "fr", "open"),
            ("display-punto_banco-portrait.png", "portrait", "en", "closed"),
            ("display-zh-Hant.png", "portrait", "zh-Hant", "dealing"),
        ],
    ),
    "chemin_de_fer": (
        12,
        40,
        [
            ("display-chemin_de_fer-landscape.png", "landscape", "en", "open"),
            ("display-chemin_de_fer-portrait.png", "portrait", "en", "dealing"),
        ],
    ),
    "baccarat_banque": (
        13,
        28,
        [
            ("display-baccarat_banque-landscape.png", "landscape", "en", "open"),
            ("display-zh-Hans.png", "landscape", "zh-Hans", "announce"),
            ("display-baccarat_banque-portrait.png", "portrait", "en", "closed"),
        ],
    ),
}
STATUSES = {"open": "betting_open", "closed": "no_more_bets", "dealing": "dealing"}


def advance(live: Running, events: Iterator[dict[str, Any]], moment: str) -> None:
    """Send the shoe's next events until the table is at `moment` (open, closed, dealing)."""
    wanted = STATUSES[moment]
    while status_of(live.station.snapshot) != wanted:
        event = next(events)
        event.pop("expect")
        send(live, event)


def take(
    browser: Browser,
    live: Running,
    events: Iterator[dict[str, Any]],
    size: tuple[int, int],
    picture: tuple[str, str, str, str],
) -> None:
    name, orientation, lang, moment = picture
    width, height = size if orientation == "landscape" else size[::-1]
    page = browser.new_page(viewport={"width": width, "height": height})
    if moment != "announce":
        advance(live, events, moment)
    page.goto(f"{live.url}/display?lang={lang}")
    page.wait_for_selector("body[data-connection=live]")
    if moment == "announce":
        deal(live, events, 1)
        page.wait_for_selector("#announce:not([hidden])")
        page.wait_for_timeout(300)  # its fade-in over
    page.wait_for_timeout(200)
    page.screenshot(path=str(DOCS / name))
    page.close()
    print(f"docs/{name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="1280x720", help="landscape WIDTHxHEIGHT")
    args = parser.parse_args()
    width, height = (int(n) for n in args.size.split("x"))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for game, (seed, rounds, pictures) in PICTURES.items():
            with tempfile.TemporaryDirectory() as tmp:
                config, tokens = display_config(Path(tmp), game, public=True)
                with serve(config, tokens) as live:
                    events = shoe_events(game, seed)
                    deal(live, events, rounds)
                    for picture in pictures:
                        take(browser, live, events, (width, height), picture)
        browser.close()


if __name__ == "__main__":
    main()
