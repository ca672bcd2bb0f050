"""A real `station run` process for the tests of a signed journal and of a restore: its
config file, its tokens, its events posted over HTTP, its stop (SIGTERM, as systemd stops
it); and `station` commands (`key`, `journal`) run as processes of their own."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import spawn_run, spawn_station
from tests.netkit import free_port
from tests.service.kit import make_tokens

#: The burn: 2H says two more cards are burned.
BURN = [{"type": "card", "card": c} for c in ("2H", "KS", "QD")]
SUITS = "SHDC"


def natural_round(n: int) -> list[dict[str, Any]]:
    """Round `n` of a shoe: bets closed, then the player's natural 9 (9 and a ten-card)
    against the banker's 7, four cards, the suits turning so no card is dealt too often."""
    s = SUITS[n % 4]
    t = SUITS[(n // 4) % 4]
    cards = (f"9{s}", f"2{t}", f"K{s}", f"5{t}")
    return [{"type": "close_bets"}] + [{"type": "card", "card": c} for c in cards]


@dataclass
class Proc:
    """A `station run` process and what it needs to be spoken to."""

    process: subprocess.Popen[str]
    url: str
    tokens: dict[str, str]
    config: Path
    log: Path  # what it wrote to stdout and stderr

    def headers(self, role: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[role]}"}

    def post(self, event: dict[str, Any], role: str = "rig") -> dict[str, Any]:
        answer = httpx.post(f"{self.url}/api/events", json=event, headers=self.headers(role))
        answer.raise_for_status()
        verdict: dict[str, Any] = answer.json()
        return verdict

    def get(self, path: str, role: str = "viewer") -> httpx.Response:
        return httpx.get(f"{self.url}{path}", headers=self.headers(role), timeout=10)

    def rows(self) -> list[dict[str, Any]]:
        answer = self.get("/api/journal?after=0&limit=1000")
        answer.raise_for_status()
        events: list[dict[str, Any]] = answer.json()["events"]
        return events


def write_config(tmp_path: Path, journal: str = "", extra: str = "") -> tuple[Path, dict[str, str]]:
    """A station's config in `tmp_path` (the rig allowed, a token per role, a free port),
    `journal` more keys of its `[journal]`, `extra` more sections."""
    tokens, entries = make_tokens()
    listed = ", ".join(
        f'{{name = "{e.name}", role = "{e.role}", sha256 = "{e.sha256}"}}' for e in entries
    )
    config = tmp_path / "station.toml"
    config.write_text(f"""
[table]
id = "t-proc"
[journal]
path = "var/journal.db"
{journal}
[api]
bind = "127.0.0.1:{free_port()}"
allow_rig = true
tokens = [{listed}]
{extra}
""")
    return config, tokens


@contextmanager
def running(config: Path, tokens: dict[str, str], log_level: str = "warning") -> Iterator[Proc]:
    """`station run --config CONFIG` until the block ends (then stopped with SIGTERM and
    waited for); ready when the block begins. What it writes goes to `station-N.log`
    beside the config (`Proc.log`)."""
    bind = next(
        line.split('"')[1] for line in config.read_text().splitlines() if line.startswith("bind")
    )
    log = config.with_name(f"station-{len(list(config.parent.glob('station-*.log')))}.log")
    with log.open("w") as sink:
        process = spawn_run(config, log_level=log_level, stdout=sink, stderr=subprocess.STDOUT)
    proc = Proc(process, f"http://{bind}", tokens, config, log)
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, log.read_text()
            try:
                if httpx.get(f"{proc.url}/api/ready", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the station did not get ready"
            time.sleep(0.05)
        yield proc
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        process.wait(30)


def station(*args: str) -> subprocess.CompletedProcess[str]:
    """`station ARGS` as a process of its own; its output as text."""
    process = spawn_station(*args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = process.communicate(timeout=60)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)
