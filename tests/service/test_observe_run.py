"""`station run`'s log as a process writes it: JSON lines with `[log] format = "json"`,
and journald's form (no timestamp, a `<N>` level prefix) when stderr is the journal."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from tests.conftest import spawn_run, spawn_station
from tests.netkit import free_port

pytestmark = pytest.mark.server


def station_config(tmp_path: Path, port: int, log: str) -> Path:
    config = tmp_path / "station.toml"
    config.write_text(f"""
[journal]
path = "{tmp_path / "j.db"}"
[api]
bind = "127.0.0.1:{port}"
demo_tokens = true
allow_rig = true
[log]
{log}
""")
    return config


def drive(port: int, rig: str) -> None:
    """Wait for the station, then: a shoe, a fault (the table suspends), a resume."""
    url = f"http://127.0.0.1:{port}"
    auth = {"Authorization": f"Bearer {rig}"}
    for _ in range(300):
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(f"{url}/api/ready").status_code == 200:
                break
        time.sleep(0.05)
    for event in ({"type": "shoe"}, {"type": "fault", "detail": "test"}, {"type": "resume"}):
        assert httpx.post(f"{url}/api/events", json=event, headers=auth).json()["ok"] is not None


def test_json_log_every_line_is_json_with_the_fields(tmp_path: Path) -> None:
    port = free_port()
    config = station_config(tmp_path, port, 'format = "json"\nlevel = "error"')
    proc = spawn_run(config, log_level="info", text=False)  # the flag wins over the file
    try:
        assert proc.stderr is not None
        rig = ""
        for line in proc.stderr:
            record = orjson.loads(line)
            if record.get("role") == "rig":
                rig = record["token"]
                break
        drive(port, rig)
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    lines: list[dict[str, Any]] = [orjson.loads(x) for x in (out + err).splitlines()]
    assert lines, "nothing logged"
    for record in lines:
        assert {"ts", "level", "logger", "message"} <= set(record), record
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", record["ts"])
    (suspended,) = [r for r in lines if "SUSPENDED" in r["message"]]
    assert suspended["level"] == "warning" and suspended["logger"] == "station.table"
    assert suspended["table"] == "table-1" and suspended["code"] == "SCANNER_FAULT"
    assert suspended["seq"] == 4 and suspended["actor"] == "demo-rig"
    (resumed,) = [r for r in lines if "RESUMED" in r["message"]]
    assert resumed["level"] == "info" and resumed["since_seq"] == 4 and resumed["seq"] == 5
    access = [r for r in lines if r["logger"] == "uvicorn.access"]
    assert access and access[0]["method"] in ("GET", "POST") and "status" in access[0]
    assert any(r["logger"] == "uvicorn.error" for r in lines)


def test_under_journald_lines_have_a_level_prefix_and_no_timestamp(tmp_path: Path) -> None:
    """systemd names the journal's stream in JOURNAL_STREAM (device:inode): this test's
    pipe stands in for it."""
    port = free_port()
    config = station_config(tmp_path, port, 'format = "text"')
    read_end, write_end = os.pipe()
    st = os.fstat(write_end)
    proc = spawn_run(
        config, log_level=None, stderr=write_end, env={"JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}"}
    )
    os.close(write_end)
    try:
        assert proc.stdout is not None
        rig = next(line.split()[1] for line in proc.stdout if line.startswith("  rig "))
        drive(port, rig)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    with os.fdopen(read_end, encoding="utf-8") as stream:
        lines = stream.read().splitlines()
    assert lines
    for line in lines:
        assert re.match(r"<[2-7]>[A-Z]+ [\w.]+: ", line), line  # no timestamp first
    assert any(
        line.startswith("<4>WARNING station.table: table-1 row 4: SUSPENDED SCANNER_FAULT")
        for line in lines
    )
    assert any(line.startswith("<6>INFO station.table: table-1 row 5: RESUMED") for line in lines)


def test_outside_journald_text_lines_start_with_the_time(tmp_path: Path) -> None:
    port = free_port()
    config = station_config(tmp_path, port, "")
    proc = spawn_station(
        "run",
        "--config",
        str(config),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"JOURNAL_STREAM": "1:2"},  # inherited from a unit, but not this stream
    )
    try:
        assert proc.stdout is not None
        rig = next(line.split()[1] for line in proc.stdout if line.startswith("  rig "))
        drive(port, rig)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    lines = err.splitlines()
    assert lines
    for line in lines:
        assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} [A-Z]+ [\w.]+: ", line), line
    assert any("WARNING station.table: table-1 row 4: SUSPENDED SCANNER_FAULT" in x for x in lines)
