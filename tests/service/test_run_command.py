"""`station run` as a process: config errors, demo tokens, systemd READY, clean stop; and
the `station journal` commands on what it wrote."""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx
import orjson
import pytest

from station.cli import main
from tests.conftest import spawn_run, spawn_station
from tests.netkit import free_port

pytestmark = pytest.mark.server


def test_a_bad_config_stops_with_the_key(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("[journal]\npaht = 'x.db'\n")
    proc = spawn_station("run", "--config", str(config), stderr=subprocess.PIPE, text=True)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 2
    assert "[journal] paht: unknown key" in err and str(config) in err


def test_a_port_in_use_is_said_before_anything_is_announced(tmp_path: Path) -> None:
    """Another process listens on the configured port: `station run` says so in words and
    exits 1 without announcing the other process's address as its own (or a raw errno)."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        config = demo_station_config(tmp_path, port)
        proc = spawn_run(config, log_level=None)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 1
    assert out == ""  # no start line, no demo tokens
    assert err == (
        f"station run: cannot listen on 127.0.0.1:{port}: the address is in use (another "
        "station?) — change [api] bind or stop the other process\n"
    )
    assert not (tmp_path / "j.db").exists()  # nothing was started


def demo_station_config(tmp_path: Path, port: int) -> Path:
    """A station on `port` with its journal in `tmp_path` and demo tokens printed at start."""
    config = tmp_path / "station.toml"
    config.write_text(f"""
[journal]
path = "{tmp_path / "j.db"}"
[api]
bind = "127.0.0.1:{port}"
demo_tokens = true
""")
    return config


def test_run_prints_demo_tokens_notifies_systemd_and_stops_cleanly(tmp_path: Path) -> None:
    port = free_port()
    config = demo_station_config(tmp_path, port)
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(tmp_path / "notify"))
    notify.settimeout(30)
    proc = spawn_run(config, env={"NOTIFY_SOCKET": str(tmp_path / "notify")})
    try:
        assert proc.stdout is not None
        tokens = {}
        for line in proc.stdout:
            parts = line.split()
            if len(parts) == 2 and parts[0] in ("viewer", "dealer", "supervisor"):
                tokens[parts[0]] = parts[1]
            if len(tokens) == 3:
                break
        message = notify.recv(4096).decode()
        assert "READY=1" in message and "table table-1" in message
        url = f"http://127.0.0.1:{port}/api/events"
        auth = {"Authorization": f"Bearer {tokens['dealer']}"}
        assert httpx.post(url, json={"type": "shoe"}, headers=auth).json()["ok"]
        viewer = {"Authorization": f"Bearer {tokens['viewer']}"}
        assert httpx.post(url, json={"type": "shoe"}, headers=viewer).status_code == 403
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
        notify.close()
    # uvicorn shuts the app down (the station stops its reader and closes the journal),
    # then re-raises SIGTERM, which systemd counts as a clean stop.
    assert proc.returncode in (0, -signal.SIGTERM)
    assert "refused POST /api/events" in (proc.stderr.read() if proc.stderr else "")
    assert main(["journal", "verify", "--config", str(config)]) == 0
    out = tmp_path / "export.jsonl"
    assert main(["journal", "export", "--config", str(config), "-o", str(out)]) == 0
    lines = [orjson.loads(x) for x in out.read_bytes().splitlines()]
    assert [x["type"] for x in lines] == ["restart", "shoe"]
    assert lines[1]["journal"]["actor"] == "demo-dealer"


def test_a_websocket_token_never_reaches_the_log(tmp_path: Path) -> None:
    """Browsers send the token in the WebSocket's query string, which uvicorn logs."""
    from websockets.sync.client import connect

    port = free_port()
    config = demo_station_config(tmp_path, port)
    proc = spawn_run(config, log_level="info")
    try:
        assert proc.stdout is not None
        token = next(line.split()[1] for line in proc.stdout if line.startswith("  viewer "))
        state = f"http://127.0.0.1:{port}/api/state"
        bearer = {"Authorization": f"Bearer {token}"}
        for _ in range(300):  # until it listens and has replayed its journal
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(state, headers=bearer).status_code == 200:
                    break
            time.sleep(0.05)
        # a token in an HTTP URL is not taken (401), and is hidden from the logs all the same
        assert httpx.get(f"{state}?token={token}").status_code == 401
        with connect(f"ws://127.0.0.1:{port}/api/live?after=0&token={token}") as ws:
            assert orjson.loads(ws.recv(timeout=10))["type"] == "hello"
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    logs = out + err  # uvicorn's access log goes to stdout, the rest to stderr
    assert '"WebSocket /api/live?after=0&token=<hidden>" [accepted]' in logs
    assert '"GET /api/state?token=<hidden> HTTP/1.1" 401' in logs
    assert token not in logs


def test_journal_verify_exit_codes(tmp_path: Path) -> None:
    assert main(["journal", "verify", "--journal", str(tmp_path / "none.db")]) == 2
    from station.core.table import Table
    from station.live.journal import Journal

    with Journal(tmp_path / "j.db") as journal:
        journal.start("t", Table())
    assert main(["journal", "verify", "--journal", str(tmp_path / "j.db")]) == 0
    import sqlite3

    db = sqlite3.connect(tmp_path / "j.db")
    db.execute("UPDATE journal SET actor = 'mallory'")
    db.commit()
    db.close()
    assert main(["journal", "verify", "--journal", str(tmp_path / "j.db")]) == 1
