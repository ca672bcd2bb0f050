"""The verdict vocabulary: what the table answers to each event, and its codes.

The output side of the event vocabulary (`station.core.events`): a verdict is ok, or
names an error (the table suspends) or a rejection (nothing changes). The contract is
`shared/spec/dealing-rules.md` and `shared/spec/games.md`; what each code means for
people is `station.core.words`.

A verdict is a plain dict (the replay output's fields) because the replay hot path
builds hundreds of thousands of them a second.
"""

from __future__ import annotations

from typing import NamedTuple, TypedDict

from station.core.results import GameResult

# Errors: the table suspends.
UNEXPECTED_CARD = "UNEXPECTED_CARD"
BURN_EXCESS = "BURN_EXCESS"
BURN_INCOMPLETE = "BURN_INCOMPLETE"
MISSING_CARD = "MISSING_CARD"
EXCESS_COPIES = "EXCESS_COPIES"
UNREADABLE_CARD = "UNREADABLE_CARD"
CARD_WHILE_SUSPENDED = "CARD_WHILE_SUSPENDED"
SCANNER_FAULT = "SCANNER_FAULT"
STATION_RESTART = "STATION_RESTART"
DECISION_MISSING = "DECISION_MISSING"
# Rejections: nothing changes.
NO_ACTIVE_SHOE = "NO_ACTIVE_SHOE"
SHOE_ACTIVE = "SHOE_ACTIVE"
SUSPENDED = "SUSPENDED"
NOT_SUSPENDED = "NOT_SUSPENDED"
BAD_INPUT = "BAD_INPUT"
DECISION_NOT_ALLOWED = "DECISION_NOT_ALLOWED"

ERRORS = (
    UNEXPECTED_CARD,
    BURN_EXCESS,
    BURN_INCOMPLETE,
    MISSING_CARD,
    EXCESS_COPIES,
    UNREADABLE_CARD,
    CARD_WHILE_SUSPENDED,
    SCANNER_FAULT,
    STATION_RESTART,
    DECISION_MISSING,
)
REJECTIONS = (
    NO_ACTIVE_SHOE,
    SHOE_ACTIVE,
    SUSPENDED,
    NOT_SUSPENDED,
    BAD_INPUT,
    DECISION_NOT_ALLOWED,
)


class Verdict(TypedDict):
    """The station's decision on one event: the replay output's fields (less `seq`)."""

    ok: bool
    error: str | None
    role: str | None
    round: int | None
    result: GameResult | None
    voided_round: int | None


def ok() -> Verdict:
    """An ok verdict with nothing to say (no role, round, result or voided round)."""
    return {
        "ok": True,
        "error": None,
        "role": None,
        "round": None,
        "result": None,
        "voided_round": None,
    }


def fail(code: str) -> Verdict:
    """The verdict naming an error or a rejection (every other field null)."""
    return {
        "ok": False,
        "error": code,
        "role": None,
        "round": None,
        "result": None,
        "voided_round": None,
    }


def bad_input() -> Verdict:
    """The verdict on a line or request that is not a valid event."""
    return fail(BAD_INPUT)


class Decision(NamedTuple):
    """A verdict and what the event did to the suspension, as the table itself saw it.

    `cleared`: the suspension in force before the event ended with it (resume, void,
    end_shoe, a shoe after a `stop` cut). `began`: a new suspension began with the event
    (the first error; also a resume whose card is bad, which clears one suspension and
    begins the next).
    """

    verdict: Verdict
    cleared: bool
    began: bool
