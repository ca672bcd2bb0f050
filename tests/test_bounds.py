"""The bounds every event keeps (`station.core.bounds`): refused at the API, cut for a
reader, and always storable by the journal afterwards."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from station.core import bounds
from station.core.bounds import MAX_DEPTH, MAX_EVENT_BYTES, MAX_TEXT, clip, problem


def nested(levels: int) -> dict[str, Any]:
    """A close_bets event whose extra key `x` makes the event `levels` deep in all."""
    inner: list[Any] = []
    event: dict[str, Any] = {"type": "close_bets", "x": inner}
    for _ in range(levels - 2):
        deeper: list[Any] = []
        inner.append(deeper)
        inner = deeper
    return event


def depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    return 0


def test_an_event_within_bounds_has_no_problem() -> None:
    event = {
        "type": "card",
        "card": "AS",
        "raw": "x" * MAX_TEXT,
        "n": 2**63 - 1,
        "m": -(2**63),
        "f": 0.93,
        "ok": True,
        "none": None,
        "meta": {"camera": {"frame": [1, 2, 3]}},
    }
    assert problem(event) is None
    assert problem(nested(MAX_DEPTH)) is None
    assert clip(event) == event


@pytest.mark.parametrize(
    ("event", "words"),
    [
        (nested(MAX_DEPTH + 1), "nested deeper than 16 levels"),
        (nested(254), "nested deeper than 16 levels"),
        (nested(253), "nested deeper than 16 levels"),
        ({"type": "fault", "detail": "x" * (MAX_TEXT + 1)}, "'detail' is a string of 4097"),
        ({"type": "shoe", "k" * (MAX_TEXT + 1): 1}, "a key of 4097 characters"),
        ({"type": "shoe", "n": 2**63}, "'n' is an integer past 64 bits; send it as a string"),
        ({"type": "shoe", "n": -(2**63) - 1}, "integer past 64 bits"),
        ({"type": "shoe", "n": 1.2345678901234568e29}, "number past 64 bits"),
        ({"type": "shoe", "x": {"y": [0, 2**64]}}, "'x'['y'][1] is an integer past 64 bits"),
        ({"type": "shoe", "x": {1: 2}}, "a key that is not a string"),
        ({"type": "shoe", "x": b"raw"}, "a bytes, which JSON cannot hold"),
    ],
)
def test_out_of_bounds_says_what_and_where(event: dict[str, Any], words: str) -> None:
    found = problem(event)
    assert found is not None and words in found


def test_clip_keeps_the_card_and_cuts_the_rest_with_a_marker() -> None:
    event: dict[Any, Any] = {
        "type": "card",
        "card": "KH",
        "raw": "ab" * MAX_TEXT,
        "deep": nested(300),
        "big": 2**80,
        "bytes": b"\x01\xff",
        "surrogate": "\ud800x",
        "object": object(),
        "tuple": (1, 2),
        7: "a key that is a number",
        "nan": float("nan"),
    }
    cut = clip(event)
    assert cut["type"] == "card" and cut["card"] == "KH"
    assert len(cut["raw"]) == MAX_TEXT and cut["raw"].endswith(
        f"{bounds.CUT}{2 * MAX_TEXT} characters]"
    )
    assert depth(cut) == MAX_DEPTH
    assert cut["big"] == str(2**80) and cut["bytes"] == "01ff" and cut["tuple"] == [1, 2]
    assert cut["surrogate"] == "\\ud800x" and cut["7"] == "a key that is a number"
    assert cut["nan"] == "nan"
    assert problem(cut) is None
    orjson.dumps(cut)  # storable: what the journal does with it
    assert event["card"] == "KH" and 7 in event  # the original is left as it was


def test_clip_of_an_event_too_big_keeps_its_fields_and_says_what_it_left_out() -> None:
    event = {"type": "card", "card": "9D", **{f"k{i}": "y" * MAX_TEXT for i in range(40)}}
    cut = clip(event)
    assert cut["type"] == "card" and cut["card"] == "9D"
    assert "other keys (k0, k1," in cut["cut"] and "left out" in cut["cut"]
    assert len(orjson.dumps(cut)) < MAX_EVENT_BYTES and problem(cut) is None
