"""The event vocabulary: every event type, its fields, who may send it, the words for it.

Everything that happens at the table is one of these events (the replay format of the
dealing rules). The table's dispatch, `station replay`, the API's authorisation and
request models, the service's check of what a reader may send, the demo bot and the
dashboard's words all derive from this module, so adding an event type is an entry
here plus its rule in `station.core.table.Table`.

Each type has a TypedDict naming its fields (which is required, which optional). Extra
keys (`actor`, `raw`, `ts`, `fault`, `expect`, ...) are allowed on every event and kept in
the journal; the rules ignore them. The constructors below build events with such extras
in a fixed key order (the type, the vocabulary's fields, then the extras), which is what
`station simulate` prints.

Pure: standard library only (the API turns these TypedDicts into pydantic models).
No `from __future__ import annotations` here: Python 3.11's TypedDict only sees
`NotRequired` in annotations that are not strings.
"""

import functools
import types
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import (
    TYPE_CHECKING,
    Any,
    Literal,
    NotRequired,
    TypedDict,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

if TYPE_CHECKING:
    import json

# The `type` of each event.
SHOE: Literal["shoe"] = "shoe"
CARD: Literal["card"] = "card"
CUT: Literal["cut"] = "cut"
CLOSE_BETS: Literal["close_bets"] = "close_bets"
RESUME: Literal["resume"] = "resume"
VOID: Literal["void"] = "void"
END_SHOE: Literal["end_shoe"] = "end_shoe"
FAULT: Literal["fault"] = "fault"
RESTART: Literal["restart"] = "restart"
DECISION: Literal["decision"] = "decision"

#: The roles that may send events through the API (`station.shared.tokens` ranks them:
#: dealer < supervisor < rig).
Role = Literal["dealer", "supervisor", "rig"]

#: The hands a `decision` may name, at some table (each game has its own:
#: `station.core.games.Game.hands`; a table answers BAD_INPUT to another game's hand).
Hand = Literal["player", "banker", "tableau1", "tableau2"]


class ShoeEvent(TypedDict):
    """A new shoe starts."""

    type: Literal["shoe"]


class CardEvent(TypedDict):
    """A card came out of the shoe."""

    type: Literal["card"]
    card: str | None


class CutEvent(TypedDict):
    """The cut card came out."""

    type: Literal["cut"]


class CloseBetsEvent(TypedDict):
    """Betting closed: the next round may be dealt."""

    type: Literal["close_bets"]


class ResumeEvent(TypedDict):
    """A supervisor clears the suspension, optionally with a card read by eye and a hand's
    decision (a held card is then placed)."""

    type: Literal["resume"]
    card: NotRequired[str | None]
    decision: NotRequired[dict[str, Any] | None]


class DecisionEvent(TypedDict):
    """A hand decided its option: draw a third card or stand."""

    type: Literal["decision"]
    hand: NotRequired[Hand | None]
    draw: bool


class VoidEvent(TypedDict):
    """A supervisor voids the round in progress (if any) and clears any suspension."""

    type: Literal["void"]


class EndShoeEvent(TypedDict):
    """A supervisor ends the shoe (a round in progress is voided)."""

    type: Literal["end_shoe"]


class FaultEvent(TypedDict):
    """The card reader failed or was disconnected."""

    type: Literal["fault"]
    detail: NotRequired[str]


class RestartEvent(TypedDict):
    """The station started (again): cards may have come out unseen."""

    type: Literal["restart"]


#: Any event of the vocabulary (extra keys allowed at run time, see the module docstring).
Event = (
    ShoeEvent
    | CardEvent
    | CutEvent
    | CloseBetsEvent
    | ResumeEvent
    | VoidEvent
    | EndShoeEvent
    | FaultEvent
    | RestartEvent
    | DecisionEvent
)


@dataclass(frozen=True, slots=True)
class EventKind:
    """One event type: its shape, who may send it and the words people see for it."""

    #: The `type` value.
    name: str
    #: Its TypedDict: the fields and which of them are required.
    shape: type[Any]
    #: The role an API caller needs to send it; None: only the station itself sends it.
    role: Role | None
    #: Whether a card reader may send it.
    reader: bool
    #: A short name for it (the dashboard's button).
    label: str
    #: The question the dashboard asks before sending it; None: no dashboard action.
    confirm: str | None
    #: What the dashboard's last-action line calls it once done ("new shoe by ana").
    done: str
    #: What each field of `shape` (other than `type`) holds, in words that complete
    #: 'the "card" of a card event must be ...'.
    fields: Mapping[str, str]

    @property
    def meaning(self) -> str:
        """What the event says happened (its TypedDict's docstring)."""
        return (self.shape.__doc__ or "").strip()

    @property
    def required(self) -> frozenset[str]:
        """The keys an event of this type must have (`type` and its required fields)."""
        keys: frozenset[str] = self.shape.__required_keys__
        return keys

    def field_types(self) -> dict[str, Any]:
        """Each field (`type` included) and its type, `NotRequired` unwrapped."""
        return get_type_hints(self.shape)


def _kinds(*kinds: EventKind) -> Mapping[str, EventKind]:
    return MappingProxyType({kind.name: kind for kind in kinds})


#: The vocabulary, in the order of the dealing rules' replay format.
VOCABULARY: Mapping[str, EventKind] = _kinds(
    EventKind(SHOE, ShoeEvent, "dealer", False, "New shoe", "Start a new shoe?", "new shoe", {}),
    EventKind(
        CARD,
        CardEvent,
        "rig",
        True,
        "Card",
        None,
        "card",
        {"card": "a card code, or null if unreadable"},
    ),
    EventKind(CUT, CutEvent, "rig", True, "Cut card", None, "cut card", {}),
    EventKind(
        CLOSE_BETS,
        CloseBetsEvent,
        "dealer",
        False,
        "No more bets",
        "No more bets: close betting for the next round?",
        "no more bets",
        {},
    ),
    EventKind(
        RESUME,
        ResumeEvent,
        "supervisor",
        False,
        "Resume",
        "Resume the table?",
        "resume",
        {
            "card": "a card code read by eye (placed where a card is due), or null for a "
            "plain resume",
            "decision": 'a hand\'s decision, {"hand": ..., "draw": true|false}, or null',
        },
    ),
    EventKind(
        VOID,
        VoidEvent,
        "supervisor",
        False,
        "Void round",
        "Void the round in progress? Its cards are discarded and its bets refunded.",
        "void round",
        {},
    ),
    EventKind(
        END_SHOE,
        EndShoeEvent,
        "supervisor",
        False,
        "End shoe",
        "End the shoe now? A round in progress is voided.",
        "end shoe",
        {},
    ),
    EventKind(
        FAULT,
        FaultEvent,
        "rig",
        True,
        "Reader fault",
        None,
        "reader fault",
        {"detail": "a text saying what failed"},
    ),
    EventKind(RESTART, RestartEvent, None, False, "Station restart", None, "station restart", {}),
    EventKind(
        DECISION,
        DecisionEvent,
        "dealer",
        True,
        "Decision",
        "Record the hand's decision?",
        "decision",
        {
            "hand": "the hand that decided (player, banker, tableau1, tableau2), or null "
            "for the hand whose turn it is",
            "draw": "true (a third card) or false (the hand stands)",
        },
    ),
)

#: Every event type, in the vocabulary's order.
EVENT_TYPES: tuple[str, ...] = tuple(VOCABULARY)
#: The role each event type needs through the API (`restart` is the station's: absent).
EVENT_ROLES: Mapping[str, Role] = MappingProxyType(
    {k.name: k.role for k in VOCABULARY.values() if k.role is not None}
)
#: The event types a card reader may send.
READER_TYPES: frozenset[str] = frozenset(k.name for k in VOCABULARY.values() if k.reader)
#: The roles the demo bot (the `sim` driver) plays besides being the card reader.
DEMO_BOT_ROLES: frozenset[Role] = frozenset({"dealer", "supervisor"})
#: The event types the demo bot may send: a reader's, and those of the roles it plays.
DEMO_BOT_TYPES: frozenset[str] = READER_TYPES | {
    k.name for k in VOCABULARY.values() if k.role in DEMO_BOT_ROLES
}


# -- what is wrong with something that is not an event (the BAD_INPUT path only) -------
# `station replay`'s `reason` and the API's 422 message say it in these words. The table
# itself never asks (its hot path stays as it is): callers ask after a BAD_INPUT verdict.

_EXAMPLE = '{"type": "close_bets"}'


def bad_input_reason(event: object) -> str | None:
    """Why `event` (a parsed JSON value) is not an event of the vocabulary, in words that
    say what to send instead; None when it is one. Checks in the order a reader fixes
    them: an object, its `type`, the type's required fields, then the fields' types."""
    if not isinstance(event, dict):
        return f"an event must be one JSON object, e.g. {_EXAMPLE}; got {_json_kind(event)}"
    known = ", ".join(EVENT_TYPES)
    if "type" not in event:
        return f"'type' must be one of {known}; the event has no \"type\" key"
    name = event["type"]
    if not isinstance(name, str) or name not in VOCABULARY:
        return f"'type' must be one of {known}; got {name!r}"
    kind = VOCABULARY[name]
    fields = _field_types(name)
    for key in fields:
        if key in kind.required and key not in event:
            return f'a {name} event needs a "{key}" key ({kind.fields[key]})'
    for key, annotation in fields.items():
        if key in event and not _fits(event[key], annotation):
            return f'the "{key}" of a {name} event must be {kind.fields[key]}; got {event[key]!r}'
    return None


def not_json_reason(error: "json.JSONDecodeError", line: int | None = None) -> str:
    """Why a line (`line`: its number) or a body is not JSON, in words: NaN and Infinity
    named (Python writes them, JSON has no such numbers), else what was found where."""
    head = "not valid JSON" if line is None else f"line {line} is not JSON"
    if error.doc[error.pos : error.pos + 8].startswith(("NaN", "Infinity")):
        return (
            f"{head}: NaN and Infinity are not JSON numbers (column {error.colno}); "
            "send null or a number"
        )
    return f"{head}: {_what_went_wrong(error)}; {ONE_OBJECT}"


#: What every line (and body) must be.
ONE_OBJECT = 'an event is one JSON object, e.g. {"type": "close_bets"}'


def _what_went_wrong(error: "json.JSONDecodeError") -> str:
    """The parser's finding in plain words (orjson's "invalid literal, expected 'null'"
    for a line of text says nothing to someone who sent text)."""
    where = (
        f"line {error.lineno} column {error.colno}"
        if error.lineno > 1
        else (f"column {error.colno}")
    )
    if "UTF-8" in error.msg:
        return "it is not UTF-8 text"
    if "end of data" in error.msg:
        return f"it ends before its JSON value does ({where})"
    found = error.doc[error.pos : error.pos + 1] if error.pos < len(error.doc) else ""
    if found and ("literal" in error.msg or "unexpected character" in error.msg):
        quoted = " (JSON strings take double quotes)" if found == "'" else ""
        return f"unexpected {found!r} at {where}{quoted}"
    return f"{error.msg} at {where}"


@functools.cache
def _field_types(name: str) -> dict[str, Any]:
    """`VOCABULARY[name].field_types()`, worked out the first time bad input needs it
    (not at import: `station replay` starts without it)."""
    return VOCABULARY[name].field_types()


def _fits(value: object, annotation: Any) -> bool:
    """Whether `value` has the (strict) type `annotation`: str, None, a Literal, a union."""
    origin = get_origin(annotation)
    if origin is Literal:
        return any(type(value) is type(a) and value == a for a in get_args(annotation))
    if origin is Union or origin is types.UnionType:
        return any(_fits(value, a) for a in get_args(annotation))
    if annotation is type(None):
        return value is None
    if origin is dict:
        return type(value) is dict
    return type(value) is annotation


def _json_kind(value: object) -> str:
    """What a parsed JSON value is, in JSON's words (for a message)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"a number ({value!r})"
    if isinstance(value, str):
        return f"a string ({value!r})"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


# -- constructors: the vocabulary's fields first, then any extras, in that key order -----
# (A TypedDict cannot say "and any other key", so the extras are not in the static type.)


def shoe(**extra: Any) -> ShoeEvent:
    return {"type": SHOE, **extra}  # type: ignore[typeddict-item]


def card(code: str | None, **extra: Any) -> CardEvent:
    """A card out of the shoe; `code` None for a card the reader could not identify."""
    return {"type": CARD, "card": code, **extra}  # type: ignore[typeddict-item]


def cut(**extra: Any) -> CutEvent:
    return {"type": CUT, **extra}  # type: ignore[typeddict-item]


def close_bets(**extra: Any) -> CloseBetsEvent:
    return {"type": CLOSE_BETS, **extra}  # type: ignore[typeddict-item]


def resume(
    code: str | None = None, decision: dict[str, Any] | None = None, **extra: Any
) -> ResumeEvent:
    """A plain resume, or a resume with the card read by eye (`code`) and/or a hand's
    decision (`{"hand": ..., "draw": ...}`)."""
    event: dict[str, Any] = {"type": RESUME}
    if code is not None:
        event["card"] = code
    if decision is not None:
        event["decision"] = decision
    return {**event, **extra}  # type: ignore[typeddict-item]


def decision(draw: bool, hand: str | None = None, **extra: Any) -> DecisionEvent:
    """A hand's decision at its option; `hand` None: the hand whose turn it is."""
    if hand is None:
        return {"type": DECISION, "draw": draw, **extra}  # type: ignore[typeddict-item]
    return {"type": DECISION, "hand": hand, "draw": draw, **extra}  # type: ignore[typeddict-item]


def void(**extra: Any) -> VoidEvent:
    return {"type": VOID, **extra}  # type: ignore[typeddict-item]


def end_shoe(**extra: Any) -> EndShoeEvent:
    return {"type": END_SHOE, **extra}  # type: ignore[typeddict-item]


def fault(detail: str | None = None, **extra: Any) -> FaultEvent:
    """A reader fault, saying what failed when it is known."""
    if detail is None:
        return {"type": FAULT, **extra}  # type: ignore[typeddict-item]
    return {"type": FAULT, "detail": detail, **extra}  # type: ignore[typeddict-item]


def restart(**extra: Any) -> RestartEvent:
    return {"type": RESTART, **extra}  # type: ignore[typeddict-item]
