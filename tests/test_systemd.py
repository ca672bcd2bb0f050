"""The systemd unit, the udev rule, and the sd_notify client (over a real unix socket)."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import socket
from pathlib import Path

import pytest

from station.shared.sdnotify import Notifier
from tests import systemdkit
from tests.systemdkit import (
    INSTALLED_STATION,
    analyze,
    check_verify,
    exposure_level,
    local_unit,
    needs_analyze,
)

ROOT = Path(__file__).resolve().parent.parent
UNIT = ROOT / "systemd" / "baccarat-station.service"
RULES = ROOT / "systemd" / "99-baccarat-shoe.rules"


def unit_keys() -> dict[str, dict[str, list[str]]]:
    return systemdkit.unit_keys(UNIT)


@needs_analyze
def test_systemd_analyze_verify_finds_nothing(tmp_path: Path) -> None:
    check_verify(local_unit(UNIT, tmp_path))


@needs_analyze
def test_systemd_analyze_verify_does_catch_a_bad_key(tmp_path: Path) -> None:
    unit = local_unit(UNIT, tmp_path)
    unit.write_text(unit.read_text().replace("Restart=on-failure", "Restart=sometimes"))
    assert "restart specifier" in analyze("verify", str(unit)).stderr


@needs_analyze
def test_hardening_exposure_is_ok(tmp_path: Path) -> None:
    """Exposure 0 (locked down) to 10 (unsafe); 2.0 is well inside systemd's "OK" band."""
    assert exposure_level(local_unit(UNIT, tmp_path)) <= 2.0


def test_unit_has_what_the_station_needs() -> None:
    keys = unit_keys()
    service = keys["Service"]
    expected = {
        "Type": ["notify"],
        "NotifyAccess": ["main"],
        "Restart": ["on-failure"],
        "StateDirectory": ["baccarat-station"],
        "SupplementaryGroups": ["dialout video"],
        "ProtectSystem": ["strict"],
        "NoNewPrivileges": ["yes"],
        "User": ["baccarat"],
        "WorkingDirectory": ["/var/lib/baccarat-station"],
    }
    for key, values in expected.items():
        assert service.get(key) == values, key
    assert re.fullmatch(r"\d+s", service["WatchdogSec"][0])
    assert "char-ttyUSB rw" in service["DeviceAllow"]
    assert "char-video4linux rw" in service["DeviceAllow"]  # the camera reader
    assert "AF_UNIX" in service["RestrictAddressFamilies"][0].split()  # NOTIFY_SOCKET
    assert keys["Install"]["WantedBy"] == ["multi-user.target"]


def test_the_unit_hands_the_signing_key_to_the_service_as_a_credential(tmp_path: Path) -> None:
    """LoadCredential= loads the key file the installed config names as [journal]
    signing_key, under the name its signing_key_credential reads from
    $CREDENTIALS_DIRECTORY: the service's user never reads the file itself (root's, 0600)."""
    from station.live.config import load
    from station.shared.signing import SigningKey

    (credential,) = unit_keys()["Service"]["LoadCredential"]
    name, _, source = credential.partition(":")
    journal = load(ROOT / "config" / "example.toml").journal
    assert (journal.signing_key_credential, journal.signing_key) == (name, Path(source))
    handed = tmp_path / "credentials"
    handed.mkdir()
    key = SigningKey.generate()
    key.save(handed / name)  # what systemd puts there, from the file the station cannot read
    loaded = journal.load_key({"CREDENTIALS_DIRECTORY": str(handed)})
    assert loaded is not None and loaded.public == key.public


def test_unit_starts_a_real_station_command() -> None:
    """ExecStart parses with the `station` command's own argument parser."""
    from station.cli import COMMANDS, build_parser

    argv = shlex.split(unit_keys()["Service"]["ExecStart"][0])
    assert argv[0] == INSTALLED_STATION
    assert argv[1] in COMMANDS
    args = build_parser(argv[1]).parse_args(argv[1:])  # only that command's module
    assert str(args.config) == "/etc/baccarat-station/station.toml"


# --- udev --------------------------------------------------------------------------------

UDEV_MATCH = {"SUBSYSTEM", "KERNEL", "ACTION", "DRIVERS", "SUBSYSTEMS", "ATTRS", "ENV"}
UDEV_ASSIGN = {"SYMLINK", "GROUP", "MODE", "OWNER", "TAG", "ENV", "RUN"}
UDEV_PAIR = re.compile(r'\s*([A-Z_]+)(\{[A-Za-z0-9_]+\})?\s*(==|!=|\+=|:=|=)\s*"([^"]*)"\s*')


def test_udev_rule_gives_the_shoe_a_stable_name() -> None:
    rules = [
        line
        for line in RULES.read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert rules, "no active rule"
    for rule in rules:
        pairs = [UDEV_PAIR.fullmatch(part) for part in rule.split(",")]
        assert all(pairs), f'not KEY=="value" pairs: {rule}'
        found = {(m[1], m[2], m[3]): m[4] for m in pairs if m}
        for key, _attr, op in found:
            if op in ("==", "!="):
                assert key in UDEV_MATCH, f"{key} is not a match key"
            else:
                assert key in UDEV_ASSIGN, f"{key} is not an assignment key"
        assert found[("SUBSYSTEM", None, "==")] == "tty"
        assert found[("SYMLINK", None, "+=")] == "baccarat-shoe"
        assert found[("GROUP", None, "=")] == "dialout"  # the unit's SupplementaryGroups
        assert re.fullmatch(r"[0-9a-f]{4}", found[("ATTRS", "{idVendor}", "==")])
        assert re.fullmatch(r"[0-9a-f]{4}", found[("ATTRS", "{idProduct}", "==")])


def test_the_default_reader_url_is_the_udev_name() -> None:
    from drivers.config import ReaderConfig

    assert ReaderConfig().url == "/dev/baccarat-shoe"


# --- sd_notify ----------------------------------------------------------------------------


@pytest.fixture
def notify_socket(tmp_path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(tmp_path / "notify"))
    sock.settimeout(5)
    return sock


def test_ready_status_watchdog_stopping_reach_the_socket(
    tmp_path: Path, notify_socket: socket.socket
) -> None:
    notifier = Notifier({"NOTIFY_SOCKET": str(tmp_path / "notify")})
    assert notifier.enabled
    assert notifier.ready("journal replayed")
    assert notify_socket.recv(4096) == b"READY=1\nSTATUS=journal replayed"
    assert notifier.status("shoe 2, round 14")
    assert notify_socket.recv(4096) == b"STATUS=shoe 2, round 14"
    assert notifier.watchdog() and notify_socket.recv(4096) == b"WATCHDOG=1"
    assert notifier.stopping() and notify_socket.recv(4096) == b"STOPPING=1"
    notifier.close()


def test_abstract_socket_address() -> None:
    name = f"baccarat-test-{os.getpid()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(5)
        assert Notifier({"NOTIFY_SOCKET": "@" + name}).ready()
        assert sock.recv(64) == b"READY=1"


def test_without_systemd_everything_is_a_quiet_no(tmp_path: Path) -> None:
    notifier = Notifier({})
    assert not notifier.enabled and not notifier.ready() and not notifier.watchdog()
    assert notifier.watchdog_interval() is None
    gone = Notifier({"NOTIFY_SOCKET": str(tmp_path / "nobody-listens")})
    assert gone.ready() is False  # a send that fails returns False, never raises


def test_watchdog_interval_from_the_environment() -> None:
    me = str(os.getpid())
    assert Notifier({"WATCHDOG_USEC": "10000000"}).watchdog_interval() == 10.0
    assert Notifier({"WATCHDOG_USEC": "5000000", "WATCHDOG_PID": me}).watchdog_interval() == 5.0
    assert Notifier({"WATCHDOG_USEC": "5000000", "WATCHDOG_PID": "1"}).watchdog_interval() is None
    assert Notifier({"WATCHDOG_USEC": "soon"}).watchdog_interval() is None
    assert Notifier({"WATCHDOG_USEC": "0"}).watchdog_interval() is None


def test_keep_alive_pings_from_the_event_loop(tmp_path: Path, notify_socket: socket.socket) -> None:
    notifier = Notifier({"NOTIFY_SOCKET": str(tmp_path / "notify"), "WATCHDOG_USEC": "40000"})

    async def for_a_while() -> None:
        task = asyncio.create_task(notifier.keep_alive())
        await asyncio.sleep(0.15)
        task.cancel()

    asyncio.run(for_a_while())
    pings = 0
    notify_socket.settimeout(0)
    while True:
        try:
            assert notify_socket.recv(64) == b"WATCHDOG=1"
        except BlockingIOError:
            break
        pings += 1
    assert pings >= 3  # every 20 ms (half of 40 ms) for 150 ms


def test_keep_alive_returns_at_once_without_a_watchdog() -> None:
    asyncio.run(asyncio.wait_for(Notifier({"NOTIFY_SOCKET": "/nonexistent"}).keep_alive(), 1))
