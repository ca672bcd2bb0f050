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

This module is the machine: the table's state, and the spec's order of checks on each
event. Beside it: `station.core.turns` (a round's bookkeeping and the walk of its turns),
`station.core.decisions` (a decision read and judged against the round),
`station.core.suspension`, `station.core.verdicts` (what the table answers) and
`station.core.words` (what its codes mean for people).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from station.core import events as ev
from station.core.cards import ALL_CARDS, BURN_VALUE, parse_card
from station.core.decisions import Decisions, judge
from station.core.games import BURNS, CUT_POLICIES, Burn, CutPolicy, Game, game_named
from station.core.results import GameResult, banque_result, round_result
from station.core.suspension import Suspension
from station.core.turns import DECISION, Round, Turns
from station.core.verdicts import (
    BAD_INPUT,
    BURN_EXCESS,
    BURN_INCOMPLETE,
    CARD_WHILE_SUSPENDED,
    DECISION_MISSING,
    DECISION_NOT_ALLOWED,
    EXCESS_COPIES,
    MISSING_CARD,
    NO_ACTIVE_SHOE,
    NOT_SUSPENDED,
    SCANNER_FAULT,
    SHOE_ACTIVE,
    STATION_RESTART,
    SUSPENDED,
    UNEXPECTED_CARD,
    UNREADABLE_CARD,
    Decision,
    Verdict,
    fail,
    ok,
)
from station.core.words import DUE_WORDS

#: The events a dealer or supervisor chooses to send (`Table.actions` says which of them
#: the table would act on now).
ACTIONS = (ev.SHOE, ev.CLOSE_BETS, ev.RESUME, ev.VOID, ev.END_SHOE, ev.DECISION)

#: The rule of one event type: the event in, the verdict out.
Rule = Callable[[Mapping[str, Any]], Verdict]


def _requiring(keys: frozenset[str], rule: Rule) -> Rule:
    """`rule`, answering BAD_INPUT to an event without one of `keys` (the fields its type
    requires); `rule` itself when there are none, so those events pay nothing."""
    if not keys:
        return rule

    def checked(event: Mapping[str, Any]) -> Verdict:
        for key in keys:
            if key not in event:
                return fail(BAD_INPUT)
        return rule(event)

    return checked


class Table:
    """One baccarat table: shoes, burns, rounds, suspensions, as events arrive.

    `game` is a game's name or a `Game`; `decks`, `cut_policy` and `burn` default to the
    game's (`None`), as the spec's table of games says.
    """

    # Slots: the hot path reads a dozen attributes per card, and an instance dict of more
    # than 30 keys loses CPython 3.11's fast attribute access (shared-key dicts).
    __slots__ = (
        "_banker",
        "_began",
        "_cleared",
        "_decisions",
        "_first_role",
        "_handlers",
        "_hands",
        "_steps",
        "_turns",
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
        # The round's bookkeeping, asking the game: the deal as a lookup, the turns and
        # the decisions at their options.
        self._turns = Turns(self.game)
        self._decisions = Decisions(self._turns)
        self._steps = self._turns.steps
        self._first_role = self.game.deal[0][0]
        self._hands = len(self.game.hands)
        self._banker = self.game.banker_index
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
            return fail(BAD_INPUT)
        kind = event.get("type")
        if kind == "card":  # the hot path, four events in five: `_card` inline
            return self._card_out(event["card"]) if "card" in event else fail(BAD_INPUT)
        handler = self._handlers.get(kind) if type(kind) is str else None
        return fail(BAD_INPUT) if handler is None else handler(event)

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
        return self._decisions.bad_input_reason(event, self.held is not None)

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
        held: str = susp.card  # a canonical code: it was counted
        return held

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
        return self._turns.option(rnd)

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
            return fail(SHOE_ACTIVE)
        if self.suspension is not None:  # it outlived its shoe (a `stop` cut): cleared
            self._cleared = True
        self.previous_results, self.previous_voided = self.results, self.voided
        self._reset_shoe()
        self.in_play = True
        self.shoes_started += 1
        return ok()

    def _card(self, event: Mapping[str, Any]) -> Verdict:
        return self._card_out(event["card"])

    def _card_out(self, raw: object) -> Verdict:
        """A card came out of the shoe: the order of checks is the spec's."""
        if not self.in_play:
            return fail(NO_ACTIVE_SHOE)
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
        turns = self._turns
        complete = turns.begin(rnd) if rnd.turn < 0 else turns.walk(rnd, hand + 1)
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
        return fail(code)

    def _cut(self, event: Mapping[str, Any]) -> Verdict:
        if not self.in_play:
            return fail(NO_ACTIVE_SHOE)
        if self.cut_seen:
            return ok()  # only the first cut card of a shoe counts
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
        return ok()

    def _close_bets(self, event: Mapping[str, Any]) -> Verdict:
        if not self.in_play:
            return fail(NO_ACTIVE_SHOE)
        if not self.gated:
            return ok()
        if self.suspension is not None:
            return fail(SUSPENDED)
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

    def _take_decision(self, rnd: Round, hand: int, draw: bool) -> Verdict:
        """Apply an allowed decision: at the hand's option it draws (its third card is due)
        or stands (the next turns open); elsewhere it only agrees and changes nothing."""
        verdict = ok()
        verdict["round"] = rnd.number
        if rnd.fixed(hand) is None:
            if draw:
                rnd.due = self.game.thirds[hand]
            elif self._turns.walk(rnd, hand + 1):
                verdict["result"] = self._complete(rnd)
        return verdict

    def _decision(self, event: Mapping[str, Any]) -> Verdict:
        parsed = self._decisions.read(event)
        if parsed is None:
            return fail(BAD_INPUT)
        if not self.in_play:
            return fail(NO_ACTIVE_SHOE)
        if self.suspension is not None:
            return fail(SUSPENDED)
        hand = judge(self.round, *parsed)
        if hand < 0:
            return fail(DECISION_NOT_ALLOWED)
        assert self.round is not None  # judged: a round is being dealt
        return self._take_decision(self.round, hand, parsed[1])

    # -- supervisor actions ----------------------------------------------------------------

    def _resume(self, event: Mapping[str, Any]) -> Verdict:
        if self.suspension is None:
            return fail(NOT_SUSPENDED)
        card = event.get("card")
        decision = event.get("decision")
        if decision is not None:
            return self._resume_deciding(decision, card)
        if card is not None and not self.in_play:
            return fail(NO_ACTIVE_SHOE)  # a `stop` cut finished the shoe: nothing changes
        self.suspension = None  # a held card, as every flagged card, is discarded
        self._cleared = True
        if card is None:
            return ok()
        return self._card_out(card)

    def _resume_deciding(self, decision: object, card: object) -> Verdict:
        """A resume with a decision, checked in the spec's order; refused whole, or the
        suspension cleared, the decision taken, then the held card (or the resume's card)."""
        parsed = self._decisions.read(decision)
        held = self.held
        if parsed is None or (card is not None and held is not None):
            return fail(BAD_INPUT)
        if not self.in_play:
            return fail(NO_ACTIVE_SHOE)
        rnd, draw = self.round, parsed[1]
        hand = judge(rnd, parsed[0], draw)
        if hand < 0:
            return fail(DECISION_NOT_ALLOWED)
        assert rnd is not None  # judged: a round is being dealt
        placing = held is not None or card is not None
        if placing and not self._decisions.card_may_follow(rnd, hand, draw, held is not None):
            return fail(DECISION_NOT_ALLOWED)
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
        verdict = ok()
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
            return fail(NO_ACTIVE_SHOE)
        verdict = self._void(event)
        self.in_play = False
        return verdict

    def _fault(self, event: Mapping[str, Any]) -> Verdict:
        return self._suspend(SCANNER_FAULT) if self.in_play else ok()

    def _restart(self, event: Mapping[str, Any]) -> Verdict:
        return self._suspend(STATION_RESTART) if self.in_play else ok()
