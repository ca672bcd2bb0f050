"""The table's state machine: one event in, one verdict out, exactly as the dealing rules say.

Pure: no I/O, no clock, no randomness. `station replay`, the live service and the tests
all drive this one class, so they cannot disagree. The rules and the verdict contract
are `shared/spec/dealing-rules.md`; the comments below name its sections.

This is the hot path of replay (hundreds of thousands of events a second), so verdicts
are plain dicts built inline and the event dispatch is a dict of bound methods.

The game (punto banco, chemin de fer, baccarat banque: `station.core.games`) is data: a
round deals its game's first cards, then walks the hands' turns in order and asks the
game's tables whether each hand must draw, must stand or has an option (a `decision`
event answers it). `shared/spec/games.md` is the contract of the cercle games.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypedDict

from station.core import events as ev
from station.core.cards import ALL_CARDS, BURN_VALUE, POINTS, parse_card
from station.core.games import (
    BURNS,
    CUT_POLICIES,
    GAMES,
    STOOD,
    Burn,
    CutPolicy,
    Game,
    game_named,
)
from station.core.results import GameResult, banque_result, round_result

__all__ = ["BURNS", "CUT_POLICIES", "GAMES", "Burn", "CutPolicy", "Game"]

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
    DECISION_MISSING: "a card came out while a hand's option waited for its decision (the "
    "card is held: resume with the decision to place it)",
    NO_ACTIVE_SHOE: "no shoe is in play: start a shoe first",
    SHOE_ACTIVE: "a shoe is already in play: end it first",
    SUSPENDED: "the table is suspended: a supervisor must resume it or void the round",
    NOT_SUSPENDED: "the table is not suspended",
    BAD_INPUT: "not a valid event",
    DECISION_NOT_ALLOWED: "that hand cannot decide that now (not its turn, or the rules or "
    "an earlier decision say otherwise)",
}


class Verdict(TypedDict):
    """The station's decision on one event: the replay output's fields (less `seq`)."""

    ok: bool
    error: str | None
    role: str | None
    round: int | None
    result: GameResult | None
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


#: What `due` is while a hand's option waits for its decision.
DECISION = ev.DECISION

#: The roles of a round's cards in a supervisor's words, every game's (a role code means
#: the same card in every game that has it).
ROLE_WORDS: dict[str, str] = {
    role: words for game in GAMES.values() for role, words in game.role_words.items()
}

#: What the table waits for (`Table.due`) in a supervisor's words; None: suspended.
DUE_WORDS: dict[str | None, str] = {
    "shoe": "new shoe",
    None: "supervisor (resume or void)",
    "burn_reveal": "burn reveal card",
    "burn": "burn card",
    "close_bets": "close bets",
    DECISION: "a hand's decision (draw or stand)",
}
DUE_WORDS.update(ROLE_WORDS.items())

#: The events a dealer or supervisor chooses to send (`Table.actions` says which of them
#: the table would act on now).
ACTIONS = (ev.SHOE, ev.CLOSE_BETS, ev.RESUME, ev.VOID, ev.END_SHOE, ev.DECISION)


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


@dataclass(slots=True)
class Round:
    """A round in progress: its number, the cards of each hand, what is due next, and
    whose turn it is.

    `cards` holds one list per hand of the game, in the game's hand order. `due` is the
    role of the card due next, or `"decision"` while a hand's option waits. `turn` is the
    index of the hand whose turn is open (-1 while the first cards are dealt); the turns
    before it are over (each hand drew, with three cards, or stood).
    """

    number: int
    cards: tuple[list[str], ...]
    due: str | None
    turn: int = -1

    @property
    def player(self) -> list[str]:
        """The first hand's cards (the player; tableau 1 in baccarat banque)."""
        return self.cards[0]

    @property
    def banker(self) -> list[str]:
        """The banker's cards (the last hand in every game)."""
        return self.cards[-1]

    def fixed(self, hand: int) -> bool | None:
        """For a hand whose turn has come: whether it draws (True) or stands (False), as
        the rules or its decision fixed it; None while its option waits."""
        if hand < self.turn:
            return len(self.cards[hand]) > 2
        return None if self.due == DECISION else True

    @property
    def being_dealt(self) -> bool:
        """At least one card placed (the first card always goes to the first hand)."""
        return bool(self.cards[0])


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


_ABSENT = object()


class Table:
    """One baccarat table: shoes, burns, rounds, suspensions, as events arrive.

    `game` is a game's name or a `Game`; `decks`, `cut_policy` and `burn` default to the
    game's (`None`), as the spec's table of games says.
    """

    # Slots: the hot path reads a dozen attributes per card, and an instance dict of more
    # than 30 keys loses CPython 3.11's fast attribute access (shared-key dicts).
    __slots__ = (
        "_banker",
        "_banker_cells",
        "_began",
        "_cleared",
        "_combination",
        "_first_role",
        "_hand_index",
        "_handlers",
        "_hands",
        "_ponte",
        "_steps",
        "_thirds",
        "burn",
        "burned",
        "burns_due",
        "copies",
        "cut_policy",
        "cut_seen",
        "decks",
        "game",
        "gated",
        "in_play",
        "last_round",
        "previous_results",
        "previous_voided",
        "results",
        "reveal_due",
        "round",
        "rounds_opened",
        "shoes_started",
        "suspension",
        "unreadable",
        "voided",
    )

    def __init__(
        self,
        game: str | Game = "punto_banco",
        decks: int | None = None,
        gated: bool = True,
        cut_policy: CutPolicy | None = None,
        burn: Burn | None = None,
    ) -> None:
        self.game: Game = game_named(game)
        decks = self.game.decks if decks is None else decks
        cut_policy = self.game.cut_policy if cut_policy is None else cut_policy
        burn = self.game.burn if burn is None else burn
        if type(decks) is not int or decks < 1:
            raise ValueError(f"decks must be at least 1, got {decks!r}")
        if cut_policy not in CUT_POLICIES:
            raise ValueError(f"cut_policy must be one of {CUT_POLICIES}, got {cut_policy!r}")
        if burn not in BURNS:
            raise ValueError(f"burn must be one of {BURNS}, got {burn!r}")
        self.decks = decks
        self.gated = gated
        self.cut_policy: CutPolicy = cut_policy
        self.burn: Burn = burn
        game_ = self.game
        # The deal as a lookup: each role -> (its hand's index, the role due after it, or
        # None when the turns decide); `decision` -> (-1, None): a card at an option.
        steps: dict[str, tuple[int, str | None]] = {}
        for i, (role, hand) in enumerate(game_.deal):
            following = game_.deal[i + 1][0] if i + 1 < len(game_.deal) else None
            steps[role] = (hand, following)
        for hand, role in enumerate(game_.thirds):
            steps[role] = (hand, None)
        steps[DECISION] = (-1, None)
        self._steps = steps
        self._first_role = game_.deal[0][0]
        # The game's tables, at hand for the turns.
        self._hands = len(game_.hands)
        self._banker = game_.banker_index
        self._thirds = game_.thirds
        self._ponte = game_.ponte
        self._banker_cells = game_.banker
        self._combination = game_.combination
        self._hand_index = {name: i for i, name in enumerate(game_.hands)}
        self.shoes_started = 0
        self.in_play = False
        # Set where a suspension begins or ends; `decide` reads and resets them (`apply`
        # leaves them alone, so the replay hot path pays nothing for them).
        self._began = False
        self._cleared = False
        # The shoe before this one, kept when a shoe starts: the dashboard still shows its
        # rounds and roads until the new shoe has a result (replay rebuilds it too).
        self.previous_results: list[GameResult] = []
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
            ev.DECISION: self._decision,
        }
        self._handlers = {
            kind: _requiring(ev.VOCABULARY[kind].required - {"type"}, rule)
            for kind, rule in rules.items()
        }

    def _reset_shoe(self) -> None:
        self.copies: dict[str, int] = {}
        self.unreadable = 0
        self.reveal_due = self.burn == "reveal"
        self.burns_due = 0
        self.burned: list[str] = []
        self.rounds_opened = 0
        self.round: Round | None = None
        self.suspension: Suspension | None = None
        self.cut_seen = False
        self.last_round: int | None = None
        self.results: list[GameResult] = []
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

    def bad_input_reason(self, event: object) -> str | None:
        """Why `event` is not a valid event at this table, in words that say what to send
        (the vocabulary's reason, or a `decision` naming a hand this game does not have,
        or a resume's malformed `decision`); None when it is one."""
        reason = ev.bad_input_reason(event)
        if reason is not None or type(event) is not dict:
            return reason
        hands = ", ".join(self.game.hands)
        if event.get("type") == ev.DECISION and self._parse_decision(event) is None:
            return f'the "hand" of a decision at {self.game.title} must be one of {hands}, or null'
        if event.get("type") == ev.RESUME and event.get("decision") is not None:
            if self._parse_decision(event["decision"]) is None:
                return (
                    'a resume\'s "decision" must be an object {"hand": ..., "draw": true|false} '
                    f"(hand one of {hands}, or null)"
                )
            if event.get("card") is not None and self.held is not None:
                return "a card is held: resume with the decision only (no card) to place it"
        return None

    # -- read-only views -----------------------------------------------------------------

    @property
    def burn_complete(self) -> bool:
        return not self.reveal_due and self.burns_due == 0

    @property
    def cards_out(self) -> int:
        """Cards that physically left the shoe in play: identified ones and unreadable ones."""
        return sum(self.copies.values()) + self.unreadable

    @property
    def held(self) -> str | None:
        """The card held by DECISION_MISSING (placed by a resume with the decision)."""
        susp = self.suspension
        if susp is None or susp.code != DECISION_MISSING:
            return None
        return susp.card  # type: ignore[return-value]  # a canonical code: it was counted

    def due(self) -> str | None:
        """What the table waits for next, as a code: `shoe`, `burn_reveal`, `burn`,
        `close_bets`, a card role of the game (`P1`..`B3`, `T1.1`..`B.3`), `decision` (a
        hand's option), or None while suspended (a supervisor)."""
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
        return "close_bets" if self.gated else self._first_role

    def option(self) -> dict[str, Any] | None:
        """The option waiting for its decision (also while suspended: a supervisor's resume
        may carry the decision), or None: the hand, its two-card total and the question in
        words (for the banker, what it plays against)."""
        rnd = self.round
        if rnd is None or rnd.due != DECISION:
            return None
        game, turn = self.game, rnd.turn
        hand = game.hands[turn]
        total = _two_card_total(rnd.cards[turn])
        against = ""
        if turn == game.banker_index:
            sides = []
            for i, cards in enumerate(rnd.cards[:-1]):
                if len(cards) == 2 and _two_card_total(cards) >= 8:
                    continue  # settled by its natural
                word = game.hand_words[game.hands[i]]
                if len(cards) > 2:
                    sides.append(f"{word}'s third card {POINTS[cards[2]]}")
                else:
                    sides.append(f"{word} standing")
            against = " against " + " and ".join(sides)
        words = f"{game.hand_words[hand]}: option on {total}{against}, draw or stand?"
        return {"hand": hand, "total": total, "words": words}

    def expecting(self) -> str:
        """What the station waits for next, in the words a supervisor uses."""
        due = self.due()
        if due == "burn":
            return f"burn card ({self.burns_due} to go)"
        if due == DECISION:
            option = self.option()
            assert option is not None  # due says an option waits
            words: str = option["words"]
            return words
        if due is not None and due in self.game.role_words:
            return self.game.role_words[due]
        return DUE_WORDS[due]

    def actions(self) -> tuple[str, ...]:
        """Which of `ACTIONS` the table would act on now rather than reject or ignore: a
        shoe when none is in play; close_bets when it is due; resume while suspended; void
        while suspended or with a round in progress; end_shoe while a shoe is in play; a
        decision while an option waits for it (not suspended)."""
        suspended = self.suspension is not None
        rnd = self.round
        allowed = {
            "shoe": not self.in_play,
            "close_bets": self.in_play and not suspended and self.due() == "close_bets",
            "resume": suspended,
            "void": suspended or rnd is not None,
            "end_shoe": self.in_play,
            "decision": not suspended and rnd is not None and rnd.due == DECISION,
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
        if self.suspension is not None:  # it outlived its shoe (a `stop` cut): cleared
            self._cleared = True
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
                excess = self.rounds_opened == 0 and self.burn == "reveal"
                return self._suspend(BURN_EXCESS if excess else UNEXPECTED_CARD, card)
            rnd = self._open_round()
        return self._place(rnd, card)

    def _place(self, rnd: Round, card: str) -> Verdict:
        """Give `card` the role due in `rnd`, then work out what is due next (the deal's
        next role, or the turns: the game's verdict on each hand in order)."""
        role = rnd.due
        hand, following = self._steps[role]  # type: ignore[index]  # in progress: a role
        if following is not None:  # P1 B1 P2: the deal goes on
            rnd.cards[hand].append(card)
            rnd.due = following
            return {
                "ok": True,
                "error": None,
                "role": role,
                "round": rnd.number,
                "result": None,
                "voided_round": None,
            }
        if hand < 0:  # an option waits for its decision: the card is held
            return self._suspend(DECISION_MISSING, card)
        rnd.cards[hand].append(card)
        # The first cards all placed: the turns begin; else a third card ends its turn.
        complete = self._begin_turns(rnd) if rnd.turn < 0 else self._walk(rnd, hand + 1)
        result: GameResult | None = None
        if complete:  # `_complete`, inline on the hot path
            cards = rnd.cards
            if self._banker == 1:
                result = round_result(rnd.number, cards[0], cards[1])
            else:
                result = banque_result(rnd.number, *cards)
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

    def _begin_turns(self, rnd: Round) -> bool:
        """Naturals after the first cards: a banker natural, or naturals on every ponte
        hand, end the round (True); a natural on one tableau settles it (its turn will pass
        at once: the ponte rule says F at 8 and 9). Else the turns, from the first hand."""
        cards = rnd.cards
        hand = cards[-1]
        if (POINTS[hand[0]] + POINTS[hand[1]]) % 10 >= 8:
            return True
        for hand in cards[:-1]:
            if (POINTS[hand[0]] + POINTS[hand[1]]) % 10 < 8:
                return self._walk(rnd, 0)
        return True  # a natural on every ponte hand

    def _walk(self, rnd: Round, turn: int) -> bool:
        """Open the turns from `turn` on, asking the game: F passes at once, M makes the
        hand's third card due, O waits for the decision. True: no turn waits, the round
        is complete. Only `rnd.turn` and `rnd.due` change (a dry run may pass a copy)."""
        cards = rnd.cards
        banker = self._banker
        while turn < banker:  # a ponte hand: the ponte rule on its two-card total
            hand = cards[turn]
            verdict = self._ponte[(POINTS[hand[0]] + POINTS[hand[1]]) % 10]
            if verdict != "F":
                rnd.turn = turn
                rnd.due = self._thirds[turn] if verdict == "M" else DECISION
                return False
            turn += 1
        if turn > banker:
            return True  # the banker's turn is over too
        # The banker: its cell against the ponte hand (third card, or S when it stood).
        hand = cards[banker]
        row = self._banker_cells[(POINTS[hand[0]] + POINTS[hand[1]]) % 10]
        if banker == 1:
            ponte = cards[0]
            verdict = row[STOOD if len(ponte) == 2 else POINTS[ponte[2]]]
        else:
            verdict = self._against_tableaux(cards, row)
        if verdict == "F":
            return True
        rnd.turn = banker
        rnd.due = self._thirds[banker] if verdict == "M" else DECISION
        return False

    def _against_tableaux(self, cards: tuple[list[str], ...], row: str) -> str:
        """The banker's cells (its row) against each live tableau (not settled by a
        natural), combined by the game's table."""
        verdict = ""
        for hand in cards[:-1]:
            if len(hand) == 2 and (POINTS[hand[0]] + POINTS[hand[1]]) % 10 >= 8:
                continue  # a tableau settled by its natural
            cell = row[POINTS[hand[2]] if len(hand) > 2 else STOOD]
            verdict = self._combination[verdict, cell] if verdict else cell
        return verdict

    def _complete(self, rnd: Round) -> GameResult:
        cards = rnd.cards
        if self._banker == 1:
            result: GameResult = round_result(rnd.number, cards[0], cards[1])
        else:
            result = banque_result(rnd.number, *cards)
        self.results.append(result)
        self.round = None
        if self.last_round == rnd.number:
            self.in_play = False
        return result

    def _open_round(self) -> Round:
        self.rounds_opened += 1
        hands: tuple[list[str], ...] = ([], [], []) if self._hands == 3 else ([], [])
        self.round = Round(self.rounds_opened, hands, self._first_role)
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
        if self.cut_policy == "stop":
            if rnd is not None:
                self.last_round = rnd.number  # being dealt or not, it is the last
            else:  # between rounds or during the burn: the shoe is finished now
                self.last_round = self.rounds_opened or None
                self.in_play = False
        elif rnd is None:
            self.last_round = self.rounds_opened + 1  # the next round to be opened
        elif rnd.cards[0] and self.cut_policy == "one_more":
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

    # -- decisions -----------------------------------------------------------------------

    def _parse_decision(self, decision: object) -> tuple[int | None, bool] | None:
        """A decision's hand (its index; None: the hand whose turn it is) and draw, or None
        when it is malformed (not an object, a hand this game has not, a draw that is
        not a boolean). Other keys are ignored."""
        if type(decision) is not dict:
            return None
        draw = decision.get("draw", _ABSENT)
        if type(draw) is not bool:
            return None
        hand = decision.get("hand")
        if hand is None:
            return None, draw
        index = self._hand_index.get(hand) if type(hand) is str else None
        return None if index is None else (index, draw)

    def _judge(self, hand: int | None, draw: bool) -> int:
        """The index of the hand a decision goes to, or -1 when it is DECISION_NOT_ALLOWED:
        no round being dealt, its first cards not all placed, the hand not yet at its turn,
        or a decision against what the rules (or an earlier decision) fixed for it."""
        rnd = self.round
        if rnd is None or rnd.turn < 0:
            return -1
        index = rnd.turn if hand is None else hand
        if index > rnd.turn:
            return -1
        fixed = rnd.fixed(index)
        if fixed is not None and fixed is not draw:
            return -1
        return index

    def _completes(self, rnd: Round, hand: int) -> bool:
        """Whether standing at `hand`'s option would complete the round (every later turn
        passes at once)."""
        return self._walk(Round(rnd.number, rnd.cards, rnd.due, rnd.turn), hand + 1)

    def _take_decision(self, rnd: Round, hand: int, draw: bool) -> Verdict:
        """Apply an allowed decision: at the hand's option it draws (its third card is due)
        or stands (the next turns open); elsewhere it only agrees and changes nothing."""
        verdict = _ok()
        verdict["round"] = rnd.number
        if rnd.fixed(hand) is None:
            if draw:
                rnd.due = self.game.thirds[hand]
            elif self._walk(rnd, hand + 1):
                verdict["result"] = self._complete(rnd)
        return verdict

    def _decision(self, event: Mapping[str, Any]) -> Verdict:
        parsed = self._parse_decision(event)
        if parsed is None:
            return _fail(BAD_INPUT)
        if not self.in_play:
            return _fail(NO_ACTIVE_SHOE)
        if self.suspension is not None:
            return _fail(SUSPENDED)
        hand = self._judge(*parsed)
        if hand < 0:
            return _fail(DECISION_NOT_ALLOWED)
        assert self.round is not None  # judged: a round is being dealt
        return self._take_decision(self.round, hand, parsed[1])

    # -- supervisor actions ----------------------------------------------------------------

    def _resume(self, event: Mapping[str, Any]) -> Verdict:
        if self.suspension is None:
            return _fail(NOT_SUSPENDED)
        card = event.get("card")
        decision = event.get("decision")
        if decision is not None:
            return self._resume_deciding(decision, card)
        if card is not None and not self.in_play:
            return _fail(NO_ACTIVE_SHOE)  # a `stop` cut finished the shoe: nothing changes
        self.suspension = None  # a held card, as every flagged card, is discarded
        self._cleared = True
        if card is None:
            return _ok()
        return self._card_out(card)

    def _resume_deciding(self, decision: object, card: object) -> Verdict:
        """A resume with a decision, checked in the spec's order; refused whole, or the
        suspension cleared, the decision taken, then the held card (or the resume's card)."""
        parsed = self._parse_decision(decision)
        held = self.held
        if parsed is None or (card is not None and held is not None):
            return _fail(BAD_INPUT)
        if not self.in_play:
            return _fail(NO_ACTIVE_SHOE)
        hand = self._judge(*parsed)
        if hand < 0:
            return _fail(DECISION_NOT_ALLOWED)
        rnd = self.round
        assert rnd is not None  # judged: a round is being dealt
        draw = parsed[1]
        answers = rnd.fixed(hand) is None
        if held is not None or card is not None:
            if held is not None and not answers:
                return _fail(DECISION_NOT_ALLOWED)  # it must answer the waiting option
            if answers and not draw and self._completes(rnd, hand):
                return _fail(DECISION_NOT_ALLOWED)  # the card would have no place
        self.suspension = None
        self._cleared = True
        verdict = self._take_decision(rnd, hand, draw)
        if held is not None:  # as if it just came out: counted once, when it did
            return self._place(rnd, held)
        if card is not None:
            return self._card_out(card)
        return verdict

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


def _two_card_total(cards: list[str]) -> int:
    """A hand's total on its first two cards (what the drawing rules read)."""
    return (POINTS[cards[0]] + POINTS[cards[1]]) % 10
