"""`station floor` as a process: it prints its address and demo tokens, tells systemd it is
ready, archives what the broker brings, stops cleanly on SIGTERM, and refuses a bad config
or a busy port with a message."""

from __future__ import annotations

import signal
import socket
import subprocess
from pathlib import Path

import httpx
import pytest

from station.floor.archive import Archive
from tests.conftest import run_station, spawn_station
from tests.floor.floorkit import PASSWORD_ENV, make_journal, publish_rows, shoe_events, wait_for
from tests.floor.kit import FloorBroker
from tests.netkit import free_port

pytestmark = [pytest.mark.floor, pytest.mark.server]


@pytest.mark.slow
def test_station_floor_serves_archives_and_stops(tmp_path: Path, floor: FloorBroker) -> None:
    port = free_port()
    config = tmp_path / "floor.toml"
    config.write_text(
        f'[broker]\nurl = "{floor.url}"\nsite = "site-1"\nuser = "floor"\n'
        f'password = "env:{PASSWORD_ENV}"\n'
        f'[archive]\npath = "floor.db"\n'
        f'[api]\nbind = "127.0.0.1:{port}"\ndemo_tokens = true\n'
        '[[table]]\nid = "table-1"\nname = "Baccarat 1"\n'
    )
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(tmp_path / "notify"))
    notify.settimeout(20)
    process = spawn_station(
        "floor",
        "--config",
        str(config),
        "--log-level",
        "warning",
        env={PASSWORD_ENV: floor.admin_password, "NOTIFY_SOCKET": str(tmp_path / "notify")},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert f"floor view http://127.0.0.1:{port}/" in first and "site site-1" in first
        tokens = {}
        for line in iter(process.stdout.readline, ""):
            parts = line.split()
            if len(parts) == 2 and parts[0] in ("viewer", "dealer", "supervisor"):
                tokens[parts[0]] = parts[1]
                if parts[0] == "supervisor":
                    break
        assert set(tokens) == {"viewer", "dealer", "supervisor"}
        assert notify.recv(4096).startswith(b"READY=1")
        url = f"http://127.0.0.1:{port}"
        viewer = {"Authorization": f"Bearer {tokens['viewer']}"}
        assert httpx.get(f"{url}/api/floor/tables").status_code == 401
        rows = make_journal(tmp_path / "t1.db", "table-1", shoe_events(seed=1, decks=1)[:10])
        publish_rows(floor, "table-1", rows)

        def archived() -> bool:
            [table] = httpx.get(f"{url}/api/floor/tables", headers=viewer).json()["tables"]
            return bool(table["archived_seq"] == len(rows) and table["name"] == "Baccarat 1")

        wait_for(archived, "the rows in the archive")
        assert (tmp_path / "floor.db").exists()  # relative to the config's folder
        assert httpx.get(f"{url}/api/health").json()["status"] == "ok"
        process.send_signal(signal.SIGTERM)
        # uvicorn stops the app (the consumer, then the archive), then re-raises SIGTERM,
        # which systemd counts as a clean stop.
        assert process.wait(15) in (0, -signal.SIGTERM)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        notify.close()
    assert process.stderr is not None
    assert "Traceback" not in process.stderr.read()
    with Archive(tmp_path / "floor.db") as archive:
        assert archive.count("table-1") == len(rows) and archive.verify("table-1") == []


def test_a_bad_config_or_a_busy_port_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "floor.toml"
    config.write_text('[broker]\nsite = "a b"\n')
    done = run_station("floor", "--config", str(config))
    assert done.returncode == 2
    assert b"[broker] site: the site 'a b' cannot be part of a floor subject" in done.stderr
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        config.write_text(f'[api]\nbind = "127.0.0.1:{port}"\n')
        done = run_station("floor", "--config", str(config))
    assert done.returncode == 1
    assert b"cannot listen on 127.0.0.1:" in done.stderr and b"in use" in done.stderr
    done = run_station("floor", "--config", str(tmp_path / "missing.toml"))
    assert done.returncode == 2 and b"cannot read the config" in done.stderr
