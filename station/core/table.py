"""The table's state machine: one event in, one verdict out, exactly as the dealing rules say.

Pure: no I/O, no clock, no randomness. `station replay`, the live service and the tests
all drive this one class, so they cannot disagree. The rules and the verdict contract
are `shared/spec/dealing-rules.md`; the comments below name its sections.

This is the hot path of replay (hundreds of thousands of events a second), so verdicts
are plain dicts built inline and the event dispatch is a dict of bound methods.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, TypedDict

from station.core import events as ev
from station.core.cards import ALL_CARDS, BURN_VALUE, POINTS, parse_card
from station.core.results import RoundResult, round_result
from station.core.rules import PUNTO_BANCO, Tableau

CutPolicy = Literal["one_more", "last_round"]
CUT_POLICIES: tuple[CutPolicy, ...] = ("one_more", "last_round")

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
# Rejections: nothing changes.
NO_ACTIVE_SHOE = "NO_ACTIVE_SHOE"
SHOE_ACTIVE = "SHOE_ACTIVE"
SUSPENDED = "SUSPENDED"
NOT_SUSPENDED = "NOT_SUSPENDED"
BAD_INPUT = "BAD_INPUT"

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
)
REJECTIONS = (NO_ACTIVE_SHOE, SHOE_ACTIVE, SUSPENDED, NOT_SUSPENDED, BAD_INPUT)

#: What each code means, for people: the dashboard banner, the terminal, the journal.
EXPLANATIONS: dict[str, str] = {
    UNEXPECTED_CARD: "a card came out when none was due (an extra card, or before betting closed)",
    BURN_EXCESS: "a card came out after the burn was complete, before betting closed",
    BURN_INCOMPLETE: "betting was closed before the burn was complete",
    MISSING_CARD: "betting was closed while the round still had a card due",
    EXCESS_COPIES: "more copies of this card came out than the shoe holds (a foreign card)",
    UNREADABLE_CARD: "the reader could not identify the card",
    CARD_WHILE_SUSPENDED: "a card came out while the table was suspended",
    SCANNER_FAULT: "the card reader failed or was disconnected",
    STATION_RESTART: "the station restarted during the shoe; cards may have come out unseen",
    NO_ACTIVE_SHOE: "no shoe is in play: start a shoe first",
    SHOE_ACTIVE: "a shoe is already in play: end it first",
    SUSPENDED: "the table is suspended: a supervisor must resume it or void the round",
    NOT_SUSPENDED: "the table is not suspended",
    BAD_INPUT: "not a valid event",
}


class Verdict(TypedDict):
    """The station's decision on one event: the replay output's fields (less `seq`)."""

    ok: bool
    error: str | None
    role: str | None
    round: int | None
    result: RoundResult | None
    voided_round: int | None


def _ok() -> Verdict:
    return {
        "ok": True,
        "error": None,
        "role": None,
        "round": None,
        "result": None,
        "voided_round": None,
    }


def _fail(code: str) -> Verdict:
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
    return _fail(BAD_INPUT)


#: The roles of a round's cards, in a supervisor's words.
ROLE_WORDS = {
    "P1": "player first card",
    "B1": "banker first card",
    "P2": "player second card",
    "B2": "banker second card",
    "P3": "player third card",
    "B3": "banker third card",
}

# The next role in a round after each of the first cards; after B2 the tableau decides.
_NEXT_ROLE = {"P1": "B1", "B1": "P2", "P2": "B2"}

#: What the table waits for (`Table.due`) in a supervisor's words; None: suspended.
DUE_WORDS: dict[str | None, str] = {
    "shoe": "new shoe",
    None: "supervisor (resume or void)",
    "burn_reveal": "burn reveal card",
    "burn": "burn card",
    "close_bets": "close bets",
}
DUE_WORDS.update(ROLE_WORDS.items())

#: The events a dealer or supervisor chooses to send (`Table.actions` says which of them
#: the table would act on now).
ACTIONS = (ev.SHOE, ev.CLOSE_BETS, ev.RESUME, ev.VOID, ev.END_SHOE)


class Decision(NamedTuple):
    """A verdict and what the event did to the suspension, as the table itself saw it.

    `cleared`: the suspension in force before the event ended with it (resume, void,
    end_shoe). `began`: a new suspension began with the event (the first error; also a
    resume whose card is bad, which clears one suspension and begins the next).
    """

    verdict: Verdict
    cleared: bool
    began: bool


@dataclass(slots=True)
class Round:
    """A round in progress: its number, the cards placed so far and the role due next."""

    number: int
    player: list[str] = field(default_factory=list)
    banker: list[str] = field(default_factory=list)
    due: str | None = "P1"


#: How many of the errors after the first a suspension keeps with their cards (the rest
#: are only counted: a line that sends garbage while suspended must not grow the state).
LATER_KEPT = 10


def _later() -> deque[tuple[str, object]]:
    return deque(maxlen=LATER_KEPT)


@dataclass(slots=True)
class Suspension:
    """Why the table is suspended: the first error, the last few errors (and cards) since,
    and how many of each code came since (bounded whatever the line sends)."""

    code: str
    card: object = None
    later: deque[tuple[str, object]] = field(default_factory=_later)
    later_counts: dict[str, int] = field(default_factory=dict)
    later_total: int = 0

    def add_later(self, code: str, card: object) -> None:
        self.later.append((code, card))
        self.later_counts[code] = self.later_counts.get(code, 0) + 1
        self.later_total += 1


Rule = Callable[[Mapping[str, Any]], Verdict]


def _requiring(keys: frozenset[str], rule: Rule) -> Rule:
    """`rule`, answering BAD_INPUT to an event without one of `keys` (the fields its type
    requires); `rule` itself when there are none, so those events pay nothing."""
    if not keys:
        return rule

    def checked(event: Mapping[str, Any]) -> Verdict:
        for key in keys:
            if key not in event:
                return _fail(BAD_INPUT)
        return rule(event)

    return checked


class Table:
    """One baccarat table: shoes, burns, rounds, suspensions, as events arrive."""

    def __init__(
        self,
        decks: int = 8,
        gated: bool = True,
        cut_policy: CutPolicy = "one_more",
        tableau: Tableau = PUNTO_BANCO,
    ) -> None:
        if decks < 1:
            raise ValueError(f"decks must be at least 1, got {decks}")
        if cut_policy not in CUT_POLICIES:
            raise ValueError(f"cut_policy must be one of {CUT_POLICIES}, got {cut_policy!r}")
        self.decks = decks
        self.gated = gated
        self.cut_policy = cut_policy
        self.tableau = tableau
        self.shoes_started = 0
        self.in_play = False
        # Set where a suspension begins or ends; `decide` reads and resets them (`apply`
        # leaves them alone, so the replay hot path pays nothing for them).
        self._began = False
        self._cleared = False
        # The shoe before this one, kept when a shoe starts: the dashboard still shows its
        # rounds and roads until the new shoe has a result (replay rebuilds it too).
        self.previous_results: list[RoundResult] = []
        self.previous_voided: list[int] = []
        self._reset_shoe()
        # The rule of each type of the vocabulary (`station.core.events`), with the keys
        # an event of that type must have.
        rules: dict[str, Rule] = {
            ev.SHOE: self._shoe,
            ev.CARD: self._card,
            ev.CUT: self._cut,
            ev.CLOSE_BETS: self._close_bets,
            ev.RESUME: self._resume,
            ev.VOID: self._void,
            ev.END_SHOE: self._end_shoe,
            ev.FAULT: self._fault,
            ev.RESTART: self._restart,
        }
        self._handlers = {
            kind: _requiring(ev.VOCABULARY[kind].required - {"type"}, rule)
            for kind, rule in rules.items()
        }

    def _reset_shoe(self) -> None:
        self.copies: dict[str, int] = {}
        self.unreadable = 0
        self.reveal_due = True
        self.burns_due = 0
        self.burned: list[str] = []
        self.rounds_opened = 0
        self.round: Round | None = None
        self.suspension: Suspension | None = None
        self.cut_seen = False
        self.last_round: int | None = None
        self.results: list[RoundResult] = []
        self.voided: list[int] = []

    # -- the one entry point -------------------------------------------------------------

    def apply(self, event: object) -> Verdict:
        """Decide on one event (a dict in the replay format). Never raises on bad input."""
        if type(event) is not dict:
            return _fail(BAD_INPUT)
        kind = event.get("type")
        if kind == "card":  # the hot path, four events in five: `_card` inline
            return self._card_out(event["card"]) if "card" in event else _fail(BAD_INPUT)
        handler = self._handlers.get(kind) if type(kind) is str else None
        return _fail(BAD_INPUT) if handler is None else handler(event)

    def decide(self, event: object) -> Decision:
        """`apply`, and say whether the event began or cleared a suspension (the writer's
        `suspended` / `resumed` notices and the snapshot's `since_seq` come from this)."""
        self._began = self._cleared = False
        verdict = self.apply(event)
        return Decision(verdict, self._cleared, self._began)

    @property
    def event_types(self) -> frozenset[str]:
        """The event types this table has a rule for (the vocabulary's, checked by tests)."""
        return frozenset(self._handlers)

    # -- read-only views -----------------------------------------------------------------

    @property
    def burn_complete(self) -> bool:
        return not self.reveal_due and self.burns_due == 0

    @property
    def cards_out(self) -> int:
        """Cards that physically left the shoe in play: identified ones and unreadable ones."""
        return sum(self.copies.values()) + self.unreadable

    def due(self) -> str | None:
        """What the table waits for next, as a code: `shoe`, `burn_reveal`, `burn`,
        `close_bets`, a card role (`P1`..`B3`), or None while suspended (a supervisor)."""
        if not self.in_play:
            return "shoe"
        if self.suspension is not None:
            return None
        if self.reveal_due:
            return "burn_reveal"
        if self.burns_due:
            return "burn"
        rnd = self.round
        if rnd is not None and rnd.due is not None:
            return rnd.due
        return "close_bets" if self.gated else "P1"

    def expecting(self) -> str:
        """What the station waits for next, in the words a supervisor uses."""
        due = self.due()
        if due == "burn":
            return f"burn card ({self.burns_due} to go)"
        return DUE_WORDS[due]

    def actions(self) -> tuple[str, ...]:
        """Which of `ACTIONS` the table would act on now rather than reject or ignore: a
        shoe when none is in play; close_bets when it is due; resume while suspended; void
        while suspended or with a round in progress; end_shoe while a shoe is in play."""
        suspended = self.suspension is not None
        allowed = {
            "shoe": not self.in_play,
            "close_bets": self.in_play and not suspended and self.due() == "close_bets",
            "resume": suspended,
            "void": suspended or self.round is not None,
            "end_shoe": self.in_play,
        }
        return tuple(a for a in ACTIONS if allowed[a])

    def remaining(self) -> dict[str, int]:
        """Copies of each card still in the shoe (the station saw every identified card).

        Never below 0: a copy beyond `decks` (EXCESS_COPIES) was a foreign card, and the
        shoe's own copies of that code are all out.
        """
        return {c: max(self.decks - self.copies.get(c, 0), 0) for c in ALL_CARDS}

    # -- events --------------------------------------------------------------------------

    def _shoe(self, event: Mapping[str, Any]) -> Verdict:
        if self.in_play:
            return _fail(SHOE_ACTIVE)
        self.previous_results, self.previous_voided = self.results, self.voided
        self._reset_shoe()
        self.in_play = True
        self.shoes_started += 1
        return _ok()

    def _card(self, event: Mapping[str, Any]) -> Verdict:
        return self._card_out(event["card"])

    def _card_out(self, raw: object) -> Verdict:
        """A card came out of the shoe: the order of checks is the spec's."""
        if not self.in_play:
            return _fail(NO_ACTIVE_SHOE)
        card = parse_card(raw)
        if card is None:
            self.unreadable += 1
            return self._suspend(UNREADABLE_CARD, raw)
        copies = self.copies.get(card, 0) + 1
        self.copies[card] = copies
        if copies > self.decks:
            return self._suspend(EXCESS_COPIES, card)
        if self.suspension is not None:
            return self._suspend(CARD_WHILE_SUSPENDED, card)
        if self.reveal_due:
            self.reveal_due = False
            self.burns_due = BURN_VALUE[card]
            self.burned.append(card)
            return {
                "ok": True,
                "error": None,
                "role": "burn_reveal",
                "round": None,
                "result": None,
                "voided_round": None,
            }
        if self.burns_due:
            self.burns_due -= 1
            self.burned.append(card)
            return {
                "ok": True,
                "error": None,
                "role": "burn",
                "round": None,
                "result": None,
                "voided_round": None,
            }
        rnd = self.round
        if rnd is None:
            if self.gated:
                return self._suspend(
                    BURN_EXCESS if self.rounds_opened == 0 else UNEXPECTED_CARD, card
                )
            rnd = self._open_round()
        return self._place(rnd, card)

    def _place(self, rnd: Round, card: str) -> Verdict:
        """Give `card` the role due in `rnd`, then work out what is due next."""
        role = rnd.due
        assert role is not None  # a round in progress always has a card due
        if role[0] == "P":
            rnd.player.append(card)
        else:
            rnd.banker.append(card)
        if role in _NEXT_ROLE:
            rnd.due = _NEXT_ROLE[role]
        else:
            rnd.due = self._third_card_due(rnd, role)
        result: RoundResult | None = None
        if rnd.due is None:
            result = round_result(rnd.number, rnd.player, rnd.banker)
            self.results.append(result)
            self.round = None
            if self.last_round == rnd.number:
                self.in_play = False
        return {
            "ok": True,
            "error": None,
            "role": role,
            "round": rnd.number,
            "result": result,
            "voided_round": None,
        }

    def _third_card_due(self, rnd: Round, placed: str) -> str | None:
        """The tableau: after B2 and after P3, which third card (if any) is due."""
        if placed == "B3":
            return None
        player, banker = rnd.player, rnd.banker
        bt = (POINTS[banker[0]] + POINTS[banker[1]]) % 10
        t = self.tableau
        if placed == "P3":
            return "B3" if t.banker_draws(bt, POINTS[player[2]]) else None
        pt = (POINTS[player[0]] + POINTS[player[1]]) % 10
        if t.is_natural(pt, bt):
            return None
        if t.player_draws(pt):
            return "P3"
        return "B3" if t.banker_draws(bt, None) else None

    def _open_round(self) -> Round:
        self.rounds_opened += 1
        self.round = Round(self.rounds_opened)
        return self.round

    def _suspend(self, code: str, card: object = None) -> Verdict:
        if self.suspension is None:
            self.suspension = Suspension(code, card)
            self._began = True
        else:
            self.suspension.add_later(code, card)
        return _fail(code)

    def _cut(self, event: Mapping[str, Any]) -> Verdict:
        if not self.in_play:
            return _fail(NO_ACTIVE_SHOE)
        if self.cut_seen:
            return _ok()  # only the first cut card of a shoe counts
        self.cut_seen = True
        rnd = self.round
        if rnd is None:
            self.last_round = self.rounds_opened + 1  # the next round to be opened
        elif rnd.player and self.cut_policy == "one_more":
            self.last_round = rnd.number + 1
        else:
            self.last_round = rnd.number  # last_round policy, or no card placed yet
        return _ok()

    def _close_bets(self, event: Mapping[str, Any]) -> Verdict:
        if not self.in_play:
            return _fail(NO_ACTIVE_SHOE)
        if not self.gated:
            return _ok()
        if self.suspension is not None:
            return _fail(SUSPENDED)
        if not self.burn_complete:
            return self._suspend(BURN_INCOMPLETE)
        if self.round is not None:
            return self._suspend(MISSING_CARD)
        rnd = self._open_round()
        return {
            "ok": True,
            "error": None,
            "role": None,
            "round": rnd.number,
            "result": None,
            "voided_round": None,
        }

    def _resume(self, event: Mapping[str, Any]) -> Verdict:
        if self.suspension is None:
            return _fail(NOT_SUSPENDED)
        self.suspension = None
        self._cleared = True
        card = event.get("card")
        if card is None:
            return _ok()
        return self._card_out(card)

    def _void(self, event: Mapping[str, Any]) -> Verdict:
        if self.suspension is not None:
            self.suspension = None
            self._cleared = True
        verdict = _ok()
        rnd = self.round
        if rnd is not None:
            self.round = None
            self.voided.append(rnd.number)
            verdict["voided_round"] = rnd.number
            if self.last_round == rnd.number:
                self.in_play = False
        return verdict

    def _end_shoe(self, event: Mapping[str, Any]) -> Verdict:
        if not self.in_play:
            return _fail(NO_ACTIVE_SHOE)
        verdict = self._void(event)
        self.in_play = False
        return verdict

    def _fault(self, event: Mapping[str, Any]) -> Verdict:
        return self._suspend(SCANNER_FAULT) if self.in_play else _ok()

    def _restart(self, event: Mapping[str, Any]) -> Verdict:
        return self._suspend(STATION_RESTART) if self.in_play else _ok()
