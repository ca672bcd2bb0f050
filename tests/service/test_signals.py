"""Suspension signals: webhooks to a real local HTTP server, the card stop to a pty shoe."""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from drivers import create_reader
from drivers.config import from_mapping
from drivers.sim.pty import PtyPort
from station.live.config import SignalsConfig
from tests.service.kit import make_config, serve

pytestmark = pytest.mark.server


class Hooks:
    """What the game server received, and how it answers."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.attempts = 0
        self.fail_first = 0
        self.gate = threading.Event()
        self.gate.set()
        self.changed = threading.Condition()

    def wait(self, ready: Callable[[], bool], timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        with self.changed:
            while not ready():
                assert time.monotonic() < deadline, f"got {self.received}"
                self.changed.wait(0.1)


@contextmanager
def game_server() -> Iterator[tuple[str, Hooks]]:
    hooks = Hooks()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            hooks.gate.wait(10)
            with hooks.changed:
                hooks.attempts += 1
                failing = hooks.attempts <= hooks.fail_first
                if not failing:
                    hooks.received.append(json.loads(body))
                hooks.changed.notify_all()
            self.send_response(500 if failing else 204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", hooks
    finally:
        hooks.gate.set()
        server.shutdown()
        server.server_close()


def with_signals(tmp_path: Path, **signals: Any) -> tuple[Any, dict[str, str]]:
    config, tokens = make_config(tmp_path, allow_rig=True)
    return config.model_copy(update={"signals": SignalsConfig(**signals)}), tokens


def test_suspension_and_resume_are_posted_with_retries(tmp_path: Path) -> None:
    with game_server() as (url, hooks):
        hooks.fail_first = 2
        config, tokens = with_signals(tmp_path, webhooks=(url,), webhook_backoff=0.01)
        with serve(config, tokens) as live:
            live.post({"type": "shoe"}, "dealer")
            suspended = live.post({"type": "card", "card": "??"}).json()
            resumed = live.post({"type": "resume", "card": "7H"}, "supervisor").json()
            hooks.wait(lambda: len(hooks.received) == 2)
    first, second = hooks.received
    assert hooks.attempts == 4
    assert first["type"] == "suspended" and first["code"] == "UNREADABLE_CARD"
    assert first["seq"] == suspended["seq"] and first["table"] == "t-test"
    assert first["explanation"] and first["event"]["card"] == "??"
    assert second["type"] == "resumed" and second["seq"] == resumed["seq"]
    assert second["actor"] == "test-supervisor"
    assert first["id"] != second["id"]


def test_a_slow_game_server_does_not_hold_verdicts(tmp_path: Path) -> None:
    with game_server() as (url, hooks):
        hooks.gate.clear()  # the game server hangs until we let it go
        config, tokens = with_signals(tmp_path, webhooks=(url,), webhook_timeout=30.0)
        with serve(config, tokens) as live:
            live.post({"type": "shoe"}, "dealer")
            assert live.post({"type": "fault", "detail": "x"}).json()["error"] == "SCANNER_FAULT"
            assert live.post({"type": "void"}, "supervisor").json()["ok"]
            assert live.post({"type": "card", "card": "5D"}).json()["role"] == "burn_reveal"
            assert hooks.received == []  # all answered while the webhook still hangs
            hooks.gate.set()
            hooks.wait(lambda: len(hooks.received) == 2)
    assert [h["type"] for h in hooks.received] == ["suspended", "resumed"]


def test_a_webhook_given_up_is_journaled(tmp_path: Path) -> None:
    with game_server() as (url, hooks):
        hooks.fail_first = 1000
        config, tokens = with_signals(
            tmp_path, webhooks=(url,), webhook_attempts=2, webhook_backoff=0.01
        )
        with serve(config, tokens) as live:
            live.post({"type": "shoe"}, "dealer")
            live.post({"type": "fault"})
            deadline = time.monotonic() + 10
            while True:
                rows = httpx.get(f"{live.url}/api/journal", headers=live.headers("viewer")).json()[
                    "events"
                ]
                gave_up = [r for r in rows if r["event"].get("message") == "webhook gave up"]
                if gave_up or time.monotonic() > deadline:
                    break
                time.sleep(0.02)
    assert gave_up and gave_up[0]["event"]["url"] == url
    assert gave_up[0]["event"]["error"] == "HTTP 500"
    assert hooks.attempts == 2


def test_stop_command_goes_to_the_shoe(tmp_path: Path) -> None:
    link = tmp_path / "shoe"
    pty = PtyPort(link)
    try:
        config, tokens = with_signals(tmp_path, stop_command="hex:13", release_command="hex:11")
        config = config.model_copy(
            update={
                "reader": from_mapping({"driver": "serial", "url": str(link), "exclusive": False})
            }
        )
        with serve(config, tokens, reader=create_reader(config.reader)) as live:
            assert pty.wait_reader(10)
            live.post({"type": "shoe"}, "dealer")
            pty.write(b"NR\n")  # the shoe could not read a card
            got = b""
            deadline = time.monotonic() + 10
            while b"\x13" not in got and time.monotonic() < deadline:
                got += pty.read(0.1)
            assert got == b"\x13"
            live.post({"type": "resume", "card": "4C"}, "supervisor")
            while b"\x11" not in got and time.monotonic() < deadline:
                got += pty.read(0.1)
            assert got == b"\x13\x11"
            rows = httpx.get(f"{live.url}/api/journal", headers=live.headers("viewer")).json()
        cards = [r for r in rows["events"] if r["event"]["type"] == "card"]
        assert cards[0]["source"] == "reader" and cards[0]["verdict"]["error"] == "UNREADABLE_CARD"
    finally:
        pty.close()


def test_a_suspension_is_announced_again_after_a_restart(tmp_path: Path) -> None:
    with game_server() as (url, hooks):
        config, tokens = with_signals(tmp_path, webhooks=(url,), webhook_backoff=0.01)
        with serve(config, tokens) as live:
            live.post({"type": "shoe"}, "dealer")
            live.post({"type": "fault", "detail": "cable"})
            hooks.wait(lambda: len(hooks.received) == 1)
        with serve(config, tokens):
            hooks.wait(lambda: len(hooks.received) == 2)
    again = hooks.received[1]
    assert again["type"] == "suspended" and again["code"] == "SCANNER_FAULT"
    assert again["event"] == {"type": "restart", "paytable": "traditional"}
