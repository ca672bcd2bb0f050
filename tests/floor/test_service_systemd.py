"""The floor service's systemd unit: it verifies, it is locked down, and its ExecStart is a
real `station floor` command line (tests/test_systemd.py does the same for the station's)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from tests import systemdkit
from tests.conftest import ROOT
from tests.systemdkit import (
    INSTALLED_STATION,
    check_verify,
    exposure_level,
    local_unit,
    needs_analyze,
)

UNIT = ROOT / "systemd" / "baccarat-floor.service"


def unit_keys() -> dict[str, dict[str, list[str]]]:
    return systemdkit.unit_keys(UNIT)


@needs_analyze
def test_systemd_analyze_verify_finds_nothing(tmp_path: Path) -> None:
    check_verify(local_unit(UNIT, tmp_path))


@needs_analyze
def test_hardening_exposure_is_ok(tmp_path: Path) -> None:
    assert exposure_level(local_unit(UNIT, tmp_path)) <= 2.0


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
    from station.floor.config import load

    example = load(ROOT / "config" / "floor.example.toml")
    state = Path("/var/lib") / unit_keys()["Service"]["StateDirectory"][0]
    assert example.archive.path.parent == state
