"""The table display's kiosk unit (`systemd/baccarat-display.service`): Chromium in kiosk
mode on the station's /display, started again whenever it stops, with the session."""

from __future__ import annotations

import shlex
from pathlib import Path

from tests.systemdkit import check_verify, needs_analyze, unit_keys

ROOT = Path(__file__).resolve().parent.parent
UNIT = ROOT / "systemd" / "baccarat-display.service"


@needs_analyze
def test_systemd_analyze_verify_finds_nothing() -> None:
    check_verify(UNIT)


def test_the_kiosk_shows_the_display_and_comes_back(tmp_path: Path) -> None:
    joined = tmp_path / UNIT.name  # its lines continued with a backslash, as systemd reads them
    joined.write_text(UNIT.read_text().replace("\\\n", " "))
    keys = unit_keys(joined)
    service = keys["Service"]
    assert service["Restart"] == ["always"] and service["RestartSec"] == ["2s"]
    assert keys["Unit"]["StartLimitIntervalSec"] == ["0"]  # never gives up
    # Reached at every login, LightDM's autologin too (graphical-session.target is not:
    # LightDM never starts it)
    assert keys["Install"]["WantedBy"] == ["default.target"]
    assert {"DISPLAY=:0", "XAUTHORITY=%h/.Xauthority"} <= set(service["Environment"])
    assert "DISPLAY_URL=http://127.0.0.1:8000/display" in service["Environment"]
    (command,) = service["ExecStart"]
    words = shlex.split(command)
    assert words[0] == "/usr/bin/chromium" and "--kiosk" in words
    assert words[-1] == "${DISPLAY_URL}"
    assert "--window-position=${DISPLAY_POSITION}" in words  # a second monitor
    assert any(w.startswith("--user-data-dir=%h/") for w in words)  # keeps the token


def test_the_manual_says_how_to_install_it() -> None:
    page = (ROOT / "docs" / "display.md").read_text()
    assert "systemd/baccarat-display.service" in page
    assert "station token add" in page and "--role display" in page
