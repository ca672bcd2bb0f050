"""`station config example`: the documented example configs every `--help` points to,
printed by the command and shipped in the wheel (an installed station has no config/)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from station.live.config import load
from tests.conftest import ROOT, run_station


@pytest.mark.parametrize(
    ("args", "example"),
    [((), "example.toml"), (("--floor",), "floor.example.toml")],
)
def test_the_command_prints_the_example(args: tuple[str, ...], example: str) -> None:
    out = run_station("config", "example", *args)
    assert out.returncode == 0 and out.stderr == b""
    assert out.stdout == (ROOT / "config" / example).read_bytes()


def test_what_it_prints_is_a_config_the_station_loads(tmp_path: Path) -> None:
    config = tmp_path / "station.toml"
    config.write_bytes(run_station("config", "example").stdout)
    assert load(config).table.id


@pytest.mark.slow
def test_the_wheel_carries_the_examples(built_wheel: Path) -> None:
    """Package data, not links: the wheel holds the files' own bytes."""
    with zipfile.ZipFile(built_wheel) as archive:
        for example in ("example.toml", "floor.example.toml"):
            shipped = archive.read(f"station/examples/{example}")
            assert shipped == (ROOT / "config" / example).read_bytes()


def test_the_example_names_every_role() -> None:
    """The example's role list is the station's (`display` was left out)."""
    from station.shared.config import ROLES

    text = (ROOT / "config" / "example.toml").read_text()
    (line,) = [line for line in text.splitlines() if line.startswith("# Roles:")]
    assert all(role in line for role in ROLES), (line, ROLES)
