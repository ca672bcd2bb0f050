"""The floor's production install as docs/floor-service.md writes it: its config is readable by the
service's user, and a config that is not says which folder or file and how to open it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

# `station floor`'s imports, made here: the forked child, as the service's user, cannot
# reach this checkout's Python packages under root's home.
import station.api.floor
import station.api.server
import station.floor.service
import station.shared.readable
import station.shared.sdnotify  # noqa: F401
from tests.conftest import ROOT
from tests.userkit import SERVICE_UID, as_root, in_child_as, read_as_service


def readme_floor_steps() -> list[str]:
    """The manual's commands that make /etc/baccarat-floor and its floor.toml."""
    text = (ROOT / "docs" / "floor-service.md").read_text()
    steps = [
        line.strip().removeprefix("sudo ").split("   #")[0]
        for line in text.splitlines()
        if re.match(
            r"\s+sudo (install|cp|chmod|chown|chgrp) .*/etc/baccarat-floor(/floor.toml)?\b", line
        )
        and "floor.env" not in line
    ]
    assert len(steps) >= 2, steps
    return steps


@as_root
def test_the_readme_floor_config_is_readable_by_the_service() -> None:
    """The manual's steps, run as root with the service's user for `baccarat` and a
    scratch folder for /etc/baccarat-floor: that user can read floor.toml."""
    etc = Path(tempfile.mkdtemp(prefix="etc-", dir="/tmp"))
    try:
        os.chmod(etc, 0o755)
        group = "nogroup"
        for step in readme_floor_steps():
            command = step.replace("/etc/baccarat-floor", str(etc / "baccarat-floor"))
            command = command.replace("-g baccarat", f"-g {group}").replace(
                ":baccarat", f":{group}"
            )
            subprocess.run(command, shell=True, check=True, cwd=ROOT)
        seen = read_as_service(etc / "baccarat-floor" / "floor.toml")
        assert seen.returncode == 0, seen.stderr
        assert b"[broker]" in seen.stdout
    finally:
        shutil.rmtree(etc)


@as_root
def test_station_floor_says_which_folder_it_cannot_open(tmp_path: Path) -> None:
    """The folder as the manual used to make it (root:root 0750): `station floor`, as the
    service's user, names the folder and the command that lets its group in; exit 2,
    no traceback."""
    etc = Path(tempfile.mkdtemp(prefix="etc-", dir="/tmp"))
    try:
        os.chmod(etc, 0o755)
        folder = etc / "baccarat-floor"
        folder.mkdir(mode=0o750)
        shutil.copy(ROOT / "config" / "floor.example.toml", folder / "floor.toml")
        status, err = in_child_as(SERVICE_UID, ["floor", "--config", str(folder / "floor.toml")])
        assert status == 2, err
        assert "Traceback" not in err
        assert f"may not open the folder {folder} (owner root, group root, mode 0750)" in err
        assert f"sudo chgrp nogroup {folder} && sudo chmod g+rx {folder}" in err
    finally:
        shutil.rmtree(etc)
