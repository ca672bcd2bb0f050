"""What a hostile probe found at the floor service's doors (issue 25, items 5 to 8), against
a real `station floor` (no broker needed: it serves its archive meanwhile): no request
answers 500 or leaves a traceback (long paths, ids past 64 bits), HEAD is answered
wherever GET is, a decision's reason is words (no control character to hide or overwrite
what a terminal shows of the log), and with `public_read` on only the floor's own names
are answered."""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import spawn_station
from tests.hostile import CORPUS, ODD_QUERIES, assert_quiet, head_is_get, refused_without_500, send
from tests.netkit import free_port
from tests.service.kit import make_tokens

pytestmark = [pytest.mark.floor, pytest.mark.server]

HUGE = (2**63, 2**64, -1, 0)


@dataclass
class FloorProcess:
    url: str
    tokens: dict[str, str]
    log: Path

    def headers(self, role: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[role]}"}

    def decide(self, path: str, body: dict[str, Any]) -> httpx.Response:
        return httpx.post(f"{self.url}{path}", json=body, headers=self.headers("supervisor"))


@contextlib.contextmanager
def station_floor(tmp_path: Path, api: str = "") -> Iterator[FloorProcess]:
    """`station floor` on a free port with a token per role, its broker unreachable (a
    port nothing listens on: the service keeps trying and serves its archive), its log
    in a file; `api`: more lines of `[api]`."""
    tokens, entries = make_tokens()
    port = free_port()
    listed = ", ".join(
        f'{{name = "{e.name}", role = "{e.role}", sha256 = "{e.sha256}"}}' for e in entries
    )
    config = tmp_path / "floor.toml"
    config.write_text(f"""
[broker]
url = "nats://127.0.0.1:{free_port()}"
[archive]
path = "floor.db"
[protection]
enabled = false
[api]
bind = "127.0.0.1:{port}"
token_file = "tokens.toml"
tokens = [{listed}]
{api}
""")
    log = tmp_path / "floor.log"
    with open(log, "w") as sink:
        proc = spawn_station(
            "floor", "--config", str(config), "--log-level", "warning",
            stdout=subprocess.DEVNULL, stderr=sink,
        )  # fmt: skip
    running = FloorProcess(f"http://127.0.0.1:{port}", tokens, log)
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, log.read_text()
            with contextlib.suppress(httpx.TransportError):
                health = httpx.get(f"{running.url}/api/health", timeout=2)
                if health.status_code == 200 and health.json()["status"] == "ok":
                    break
            assert time.monotonic() < deadline, "the floor service did not start"
            time.sleep(0.05)
        yield running
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def floor_log(log: Path) -> str:
    """The log but for the broker's (unreachable here, said every few seconds)."""
    lines = log.read_text().splitlines()
    return "\n".join(x for x in lines if "broker" not in x and "nats" not in x.lower())


def test_no_request_is_a_500_and_the_log_stays_quiet(tmp_path: Path) -> None:
    with station_floor(tmp_path) as floor:
        statuses = refused_without_500(floor.url)
        assert statuses.count(404) >= 10
        for target in ODD_QUERIES:
            assert send(floor.url, "GET", target) == 200, target[:80]
        for alert in HUGE:  # ids past SQLite's integers, and none that can be one
            answer = floor.decide(f"/api/floor/alerts/{alert}/acknowledge", {"reason": "x"})
            assert answer.status_code == 422, (alert, answer.text)
        for seq in (2**63, 2**64):
            gap = {"from_seq": 1, "to_seq": seq, "reason": "x"}
            assert floor.decide("/api/floor/tables/t/accept-gap", gap).status_code == 422
            chain = {"seq": seq, "reason": "x"}
            assert floor.decide("/api/floor/tables/t/accept-chain", chain).status_code == 422
        missing = floor.decide(f"/api/floor/alerts/{2**63 - 1}/acknowledge", {"reason": "x"})
        assert missing.status_code == 404  # the largest id there can be: none such
        requests = len(CORPUS) + len(ODD_QUERIES) + len(HUGE) + 5
    assert_quiet(floor_log(floor.log), requests=requests)


def test_a_reason_is_words_without_control_characters(tmp_path: Path) -> None:
    """A control character in a supervisor's reason (an escape sequence, a carriage
    return) is refused; line breaks are words' (the floor view's box takes several), and
    a text log writes them escaped on the decision's line (tests/test_logs.py)."""
    with station_floor(tmp_path) as floor:
        for reason in ("seen\x1b[2J", "a\rWARNING station.floor: forged", "\x00", "a\x85b"):
            answer = floor.decide("/api/floor/alerts/1/acknowledge", {"reason": reason})
            assert answer.status_code == 422, reason
            assert "without control characters" in answer.text
        for reason in ("checked: ok ✓", "checked the shoe\nand the cards", "a\tb"):
            fine = floor.decide("/api/floor/alerts/1/acknowledge", {"reason": reason})
            assert fine.status_code == 404, reason  # on to the alert (there is none)


def test_head_is_answered_wherever_get_is(tmp_path: Path) -> None:
    with station_floor(tmp_path) as floor:
        for path in ("/", "/api/health", "/web/floor.js"):
            head_is_get(floor.url, path)
        head_is_get(floor.url, "/api/floor/tables", floor.headers("viewer"))


def test_with_public_read_only_the_floors_own_names_are_answered(tmp_path: Path) -> None:
    api = 'public_read = true\nallowed_hosts = ["floor.pit.example"]'
    with station_floor(tmp_path, api) as floor:
        port = floor.url.rpartition(":")[2]
        for host in (f"127.0.0.1:{port}", "floor.pit.example", "localhost"):
            answer = httpx.get(f"{floor.url}/api/floor/tables", headers={"Host": host})
            assert answer.status_code == 200, host
        answer = httpx.get(f"{floor.url}/api/floor/tables", headers={"Host": "evil.example"})
        assert answer.status_code == 400 and "allowed_hosts" in answer.json()["detail"]
