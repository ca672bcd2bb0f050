"""`make screenshots`: remake the README's pictures of the dashboard from real stations.

    .venv/bin/python scripts/dashboard_screenshot.py [--rounds N] [--game GAME ...]

For each game (punto banco: docs/dashboard.png; baccarat banque: docs/dashboard-cercle.png)
a `station run` with the demo's simulated shoe (`config/demo.toml`'s `[reader.sim]` pace:
a bot dealer at a dealer's speed, so the Pace panel's figures are a real table's) deals
at least `--rounds` rounds; at the first unreadable card after that (the table suspended,
the supervisor asked for the card read by eye) Debian's Chromium, driven by Playwright,
takes the page as a supervisor sees it. The stations run side by side, each with its
journal in a temporary folder, and are stopped after: 5 to 15 minutes for 30 rounds.
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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import expect, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
CHROMIUM = "/usr/bin/chromium"  # Playwright's own download does not work here
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"]
#: The picture of each game, and its seed (a shoe with unreadable cards early enough).
PICTURES = {
    "punto_banco": ("dashboard.png", 7),
    "baccarat_banque": ("dashboard-cercle.png", 3),
}
TOKEN_LINE = re.compile(r"^\s+(viewer|dealer|supervisor|rig)\s+(\S+)$")
VIEWPORT = {"width": 1280, "height": 1700}  # the round, odds, pace and scoreboards


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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_station(config: Path) -> tuple[subprocess.Popen[str], str]:
    """`station run --config CONFIG` and the supervisor's demo token it prints."""
    station = Path(sys.executable).parent / "station"
    proc = subprocess.Popen(
        [str(station), "run", "--config", str(config), "--log-level", "warning"],
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


def wait_for_scene(url: str, token: str, rounds: int, timeout: float) -> dict[str, Any]:
    """The table's state once `rounds` rounds are dealt and an unreadable card has
    suspended it (the supervisor asked for the card read by eye)."""
    headers = {"Authorization": f"Bearer {token}"}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = httpx.get(f"{url}/api/state", headers=headers, timeout=5)
        if answer.status_code == 200:
            state: dict[str, Any] = answer.json()
            suspension = state.get("suspension") or {}
            dealt = (state.get("round") or {}).get("number", 0)
            if dealt > rounds and suspension.get("code") == "UNREADABLE_CARD":
                return state
        time.sleep(0.5)
    raise SystemExit(f"{url}: no unreadable card after {rounds} rounds in {timeout:.0f} s")


def shoot(url: str, token: str, out: Path) -> None:
    """The dashboard as the supervisor sees it, into `out`."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(f"{url}/")
        page.fill("#token", token)
        page.click("#login button[type=submit]")
        expect(page.locator("#conn")).to_have_text("Live")
        expect(page.locator("#pace-body tr").first).to_be_visible()
        page.wait_for_timeout(500)  # the cards' deal animation
        page.screenshot(path=str(out))
        browser.close()


def picture(game: str, rounds: int, timeout: float) -> Path:
    name, seed = PICTURES[game]
    out = DOCS / name
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        port = free_port()
        config = folder / "station.toml"
        config.write_text(station_config(game, seed, port, folder))
        proc, token = start_station(config)
        try:
            url = f"http://127.0.0.1:{port}"
            state = wait_for_scene(url, token, rounds, timeout)
            shoot(url, token, out)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
    size = out.stat().st_size // 1024
    print(f"wrote {out.relative_to(ROOT)} ({game}, round {state['round']['number']}, {size} KiB)")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30, help="rounds before the picture (30)")
    parser.add_argument(
        "--game",
        action="append",
        choices=sorted(PICTURES),
        help="only this game's picture (default: every game's)",
    )
    parser.add_argument(
        "--timeout", type=float, default=900, help="seconds to wait for the scene (900)"
    )
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"{CHROMIUM} is missing: run `make install` (apt-get install chromium)")
    games = args.game or sorted(PICTURES)
    with ThreadPoolExecutor(len(games)) as pool:
        list(pool.map(lambda game: picture(game, args.rounds, args.timeout), games))


if __name__ == "__main__":
    main()
