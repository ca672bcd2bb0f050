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
`while_suspended`) are only injected while enough cards remain to finish the shoe.

Determinism: all randomness comes from one `random.Random(seed)`. It seeds two streams:
one shuffles the shoes, the other decides the faults, so a seed gives the same first shoe
whatever the fault rates, and the same arguments give the same stream, event for event.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from typing import Any

from drivers.sim.shoe import (
    CUT_CARD,
    DEFAULT_CUT_DEPTH,
    MIN_CUT_DEPTH,
    CutDepth,
    VirtualShoe,
    resolve_cut_depth,
)
from station.core import events as ev
from station.core.cards import ALL_CARDS, BURN_VALUE, POINTS
from station.core.rules import PUNTO_BANCO, Tableau
from station.core.table import (
    BURN_EXCESS,
    BURN_INCOMPLETE,
    CARD_WHILE_SUSPENDED,
    CUT_POLICIES,
    EXCESS_COPIES,
    MISSING_CARD,
    SCANNER_FAULT,
    UNEXPECTED_CARD,
    UNREADABLE_CARD,
    CutPolicy,
)

#: An event of the vocabulary (`station.core.events`) with the dealer's extra keys.
Event = Mapping[str, Any]

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
#: Faults that only a gated table can detect (see the module docstring).
GATED_ONLY = frozenset({"extra_third", "missing_third", "short_burn", "over_burn", "early_card"})
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
}

_HAND_ROLES = ("P1", "B1", "P2", "B2")


class FaultSpecError(ValueError):
    """A `--faults` spec or a `faults` mapping that names no fault or has a bad rate."""


def applicable_faults(gated: bool) -> tuple[str, ...]:
    """The faults a table with this gating can detect, hence the ones worth injecting."""
    return FAULTS if gated else tuple(f for f in FAULTS if f not in GATED_ONLY)


def parse_faults(spec: str, gated: bool = True) -> dict[str, float]:
    """`"unreadable=0.02,foreign=0.1"` or `"all=0.05"` (later entries win) -> rates.

    `all` sets every fault the table can detect (for an ungated table, the faults that
    are not gated only). Raises FaultSpecError naming the valid fault names.
    """
    rates: dict[str, float] = {}
    valid = f"valid names: all, {', '.join(FAULTS)}"
    if not spec.strip():
        raise FaultSpecError(f"empty fault spec; write NAME=RATE[,NAME=RATE...] ({valid})")
    for part in spec.split(","):
        name, sep, value = (s.strip() for s in part.partition("="))
        if not sep or not name:
            raise FaultSpecError(f"{part.strip()!r} is not NAME=RATE ({valid})")
        if name != "all" and name not in FAULTS:
            raise FaultSpecError(f"unknown fault {name!r} ({valid})")
        rate = _rate(name, value)
        for fault in applicable_faults(gated) if name == "all" else (name,):
            rates[fault] = rate
    check_faults(rates, gated)
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


def check_faults(faults: Mapping[str, float], gated: bool) -> dict[str, float]:
    """Validated rates: known names, rates in 0..1, no gated-only fault at an ungated table.

    A key `all` sets every fault this table can detect; named faults override it.
    """
    rates: dict[str, float] = {}
    if "all" in faults:
        rates = dict.fromkeys(applicable_faults(gated), _rate("all", faults["all"]))
    for name, value in faults.items():
        if name == "all":
            continue
        if name not in FAULTS:
            raise FaultSpecError(f"unknown fault {name!r} (valid names: all, {', '.join(FAULTS)})")
        rates[name] = _rate(name, value)
    if not gated:
        undetectable = sorted(n for n, r in rates.items() if r > 0 and n in GATED_ONLY)
        if undetectable:
            raise FaultSpecError(
                f"{', '.join(undetectable)} cannot be detected at an ungated table (the card or "
                f"close_bets is legal there); ungated faults: {', '.join(applicable_faults(False))}"
            )
    return rates


class _RoundVoided(Exception):
    """The supervisor voided the round being dealt: the dealer abandons it."""


class Dealer:
    """Deals shoes by the rules (and by its mistakes), producing replay-format events.

    The dealer keeps its own account of the table (burn, rounds, cut card, copies out)
    from the rules data; `deal_shoe` plays one `VirtualShoe` from `shoe` until the shoe
    is finished by the rules (or, with `rounds`, ended early by the supervisor).
    """

    def __init__(
        self,
        rng: random.Random | int,
        decks: int = 8,
        gated: bool = True,
        cut_policy: CutPolicy = "one_more",
        faults: Mapping[str, float] | None = None,
        rounds: int | None = None,
        tableau: Tableau = PUNTO_BANCO,
    ) -> None:
        if cut_policy not in CUT_POLICIES:
            raise ValueError(f"cut_policy must be one of {CUT_POLICIES}, got {cut_policy!r}")
        if rounds is not None and rounds < 1:
            raise ValueError(f"rounds must be at least 1, got {rounds}")
        self.decks = decks
        self.gated = gated
        self.cut_policy = cut_policy
        self.rounds = rounds
        self.tableau = tableau
        # Fault decisions only; shoes are shuffled by their own rng.
        self._rng = rng if isinstance(rng, random.Random) else random.Random(rng)
        self._rates = {n: r for n, r in check_faults(faults or {}, gated).items() if r > 0}
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
        self._player: list[str] = []
        self._banker: list[str] = []
        self._last_round: int | None = None
        self._finished = False

    def deal_shoe(self, shoe: VirtualShoe) -> Iterator[Event]:
        """The events of one shoe, from `shoe` to its last round (batched per round)."""
        self._start(shoe)
        self._emit(ev.shoe(actor="dealer"))
        self._burn()
        yield from self._flush()
        while not self._finished:
            if self.rounds is not None and self._rounds_done >= self.rounds:
                self._emit(ev.end_shoe(actor="supervisor"))
                self._finished = True
            else:
                self._round()
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
        return self._rng.random() < rate

    # -- cards out of the shoe -----------------------------------------------------------

    def _take(self) -> str:
        """The next card out of the shoe; the reader reports the cut card on the way."""
        assert self._shoe is not None
        item = self._shoe.draw()
        if item == CUT_CARD:
            self._cut()
            item = self._shoe.draw()
        return item

    def _count(self, card: str) -> None:
        """A card the station identified: it counts towards its copies in this shoe."""
        copies = self._copies.get(card, 0) + 1
        self._copies[card] = copies
        if copies == self.decks:
            self._exhausted.append(card)

    def _cut(self) -> None:
        """The cut card came out: which round is the last (spec: The shoe, item 4)."""
        self._emit(ev.cut(actor="reader"))
        if self._number is None:  # burn, between rounds (ungated: no card placed yet)
            self._last_round = self._rounds_opened + 1
        elif self._player and self.cut_policy == "one_more":
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

    def _deal(self) -> str:
        """Draw the card that is due and have the station see it; faults may strike first.

        Raises _RoundVoided when the supervisor voids the round being dealt.
        """
        if self._chance("disconnect"):
            self._emit(
                ev.fault(
                    "reader disconnected", actor="reader", fault="disconnect", expect=SCANNER_FAULT
                )
            )
            self._suspended()
            if self._player:
                self._void()
            self._emit(ev.resume(actor="supervisor"))
        if self._exhausted and self._chance("foreign"):
            card = self._rng.choice(self._exhausted)
            self._count(card)
            self._emit(ev.card(card, actor="reader", fault="foreign", expect=EXCESS_COPIES))
            self._suspended()
            self._emit(ev.resume(actor="supervisor"))
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
        self._player = []
        self._banker = []
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

    def _round(self) -> None:
        """One round: betting closes, P1 B1 P2 B2, third cards by the tableau."""
        if self.gated:
            if self._chance("early_card", cards=1):
                self._stray("early_card", UNEXPECTED_CARD if self._rounds_opened else BURN_EXCESS)
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
        stood = len(self._player) == 2 or len(self._banker) == 2
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
            self._player.append(card)
        else:
            self._banker.append(card)

    def _third_cards_due(self) -> str:
        """After the first four cards: the third card due by the tableau, or ""."""
        player, banker, t = self._player, self._banker, self.tableau
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


def simulate(
    seed: int,
    decks: int = 8,
    shoes: int = 1,
    cut_depth: CutDepth = DEFAULT_CUT_DEPTH,
    faults: Mapping[str, float] | None = None,
    gated: bool = True,
    cut_policy: CutPolicy = "one_more",
    rounds: int | None = None,
) -> Iterator[Event]:
    """The events of `shoes` shoes dealt by a simulated dealer, reproducible from `seed`.

    `cut_depth` is the number of cards behind the cut card (int) or that fraction of the
    shoe (float in 0..1); `faults` maps fault names to rates (see the module docstring;
    a key `all` sets every fault this table can detect, named faults override it);
    `rounds` caps the rounds of each shoe, after which the supervisor ends the shoe.
    Arguments are checked before the first event (ValueError / FaultSpecError).
    """
    if isinstance(decks, bool) or not isinstance(decks, int) or decks < 1:
        raise ValueError(f"decks must be a whole number of at least 1, got {decks!r}")
    if shoes < 0:
        raise ValueError(f"shoes must be at least 0, got {shoes}")
    resolve_cut_depth(cut_depth, len(ALL_CARDS) * decks)  # a bad depth fails before any event
    root = random.Random(seed)
    shuffles = random.Random(root.getrandbits(64))
    dealer = Dealer(
        random.Random(root.getrandbits(64)),
        decks=decks,
        gated=gated,
        cut_policy=cut_policy,
        faults=faults,
        rounds=rounds,
    )
    return _shoes(dealer, shuffles, shoes, cut_depth)


def _shoes(
    dealer: Dealer, shuffles: random.Random, shoes: int, cut_depth: CutDepth
) -> Iterator[Event]:
    for _ in range(shoes):
        yield from dealer.deal_shoe(VirtualShoe(dealer.decks, shuffles, cut_depth))
