"""Golden files of the cercle games: hand-built event files and the verdicts `station
replay --game G` gives on them (tests/golden/README.md says what each covers and which
verdicts were checked by hand against shared/spec/games.md).

The events are written by hand (the simulator deals punto banco), each event that must be
refused or flagged carrying the code in `expect`, so the files are right, not merely
frozen. A deliberate change of the rules' output: regenerate with

    UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_golden_games.py

and read the diff before committing it.
"""

from __future__ import annotations

import pytest

from tests.test_golden import GOLDEN, check_or_update, load, station

#: name -> the `station replay` arguments of the case.
CASES: dict[str, list[str]] = {
    "chemin-de-fer": ["--game", "chemin_de_fer"],
    "chemin-de-fer-one-deck-ungated-burn": [
        "--game",
        "chemin_de_fer",
        "--decks",
        "1",
        "--ungated",
        "--burn",
        "reveal",
    ],
    "baccarat-banque": ["--game", "baccarat_banque"],
}


@pytest.mark.parametrize("name", CASES)
def test_station_replay_gives_the_golden_verdicts(name: str) -> None:
    events = GOLDEN / f"{name}.events.jsonl"
    produced = station("replay", *CASES[name], str(events))
    check_or_update(GOLDEN / f"{name}.verdicts.jsonl", produced)


@pytest.mark.parametrize("name", CASES)
def test_each_verdict_is_the_one_the_event_expects(name: str) -> None:
    events = load(GOLDEN / f"{name}.events.jsonl")
    verdicts = load(GOLDEN / f"{name}.verdicts.jsonl")
    assert [v["seq"] for v in verdicts] == list(range(1, len(events) + 1))
    assert [v["error"] for v in verdicts] == [e.get("expect") for e in events]
    # Rounds are completed or voided once each, in order, within each shoe.
    shoe: list[int] = []
    for event, verdict in zip(events, verdicts, strict=True):
        if event["type"] == "shoe" and verdict["ok"]:
            assert shoe == list(range(1, len(shoe) + 1))
            shoe = []
        done = (verdict["result"] or {}).get("round") or verdict["voided_round"]
        if done:
            shoe.append(done)
    assert shoe == list(range(1, len(shoe) + 1))


def test_the_golden_files_cover_the_cercle_rules() -> None:
    """Options answered both ways, held cards (placed, held again), refused decisions,
    faults, the stop cut, both burns, both gatings."""
    events = [e for name in CASES for e in load(GOLDEN / f"{name}.events.jsonl")]
    expected = {e.get("expect") for e in events}
    assert {"DECISION_MISSING", "DECISION_NOT_ALLOWED", "NO_ACTIVE_SHOE", "SUSPENDED"} <= expected
    assert {"SCANNER_FAULT", "STATION_RESTART", "UNREADABLE_CARD", "EXCESS_COPIES"} <= expected
    decisions = [e for e in events if e["type"] == "decision" and "expect" not in e]
    assert {e["draw"] for e in decisions} == {True, False}
    assert any(e["type"] == "resume" and "decision" in e and "card" in e for e in events)
    assert sum(e["type"] == "cut" for e in events) >= 4
