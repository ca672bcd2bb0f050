"""The spec's worked examples (`shared/spec/examples.jsonl`, and `games-examples.jsonl` for
the cercle games), found beside the checkout."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

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
