"""The spec's worked examples (`shared/spec/examples.jsonl`, and `games-examples.jsonl` for
the cercle games), found beside the checkout."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from station.core.table import Table

ROOT = Path(__file__).resolve().parent.parent


def examples_file() -> Path:
    """The spec's examples: `../shared/spec` beside the checkout (where CI lays shared/), or
    $STATION_SPEC; else the copy in tests/data, taken from the spec when it was last read."""
    override = os.environ.get("STATION_SPEC")
    candidates = [Path(override)] if override else []
    candidates += [ROOT.parent / "shared" / "spec", ROOT.parent.parent / "shared" / "spec"]
    for candidate in candidates:
        if (candidate / "examples.jsonl").is_file():
            return candidate / "examples.jsonl"
    return ROOT / "tests" / "data" / "spec-examples.jsonl"


def examples() -> list[dict[str, Any]]:
    lines = examples_file().read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def games_examples_file() -> Path:
    """The cercle games' examples beside the spec's examples (or the copy in tests/data)."""
    spec = examples_file().parent / "games-examples.jsonl"
    if spec.is_file():
        return spec
    return ROOT / "tests" / "data" / "games-examples.jsonl"


def games_examples() -> list[dict[str, Any]]:
    lines = games_examples_file().read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def matches(expected: dict[str, Any], got: dict[str, Any]) -> bool:
    """`got` has every key of `expected` with the same value (extra keys are allowed)."""
    for key, value in expected.items():
        if isinstance(value, dict):
            if not isinstance(got.get(key), dict) or not matches(value, got[key]):
                return False
        elif got.get(key, object()) != value:
            return False
    return True


def check_through_the_table(example: dict[str, Any], table: Table) -> None:
    """Each of the example's events at `table` (a fresh `Table` set as the example says)
    gets the verdict the example gives it."""
    for seq, (event, expected) in enumerate(
        zip(example["events"], example["verdicts"], strict=True), 1
    ):
        got = {**table.apply(event), "seq": seq}
        assert matches(expected, got), f"event {seq} {event}: expected {expected}, got {got}"


def check_through_replay(
    examples: list[dict[str, Any]], replay_args: Callable[[dict[str, Any]], list[str]]
) -> None:
    """Each example's events through the real `station replay` with the flags
    `replay_args` makes of its options get the verdicts the example gives them."""
    from tests.conftest import run_station

    for example in examples:
        lines = "".join(json.dumps(e) + "\n" for e in example["events"])
        out = run_station("replay", *replay_args(example["options"]), stdin=lines.encode())
        assert out.returncode == 0, (example["name"], out.stderr)
        got = [json.loads(line) for line in out.stdout.splitlines()]
        assert len(got) == len(example["verdicts"]), example["name"]
        for expected, row in zip(example["verdicts"], got, strict=True):
            assert matches(expected, row), f"{example['name']}: {expected} != {row}"
