"""OpenCV and pyzbar are the `camera` extra's (issue 34): a station with a serial or
simulated shoe runs without them, and a camera configured without them is refused with
the extra to install. Here their imports are blocked in the station's process, as on an
install without the extra (tests/test_packaging.py installs the wheel without it too)."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import ROOT
from tests.netkit import free_port

pytestmark = pytest.mark.server

#: `station ARGS` with cv2 and pyzbar absent (ModuleNotFoundError, as without the extra);
#: at exit, the names of any of them that did load (none can: the test of the block).
BLOCKED = """
import atexit, importlib.abc, sys
class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("cv2", "pyzbar"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Absent())
from station.cli import main
sys.exit(main(sys.argv[1:]))
"""
EXTRA = "pip install 'baccarat-station[camera]'"


def station_without_camera(*args: str, **popen: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", BLOCKED, *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,  # type: ignore[call-overload]
    )


def test_a_sim_station_runs_without_opencv_or_pyzbar(tmp_path: Path) -> None:
    port = free_port()
    config = tmp_path / "station.toml"
    config.write_text(
        '[table]\nid = "t1"\n[reader]\ndriver = "sim"\n[reader.sim]\ncard_interval = 0.05\n'
        f'[journal]\npath = "{tmp_path / "j.db"}"\n'
        f'[api]\nbind = "127.0.0.1:{port}"\npublic_read = true\n'
        f'token_file = "{tmp_path / "tokens.toml"}"\n'
    )
    proc = station_without_camera("run", "--config", str(config))
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, proc.communicate()
            with contextlib.suppress(httpx.TransportError):
                rows = httpx.get(f"http://127.0.0.1:{port}/api/journal?after=0&limit=200")
                if '"card"' in rows.text:  # the sim shoe deals
                    break
            assert time.monotonic() < deadline, "no card was dealt"
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "ModuleNotFoundError" not in err and "Traceback" not in err, err


def test_a_camera_without_the_extra_names_it(tmp_path: Path) -> None:
    recogniser = "barcode"
    config = tmp_path / "station.toml"
    config.write_text(
        f'[reader]\ndriver = "camera"\n[reader.camera]\nrecogniser = "{recogniser}"\n'
        f'source = "{tmp_path / "clip.mp4"}"\n'
        f'[journal]\npath = "{tmp_path / "j.db"}"\n'
        f'[api]\nbind = "127.0.0.1:{free_port()}"\ntoken_file = "{tmp_path / "t.toml"}"\n'
    )
    proc = station_without_camera("run", "--config", str(config))
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 2, err
    assert '[reader] driver = "camera" needs OpenCV and pyzbar' in err and EXTRA in err, err
    assert "Traceback" not in err


def test_the_camera_tools_without_the_extra_name_it(tmp_path: Path) -> None:
    proc = station_without_camera(
        "scan", "--source", str(tmp_path / "clip.mp4"), "--barcode", "text"
    )
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 2 and EXTRA in err and "Traceback" not in err, err
