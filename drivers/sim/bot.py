"""The live `sim` reader for the demo: a dealer bot and a demo supervisor at a real pace.

Unlike `drivers.sim.dealer` (a whole event stream decided in advance, for replay tests),
this driver plays against the live station: it looks at the station's committed state
(`sink.view()`, a `station.core.snapshot.TableSnapshot`) and does what a dealer would do next:
shuffle and start a shoe when none is in play, close bets after the betting time, draw
the card that is due from its `VirtualShoe` (reporting the cut card as it passes). Now
and then the reader "fails" (an unreadable card, or the reader dropping off), and a demo
supervisor resolves any suspension after a few seconds, unless someone acted first
(through the API): `resume` (with the card read by eye for an unreadable one), `void`
for a lost reader mid-round, `end_shoe` when the bot has no shoe to deal from (after a
restart of the station, its shoe is gone). At a chemin de fer or baccarat banque table
the bot deals the game's roles and, when a hand's option waits (`due == "decision"`,
`snap.option`), takes that hand's decision, drawing or standing at random.

On demand (`misdeal`, `POST /api/sim/misdeal`: the demo's way to show a suspension now),
the dealer bot deals a card before closing bets, at once if betting is open, else at the
next round's betting: a dealer error the station suspends on (UNEXPECTED_CARD, or
BURN_EXCESS in a shoe's first round), which the demo supervisor then resolves as any other.

The bot sends one event at a time and waits until the station has committed it
(`sink.settled()`) before it looks again, so it never acts on a stale state.

Settings: `[reader.sim]` (all optional), `drivers.config.SimSettings`: seed, card_interval,
betting_time, shuffle_time, fault_chance, supervisor_after, cut_depth.
"""

from __future__ import annotations

import random
import threading
import time
from typing import Any

from drivers.base import ReaderSink, TableViewSink
from drivers.config import ReaderConfig, SimSettings
from drivers.sim.shoe import CUT_CARD, ShoeEmpty, VirtualShoe
from station.core import events as ev
from station.core.games import GAMES
from station.core.snapshot import TableSnapshot

#: Every role a card can be due for, in every game.
CARD_ROLES = frozenset(
    {"burn_reveal", "burn"}
    | {role for game in GAMES.values() for role, _ in game.deal}
    | {role for game in GAMES.values() for role in game.thirds}
)
SETTLE_TIMEOUT = 5.0
UNSETTLED_RETRY = 0.25


class SimReader:
    """The `sim` driver (see the module docstring)."""

    name = "sim"

    def __init__(self, config: ReaderConfig | None = None, settings: SimSettings | None = None):
        if settings is None:
            settings = config.sim if config is not None else SimSettings()
        self.settings = settings
        self.decks = 8
        self._rng = random.Random(settings.seed)
        self._shoe: VirtualShoe | None = None
        self._shuffled = False  # whether this process has shuffled a shoe yet
        self._unread: str | None = None  # the card last reported unreadable (read by eye)
        self._watching: int | None = None  # the suspension the supervisor is timing
        self._deadline = 0.0
        self._timer: tuple[str, float] | None = None
        self._held: str | None = None  # a card drawn while the reader was down
        self._detail = "not started"
        self._dropped = False  # a simulated reader outage, until the table resumes
        self._misdeal = threading.Event()  # asked for: a card before bets are closed
        self.sent = 0
        self.stop_commands = 0

    # -- CardReader ----------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        return {
            "driver": self.name,
            "connected": not self._dropped,
            "detail": self._detail,
            "events": self.sent,
            "stop_commands": self.stop_commands,
        }

    def send(self, data: bytes) -> bool:
        """The shoe's card stop: the bot notices suspensions by itself, so just count."""
        self.stop_commands += 1
        return True

    def run(self, sink: ReaderSink, stop: threading.Event) -> None:
        if not isinstance(sink, TableViewSink):
            raise TypeError(
                f"the sim driver plays against the station's table, so it needs a sink that "
                f"shows it (a drivers.base.TableViewSink, with view() and settled()); got "
                f"{type(sink).__name__}: run it under `station run`, or give it such a sink"
            )
        self._detail = "dealing"
        sink.notice("sim dealer started", seed=self.settings.seed)
        while not stop.is_set():
            if not sink.settled(SETTLE_TIMEOUT):  # stopping, or the writer is stuck:
                stop.wait(UNSETTLED_RETRY)  # never act on a state without our last event
                continue
            snap = sink.view()
            self.decks = snap.decks
            wait = self.step(sink, snap, time.monotonic())
            stop.wait(wait)
        self._detail = "stopped"

    def misdeal(self) -> str:
        """Have the dealer bot make a dealer error soon (a card dealt while betting is still
        open), so the table suspends; says when, in words. Called from the API's thread."""
        self._misdeal.set()
        return (
            "the demo dealer deals a card before closing bets as soon as betting is open: "
            "the table suspends on it (UNEXPECTED_CARD, or BURN_EXCESS just after a shoe's "
            "burn) and the demo supervisor resumes it after "
            f"{self.settings.supervisor_after:g} s unless someone acts first"
        )

    # -- the dealer and the supervisor -----------------------------------------------------

    def step(self, sink: ReaderSink, snap: TableSnapshot, now: float) -> float:
        """Do the next thing if its time has come; returns how long to wait before looking
        again."""
        if snap.suspension is not None:
            return self._supervise(sink, snap, now)
        self._watching = None
        self._dropped = False  # someone resumed or voided: the reader is back
        s = self.settings
        due = snap.due
        if due == "shoe":
            self._shoe = None
            self._detail = "shuffling"
            wait = self._wait("shoe", s.shuffle_time if snap.shoes_started else 0.5, now)
            if not wait:
                if not self._shuffled and snap.shoes_started:
                    # A restarted station: the seed alone would shuffle this process's first
                    # shoe in an order the table has dealt already (a SHOE_SEQUENCE alert).
                    self._rng = random.Random(f"{s.seed}:{snap.shoes_started}")
                self._shuffled = True
                self._shoe = VirtualShoe(snap.decks, self._rng, s.cut_depth)
                self._held = None
                self._emit(sink, ev.shoe(actor="demo-dealer"))
            return wait
        if self._shoe is None:  # a shoe in play that this bot did not shuffle (a restart)
            no_record = "the dealer has no record of this shoe"
            self._emit(sink, ev.end_shoe(actor="demo-supervisor", detail=no_record))
            return 0.0
        if due == "close_bets":
            if self._misdeal.is_set() and self._shoe is not None:
                self._misdeal.clear()
                self._detail = "the dealer dealt a card before closing bets (asked for)"
                self._deal(sink, faults=False)
                return 0.0
            self._detail = f"betting open for round {snap.rounds_opened + 1}"
            wait = self._wait(f"bets {snap.seq}", s.betting_time, now)
            if not wait:
                self._emit(sink, ev.close_bets(actor="demo-dealer"))
            return wait
        if due in CARD_ROLES:
            wait = self._wait(f"card {snap.seq}", s.card_interval, now)
            if not wait:
                self._deal(sink)
            return wait
        if due == "decision" and snap.option is not None:  # a hand's option (cercle games)
            wait = self._wait(f"decision {snap.seq}", s.card_interval, now)
            if not wait:
                draw = self._rng.random() < 0.5
                hand = str(snap.option["hand"])
                self._detail = f"{hand} {'draws' if draw else 'stands'}"
                self._emit(sink, ev.decision(draw, hand, actor="demo-dealer"))
            return wait
        return 0.1

    def _wait(self, what: str, delay: float, now: float) -> float:
        """0.0 once `delay` has passed since `what` was first waited for; else the time to
        look again."""
        if self._timer is None or self._timer[0] != what:
            self._timer = (what, now + delay)
        remaining = self._timer[1] - now
        if remaining > 0:
            return min(remaining, 0.25)
        self._timer = None
        return 0.0

    def _deal(self, sink: ReaderSink, faults: bool = True) -> None:
        assert self._shoe is not None
        card, self._held = self._held, None
        try:
            if card is None:
                card = self._shoe.draw()
            if card == CUT_CARD:
                self._emit(sink, ev.cut())
                card = self._shoe.draw()
        except ShoeEmpty:
            self._shoe = None
            self._emit(sink, ev.end_shoe(actor="demo-supervisor", detail="the shoe ran out"))
            return
        if faults and self._rng.random() < self.settings.fault_chance:
            if self._rng.random() < 0.5:
                self._unread = card
                self._detail = "a card could not be read"
                self._emit(sink, ev.card(None, raw="NR"))
            else:
                self._held = card  # still in the shoe: dealt once the reader is back
                self._detail = "the reader dropped off"
                self._dropped = True  # as a real reader's status says, until it is back
                self._emit(sink, ev.fault("sim: the reader dropped off"))
            return
        if faults:
            self._detail = f"dealt {card}"
        self._emit(sink, ev.card(card))

    def _supervise(self, sink: ReaderSink, snap: TableSnapshot, now: float) -> float:
        """Resolve the suspension after `supervisor_after` seconds unless someone did."""
        assert snap.suspension is not None
        since = snap.suspension.get("since_seq")
        if self._watching != since:
            self._watching = since
            self._deadline = now + self.settings.supervisor_after
            self._detail = f"suspended ({snap.suspension['code']}); the supervisor is coming"
        if now < self._deadline:
            return min(self._deadline - now, 0.25)
        self._watching = None
        code = snap.suspension["code"]
        being_dealt = snap.round is not None and any(snap.round[hand] for hand in snap.hands)
        actor = "demo-supervisor"
        event: ev.Event
        if self._shoe is None and snap.in_play:
            event = ev.end_shoe(actor=actor)
        elif code == "UNREADABLE_CARD" and self._unread is not None:
            event = ev.resume(self._unread, actor=actor)
        elif code in ("SCANNER_FAULT", "STATION_RESTART") and being_dealt:
            event = ev.void(actor=actor)
        else:
            event = ev.resume(actor=actor)
        self._unread = None
        self._dropped = False  # the supervisor found the reader back
        self._detail = f"the demo supervisor sent {event['type'].replace('_', ' ')}"
        self._emit(sink, event)
        return 0.0

    def _emit(self, sink: ReaderSink, event: ev.Event) -> None:
        sink.event(dict(event))  # the sink's own copy (it may add or take keys)
        self.sent += 1
