"""The shipped unit's syscall filter (issue 34): the floor publisher and the shuffle looks'
worker still run below the station's priority under it, and where a filter refuses that,
the station's log says so (they used to lose it without a word)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import ROOT
from tests.seccompkit import denied_calls, needs_seccomp

UNIT = ROOT / "systemd" / "baccarat-station.service"

#: In a process of its own, the filter applied first: the look worker started as the
#: station starts it, a stand-in child given the publisher's priority as the station
#: gives it; their scheduling printed as JSON.
SCRIPT = textwrap.dedent(
    """
    import json, logging, os, subprocess, sys
    from tests.seccompkit import apply_filter
    apply_filter(set(json.loads(sys.argv[1])))
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(message)s")
    from station.live.protection.looks import LookWorker
    from station.live.publisher.process import yield_to_station
    looks = LookWorker()
    looks.start()
    worker = looks.pid()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    yield_to_station(child.pid)
    print(json.dumps({
        "looks_nice": os.getpriority(os.PRIO_PROCESS, worker),
        "publisher_policy": os.sched_getscheduler(child.pid),
        "station_nice": os.getpriority(os.PRIO_PROCESS, 0),
    }))
    child.kill()
    looks.close()
    """
)


def run_under(denied: set[str]) -> tuple[dict[str, int], str]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(sorted(denied))],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr


@needs_seccomp
def test_the_shipped_filter_leaves_the_helpers_their_low_priority() -> None:
    denied = denied_calls(UNIT)
    assert {"setrlimit", "sched_setaffinity", "ioprio_set"} <= denied  # still a deny list
    seen, log = run_under(denied)
    assert seen["looks_nice"] == seen["station_nice"] + 10, log
    assert seen["publisher_policy"] == os.SCHED_IDLE, log
    assert "station's priority" not in log


@needs_seccomp
def test_a_filter_that_refuses_priorities_is_said_in_the_log(tmp_path: Path) -> None:
    """The unit as it was (`~@resources` and nothing put back): both helpers run at the
    station's priority, and the log says so for each, with what to change."""
    unit = tmp_path / UNIT.name
    unit.write_text(
        "\n".join(
            line
            for line in UNIT.read_text().splitlines()
            if not (line.startswith("SystemCallFilter=") and "setpriority" in line)
        )
    )
    denied = denied_calls(unit)
    assert {"setpriority", "sched_setscheduler"} <= denied
    seen, log = run_under(denied)
    assert seen["looks_nice"] == seen["station_nice"]
    assert seen["publisher_policy"] == os.SCHED_OTHER
    said = [line for line in log.splitlines() if "runs at the station's priority" in line]
    assert len(said) == 2, log
    assert any("shuffle looks" in line for line in said) and any(
        "publisher" in line for line in said
    )
    assert all("SystemCallFilter" in line for line in said)


def test_the_unit_puts_back_only_lowering_calls() -> None:
    """What the unit allows again after `~@resources` only lowers a priority without
    privileges (the unit has no capabilities, and RestrictRealtime= refuses real time)."""
    text = UNIT.read_text()
    assert "SystemCallFilter=setpriority sched_setscheduler\n" in text
    assert "CapabilityBoundingSet=\n" in text and "RestrictRealtime=yes" in text
