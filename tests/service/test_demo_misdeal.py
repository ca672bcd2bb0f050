"""The demo's suspension on demand (issue 34): `POST /api/sim/misdeal` with the demo's
dealer token has the dealer bot deal a card before closing bets; the table suspends on it
within a round and the demo supervisor resumes it. A station with another reader has no
such thing (404), and the call needs a dealer's token."""

from __future__ import annotations

import contextlib
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import spawn_station
from tests.netkit import free_port
from tests.service.kit import Running
from tests.service.test_run_ctrl_c import demo_config

pytestmark = pytest.mark.server


def test_the_demo_dealer_misdeals_on_demand(tmp_path: Path) -> None:
    config = demo_config(tmp_path)
    text = config.read_text()  # no fault of the reader's own: the one suspension is asked for
    assert "fault_chance = 0.02" in text
    config.write_text(text.replace("fault_chance = 0.02", "fault_chance = 0.0"))
    port = free_port()
    proc = spawn_station(
        "run",
        "--config",
        str(config),
        "--bind",
        f"127.0.0.1:{port}",
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        tokens: dict[str, str] = {}
        assert proc.stdout is not None
        for line in proc.stdout:
            words = line.split()
            if len(words) == 2 and words[0] in ("viewer", "dealer", "supervisor"):
                tokens[words[0]] = words[1]
            if "supervisor" in tokens:
                break
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{url}/api/ready").status_code == 200:
                    break
            assert time.monotonic() < deadline
            time.sleep(0.1)
        viewer = httpx.post(f"{url}/api/sim/misdeal", headers=bearer(tokens["viewer"]))
        assert viewer.status_code == 403
        asked = httpx.post(f"{url}/api/sim/misdeal", headers=bearer(tokens["dealer"]))
        assert asked.status_code == 200, asked.text
        assert "before closing bets" in asked.json()["detail"]
        after = httpx.get(f"{url}/api/state").json()["seq"]
        suspended = wait_for(url, lambda s: s["suspension"] is not None, 30)
        code = suspended["suspension"]["code"]
        assert code in ("UNEXPECTED_CARD", "BURN_EXCESS"), suspended["suspension"]
        assert "before betting closed" in suspended["suspension"]["explanation"]
        assert suspended["suspension"]["since_seq"] > after - 1
        # the demo supervisor resumes it (config/demo.toml: after 5 s)
        wait_for(url, lambda s: s["suspension"] is None, 20)
        rows = httpx.get(f"{url}/api/journal?after={after - 1}&limit=100").text
        assert code in rows and '"resume"' in rows  # journaled, then resolved
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def wait_for(url: str, done: object, timeout: float) -> dict[str, object]:
    deadline = time.monotonic() + timeout
    while True:
        state: dict[str, object] = httpx.get(f"{url}/api/state").json()
        if done(state):  # type: ignore[operator]
            return state
        assert time.monotonic() < deadline, state
        time.sleep(0.1)


def test_a_station_without_the_sim_reader_has_no_misdeal(live: Running) -> None:
    answer = httpx.post(f"{live.url}/api/sim/misdeal", headers=live.headers("dealer"))
    assert answer.status_code == 404
    assert 'driver = "sim"' in answer.json()["detail"]
