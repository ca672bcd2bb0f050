"""A `station run` process of a config file in a test's folder: the config with a token per
role, the station started and waited for, its log in a file, and the `station` command
line as a process.

(Rebuilt from what tests/service/test_signing_journal.py uses of it: the first version of
this file was overwritten by mistake; its author may want to check it against theirs.)
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from station.live.config import load
from tests.conftest import ROOT, STATION, spawn_run
from tests.netkit import free_port
from tests.service.kit import make_tokens

#: The burn after a shoe: 2H reveals a burn of two cards.
BURN = [{"type": "card", "card": c} for c in ("2H", "KS", "QD")]


def natural_round(number: int) -> list[dict[str, Any]]:
    """A round that ends on the player's natural 9 (the round's `number` is for the
    reader of the test: the station numbers rounds itself)."""
    del number
    return [{"type": "close_bets"}] + [
        {"type": "card", "card": c} for c in ("9S", "KD", "TC", "2C")
    ]


def write_config(tmp_path: Path, *journal: str) -> tuple[Path, dict[str, str]]:
    """`tmp_path/station.toml`: the journal in `var/` beside it (`journal`: more lines of
    `[journal]`), the API on a free port with a token per role (rig allowed); the config
    and the tokens by role."""
    tokens, entries = make_tokens()
    listed = ", ".join(
        f'{{name = "{e.name}", role = "{e.role}", sha256 = "{e.sha256}"}}' for e in entries
    )
    config = tmp_path / "station.toml"
    lines = "\n".join(journal)
    config.write_text(f"""
[journal]
path = "var/journal.db"
{lines}
[api]
bind = "127.0.0.1:{free_port()}"
allow_rig = true
token_file = "var/tokens.toml"
tokens = [{listed}]
""")
    return config, tokens


def station(*args: str) -> subprocess.CompletedProcess[str]:
    """`station ARGS` as a process of its own, its output as text."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [*STATION, *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )


@dataclass
class StationRun:
    url: str
    proc: subprocess.Popen[Any]
    log: Path
    tokens: dict[str, str]

    def headers(self, role: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[role]}"}

    def post(self, event: dict[str, Any], role: str = "rig") -> dict[str, Any]:
        answer = httpx.post(f"{self.url}/api/events", json=event, headers=self.headers(role))
        assert answer.status_code == 200, answer.text
        verdict: dict[str, Any] = answer.json()
        return verdict

    def get(self, path: str, role: str = "viewer") -> httpx.Response:
        return httpx.get(f"{self.url}{path}", headers=self.headers(role), timeout=30)

    def rows(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        while True:
            after = found[-1]["seq"] if found else 0
            page = self.get(f"/api/journal?after={after}&limit=1000").json()["events"]
            if not page:
                return found
            found.extend(page)


@contextlib.contextmanager
def running(
    config: Path, tokens: dict[str, str], log_level: str = "warning"
) -> Iterator[StationRun]:
    """`station run --config CONFIG`, ready (`/api/health` answers); its stderr in
    `station-PORT.log` beside the config. Stopped (SIGTERM) at the end."""
    bind = load(config).api.bind
    log = config.parent / f"station-{bind.rpartition(':')[2]}.log"
    with open(log, "w") as sink:
        proc = spawn_run(config, log_level, stdout=subprocess.DEVNULL, stderr=sink)
    run = StationRun(f"http://{bind}", proc, log, tokens)
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, log.read_text()
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{run.url}/api/health", timeout=2).status_code == 200:
                    break
            assert time.monotonic() < deadline, "the station did not start"
            time.sleep(0.05)
        yield run
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
