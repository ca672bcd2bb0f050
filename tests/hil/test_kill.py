"""SIGKILL the live station 20 times while a simulated shoe plays into its pty.

After every kill: every row a WebSocket client saw (rows are published only once
committed) is in the journal unchanged, `station journal verify` passes, and once the
station is back its `/api/state` equals the journal's replay (with the `restart` it
journals on start).
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from drivers.sim.pty import PtyPort
from drivers.sim.shoe import CUT_CARD, ShoeEmpty, VirtualShoe
from station.core.snapshot import take
from station.core.table import Table
from station.live.journal import Journal
from station.live.journal.reading import read_rows
from station.shared.tokens import new_token, token_hash
from tests.conftest import run_station, spawn_run
from tests.netkit import free_port

KILLS = 20


class Rig:
    """The shoe (cards into the pty) and a floor supervisor (shoe / resume over the API)."""

    def __init__(self, pty: PtyPort, url: str, token: str) -> None:
        self.pty, self.url, self.token = pty, url, token
        self.rng = random.Random(42)
        self.shoe = VirtualShoe(8, self.rng)
        self.playing = threading.Event()
        self.stop = threading.Event()
        self.cards = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        client = httpx.Client(headers={"Authorization": f"Bearer {self.token}"}, timeout=5)
        while not self.stop.is_set():
            if not self.playing.wait(0.05):
                continue
            try:
                state = client.get(f"{self.url}/api/state").json()
                if not state["in_play"]:
                    client.post(f"{self.url}/api/events", json={"type": "shoe"})
                    self.shoe = VirtualShoe(8, self.rng)
                elif state["suspended"]:
                    client.post(f"{self.url}/api/events", json={"type": "resume"})
            except (httpx.HTTPError, KeyError, ValueError):
                continue  # the station is down or starting
            for _ in range(20):
                if not self.playing.is_set():
                    break
                try:
                    item = self.shoe.draw()
                except ShoeEmpty:
                    self.shoe = VirtualShoe(8, self.rng)
                    item = self.shoe.draw()
                self.pty.write(b"CUT\n" if item == CUT_CARD else item.encode() + b"\n")
                self.cards += 1
                time.sleep(0.002)


class Watcher:
    """A WebSocket client keeping every row it is sent."""

    def __init__(self, url: str) -> None:
        self.rows: dict[int, dict[str, Any]] = {}
        self.thread = threading.Thread(target=self._run, args=(url,), daemon=True)
        self.thread.start()

    def _run(self, url: str) -> None:
        try:
            with connect(url, open_timeout=5) as ws:
                for message in ws:
                    m = json.loads(message)
                    if m["type"] == "row":
                        self.rows[m["seq"]] = m
        except Exception:
            return  # the station was killed


@pytest.mark.slow
def test_sigkill_loses_nothing(tmp_path: Path) -> None:
    port, token = free_port(), new_token()
    link = tmp_path / "shoe"
    journal = tmp_path / "journal.db"
    config = tmp_path / "station.toml"
    config.write_text(f"""
[table]
id = "kill-test"
gated = false
[reader]
driver = "serial"
url = "{link}"
[journal]
path = "{journal}"
[api]
bind = "127.0.0.1:{port}"
public_read = true
tokens = [{{name = "rig", role = "supervisor", sha256 = "{token_hash(token)}"}}]
""")
    url = f"http://127.0.0.1:{port}"
    pty = PtyPort(link)
    rig = Rig(pty, url, token)
    rig.thread.start()
    seen: dict[int, dict[str, Any]] = {}
    rng = random.Random(7)
    try:
        for kill in range(KILLS + 1):
            proc = spawn_run(config, stdout=subprocess.DEVNULL, text=False)
            try:
                state = wait_ready(url, proc)
                check_state_is_the_replay(journal, state)
                watcher = Watcher(url.replace("http", "ws") + "/api/live")
                rig.playing.set()
                if kill == KILLS:
                    break
                time.sleep(rng.uniform(0.3, 0.9))
            finally:
                proc.send_signal(signal.SIGKILL)
                proc.wait(10)
            rig.playing.clear()
            watcher.thread.join(5)
            seen.update(watcher.rows)
            check_nothing_lost(journal, seen)
        assert rig.cards > 500 and len(seen) > 500
    finally:
        rig.stop.set()
        rig.thread.join(5)
        pty.close()
    verify = run_station("journal", "verify", "--journal", str(journal))
    assert verify.returncode == 0, verify.stderr
    restarts = [r for r in read_rows(journal, 0, 10**6) if r.event["type"] == "restart"]
    assert len(restarts) == KILLS + 1


def wait_ready(url: str, proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        try:
            r = httpx.get(f"{url}/api/state", timeout=1)
            if r.status_code == 200:
                state: dict[str, Any] = r.json()
                return state
        except httpx.HTTPError:
            pass
        time.sleep(0.02)
    raise AssertionError("the station did not come back")


def check_state_is_the_replay(path: Path, state: dict[str, Any]) -> None:
    """The state right after start (nothing but notices can have come since)."""
    table = Table(gated=False)
    since = None
    for row in read_rows(path, 0, state["seq"]):
        if row.kind != "event":
            continue
        verdict, cleared, began = table.decide(row.event)
        assert dict(verdict) == row.verdict
        if began:
            since = row.seq
        elif cleared:
            since = None
    expected = take(table, state["seq"], "kill-test", since).to_dict()
    assert state["journal"] == {"writable": True}
    actual = {k: v for k, v in state.items() if k not in ("reader", "journal")}
    assert actual == json.loads(json.dumps(expected))


def check_nothing_lost(path: Path, seen: dict[int, dict[str, Any]]) -> None:
    with Journal(path) as journal:
        report = journal.verify()
        assert report.ok, report.problems
        rows = {r.seq: r.to_api() for r in journal.rows()}
    for seq, row in seen.items():
        assert seq in rows, f"row {seq} was published but is not in the journal"
        assert rows[seq] == {k: v for k, v in row.items() if k != "type"}
