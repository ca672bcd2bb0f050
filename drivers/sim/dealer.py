"""The simulated dealer: deals virtual shoes by the rules (and by its mistakes) as events.

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

So for every event of a stream, `verdict["error"] == event.get("expect")`. The faults,
where each can strike and how the supervisor answers it, are `drivers.sim.faults`'s.

Games (games.md, `drivers.sim.deals`): `punto_banco` as above; `chemin_de_fer` and
`baccarat_banque` (the cercle games: 6 decks, burn `none`, cut policy `stop` unless told
otherwise) have options. At a hand's option (O) the hand draws with the chance
`option_draw` (a seeded stream of its own) and the dealer records it as
`{"type": "decision", "hand": ..., "draw": ...}` (sometimes without `hand`, which means
the hand whose turn it is) before any card moves. Whose turn it is, and whether it waits
for a card or a decision, the dealer reads from its own tables (`drivers.sim.turns`).

The dealer draws its faults and its options' draws from random streams it is given;
`drivers.sim.stream.simulate` seeds them and hands it shoe after shoe.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator, Mapping
from typing import Any

from drivers.sim.deals import BURNS, CUT_POLICIES, Burn, CutPolicy, deal_of
from drivers.sim.faults import DECISION_MISSING, DECISION_NOT_ALLOWED, check_faults
from drivers.sim.shoe import CUT_CARD, MIN_CUT_DEPTH, ShoeEmpty, VirtualShoe
from drivers.sim.turns import Turns
from station.core import events as ev
from station.core.cards import BURN_VALUE, POINTS
from station.core.rules import PUNTO_BANCO, Tableau
from station.core.verdicts import (
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

_HAND_ROLES = ("P1", "B1", "P2", "B2")


class _RoundVoided(Exception):
    """The supervisor voided the round being dealt: the dealer abandons it."""


class _ShoeFinished(Exception):
    """The shoe is finished at once and the dealer stops dealing it: at cut policy `stop`
    the cut card came out with no round in progress, or the shoe ran dry."""


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
        deal = deal_of(game)
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
        in progress): the card behind it stays in the shoe. Raises it too when the shoe
        runs dry before the rounds the cut card allows are dealt (a shallow cut: at
        baccarat banque a round takes up to 9 cards, so `one_more` may need 17 behind the
        cut): the supervisor ends the shoe, which voids the round in progress (spec: The
        shoe, item 5), as a floor does when a shoe runs out.
        """
        assert self._shoe is not None
        try:
            item = self._shoe.draw()
            if item == CUT_CARD:
                self._cut()
                if self._finished:
                    raise _ShoeFinished
                item = self._shoe.draw()
        except ShoeEmpty:
            self._emit(ev.end_shoe(actor="supervisor", detail="the shoe ran out"))
            self._finished = True
            raise _ShoeFinished from None
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
            turns = Turns(self._hands)
            while (hand := turns.waiting()) is not None:
                if self._chance("refused_decision"):
                    self._refused(turns, hand)
                if turns.card_due(hand):
                    self._third(turns, hand)
                else:
                    self._option(turns, hand)
        except _RoundVoided:
            return
        self._round_over(any(len(cards) == 2 for cards in self._hands.values()))

    def _decision(self, hand: str, draw: bool, named: bool | None = None) -> dict[str, Any]:
        """The decision as the event and a resume carry it: the hand named, or sometimes
        left out (the hand whose turn it is)."""
        if named is None:
            named = self._options.random() >= 0.25
        return {"hand": hand, "draw": draw} if named else {"draw": draw}

    def _record(self, hand: str, draw: bool) -> None:
        said = self._decision(hand, draw)
        self._emit(ev.decision(draw, said.get("hand"), actor="dealer"))

    def _refused(self, turns: Turns, waiting: str) -> None:
        """A decision the rules forbid: stand where the card is due, or draw for a hand
        that stood (also on a natural)."""
        choices = [(h, True) for h in turns.stood()]
        if turns.card_due(waiting):
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

    def _third(self, turns: Turns, hand: str) -> None:
        """The hand's third card is due (M, or it decided to draw)."""
        if self.gated and not self._is_last() and self._chance("missing_third"):
            self._emit(ev.close_bets(actor="dealer", fault="missing_third", expect=MISSING_CARD))
            self._suspended()
            self._emit(ev.resume(actor="supervisor"))
        self._placed_third(turns, hand, self._deal())

    def _placed_third(self, turns: Turns, hand: str, card: str) -> None:
        """The hand's third card is placed: its turn is over, the next one opens."""
        self._hands[hand].append(card)
        turns.drew(hand)

    def _option(self, turns: Turns, hand: str) -> None:
        """The hand's option: it draws with the chance `option_draw`; the dealer records the
        decision (or forgets to, and draws the card)."""
        draw = self._options.random() < self.option_draw
        if self._chance("decision_missing"):
            self._unannounced(turns, hand, draw)
            return
        self._record(hand, draw)
        turns.decide(hand, draw)

    def _unannounced(self, turns: Turns, hand: str, draw: bool) -> None:
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
                turns.decide(hand, False)
                after = turns.waiting()
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
            if draw or turns.card_due(target):
                self._emit(ev.resume(shown, decision=decision, actor="supervisor"))
                self._placed_third(turns, target, card)
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
