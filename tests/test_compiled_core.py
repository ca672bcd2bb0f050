"""The compiled core is what a checkout runs once `make core` built it, and the
pure-Python core when STATION_PURE_CORE is set: `make test` runs the pure suites both ways,
which means something only if each run gets the core it names (issue 36)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUILT = ROOT / "build" / "core" / "station" / "core"
PROBE = "import station.core, station.core.table as t; print(station.core.COMPILED, t.__file__)"


def core_in_use(pure: bool) -> tuple[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "STATION_PURE_CORE"}
    if pure:
        env["STATION_PURE_CORE"] = "1"
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=ROOT, env=env, check=True
    )
    compiled, path = out.stdout.split()
    return compiled, path


def test_the_switch_gives_the_pure_core() -> None:
    assert core_in_use(pure=True) == ("False", str(ROOT / "station" / "core" / "table.py"))


@pytest.mark.skipif(not BUILT.is_dir(), reason="no compiled core here (`make core`: no compiler)")
def test_a_built_core_is_used_while_its_sources_are_unchanged() -> None:
    compiled, path = core_in_use(pure=False)
    assert compiled == "True", "build/core/ is older than a core module: run `make core`"
    assert Path(path).parent == BUILT and path.endswith(".so")


def test_this_run_gets_the_core_it_names() -> None:
    """The suites of this very process decide with the core its environment names."""
    import station.core
    import station.core.table

    if os.environ.get("STATION_PURE_CORE") or not BUILT.is_dir():
        assert not station.core.COMPILED
        assert station.core.table.__file__.endswith(".py")
    else:
        assert station.core.COMPILED, "build/core/ is older than a core module: run `make core`"
        assert station.core.table.__file__.endswith(".so")
