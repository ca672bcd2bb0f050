"""Simulate, then replay: the simulated dealer's streams through the rules core, in
process (`verdict_lines`, what `station replay` runs) or through the commands
(`station simulate | station replay`), each verdict checked against the error its event
expects (`expect`, set by the dealer on the faults it injects)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import orjson

from drivers.sim.faults import FAULT_ERRORS
from station.core.table import Table
from station.live.replay import verdict_lines
from tests.conftest import run_station

#: The simulator's options that set the table up (the rest say what to deal).
TABLE_KEYS = ("game", "decks", "gated", "cut_policy", "burn")


def table_for(options: Mapping[str, Any]) -> Table:
    """A fresh table set up as the simulator's `options` say."""
    return Table(**{key: options[key] for key in TABLE_KEYS if key in options})


def shoes(events: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    """The stream split at each `shoe` event."""
    start = 0
    for i in range(1, len(events) + 1):
        if i == len(events) or events[i]["type"] == "shoe":
            yield events[start:i]
            start = i


def json_lines(events: Iterable[Mapping[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(e) + b"\n" for e in events)


def expected_errors(events: Iterable[Mapping[str, Any]]) -> list[str | None]:
    return [e.get("expect") for e in events]


def check_each_verdict(options: Mapping[str, Any], events: list[dict[str, Any]]) -> None:
    """Apply the stream to a table: each verdict's error is the one its event expects, a
    shoe starts only after the last one finished, and the last one finishes; a fault is
    one `options` asked for, expecting one of its errors."""
    table = table_for(options)
    for event in events:
        if event["type"] == "shoe":
            assert not table.in_play  # the previous shoe was finished, never cut short
        verdict = table.apply(event)
        assert verdict["error"] == event.get("expect"), event
    assert not table.in_play
    for event in events:
        if "fault" in event:
            assert options["faults"].get(event["fault"], 0) > 0
            assert event["expect"] in FAULT_ERRORS[event["fault"]]
        else:
            assert "expect" not in event


def replay(options: Mapping[str, Any], events: Iterable[Mapping[str, Any]]) -> bytes:
    """The verdict lines `station replay` writes for the stream, at a fresh table."""
    return b"".join(verdict_lines(table_for(options), iter([json_lines(events)])))


def replay_twice(options: Mapping[str, Any], events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Replay the stream twice (the same verdict lines each time, byte for byte); the rows,
    whose errors are the ones the events expect."""
    first = replay(options, events)
    assert first == replay(options, events)
    rows = [orjson.loads(line) for line in first.splitlines()]
    assert [r["error"] for r in rows] == expected_errors(events)
    return rows


def simulate_then_replay(
    simulate_args: Iterable[str], replay_args: Iterable[str]
) -> list[dict[str, Any]]:
    """`station simulate SIMULATE_ARGS | station replay REPLAY_ARGS`: a verdict for every
    event, each with the error its event expects. The events."""
    sim = run_station("simulate", *simulate_args)
    assert sim.returncode == 0, sim.stderr
    out = run_station("replay", *replay_args, stdin=sim.stdout)
    assert out.returncode == 0, out.stderr
    events = [json.loads(line) for line in sim.stdout.splitlines()]
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(rows) == len(events) > 0
    assert [r["error"] for r in rows] == expected_errors(events)
    return events
