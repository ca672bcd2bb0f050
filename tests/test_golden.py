"""Golden files: complete simulated shoes and the verdicts `station replay` gives on them.

Each case in `tests/golden/` is a pair: `NAME.events.jsonl` (what `station simulate`
writes with the case's arguments) and `NAME.verdicts.jsonl` (what `station replay`
prints for it). Both commands run through the real command line (`station.cli.main`,
argument parsing included, in this process) and their output must match the files byte
for byte.

A deliberate change of the simulator's or the rules' output: regenerate with

    UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_golden.py

then read the diff (`git diff tests/golden/`) before committing it: every changed
verdict must be one the change was meant to make.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from drivers.sim.faults import FAULTS, GATED_ONLY
from tests.conftest import run_station

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"

#: name -> (`station simulate` arguments, `station replay` arguments, faults it must show).
CASES: dict[str, tuple[list[str], list[str], set[str]]] = {
    "one-deck-gated": (["--seed", "1", "--decks", "1"], ["--decks", "1"], set()),
    "two-decks-ungated-last-round": (
        [
            "--seed",
            "2",
            "--decks",
            "2",
            "--ungated",
            "--cut-policy",
            "last_round",
            "--cut-depth",
            "0.25",
        ],
        ["--decks", "2", "--ungated", "--cut-policy", "last_round"],
        set(),
    ),
    "one-deck-gated-every-fault": (
        ["--seed", "106", "--decks", "1", "--faults", "all=0.08,short_burn=1,over_burn=1"],
        ["--decks", "1"],
        set(FAULTS),
    ),
    "two-decks-ungated-faults": (
        ["--seed", "11", "--decks", "2", "--ungated", "--faults", "all=0.06"],
        ["--decks", "2", "--ungated"],
        set(FAULTS) - GATED_ONLY,
    ),
}


def station(*args: str, data: bytes = b"") -> bytes:
    out = run_station(*args, stdin=data)
    assert out.returncode == 0, out.stderr.decode()
    return out.stdout


def check_or_update(path: Path, produced: bytes) -> None:
    if UPDATE:
        path.write_bytes(produced)
    assert path.exists(), f"{path} is missing: regenerate with UPDATE_GOLDEN=1"
    assert produced == path.read_bytes(), (
        f"{path.name} differs; if the change is meant, regenerate with UPDATE_GOLDEN=1 "
        "and review the diff"
    )


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("name", CASES)
def test_station_simulate_still_writes_the_golden_events(name: str) -> None:
    simulate_args, _, _ = CASES[name]
    check_or_update(GOLDEN / f"{name}.events.jsonl", station("simulate", *simulate_args))


@pytest.mark.parametrize("name", CASES)
def test_station_replay_gives_the_golden_verdicts(name: str) -> None:
    _, replay_args, _ = CASES[name]
    events = GOLDEN / f"{name}.events.jsonl"
    check_or_update(GOLDEN / f"{name}.verdicts.jsonl", station("replay", *replay_args, str(events)))


@pytest.mark.parametrize("name", CASES)
def test_the_golden_verdicts_flag_exactly_the_faults_the_events_carry(name: str) -> None:
    """The golden files are right, not merely frozen: each verdict is the expected one."""
    _, _, faults = CASES[name]
    events = load(GOLDEN / f"{name}.events.jsonl")
    verdicts = load(GOLDEN / f"{name}.verdicts.jsonl")
    assert [v["seq"] for v in verdicts] == list(range(1, len(events) + 1))
    assert [v["error"] for v in verdicts] == [e.get("expect") for e in events]
    assert {e["fault"] for e in events if "fault" in e} == faults
    # One complete shoe, finished by the rules: its last event completes the last round.
    assert [e["type"] for e in events].count("shoe") == 1
    assert [e["type"] for e in events].count("cut") == 1
    assert "end_shoe" not in {e["type"] for e in events}
    completed = [v["result"]["round"] for v in verdicts if v["result"]]
    last_event_result = verdicts[-1]["result"] or {}
    voided = [v["voided_round"] for v in verdicts if v["voided_round"]]
    assert last_event_result.get("round") == max(completed) or verdicts[-1]["voided_round"]
    assert sorted(completed + voided) == list(range(1, len(completed) + len(voided) + 1))
