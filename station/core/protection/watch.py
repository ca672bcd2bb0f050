"""Committed events and verdicts in, protection alerts out.

The card order of a shoe is every `card` row with a card code, in journal order, burns
included (a card the table refused still came out of the shoe), and the card a
supervisor's `resume` names for an unreadable one, each with the round and role its
verdict gave it. A shoe starts with an accepted `shoe` event and is finished by an
accepted `end_shoe` or the next accepted `shoe` (a shoe the cut card ended waits for
it). Finished shoes go into the history. Each shoe's shuffle is checked against the
previous shoe's discards twice: when half its cards are out, and when it is finished (if
the first look said nothing); a shoe raises at most one WEAK_SHUFFLE.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from station.core.cards import parse_card
from station.core.protection.sequence import (
    CARD_INDEX,
    FALSE_ALARM_BUDGET,
    GRAM,
    History,
    SequenceWatch,
)
from station.core.protection.shuffle import (
    DEFAULT_THRESHOLD,
    DealtShoe,
    ShuffleScore,
    half_look,
    weak_look,
)

#: What looks at a shuffle: (previous shoe, the new shoe's cards, decks, look, threshold)
#: -> the weak look, located, or None (`shuffle.weak_look`, in this process or another).
Looker = Callable[[DealtShoe, Sequence[int], int, str, float], ShuffleScore | None]

SHOE_SEQUENCE = "SHOE_SEQUENCE"
WEAK_SHUFFLE = "WEAK_SHUFFLE"
ALERT_CODES = (SHOE_SEQUENCE, WEAK_SHUFFLE)
#: What each alert means and what a supervisor should do, for the journal and the banner.
ALERT_ADVICE: dict[str, str] = {
    SHOE_SEQUENCE: "stop dealing from this shoe, keep its cards as they are and call surveillance",
    WEAK_SHUFFLE: "have the next shoe shuffled fully (the house procedure) and tell surveillance",
}


@dataclass(frozen=True, slots=True)
class Alert:
    """One protection alert: its code, a sentence, and the figures behind it. `shoe` is
    the journal seq of the `shoe` event of the shoe it is about; `seq` the row that
    raised it (the card that completed the run, or the row that finished the shoe)."""

    code: str
    message: str
    shoe: int | None
    seq: int | None
    details: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "message": self.message,
            "advice": ALERT_ADVICE[self.code],
            "shoe_seq": self.shoe,
            "at_seq": self.seq,
            **self.details,
        }

    @property
    def key(self) -> str:
        """What makes an alert the same alert again (a restart re-checks the current shoe
        and must not journal it twice): its code, its shoe and the earlier shoe."""
        return f"{self.code}:{self.shoe}:{self.details.get('earlier', '')}"


class Protector:
    """The protection checks of one table: feed every committed row (`row`), in order."""

    def __init__(
        self,
        history: History,
        decks: int,
        *,
        table: str = "table",
        budget: float = FALSE_ALARM_BUDGET,
        weak_threshold: float = DEFAULT_THRESHOLD,
        shuffles: bool = True,
        looker: Looker = weak_look,
    ) -> None:
        """`shuffles` False: no WEAK_SHUFFLE check (the floor service, which takes each
        station's own, need not spend its 20-40 ms a shoe on every table). `looker` runs
        a look (the live station's runs it in a process of its own: 10-30 ms of numpy
        in the station's process moved its card latency's tail)."""
        self.history = history
        self.decks = decks
        self.table = table
        self.budget = budget
        self.weak_threshold = weak_threshold
        self.shuffles = shuffles
        self.looker = looker
        self.watch: SequenceWatch | None = None
        self.shoe_seq: int | None = None  # seq of the current shoe's `shoe` row
        self.shoe_ts: str | None = None
        self.dealt: DealtShoe | None = None  # the current shoe's cards, rounds and hands
        self.previous: DealtShoe | None = None  # the last finished shoe's
        self.weak_said = False  # this shoe raised its WEAK_SHUFFLE already
        self.shoes_seen = 0

    def row(
        self,
        event: Mapping[str, Any],
        verdict: Mapping[str, Any] | None,
        seq: int | None = None,
        ts: str | None = None,
    ) -> list[Alert]:
        """One committed row (a notice has no verdict and changes nothing)."""
        if verdict is None:
            return []
        kind = event.get("type")
        if kind == "card" or (kind == "resume" and event.get("card") is not None):
            return self._card(event.get("card"), verdict, seq)
        if not verdict.get("ok"):
            return []
        if kind == "shoe":
            alerts = self.finish(seq)
            self.shoe_seq, self.shoe_ts = seq, ts
            itself = self.history.find(self._source())
            self.watch = SequenceWatch(self.history, self.decks, self.budget, exclude=itself)
            self.dealt, self.weak_said = DealtShoe(), False
            self.shoes_seen += 1
            return alerts
        if kind == "end_shoe":
            return self.finish(seq)
        return []

    def _card(self, text: object, verdict: Mapping[str, Any], seq: int | None) -> list[Alert]:
        code = parse_card(text)
        if code is None or self.watch is None or self.dealt is None:
            return []
        index = CARD_INDEX[code]
        alerts = [
            Alert(
                SHOE_SEQUENCE,
                m.message(),
                self.shoe_seq,
                seq,
                {
                    "earlier": m.earlier,
                    "start": m.start + 1,
                    "earlier_start": None if m.earlier_start is None else m.earlier_start + 1,
                    "k": m.k,
                    **({"others": list(m.others)} if m.others else {}),
                },
            )
            for m in self.watch.card(index)
        ]
        self.dealt.add(index, verdict.get("round"), verdict.get("role"))
        if len(self.dealt) == half_look(self.decks):
            alerts += self._shuffle("half", seq)
        return alerts

    def _shuffle(self, look: str, seq: int | None) -> list[Alert]:
        """The WEAK_SHUFFLE check of the current shoe at `look`, once a shoe."""
        previous, dealt = self.previous, self.dealt
        if not self.shuffles or self.weak_said or previous is None or dealt is None:
            return []
        score = self.looker(previous, dealt.cards, self.decks, look, self.weak_threshold)
        if score is None:
            return []
        self.weak_said = True
        return [
            Alert(
                WEAK_SHUFFLE,
                score.message(),
                self.shoe_seq,
                seq,
                {**score.as_dict(), "threshold": self.weak_threshold},
            )
        ]

    def finish(self, seq: int | None) -> list[Alert]:
        """The current shoe is over: look at its shuffle at its end (unless the first look
        said it was weak), then put it into the history."""
        watch, self.watch = self.watch, None
        if watch is None:
            return []
        alerts = self._shuffle("end", seq)
        self.previous, self.dealt = self.dealt, None
        cards = watch.cards
        if len(cards) >= GRAM:
            started = f" started {self.shoe_ts}" if self.shoe_ts else ""
            label = f"{self.table} shoe at seq {self.shoe_seq}{started}"
            self.history.add(cards, label, self._source())
        return alerts

    def _source(self) -> str:
        """What names the current shoe uniquely in the history: the table, the seq and
        time of its `shoe` row."""
        return f"{self.table}:{self.shoe_seq}:{self.shoe_ts or ''}"
