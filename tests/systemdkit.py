"""The systemd units' test kit: a unit file's keys, the unit pointed at this checkout's
`station` (for `systemd-analyze`), and running `systemd-analyze` on it. The station's
unit (tests/test_systemd.py) and the floor service's (tests/floor/test_service_systemd.py)
are checked the same way."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

#: Where the units expect the `station` command (docs/install.md).
INSTALLED_STATION = "/opt/baccarat-station/bin/station"

needs_analyze = pytest.mark.skipif(
    shutil.which("systemd-analyze") is None,
    reason="systemd-analyze is not installed (apt-get install systemd); the unit's keys are "
    "still checked without it",
)


def unit_keys(unit: Path) -> dict[str, dict[str, list[str]]]:
    """Section -> key -> values (systemd allows a key more than once)."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    for line in unit.read_text().splitlines():
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


def local_unit(unit: Path, tmp_path: Path) -> Path:
    """`unit` with ExecStart pointing at this checkout's `station` (verify checks that
    the program exists); nothing else is changed."""
    station = Path(sys.executable).parent / "station"
    assert station.exists(), "install the project first (make install)"
    text = unit.read_text()
    assert INSTALLED_STATION in text
    target = tmp_path / unit.name
    target.write_text(text.replace(INSTALLED_STATION, str(station)))
    return target


def analyze(*args: str) -> subprocess.CompletedProcess[str]:
    """`systemd-analyze ARGS`, its output as text."""
    return subprocess.run(["systemd-analyze", *args], capture_output=True, text=True, timeout=60)


def check_verify(unit: Path) -> None:
    """`systemd-analyze verify` finds nothing. It exits 0 even for unknown keys and bad
    values (it only warns), so no output is the pass mark."""
    done = analyze("verify", str(unit))
    assert done.returncode == 0 and (done.stdout + done.stderr).strip() == "", done.stderr


def exposure_level(unit: Path) -> float:
    """`systemd-analyze security` of a unit file: exposure 0 (locked down) to 10 (unsafe)
    (the threshold of 20 makes it exit 0 whatever the level, so its output is read)."""
    done = analyze("security", "--offline=yes", "--threshold=20", str(unit))
    assert done.returncode == 0, done.stdout[-800:] + done.stderr
    level = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", done.stdout)
    assert level is not None, done.stdout[-300:]
    return float(level[1])
