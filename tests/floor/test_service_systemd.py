"""The floor service's systemd unit: it verifies, it is locked down, and its ExecStart is a
real `station floor` command line (tests/test_systemd.py does the same for the station's)."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

UNIT = ROOT / "systemd" / "baccarat-floor.service"
INSTALLED_STATION = "/opt/baccarat-station/bin/station"


def unit_keys() -> dict[str, dict[str, list[str]]]:
    """Section -> key -> values (systemd allows a key more than once)."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    for line in UNIT.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), {})
            continue
        key, sep, value = line.partition("=")
        assert sep and current is not None, f"not KEY=VALUE in a section: {line!r}"
        current.setdefault(key, []).append(value)
    return sections


def local_unit(tmp_path: Path) -> Path:
    """The unit with ExecStart pointing at this checkout's `station` (verify checks that
    the program exists); nothing else is changed."""
    station = Path(sys.executable).parent / "station"
    assert station.exists(), "install the project first (make install)"
    text = UNIT.read_text()
    assert INSTALLED_STATION in text
    target = tmp_path / UNIT.name
    target.write_text(text.replace(INSTALLED_STATION, str(station)))
    return target


needs_analyze = pytest.mark.skipif(
    shutil.which("systemd-analyze") is None,
    reason="systemd-analyze is not installed (apt-get install systemd)",
)


@needs_analyze
def test_systemd_analyze_verify_finds_nothing(tmp_path: Path) -> None:
    done = subprocess.run(
        ["systemd-analyze", "verify", str(local_unit(tmp_path))],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and (done.stdout + done.stderr).strip() == "", done.stderr


@needs_analyze
def test_hardening_exposure_is_ok(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            "systemd-analyze",
            "security",
            "--offline=yes",
            "--threshold=20",
            str(local_unit(tmp_path)),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout[-800:] + done.stderr
    exposure = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", done.stdout)
    assert exposure is not None and float(exposure[1]) <= 2.0, done.stdout[-300:]


def test_unit_has_what_the_floor_service_needs() -> None:
    keys = unit_keys()
    service = keys["Service"]
    expected = {
        "Type": ["notify"],
        "NotifyAccess": ["main"],
        "Restart": ["on-failure"],
        "StateDirectory": ["baccarat-floor"],
        "ProtectSystem": ["strict"],
        "PrivateDevices": ["yes"],
        "NoNewPrivileges": ["yes"],
        "User": ["baccarat"],
        "WorkingDirectory": ["/var/lib/baccarat-floor"],
    }
    for key, values in expected.items():
        assert service.get(key) == values, key
    assert re.fullmatch(r"\d+s", service["WatchdogSec"][0])
    assert "DeviceAllow" not in service  # no shoe, no camera
    assert "AF_UNIX" in service["RestrictAddressFamilies"][0].split()  # NOTIFY_SOCKET
    assert keys["Install"]["WantedBy"] == ["multi-user.target"]


def test_unit_starts_a_real_station_floor_command() -> None:
    """ExecStart parses with the `station` command's own argument parser."""
    from station.cli import COMMANDS, build_parser

    argv = shlex.split(unit_keys()["Service"]["ExecStart"][0])
    assert argv[0] == INSTALLED_STATION
    assert argv[1] == "floor" and argv[1] in COMMANDS
    args = build_parser(argv[1]).parse_args(argv[1:])
    assert str(args.config) == "/etc/baccarat-floor/floor.toml"


def test_the_example_config_keeps_its_files_where_the_unit_lets_it_write() -> None:
    from station.live.floor_service.config import load

    example = load(ROOT / "config" / "floor.example.toml")
    state = Path("/var/lib") / unit_keys()["Service"]["StateDirectory"][0]
    assert example.archive.path.parent == state
