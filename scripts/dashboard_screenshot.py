"""`make screenshots`: remake the manual's pictures of the dashboard, the floor view and the
shift report from real stations, at a desktop's width (1366 px) and a phone's (390 px).

    .venv/bin/python scripts/dashboard_screenshot.py [--rounds N] [--only WHAT ...]

The dashboard, per game (punto banco, baccarat banque): a `station run` with the demo's
simulated shoe (`config/demo.toml`'s `[reader.sim]` pace: a bot dealer at a dealer's speed,
so the Pace panel's figures are a real table's) deals at least `--rounds` rounds; at the
first unreadable card after that (the table suspended, the supervisor asked for the card
read by eye) Debian's Chromium, driven by Playwright, takes the page as a supervisor sees
it: the whole page at 1366 px, the first screen of a 390 x 844 phone. The punto banco
station's journal then makes the `station report` page, taken whole at both widths. The
floor view: `scripts/floor_demo.py` (a broker, four demo stations, the floor service), once
every table has results. Everything runs side by side on 127.0.0.1, in temporary folders,
and is stopped after: 5 to 15 minutes for 30 rounds.

    docs/dashboard-1366.png, docs/dashboard-390.png   punto banco, suspended
    docs/dashboard-banque-1366.png                    baccarat banque, suspended
    docs/report-1366.png, docs/report-390.png         the punto banco table's shift report
    docs/floor-1366.png, docs/floor-390.png           four tables, every game
"""

from __future__ import annotations

import argparse
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Page, expect, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
CHROMIUM = "/usr/bin/chromium"  # Playwright's own download does not work here
BROWSER_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
    "--disable-sync",
]
DESKTOP = {"width": 1366, "height": 768}
PHONE = {"width": 390, "height": 844}
#: Each game's pictures (desktop, phone or None) and its seed (unreadable cards early).
PICTURES = {
    "punto_banco": ("dashboard-1366.png", "dashboard-390.png", 7),
    "baccarat_banque": ("dashboard-banque-1366.png", None, 3),
}
REPORT = ("report-1366.png", "report-390.png")
FLOOR = ("floor-1366.png", "floor-390.png")
TOKEN_LINE = re.compile(r"^\s+(viewer|dealer|supervisor|rig)\s+(\S+)$")


def station_config(game: str, seed: int, port: int, folder: Path) -> str:
    """A demo station (`config/demo.toml`'s pace) at `game`. The demo supervisor waits
    20 s before resolving a suspension itself, so the picture can be taken meanwhile."""
    return f"""
[table]
id = "table-7"
game = "{game}"

[reader]
driver = "sim"

[reader.sim]
seed = {seed}
card_interval = 0.8
betting_time = 3.0
shuffle_time = 5.0
fault_chance = 0.03
supervisor_after = 20.0

[journal]
path = "{folder / "journal.db"}"

[api]
bind = "127.0.0.1:{port}"
token_file = "{folder / "tokens.toml"}"
demo_tokens = true
"""


def free_port(run: int = 1) -> int:
    """A free port on 127.0.0.1, the first of `run` free ones in a row."""
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port: int = sock.getsockname()[1]
        if port + run < 65536 and all(_free(port + i) for i in range(1, run)):
            return port


def _free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def station_bin() -> str:
    return str(Path(sys.executable).parent / "station")


def start_station(config: Path) -> tuple[subprocess.Popen[str], str]:
    """`station run --config CONFIG` and the supervisor's demo token it prints."""
    proc = subprocess.Popen(
        [station_bin(), "run", "--config", str(config), "--log-level", "warning"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        match = TOKEN_LINE.match(line)
        if match and match[1] == "supervisor":
            return proc, match[2]
    proc.wait()
    raise SystemExit(f"station run exited ({proc.returncode}) without a supervisor token")


def wait_for(what: str, timeout: float, ready: Callable[[], Any]) -> Any:
    """`ready()` once it answers something true, polled every half second."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = ready()
        if found:
            return found
        time.sleep(0.5)
    raise SystemExit(f"{what}: not there in {timeout:.0f} s")


def suspended_scene(url: str, token: str, rounds: int) -> Callable[[], dict[str, Any] | None]:
    """The table's state once `rounds` rounds are dealt and an unreadable card has
    suspended it (the supervisor asked for the card read by eye); None until then."""
    headers = {"Authorization": f"Bearer {token}"}

    def scene() -> dict[str, Any] | None:
        answer = httpx.get(f"{url}/api/state", headers=headers, timeout=5)
        if answer.status_code != 200:
            return None
        state: dict[str, Any] = answer.json()
        suspension = state.get("suspension") or {}
        dealt = (state.get("round") or {}).get("number", 0)
        if dealt > rounds and suspension.get("code") == "UNREADABLE_CARD":
            return state
        return None

    return scene


@contextmanager
def browser_page(viewport: dict[str, int], phone: bool = False) -> Iterator[Page]:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        context = browser.new_context(viewport=viewport, is_mobile=phone, has_touch=phone)
        try:
            yield context.new_page()
        finally:
            browser.close()


def log_in(page: Page, url: str, token: str) -> None:
    page.goto(url)
    page.fill("#token", token)
    page.click("#login button[type=submit]")
    expect(page.locator("#conn")).to_contain_text("Live")


def shoot_dashboard(url: str, token: str, desktop: str, phone: str | None) -> list[Path]:
    """The dashboard as the supervisor sees it: the whole page at a desktop's width, the
    first screen of a phone."""
    shots = [(DESKTOP, DOCS / desktop, True, False)]
    if phone is not None:
        shots.append((PHONE, DOCS / phone, False, True))
    for viewport, out, whole, small in shots:
        with browser_page(viewport, small) as page:
            log_in(page, f"{url}/", token)
            expect(page.locator("#pace-body tr").first).to_be_visible()
            expect(page.locator("#banner")).to_be_visible()
            page.wait_for_timeout(800)  # the cards' deal animation, the roads' redraw
            page.screenshot(path=str(out), full_page=whole)
    return [out for _, out, _, _ in shots]


def shoot_report(journal: Path, folder: Path) -> list[Path]:
    """`station report` of the journal, the whole page at both widths."""
    page_file = folder / "report.html"
    subprocess.run(
        [station_bin(), "report", "--journal", str(journal), "-o", str(page_file)], check=True
    )
    outs = []
    for viewport, name, small in ((DESKTOP, REPORT[0], False), (PHONE, REPORT[1], True)):
        with browser_page(viewport, small) as page:
            page.goto(page_file.as_uri())
            page.screenshot(path=str(DOCS / name), full_page=True)
        outs.append(DOCS / name)
    return outs


def dashboard_pictures(game: str, rounds: int, timeout: float) -> list[Path]:
    desktop, phone, seed = PICTURES[game]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        port = free_port()
        config = folder / "station.toml"
        config.write_text(station_config(game, seed, port, folder))
        proc, token = start_station(config)
        try:
            url = f"http://127.0.0.1:{port}"
            state = wait_for(url, timeout, suspended_scene(url, token, rounds))
            outs = shoot_dashboard(url, token, desktop, phone)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
        if game == "punto_banco":
            outs += shoot_report(folder / "journal.db", folder)
    print(f"{game}: round {state['round']['number']}")
    return outs


def floor_pictures(results: int, timeout: float) -> list[Path]:
    """`make floor-demo` on ports of its own, once every table has `results` results."""
    with tempfile.TemporaryDirectory() as tmp:
        broker, floor, stations = free_port(), free_port(), free_port(run=4)
        demo = subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "scripts" / "floor_demo.py"),
                "--dir",
                tmp,
                "--broker-port",
                str(broker),
                "--floor-port",
                str(floor),
                "--station-port",
                str(stations),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            token = floor_token(demo)
            url = f"http://127.0.0.1:{floor}"
            headers = {"Authorization": f"Bearer {token}"}

            def dealt() -> bool:
                answer = httpx.get(f"{url}/api/floor/tables", headers=headers, timeout=5)
                tables = answer.json()["tables"] if answer.status_code == 200 else []
                return bool(tables) and all(len(t["results"]) >= results for t in tables)

            wait_for("the floor demo's results", timeout, dealt)
            outs = []
            for viewport, name, small in ((DESKTOP, FLOOR[0], False), (PHONE, FLOOR[1], True)):
                with browser_page(viewport, small) as page:
                    log_in(page, f"{url}/", token)
                    expect(page.locator(".tcard")).to_have_count(4)
                    page.screenshot(path=str(DOCS / name), full_page=True)
                outs.append(DOCS / name)
        finally:
            demo.send_signal(signal.SIGTERM)
            demo.wait(60)
    print(f"floor: {results} results a table")
    return outs


def floor_token(demo: subprocess.Popen[str]) -> str:
    """The floor view's supervisor token, from the floor demo's start-up lines."""
    assert demo.stdout is not None
    floor_block = False
    for line in demo.stdout:
        floor_block = floor_block or "floor view" in line
        match = TOKEN_LINE.match(line.rstrip("\n"))
        if floor_block and match and match[1] == "supervisor":
            return match[2]
    raise SystemExit(f"floor demo exited ({demo.wait()}) without the floor's tokens")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30, help="rounds before the picture (30)")
    parser.add_argument(
        "--only",
        action="append",
        choices=[*sorted(PICTURES), "floor"],
        help="only this game's dashboard (and for punto banco the report), or the floor "
        "(default: all)",
    )
    parser.add_argument(
        "--timeout", type=float, default=900, help="seconds to wait for each scene (900)"
    )
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"{CHROMIUM} is missing: run `make install` (apt-get install chromium)")
    jobs: list[Callable[[], list[Path]]] = []
    for what in args.only or [*sorted(PICTURES), "floor"]:
        if what == "floor":
            jobs.append(lambda: floor_pictures(12, args.timeout))
        else:
            jobs.append(lambda game=what: dashboard_pictures(game, args.rounds, args.timeout))
    with ThreadPoolExecutor(len(jobs)) as pool:
        for outs in pool.map(lambda job: job(), jobs):
            for out in outs:
                print(f"wrote {out.relative_to(ROOT)} ({out.stat().st_size // 1024} KiB)")


if __name__ == "__main__":
    main()
