"""A seeded simulated dealer: deals virtual shoes by the rules and writes the event stream.

The dealer plays a shoe the way a dealer at a Punto Banco table does: `shoe`, the burn
reveal and its burns, then rounds (`close_bets`, P1 B1 P2 B2, third cards by the
tableau) until the cut card has come out and the rounds it allows are dealt. It reads
the rules data (`PUNTO_BANCO`, `BURN_VALUE`, `POINTS`) itself and never asks
`station.core.table.Table` what to do, so a test that runs the real `Table` over the stream
checks the table against an independent dealer instead of against itself.

Every event is a replay-format dict with extra keys the rules ignore:

- `actor`: `reader` for what the shoe's reader reports (`card`, `cut`, `fault`),
  `dealer` for `shoe` and `close_bets`, `supervisor` for `resume`, `void`, `end_shoe`;
- `fault`: the injected fault's name, on the event that commits it;
- `expect`: the error code the station must give on that event (absent: no error).

So for every event of a stream, `verdict["error"] == event.get("expect")`.

Faults (the `faults` keys, rates in 0..1: the chance of the fault at each point where it
can happen). "Gated only": at an ungated table the same mistake is a legal event (a card
after a complete round opens the next round, a burn card too many is round 1's P1, and
there is no `close_bets` to check), so no station could flag it, and asking for it with
`gated=False` is an error.

- `extra_third` (gated only; each complete round in which a side stood, unless it was
  the shoe's last round): the dealer draws a third card the tableau did not allow, after
  the round is complete. The station: UNEXPECTED_CARD on that card (no reader can tell an
  extra card from a correct one in the middle of a round). Supervisor: `resume`, the card
  is set aside and the completed round stands.
- `missing_third` (gated only; each round that has a third card due, unless it is the
  shoe's last round): the dealer skips the third card and closes betting for the next
  round. The station: MISSING_CARD on `close_bets`. Supervisor: `resume`; the dealer
  draws the third card(s) still due and closes betting again.
- `short_burn` (gated only; each shoe): the dealer burns 1..N fewer cards than the burn
  reveal says and closes betting. The station: BURN_INCOMPLETE on `close_bets`.
  Supervisor: `resume`; the dealer burns the rest and closes betting again.
- `over_burn` (gated only; each shoe): the dealer burns one card too many. The station:
  BURN_EXCESS on that card. Supervisor: `resume`, the card stays in the discard.
- `early_card` (gated only; each round): the dealer draws the round's first card before
  betting closed. The station: UNEXPECTED_CARD on it (BURN_EXCESS before round 1).
  Supervisor: `resume`, the card is set aside; betting closes and the round is dealt
  from the next card.
- `unreadable` (each card out of the shoe for the burn or a hand): the reader cannot
  identify the card (`"card": null`). The station: UNREADABLE_CARD. Supervisor: `resume`
  with the card read by eye (`"card": CODE`), which the station places where it was due.
- `foreign` (each card due, once some code has all `decks` copies out of the shoe): a
  card from another shoe comes out instead. A foreign card is only detectable as one
  copy too many, so its code is one whose copies are all out. The station:
  EXCESS_COPIES. Supervisor: `resume`, the card is taken out of play and the dealer
  draws the card due from the shoe.
- `while_suspended` (each time another fault suspends the table): the dealer, not
  noticing the suspension, draws the next card. The station: CARD_WHILE_SUSPENDED.
  The card is set aside; the supervisor's reaction to the first fault follows.
- `disconnect` (each card due): the reader drops off before the card comes out
  (`{"type": "fault"}`, written by the live service). The station: SCANNER_FAULT.
  Supervisor: once the reader is back, `void` if a round is being dealt (cards may
  have come out unseen, so the round cannot be finished correctly), else `resume`.

Faults that take a card out of the shoe (`extra_third`, `over_burn`, `early_card`,
`while_suspended`) are only injected while enough cards remain to finish the shoe (and,
at cut policy `stop`, not when the card would bring out the cut card between rounds,
which finishes the shoe at once).

Games (games.md): `punto_banco` as above; `chemin_de_fer` and `baccarat_banque` (the
cercle games: 6 decks, burn `none`, cut policy `stop` unless told otherwise) have
options. At a hand's option (O) the hand draws with the chance `option_draw` (a seeded
stream of its own) and the dealer records it as
`{"type": "decision", "hand": ..., "draw": ...}` (sometimes without `hand`, which means
the hand whose turn it is) before any card moves. The dealer reads the ponte rule, the
banker's cells and the two-tableaux rule from its own tables (`PONTE`, `BANKER_CELLS`
below), never from the station's. At a burn `none` table `short_burn` and `over_burn`
cannot happen (no burn) and `early_card` before round 1 is UNEXPECTED_CARD. Two more
faults, for the games with options only (punto banco has none: a decision there only
confirms what the tableau fixes):

- `decision_missing` (each option): the dealer draws the card without recording the
  hand's decision. The station: DECISION_MISSING, the card is held. Supervisor:
  `resume` with the hand's decision (`"decision": {...}`), which places the held card
  where it is then due; when that is at the next hand's option the resume is
  DECISION_MISSING again and the supervisor resumes with that hand's decision too.
  When the decision would complete the round (the held card is due nowhere) the
  supervisor resumes plainly (the card is set aside) and the dealer records the
  decision. An unreadable card there is resumed with the decision and the card read by
  eye.
- `refused_decision` (each turn that waits): the dealer records a decision the rules
  forbid: standing where the hand must draw (M, or after deciding to draw), or drawing
  for a hand that stood (F, or on a natural). The station: DECISION_NOT_ALLOWED (a
  rejection: nothing changes, nobody needs to act).

Determinism: all randomness comes from one `random.Random(seed)`. It seeds two streams:
one shuffles the shoes, the other decides the faults, so a seed gives the same first shoe
whatever the fault rates, and the same arguments give the same stream, event for event.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from drivers.sim.shoe import (
    CUT_CARD,
    DEFAULT_CUT_DEPTH,
    MIN_CUT_DEPTH,
    CutDepth,
    VirtualShoe,
    parse_shuffle_model,
    reshuffled,
    resolve_cut_depth,
)
from station.core import events as ev
from station.core.cards import ALL_CARDS, BURN_VALUE, POINTS
from station.core.rules import PUNTO_BANCO, Tableau
from station.core.table import (
    BURN_EXCESS,
    BURN_INCOMPLETE,
    CARD_WHILE_SUSPENDED,
    EXCESS_COPIES,
    MISSING_CARD,
    SCANNER_FAULT,
    UNEXPECTED_CARD,
    UNREADABLE_CARD,
)

#: An event of the vocabulary (`station.core.events`) with the dealer's extra keys.
Event = Mapping[str, Any]

#: The codes of games.md's decisions, spelled here from the spec (the dealer's own reading).
DECISION_MISSING = "DECISION_MISSING"
DECISION_NOT_ALLOWED = "DECISION_NOT_ALLOWED"

CutPolicy = Literal["one_more", "last_round", "stop"]
CUT_POLICIES: tuple[CutPolicy, ...] = ("one_more", "last_round", "stop")
Burn = Literal["reveal", "none"]
BURNS: tuple[Burn, ...] = ("reveal", "none")


@dataclass(frozen=True)
class GameDeal:
    """How the dealer deals a game (games.md), in the dealer's own words."""

    name: str
    hands: tuple[str, ...]  # turn order: the ponte(s) first, the banker last
    first: tuple[tuple[str, str], ...]  # (role, hand) of the first cards, in deal order
    decks: int
    burn: Burn
    cut_policy: CutPolicy
    options: bool  # whether a hand may have an option (so decisions to record)


#: The games the dealer deals, keyed by name (punto banco first).
DEALS: dict[str, GameDeal] = {
    deal.name: deal
    for deal in (
        GameDeal(
            "punto_banco",
            ("player", "banker"),
            (("P1", "player"), ("B1", "banker"), ("P2", "player"), ("B2", "banker")),
            8,
            "reveal",
            "one_more",
            False,
        ),
        GameDeal(
            "chemin_de_fer",
            ("player", "banker"),
            (("P1", "player"), ("B1", "banker"), ("P2", "player"), ("B2", "banker")),
            6,
            "none",
            "stop",
            True,
        ),
        GameDeal(
            "baccarat_banque",
            ("tableau1", "tableau2", "banker"),
            (
                ("T1.1", "tableau1"),
                ("T2.1", "tableau2"),
                ("B.1", "banker"),
                ("T1.2", "tableau1"),
                ("T2.2", "tableau2"),
                ("B.2", "banker"),
            ),
            6,
            "none",
            "stop",
            True,
        ),
    )
}
GAME_NAMES = tuple(DEALS)

#: The ponte's verdict on its two-card total (games.md, "Ponte rule"): 0-4 M, 5 O, 6-7 F.
PONTE = "MMMMMOFF"
#: The banker's cell: its two-card total -> the verdict against a ponte's third card
#: 0..9, then (index 10) against a ponte that stood.
BANKER_CELLS = {
    0: "MMMMMMMMMMM",
    1: "MMMMMMMMMMM",
    2: "MMMMMMMMMMM",
    3: "MMMMMMMMFOM",
    4: "FFMMMMMMFFM",
    5: "FFFFOMMMFFM",
    6: "FFFFFFMMFFF",
    7: "FFFFFFFFFFF",
}
_STOOD = 10

#: The fault names, in the order the docs list them (the `--faults` keys).
FAULTS = (
    "extra_third",
    "missing_third",
    "short_burn",
    "over_burn",
    "early_card",
    "unreadable",
    "foreign",
    "while_suspended",
    "disconnect",
)
#: The faults at an option, for the games that have options (see the module docstring).
OPTION_FAULTS = ("decision_missing", "refused_decision")
#: Every fault name, in the order the docs list them.
ALL_FAULTS = FAULTS + OPTION_FAULTS
#: Faults that only a gated table can detect (see the module docstring).
GATED_ONLY = frozenset({"extra_third", "missing_third", "short_burn", "over_burn", "early_card"})
#: Faults that need a burn (`burn = "reveal"`).
BURN_ONLY = frozenset({"short_burn", "over_burn"})
#: The error code(s) each fault makes the station give.
FAULT_ERRORS: dict[str, tuple[str, ...]] = {
    "extra_third": (UNEXPECTED_CARD,),
    "missing_third": (MISSING_CARD,),
    "short_burn": (BURN_INCOMPLETE,),
    "over_burn": (BURN_EXCESS,),
    "early_card": (UNEXPECTED_CARD, BURN_EXCESS),
    "unreadable": (UNREADABLE_CARD,),
    "foreign": (EXCESS_COPIES,),
    "while_suspended": (CARD_WHILE_SUSPENDED,),
    "disconnect": (SCANNER_FAULT,),
    "decision_missing": (DECISION_MISSING,),
    "refused_decision": (DECISION_NOT_ALLOWED,),
}

_HAND_ROLES = ("P1", "B1", "P2", "B2")


class FaultSpecError(ValueError):
    """A `--faults` spec or a `faults` mapping that names no fault or has a bad rate."""


def _deal_of(game: str) -> GameDeal:
    try:
        return DEALS[game]
    except KeyError:
        raise ValueError(f"unknown game {game!r} (games: {', '.join(GAME_NAMES)})") from None


def applicable_faults(
    gated: bool, game: str = "punto_banco", burn: Burn | None = None
) -> tuple[str, ...]:
    """The faults a table with this gating, game and burn can detect, hence the ones worth
    injecting (`burn` None: the game's)."""
    deal = _deal_of(game)
    names = ALL_FAULTS if deal.options else FAULTS
    unfit = set() if gated else set(GATED_ONLY)
    if (deal.burn if burn is None else burn) == "none":
        unfit |= BURN_ONLY
    return tuple(f for f in names if f not in unfit)


def parse_faults(
    spec: str, gated: bool = True, game: str = "punto_banco", burn: Burn | None = None
) -> dict[str, float]:
    """`"unreadable=0.02,foreign=0.1"` or `"all=0.05"` (later entries win) -> rates.

    `all` sets every fault the table can detect (for an ungated table, the faults that
    are not gated only; without a burn, not the burn's; the option faults only in a game
    with options). Raises FaultSpecError naming the valid fault names.
    """
    rates: dict[str, float] = {}
    valid = f"valid names: all, {', '.join(ALL_FAULTS)}"
    if not spec.strip():
        raise FaultSpecError(f"empty fault spec; write NAME=RATE[,NAME=RATE...] ({valid})")
    for part in spec.split(","):
        name, sep, value = (s.strip() for s in part.partition("="))
        if not sep or not name:
            raise FaultSpecError(f"{part.strip()!r} is not NAME=RATE ({valid})")
        if name != "all" and name not in ALL_FAULTS:
            raise FaultSpecError(f"unknown fault {name!r} ({valid})")
        rate = _rate(name, value)
        for fault in applicable_faults(gated, game, burn) if name == "all" else (name,):
            rates[fault] = rate
    check_faults(rates, gated, game, burn)
    return rates


def _rate(name: str, value: object) -> float:
    try:
        rate = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise FaultSpecError(
            f"the rate of {name} must be a number in 0..1, got {value!r}"
        ) from None
    if not 0.0 <= rate <= 1.0:  # also refuses NaN
        raise FaultSpecError(f"the rate of {name} must be in 0..1, got {value!r}")
    return rate


def check_faults(
    faults: Mapping[str, float],
    gated: bool,
    game: str = "punto_banco",
    burn: Burn | None = None,
) -> dict[str, float]:
    """Validated rates: known names, rates in 0..1, and only faults this table can detect
    (no gated-only fault at an ungated table, no burn fault without a burn, no option
    fault in punto banco).

    A key `all` sets every fault this table can detect; named faults override it.
    """
    deal = _deal_of(game)
    rates: dict[str, float] = {}
    if "all" in faults:
        rates = dict.fromkeys(applicable_faults(gated, game, burn), _rate("all", faults["all"]))
    for name, value in faults.items():
        if name == "all":
            continue
        if name not in ALL_FAULTS:
            raise FaultSpecError(
                f"unknown fault {name!r} (valid names: all, {', '.join(ALL_FAULTS)})"
            )
        rates[name] = _rate(name, value)
    asked = sorted(n for n, r in rates.items() if r > 0)
    fits = applicable_faults(gated, game, burn)
    if not gated:
        undetectable = [n for n in asked if n in GATED_ONLY]
        if undetectable:
            raise FaultSpecError(
                f"{', '.join(undetectable)} cannot be detected at an ungated table (the card or "
                f"close_bets is legal there); ungated faults: {', '.join(fits)}"
            )
    no_burn = [n for n in asked if n in BURN_ONLY and n not in fits]
    if no_burn:
        raise FaultSpecError(
            f"{', '.join(no_burn)} cannot happen at a table with burn none (there is no "
            f"burn); faults here: {', '.join(fits)}"
        )
    no_option = [n for n in asked if n in OPTION_FAULTS and not deal.options]
    if no_option:
        raise FaultSpecError(
            f"{', '.join(no_option)} need a game with options (chemin_de_fer, "
            f"baccarat_banque); {game} has none"
        )
    return rates


class _RoundVoided(Exception):
    """The supervisor voided the round being dealt: the dealer abandons it."""


class _ShoeFinished(Exception):
    """At cut policy `stop` the cut card came out with no round in progress: the shoe is
    finished at once and the dealer stops dealing it."""


#: The state of a hand's turn in a game with options: not reached yet, its third card due,
#: its option waiting for the decision, over (it stood or drew).
_WAIT, _CARD, _ASK, _OVER = "wait", "card", "ask", "over"


class Dealer:
    """Deals shoes by the rules (and by its mistakes), producing replay-format events.

    The dealer keeps its own account of the table (burn, rounds, cut card, copies out,
    turns and options) from the rules data; `deal_shoe` plays one `VirtualShoe` from
    `shoe` until the shoe is finished by the rules (or, with `rounds`, ended early by
    the supervisor).
    """

    def __init__(
        self,
        rng: random.Random | int,
        decks: int | None = None,
        gated: bool = True,
        cut_policy: CutPolicy | None = None,
        faults: Mapping[str, float] | None = None,
        rounds: int | None = None,
        tableau: Tableau = PUNTO_BANCO,
        game: str = "punto_banco",
        burn: Burn | None = None,
        option_draw: float = 0.5,
        options: random.Random | int | None = None,
    ) -> None:
        deal = _deal_of(game)
        cut_policy = deal.cut_policy if cut_policy is None else cut_policy
        burn = deal.burn if burn is None else burn
        if cut_policy not in CUT_POLICIES:
            raise ValueError(f"cut_policy must be one of {CUT_POLICIES}, got {cut_policy!r}")
        if burn not in BURNS:
            raise ValueError(f"burn must be one of {BURNS}, got {burn!r}")
        if rounds is not None and rounds < 1:
            raise ValueError(f"rounds must be at least 1, got {rounds}")
        if not 0.0 <= option_draw <= 1.0:  # also refuses NaN
            raise ValueError(f"option_draw must be a chance in 0..1, got {option_draw!r}")
        self.deal = deal
        self.game = game
        self.decks = deal.decks if decks is None else decks
        self.gated = gated
        self.cut_policy: CutPolicy = cut_policy
        self.burn: Burn = burn
        self.rounds = rounds
        self.tableau = tableau
        self.option_draw = option_draw
        # Fault decisions only; shoes are shuffled by their own rng, options by theirs.
        self._rng = rng if isinstance(rng, random.Random) else random.Random(rng)
        if not isinstance(options, random.Random):
            if options is None:  # punto banco has no option: its fault stream stays as it was
                options = self._rng.getrandbits(64) if deal.options else 0
            options = random.Random(options)
        self._options = options
        rates = check_faults(faults or {}, gated, game, burn)
        self._rates = {n: r for n, r in rates.items() if r > 0}
        self._out: list[Event] = []
        self._start(None)

    # -- the dealer's own account of the table -------------------------------------------

    def _start(self, shoe: VirtualShoe | None) -> None:
        self._shoe = shoe
        self._copies: dict[str, int] = {}
        self._exhausted: list[str] = []  # codes with all `decks` copies out, in that order
        self._rounds_opened = 0
        self._rounds_done = 0
        self._number: int | None = None  # the round in progress
        self._hands: dict[str, list[str]] = {hand: [] for hand in self.deal.hands}
        self._turn: dict[str, str] = {}
        self._naturals: list[str] = []
        self._last_round: int | None = None
        self._finished = False

    def deal_shoe(self, shoe: VirtualShoe) -> Iterator[Event]:
        """The events of one shoe, from `shoe` to its last round (batched per round)."""
        self._start(shoe)
        self._emit(ev.shoe(actor="dealer"))
        if self.burn == "reveal":
            with contextlib.suppress(_ShoeFinished):  # the cut card finished the shoe
                self._burn()
        yield from self._flush()
        play = self._options_round if self.deal.options else self._round
        while not self._finished:
            if self.rounds is not None and self._rounds_done >= self.rounds:
                self._emit(ev.end_shoe(actor="supervisor"))
                self._finished = True
            else:
                with contextlib.suppress(_ShoeFinished):
                    play()
            yield from self._flush()

    def _flush(self) -> list[Event]:
        out, self._out = self._out, []
        return out

    def _emit(self, event: Event) -> None:
        self._out.append(event)

    def _chance(self, fault: str, cards: int = 0) -> bool:
        """Whether `fault` strikes here; `cards` it takes from the shoe must be spare."""
        rate = self._rates.get(fault)
        if rate is None:
            return False
        if cards:
            assert self._shoe is not None
            if self._shoe.cards_left - cards < MIN_CUT_DEPTH:
                return False
            if self.cut_policy == "stop" and self._number is None and self._shoe.next_is_cut:
                return False  # the cut card would finish the shoe before the card came out
        return self._rng.random() < rate

    def _being_dealt(self) -> bool:
        """A round is being dealt: it is in progress and has a placed card."""
        return any(self._hands.values())

    # -- cards out of the shoe -----------------------------------------------------------

    def _take(self) -> str:
        """The next card out of the shoe; the reader reports the cut card on the way.

        Raises _ShoeFinished when the cut card finishes the shoe (policy `stop`, no round
        in progress): the card behind it stays in the shoe.
        """
        assert self._shoe is not None
        item = self._shoe.draw()
        if item == CUT_CARD:
            self._cut()
            if self._finished:
                raise _ShoeFinished
            item = self._shoe.draw()
        return item

    def _count(self, card: str) -> None:
        """A card the station identified: it counts towards its copies in this shoe."""
        copies = self._copies.get(card, 0) + 1
        self._copies[card] = copies
        if copies == self.decks:
            self._exhausted.append(card)

    def _cut(self) -> None:
        """The cut card came out: which round is the last (spec: The shoe, item 4; games.md:
        cut policy `stop`)."""
        self._emit(ev.cut(actor="reader"))
        if self.cut_policy == "stop":
            if self._number is None:
                self._finished = True  # no round in progress: the shoe is finished at once
            else:
                self._last_round = self._number
        elif self._number is None:  # burn, between rounds (ungated: no card placed yet)
            self._last_round = self._rounds_opened + 1
        elif self._being_dealt() and self.cut_policy == "one_more":
            self._last_round = self._number + 1
        else:  # policy last_round, or betting closed and no card placed yet
            self._last_round = self._number

    def _stray(self, fault: str, code: str) -> None:
        """A card drawn when none is due: flagged with `code`, then set aside on resume."""
        card = self._take()
        self._count(card)
        self._emit(ev.card(card, actor="reader", fault=fault, expect=code))
        self._suspended()
        self._emit(ev.resume(actor="supervisor"))

    def _suspended(self) -> None:
        """The table is suspended: the dealer may draw a card anyway before anyone acts."""
        if self._chance("while_suspended", cards=1):
            card = self._take()
            self._count(card)
            self._emit(
                ev.card(card, actor="reader", fault="while_suspended", expect=CARD_WHILE_SUSPENDED)
            )

    def _before_card(self) -> None:
        """Faults that strike before the card due comes out: the reader drops off, or a
        foreign card comes out first. Raises _RoundVoided when the supervisor voids the
        round being dealt."""
        if self._chance("disconnect"):
            self._emit(
                ev.fault(
                    "reader disconnected", actor="reader", fault="disconnect", expect=SCANNER_FAULT
                )
            )
            self._suspended()
            if self._being_dealt():
                self._void()
            self._emit(ev.resume(actor="supervisor"))
        if self._exhausted and self._chance("foreign"):
            card = self._rng.choice(self._exhausted)
            self._count(card)
            self._emit(ev.card(card, actor="reader", fault="foreign", expect=EXCESS_COPIES))
            self._suspended()
            self._emit(ev.resume(actor="supervisor"))

    def _deal(self) -> str:
        """Draw the card that is due and have the station see it; faults may strike first.

        Raises _RoundVoided when the supervisor voids the round being dealt.
        """
        self._before_card()
        card = self._take()
        if self._chance("unreadable"):
            self._emit(ev.card(None, actor="reader", fault="unreadable", expect=UNREADABLE_CARD))
            self._suspended()
            self._emit(ev.resume(card, actor="supervisor"))
        else:
            self._emit(ev.card(card, actor="reader"))
        self._count(card)
        return card

    def _void(self) -> None:
        """The supervisor voids the round being dealt; it may have been the shoe's last."""
        number = self._number
        self._emit(ev.void(actor="supervisor"))
        self._end_round()
        if number == self._last_round:
            self._finished = True
        raise _RoundVoided

    def _end_round(self) -> None:
        self._number = None
        self._hands = {hand: [] for hand in self.deal.hands}
        self._turn = {}
        self._naturals = []
        self._rounds_done += 1

    # -- the shoe's steps ----------------------------------------------------------------

    def _burn(self) -> None:
        """The burn reveal, then as many burns as its burn value (maybe botched)."""
        burns = BURN_VALUE[self._deal()]
        short = 0
        if self.gated and self._chance("short_burn"):
            short = self._rng.randint(1, burns)
        for _ in range(burns - short):
            self._deal()
        if short:
            self._emit(ev.close_bets(actor="dealer", fault="short_burn", expect=BURN_INCOMPLETE))
            self._suspended()
            self._emit(ev.resume(actor="supervisor"))
            for _ in range(short):
                self._deal()
        if self.gated and self._chance("over_burn", cards=1):
            self._stray("over_burn", BURN_EXCESS)

    def _early_card(self) -> None:
        """Gated: the round's first card may come out before betting closed."""
        if self._chance("early_card", cards=1):
            before_round_1 = not self._rounds_opened and self.burn == "reveal"
            self._stray("early_card", BURN_EXCESS if before_round_1 else UNEXPECTED_CARD)

    def _round(self) -> None:
        """One round of punto banco: betting closes, P1 B1 P2 B2, third cards by the tableau."""
        if self.gated:
            self._early_card()
            self._emit(ev.close_bets(actor="dealer"))
            self._open()
        try:
            for role in _HAND_ROLES:
                self._place(role, self._deal())
            thirds = self._third_cards_due()
            if thirds and self.gated and not self._is_last() and self._chance("missing_third"):
                self._emit(
                    ev.close_bets(actor="dealer", fault="missing_third", expect=MISSING_CARD)
                )
                self._suspended()
                self._emit(ev.resume(actor="supervisor"))
            while thirds:
                self._place(thirds, self._deal())
                thirds = self._third_cards_due()
        except _RoundVoided:
            return
        player, banker = self._hands["player"], self._hands["banker"]
        stood = len(player) == 2 or len(banker) == 2
        self._round_over(stood)

    def _round_over(self, stood: bool) -> None:
        """The round is complete: the shoe may be finished, else an extra card may follow."""
        last = self._is_last()
        self._end_round()
        if last:
            self._finished = True
        elif stood and self.gated and self._chance("extra_third", cards=1):
            self._stray("extra_third", UNEXPECTED_CARD)

    def _open(self) -> None:
        self._rounds_opened += 1
        self._number = self._rounds_opened

    def _is_last(self) -> bool:
        return self._number is not None and self._number == self._last_round

    def _place(self, role: str, card: str) -> None:
        if role[0] == "P":
            if role == "P1" and not self.gated:
                self._open()  # ungated: the first card placed opens the round
            self._hands["player"].append(card)
        else:
            self._hands["banker"].append(card)

    def _third_cards_due(self) -> str:
        """After the first four cards: the third card due by the tableau, or ""."""
        player, banker, t = self._hands["player"], self._hands["banker"], self.tableau
        if len(banker) == 3:
            return ""
        bt = (POINTS[banker[0]] + POINTS[banker[1]]) % 10
        if len(player) == 3:
            return "B3" if t.banker_draws(bt, POINTS[player[2]]) else ""
        pt = (POINTS[player[0]] + POINTS[player[1]]) % 10
        if t.is_natural(pt, bt):
            return ""
        if t.player_draws(pt):
            return "P3"
        return "B3" if t.banker_draws(bt, None) else ""

    # -- the games with options (chemin de fer, baccarat banque) ------------------------

    def _options_round(self) -> None:
        """One round of a game with options: the first cards, then each hand's turn in
        order (M: its third card; O: the hand's decision, recorded, then maybe the card)."""
        if self.gated:
            self._early_card()
            self._emit(ev.close_bets(actor="dealer"))
            self._open()
        try:
            for index, (_, first) in enumerate(self.deal.first):
                card = self._deal()
                if index == 0 and not self.gated:
                    self._open()  # ungated: the first card placed opens the round
                self._hands[first].append(card)
            self._start_turns()
            while (hand := self._open_turn()) is not None:
                if self._chance("refused_decision"):
                    self._refused(hand)
                if self._turn[hand] == _CARD:
                    self._third(hand)
                else:
                    self._option(hand)
        except _RoundVoided:
            return
        self._round_over(any(len(cards) == 2 for cards in self._hands.values()))

    def _total(self, hand: str, cards: int = 3) -> int:
        return sum(POINTS[c] for c in self._hands[hand][:cards]) % 10

    def _start_turns(self) -> None:
        """The first cards are placed: naturals, then the first turn opens."""
        self._naturals = [h for h in self.deal.hands if self._total(h, 2) >= 8]
        pontes = [h for h in self.deal.hands if h != "banker"]
        if len(pontes) == 2:  # baccarat banque: a banker natural, or both tableaux, end it
            over = "banker" in self._naturals or len(self._naturals) == 2
        else:
            over = bool(self._naturals)
        self._turn = {hand: _OVER if over else _WAIT for hand in self.deal.hands}
        self._pass_turns()

    def _verdict(self, hand: str) -> str:
        """M, F or O for the hand's turn (games.md), from the dealer's own tables."""
        if hand in self._naturals:
            return "F"  # a tableau settled by its natural stands, as at F
        two = self._total(hand, 2)
        if hand != "banker":
            return PONTE[two]
        cells = []
        for ponte in self.deal.hands[:-1]:
            if ponte in self._naturals:
                continue  # settled: not live
            third = self._hands[ponte][2:]
            cells.append(BANKER_CELLS[two][POINTS[third[0]] if third else _STOOD])
        if len(cells) == 1:
            return cells[0]
        may_draw, may_stand = "F" not in cells, "M" not in cells
        if may_draw != may_stand:
            return "M" if may_draw else "F"
        return "O"  # both allowed, or the tableaux pull different ways: the banker's choice

    def _pass_turns(self) -> None:
        """Open the next turn that waits; F turns (and settled tableaux) pass at once."""
        for hand in self.deal.hands:
            state = self._turn[hand]
            if state in (_CARD, _ASK):
                return
            if state == _OVER:
                continue
            verdict = self._verdict(hand)
            if verdict == "F":
                self._turn[hand] = _OVER
                continue
            self._turn[hand] = _CARD if verdict == "M" else _ASK
            return

    def _open_turn(self) -> str | None:
        """The hand whose turn waits (for a card or a decision); None: the round is over."""
        return next((h for h in self.deal.hands if self._turn[h] in (_CARD, _ASK)), None)

    def _decision(self, hand: str, draw: bool, named: bool | None = None) -> dict[str, Any]:
        """The decision as the event and a resume carry it: the hand named, or sometimes
        left out (the hand whose turn it is)."""
        if named is None:
            named = self._options.random() >= 0.25
        return {"hand": hand, "draw": draw} if named else {"draw": draw}

    def _record(self, hand: str, draw: bool) -> None:
        said = self._decision(hand, draw)
        self._emit(ev.decision(draw, said.get("hand"), actor="dealer"))

    def _decide(self, hand: str, draw: bool) -> None:
        """Apply the decision of the hand whose option waits."""
        if draw:
            self._turn[hand] = _CARD
        else:
            self._turn[hand] = _OVER
            self._pass_turns()

    def _refused(self, waiting: str) -> None:
        """A decision the rules forbid: stand where the card is due, or draw for a hand
        that stood (also on a natural)."""
        choices = [(h, True) for h in self.deal.hands if self._turn[h] == _OVER
                   and len(self._hands[h]) == 2]  # fmt: skip
        if self._turn[waiting] == _CARD:
            choices.append((waiting, False))
        if not choices:
            return
        hand, draw = self._rng.choice(choices)
        named: str | None = hand
        if hand == waiting and self._rng.random() < 0.5:
            named = None  # no hand: the turn that waits, which is this hand's
        self._emit(
            ev.decision(
                draw,
                named,
                actor="dealer",
                fault="refused_decision",
                expect=DECISION_NOT_ALLOWED,
            )
        )

    def _third(self, hand: str) -> None:
        """The hand's third card is due (M, or it decided to draw)."""
        if self.gated and not self._is_last() and self._chance("missing_third"):
            self._emit(ev.close_bets(actor="dealer", fault="missing_third", expect=MISSING_CARD))
            self._suspended()
            self._emit(ev.resume(actor="supervisor"))
        self._placed_third(hand, self._deal())

    def _placed_third(self, hand: str, card: str) -> None:
        """The hand's third card is placed: its turn is over, the next one opens."""
        self._hands[hand].append(card)
        self._turn[hand] = _OVER
        self._pass_turns()

    def _option(self, hand: str) -> None:
        """The hand's option: it draws with the chance `option_draw`; the dealer records the
        decision (or forgets to, and draws the card)."""
        draw = self._options.random() < self.option_draw
        if self._chance("decision_missing"):
            self._unannounced(hand, draw)
            return
        self._record(hand, draw)
        self._decide(hand, draw)

    def _unannounced(self, hand: str, draw: bool) -> None:
        """A card out at an option with no decision: held (DECISION_MISSING), or flagged as
        unreadable; the supervisor resumes with the hand's decision, which places the card
        where it is then due (maybe held again at the next option)."""
        self._before_card()
        card = self._take()
        carried = self._chance("unreadable")
        if carried:
            self._emit(ev.card(None, actor="reader", fault="unreadable", expect=UNREADABLE_CARD))
        else:
            self._emit(
                ev.card(card, actor="reader", fault="decision_missing", expect=DECISION_MISSING)
            )
            self._count(card)
        # An unreadable card counts only once a resume carries it (read by eye): one set
        # aside by a plain resume was never identified, so its copy is not counted.
        self._suspended()
        while True:
            shown = card if carried else None  # the resume carries the card read by eye
            target = hand
            if not draw:
                self._turn[hand] = _OVER
                self._pass_turns()
                after = self._open_turn()
                if after is None:
                    # The decision would complete the round: no resume may carry it while a
                    # card is held (or carried). The supervisor resumes plainly, the card
                    # is set aside, and the dealer records the decision.
                    self._emit(ev.resume(actor="supervisor"))
                    self._record(hand, False)
                    return
                target = after
            decision = self._decision(hand, draw)
            if carried:
                self._count(card)
            if draw or self._turn[target] == _CARD:
                self._emit(ev.resume(shown, decision=decision, actor="supervisor"))
                self._placed_third(target, card)
                return
            # The next hand's option waits too: the card is held again.
            self._emit(
                ev.resume(
                    shown,
                    decision=decision,
                    actor="supervisor",
                    fault="decision_missing",
                    expect=DECISION_MISSING,
                )
            )
            self._suspended()
            hand, draw, carried = target, self._options.random() < self.option_draw, False


def simulate(
    seed: int,
    decks: int | None = None,
    shoes: int = 1,
    cut_depth: CutDepth = DEFAULT_CUT_DEPTH,
    faults: Mapping[str, float] | None = None,
    gated: bool = True,
    cut_policy: CutPolicy | None = None,
    rounds: int | None = None,
    game: str = "punto_banco",
    burn: Burn | None = None,
    option_draw: float = 0.5,
    shuffle: str | None = None,
) -> Iterator[Event]:
    """The events of `shoes` shoes dealt by a simulated dealer, reproducible from `seed`.

    `game` is one of GAME_NAMES; `decks`, `cut_policy` and `burn` default to the game's
    (punto banco: 8, one_more, reveal; the cercle games: 6, stop, none). `cut_depth` is
    the number of cards behind the cut card (int) or that fraction of the shoe (float
    in 0..1); `faults` maps fault names to rates (see the module docstring; a key `all`
    sets every fault this table can detect, named faults override it); `rounds` caps
    the rounds of each shoe, after which the supervisor ends the shoe; `option_draw` is
    the chance that a hand with an option draws. `shuffle` (a model of `parse_shuffle_model`,
    e.g. "riffle:1"): each shoe after the first is its previous shoe's cards (dealt order
    first) shuffled by it, as a dealer shuffles the discards; None (the default): every
    shoe is new decks shuffled fairly. Arguments are checked before the first event
    (ValueError / FaultSpecError).
    """
    deal = _deal_of(game)
    decks = deal.decks if decks is None else decks
    if isinstance(decks, bool) or not isinstance(decks, int) or decks < 1:
        raise ValueError(f"decks must be a whole number of at least 1, got {decks!r}")
    if shoes < 0:
        raise ValueError(f"shoes must be at least 0, got {shoes}")
    resolve_cut_depth(cut_depth, len(ALL_CARDS) * decks)  # a bad depth fails before any event
    if shuffle is not None:
        parse_shuffle_model(shuffle)  # a bad model fails before any event too
    root = random.Random(seed)
    shuffles = random.Random(root.getrandbits(64))
    dealer = Dealer(
        random.Random(root.getrandbits(64)),
        decks=decks,
        gated=gated,
        cut_policy=cut_policy,
        faults=faults,
        rounds=rounds,
        game=game,
        burn=burn,
        option_draw=option_draw,
        options=random.Random(root.getrandbits(64)),
    )
    return _shoes(dealer, shuffles, shoes, cut_depth, shuffle)


def _shoes(
    dealer: Dealer,
    shuffles: random.Random,
    shoes: int,
    cut_depth: CutDepth,
    model: str | None = None,
) -> Iterator[Event]:
    previous: VirtualShoe | None = None
    for _ in range(shoes):
        if model is None or previous is None:
            shoe = VirtualShoe(dealer.decks, shuffles, cut_depth)
        else:
            shoe = reshuffled(previous.order, model, shuffles, cut_depth, dealer.decks)
        yield from dealer.deal_shoe(shoe)
        previous = shoe
