"""Make `docs/dashboard.png`: the main view after 40 rounds of a seeded shoe with faults,
the round in progress suspended on an unreadable card, as a supervisor sees it.

    .venv/bin/python -m tests.browser.screenshot [OUT.png]

Reproducible: the same seed deals the same shoe (only the clock times differ).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from playwright.sync_api import expect, sync_playwright

from tests.browser.conftest import ARGS, CHROMIUM
from tests.browser.pit import deal_rounds, login, send
from tests.service.kit import make_config, serve

OUT = Path(__file__).resolve().parents[2] / "docs" / "dashboard.png"


def main(out: Path = OUT) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        config, tokens = make_config(Path(tmp), allow_rig=True)
        with serve(config, tokens) as live, sync_playwright() as p:
            deal_rounds(live, seed=5, rounds=40, faults={"unreadable": 0.03, "early_card": 0.02})
            send(live, {"type": "close_bets"})
            for card in ("7D", "KC"):
                send(live, {"type": "card", "card": card})
            send(live, {"type": "card", "card": None, "raw": "NR"})
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 1340})
            login(page, live, "supervisor")
            expect(page.locator("#road-bead g.bead")).to_have_count(40)
            expect(page.locator("#odds-body tr").first).to_be_visible()
            page.select_option("#pick-rank", "4")
            page.select_option("#pick-suit", "H")
            page.wait_for_timeout(300)  # the cards' deal animation
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out))
            browser.close()
    print(f"wrote {out} ({out.stat().st_size // 1024} KiB)")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
