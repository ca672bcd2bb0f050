"""`make floor-demo` end to end (issue 34): its four stations sign their journals with keys
made in the demo's folder, the floor's config names their public keys, and the floor view
shows every table signed; a terminal's Ctrl-C (SIGINT to the whole process group) stops
it all with exit 0 and no traceback, on the terminal or in a log."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from scripts.floor_demo import TABLES
from tests.conftest import ROOT
from tests.netkit import free_port

pytestmark = [pytest.mark.floor, pytest.mark.slow]


def free_run(count: int) -> int:
    """The first of `count` consecutive ports free now."""
    for _ in range(50):
        first = free_port()
        if first + count >= 65535:
            continue
        with contextlib.ExitStack() as held:
            try:
                for port in range(first, first + count):
                    probe = held.enter_context(socket.socket())
                    probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return first
    raise AssertionError("no run of free ports")


def test_the_floor_demo_shows_signed_tables_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    floor_port, station_port = free_port(), free_run(len(TABLES))
    demo = subprocess.Popen(
        [
            sys.executable,
            "scripts/floor_demo.py",
            "--dir",
            str(tmp_path),
            "--broker-port",
            str(free_port()),
            "--floor-port",
            str(floor_port),
            "--station-port",
            str(station_port),
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        process_group=0,  # a terminal's foreground job
    )
    out: list[str] = []
    try:
        assert demo.stdout is not None
        for line in demo.stdout:  # up to the floor's viewer token
            out.append(line)
            if line.strip().startswith("viewer"):
                token = line.split()[1]
                break
        else:
            raise AssertionError("".join(out))
        deadline = time.monotonic() + 60
        headers = {"Authorization": f"Bearer {token}"}
        while True:
            assert demo.poll() is None, "".join(out)
            with contextlib.suppress(httpx.TransportError):
                tables = httpx.get(
                    f"http://127.0.0.1:{floor_port}/api/floor/tables", headers=headers
                ).json()["tables"]
                seen = {t["id"]: t for t in tables}
                if all(seen.get(t, {}).get("signed") and seen[t]["key"] for t in TABLES):
                    break
            assert time.monotonic() < deadline, seen
            time.sleep(0.5)
        assert all(seen[t]["key"]["origin"] for t in TABLES)
        assert all(seen[t]["key_from_config"] for t in TABLES)  # the floor config names it
        assert not any(seen[t]["forged"] for t in TABLES)
        os.killpg(demo.pid, signal.SIGINT)
        rest, _ = demo.communicate(timeout=60)
        out.append(rest)
    finally:
        if demo.poll() is None:
            os.killpg(demo.pid, signal.SIGKILL)
            demo.communicate()
    said = "".join(out)
    assert demo.returncode == 0, said
    assert "Traceback" not in said, said
    for log in (tmp_path / "logs").glob("*.log"):
        text = log.read_text()
        assert "Traceback" not in text and "KeyboardInterrupt" not in text, (log, text)
    assert sorted(p.name for p in (tmp_path / "keys").iterdir()) == [f"{t}.pem" for t in TABLES]
