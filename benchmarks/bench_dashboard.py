"""The dashboard's costs: the roads of a full shoe, the reads the page makes at each round
(`/api/history`, `/api/odds`), and in Chromium the page's start and the time from a card
posted to its face on the screen.

The station is a real one (uvicorn on 127.0.0.1, journal on disk), fed a seeded 8-deck
shoe through the API; the figures are medians.
"""

from __future__ import annotations

import json
import socket
import statistics
import tempfile
import time
from pathlib import Path

from drivers.sim.stream import simulate
from station.core.roads import scoreboards
from tests.browser.pit import deal_rounds, login, send
from tests.service.kit import make_config, serve

ROUNDS = 70
REQUESTS = 40
CARDS = 20


def _shoe_results(rounds: int) -> list[dict[str, object]]:
    """The results of `rounds` rounds of a seeded shoe (no station needed)."""
    from station.core.table import Table

    table = Table()
    for event in simulate(2026, decks=8):
        table.apply(event)
        if len(table.results) == rounds:
            break
    return [dict(r) for r in table.results]


def _median_ms(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1000:.2f} ms"


def _request(url: str, path: str, auth: str, body: bytes | None = None) -> tuple[float, bytes]:
    """One request on a fresh connection with TCP_NODELAY, as a browser sends it (a Python
    HTTP client adds a 20-40 ms delayed-ACK stall on loopback that the page never sees);
    returns the seconds to the whole answer, and the answer's body."""
    host, port = url.removeprefix("http://").split(":")
    head = f"{'POST' if body is not None else 'GET'} {path} HTTP/1.1\r\nHost: {host}\r\n"
    head += f"Authorization: {auth}\r\nConnection: close\r\n"
    if body is not None:
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    request = (head + "\r\n").encode() + (body or b"")
    with socket.create_connection((host, int(port))) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        started = time.perf_counter()
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(1 << 16):
            answer += chunk
        elapsed = time.perf_counter() - started
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
    return elapsed, answer.partition(b"\r\n\r\n")[2]


def _get(url: str, path: str, auth: str) -> float:
    return _request(url, path, auth)[0]


def bench_roads() -> None:
    results = _shoe_results(ROUNDS)
    runs = []
    for _ in range(200):
        started = time.perf_counter()
        scoreboards(results)
        runs.append(time.perf_counter() - started)
    print(f"scoreboards of a {len(results)}-round shoe: {_median_ms(runs)} (median of 200)")


def bench_station() -> None:
    from playwright.sync_api import sync_playwright

    from tests.browser.conftest import ARGS, CHROMIUM

    with tempfile.TemporaryDirectory() as tmp:
        config, tokens = make_config(Path(tmp), allow_rig=True)
        with serve(config, tokens) as live:
            started = time.perf_counter()
            deal_rounds(live, seed=7, rounds=ROUNDS, faults={})
            events = live.station.snapshot.seq
            elapsed = time.perf_counter() - started
            print(f"dealt {ROUNDS} rounds through the API: {events} rows in {elapsed:.1f} s")
            auth = live.headers("viewer")["Authorization"]
            for path in ("/api/history", "/api/odds", "/api/state"):
                _get(live.url, path, auth)  # warm: the roads, the analyzer
                runs = [_get(live.url, path, auth) for _ in range(REQUESTS)]
                print(f"GET {path}: {_median_ms(runs)} (median of {REQUESTS})")
            send(live, {"type": "close_bets"})
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                page = browser.new_page(viewport={"width": 1280, "height": 1000})
                t0 = time.perf_counter()
                login(page, live, "viewer")
                page.wait_for_selector("#road-bead g.bead >> nth=69")
                print(
                    f"page: login to live with {ROUNDS} rounds of roads drawn: "
                    f"{(time.perf_counter() - t0) * 1000:.0f} ms"
                )
                rig = live.headers("rig")["Authorization"]
                shown = []  # distinct codes still in the shoe: each new face is found by code
                left = live.station.table.remaining()
                for card in [c for c, copies in left.items() if copies][:CARDS]:
                    if live.station.snapshot.due in (None, "close_bets"):
                        send(live, {"type": "close_bets"})
                    t0 = time.perf_counter()
                    body = json.dumps({"type": "card", "card": card}).encode()
                    verdict = json.loads(_request(live.url, "/api/events", rig, body)[1])
                    assert verdict["ok"], verdict
                    side = "player" if verdict["role"][0] == "P" else "banker"
                    page.wait_for_selector(f"#{side}-cards .card[data-card='{card}']")
                    shown.append(time.perf_counter() - t0)
                print(
                    f"card posted -> its face on the page: {_median_ms(shown)} (median of "
                    f"{len(shown)}; the POST, its journal fsync and the WebSocket)"
                )
                browser.close()


def main() -> None:
    bench_roads()
    bench_station()


if __name__ == "__main__":
    main()
