"""The bounds every event keeps before it reaches the writer: depth, text, numbers, size.

Why: the journal stores each event as JSON and the writer must never meet one it cannot
store (orjson stops at 255 levels of nesting and at integers past 64 bits; a parser
accepts far more) or one that makes every state message heavy. The API refuses an event
out of bounds (`problem` says why, in words that say what to send instead); a card
reader is a device, not a client, so its event is cut to fit (`clip`) rather than lose
the card: a long string keeps its start and says how much was cut, a too-deep value and
what JSON cannot hold become a marker string.

Pure: standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

#: Levels of nesting in an event, the event object itself being level 1: its extra keys
#: may hold objects and lists, but shallow ones.
MAX_DEPTH = 16
#: Characters in one string (a key or a value): a fault's detail, a reader's raw bytes.
MAX_TEXT = 4096
#: An event's size as JSON, the API's body limit.
MAX_EVENT_BYTES = 64 * 1024
#: Integers must fit in 64 bits, signed (what SQLite, orjson and most clients hold).
MIN_INT = -(2**63)
MAX_INT = 2**63 - 1
#: Marks a string cut by `clip` (followed by how many characters were left out).
CUT = "…[cut "
_FLOAT_LIMIT = float(2**63)


def problem(event: Mapping[str, Any]) -> str | None:
    """What puts a parsed JSON event out of bounds, or None if it is within them.

    A parser turns an integer past 64 bits into an imprecise float, so a float that large
    is refused too: such a value must be sent as a string."""
    return _problem(event, 1, "the event")


def _problem(value: object, depth: int, where: str) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        if len(value) > MAX_TEXT:
            return f"{where} is a string of {len(value)} characters (at most {MAX_TEXT})"
        return None
    if isinstance(value, int):
        if not MIN_INT <= value <= MAX_INT:
            return f"{where} is an integer past 64 bits; send it as a string"
        return None
    if isinstance(value, float):
        if not (math.isfinite(value) and -_FLOAT_LIMIT < value < _FLOAT_LIMIT):
            return f"{where} is a number past 64 bits ({value!r}); send it as a string"
        return None
    if isinstance(value, dict | list) and depth > MAX_DEPTH:
        return f"{where} is nested deeper than {MAX_DEPTH} levels; send a flatter event"
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = _problem(item, depth + 1, f"{where}[{i}]")
            if found is not None:
                return found
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{where} has a key that is not a string: {key!r}"
            if len(key) > MAX_TEXT:
                return f"{where} has a key of {len(key)} characters (at most {MAX_TEXT})"
            found = _problem(item, depth + 1, f"{where}[{key!r}]" if depth > 1 else repr(key))
            if found is not None:
                return found
        return None
    return f"{where} is a {type(value).__name__}, which JSON cannot hold"


def clip(event: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `event` within bounds: strings cut to `MAX_TEXT` with a marker saying how
    much was cut, values nested too deep, integers past 64 bits and whatever JSON cannot
    hold (bytes, objects, surrogates) replaced by marker strings, keys made strings. An
    event still over `MAX_EVENT_BYTES` keeps its type and vocabulary fields and says in
    `cut` that its other keys were left out. Never raises."""
    clipped = _clip(dict(event), 1)
    assert isinstance(clipped, dict)
    size = _size(clipped)
    if size > MAX_EVENT_BYTES:
        kept = {k: clipped[k] for k in ("type", "card", "detail", "actor") if k in clipped}
        kept["cut"] = (
            f"the event was about {size} bytes (at most {MAX_EVENT_BYTES}): "
            f"its other keys ({', '.join(_cut_text(k) for k in clipped if k not in kept)}) "
            "were left out"
        )[:MAX_TEXT]
        clipped = kept
    return clipped


def _clip(value: object, depth: int) -> object:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return _cut_text(value)
    if isinstance(value, int):
        return value if MIN_INT <= value <= MAX_INT else _cut_text(str(value))
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, Mapping | list | tuple):
        if depth > MAX_DEPTH:
            return f"[cut: nested deeper than {MAX_DEPTH} levels]"
        if isinstance(value, Mapping):
            return {_cut_text(str(k)): _clip(v, depth + 1) for k, v in value.items()}
        return [_clip(v, depth + 1) for v in value]
    if isinstance(value, bytes | bytearray):
        return _cut_text(bytes(value).hex())
    return _cut_text(repr(value))


def _cut_text(text: str) -> str:
    """`text` at most `MAX_TEXT` characters (with the marker) and encodable as UTF-8."""
    try:
        text.encode()
    except UnicodeEncodeError:
        text = text.encode("utf-8", "backslashreplace").decode()
    if len(text) <= MAX_TEXT:
        return text
    marker = f"{CUT}{len(text)} characters]"
    return text[: MAX_TEXT - len(marker)] + marker


def _size(value: object) -> int:
    """About the size of `value` as JSON (an upper bound within a few percent)."""
    if isinstance(value, str):
        return len(value.encode()) + 2
    if isinstance(value, dict):
        return 2 + sum(_size(k) + 1 + _size(v) + 1 for k, v in value.items())
    if isinstance(value, list):
        return 2 + sum(_size(v) + 1 for v in value)
    return len(str(value)) + 1
