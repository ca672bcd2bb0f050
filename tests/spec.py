"""The spec's worked examples (`shared/spec/examples.jsonl`), found beside the checkout."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def spec_dir() -> Path:
    """The spec folder: `../shared/spec` beside the checkout, or $STATION_SPEC."""
    override = os.environ.get("STATION_SPEC")
    candidates = [Path(override)] if override else []
    candidates += [ROOT.parent / "shared" / "spec", ROOT.parent.parent / "shared" / "spec"]
    for candidate in candidates:
        if (candidate / "examples.jsonl").is_file():
            return candidate
    raise FileNotFoundError(
        "the spec's examples.jsonl was not found in ../shared/spec; set STATION_SPEC to its folder"
    )


def examples() -> list[dict[str, Any]]:
    lines = (spec_dir() / "examples.jsonl").read_text(encoding="utf-8").splitlines()
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
