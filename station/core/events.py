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

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, NotRequired, TypedDict, get_type_hints

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

#: The roles that may send events through the API (`station.live.tokens` ranks them:
#: dealer < supervisor < rig).
Role = Literal["dealer", "supervisor", "rig"]


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
    """A supervisor clears the suspension, optionally with a card read by eye."""

    type: Literal["resume"]
    card: NotRequired[str | None]


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
            "plain resume"
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


def resume(code: str | None = None, **extra: Any) -> ResumeEvent:
    """A plain resume, or (with `code`) a resume with the card read by eye."""
    if code is None:
        return {"type": RESUME, **extra}  # type: ignore[typeddict-item]
    return {"type": RESUME, "card": code, **extra}  # type: ignore[typeddict-item]


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
