"""The hardware-in-the-loop rig: a simulated shoe played as bytes into a serial port.

The simulated dealer (`drivers.sim.dealer`) decides the stream; the rig plays the
reader's part of it (cards, the cut card, the reader dropping off) as the bytes a real
shoe reader sends, with the configured codec and framing, into a pty that the real
serial driver reads. At a chemin de fer or baccarat banque table, a shoe with decision
buttons (`[reader] decision_draw` / `decision_stand`) sends the dealer's decisions down
the line too, without a hand (the station gives each to the hand whose turn it is); a
decision that breaks the rules on purpose (a `refused_decision` fault, which may name a
hand that is not at its turn) goes to the API with its hand, as from the dashboard. What
is not a byte on a serial line (the dealer's `shoe` and `close_bets`, the supervisor's
`resume`, `void`, `end_shoe`) goes to the station's `POST /api/events`, or is skipped
when no station is given.

On top of the dealer's faults the rig adds `garbled`: a card whose frame is corrupted
on the line (a bad block check, or a byte that is not ASCII), which the station must
flag as unreadable; the supervisor then enters the card by eye (`resume` with it).
"""

from __future__ import annotations

import random
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from drivers.codecs import Codec, make_codec
from drivers.config import ReaderConfig
from drivers.framing import encode_frame
from drivers.sim.pty import PtyPort
from station.core import events as ev
from station.core.verdicts import UNREADABLE_CARD

#: Faults the rig injects itself (the dealer's are in `drivers.sim.faults.FAULTS`).
RIG_FAULTS = ("garbled",)

Event = Mapping[str, Any]


class RigError(RuntimeError):
    """The rig cannot go on (the station refused an event, or cannot be reached)."""


def parse_rig_faults(
    spec: str | None,
    gated: bool = True,
    game: str = "punto_banco",
    burn: Literal["reveal", "none"] | None = None,
) -> dict[str, float]:
    """`--faults`: the dealer's faults (as `station simulate` reads them for this game and
    burn) and the rig's own, in one mapping of rates. `all=RATE` applies to both. Raises
    ValueError (a `FaultSpecError` for the dealer's part) saying what is wrong."""
    from drivers.sim.faults import parse_faults

    if spec is None:
        return {}
    dealer: list[str] = []
    rates: dict[str, float] = {}
    for part in spec.split(","):
        name, _, value = (s.strip() for s in part.partition("="))
        if name in RIG_FAULTS or name == "all":
            try:
                rate = float(value)
            except ValueError:
                message = f"the rate of {name} must be a number in 0..1, got {value!r}"
                raise ValueError(message) from None
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"the rate of {name} must be in 0..1, got {value!r}")
            for fault in RIG_FAULTS if name == "all" else (name,):
                rates[fault] = rate
        if name not in RIG_FAULTS:
            dealer.append(part)
    if dealer:
        rates.update(parse_faults(",".join(dealer), gated, game, burn))
    return rates


def with_garbled(events: Iterator[Event], rate: float, rng: random.Random) -> Iterator[Event]:
    """The dealer's stream with a share `rate` of its plain cards garbled on the line.

    A garbled card is an unreadable card (`card: null`, `expect` UNREADABLE_CARD) that the
    supervisor then enters by eye, exactly like the dealer's own `unreadable` fault.
    """
    for event in events:
        plain_card = (
            event.get("actor") == "reader"
            and event["type"] == "card"
            and event.get("card") is not None
            and "fault" not in event
        )
        if plain_card and rate > 0 and rng.random() < rate:
            card = event["card"]
            yield ev.card(
                None, actor="reader", fault="garbled", garbled=card, expect=UNREADABLE_CARD
            )
            yield ev.resume(card, actor="supervisor")
        else:
            yield event


def rig_events(
    seed: int,
    faults: Mapping[str, float] | None = None,
    gated: bool = True,
    **simulate_options: Any,
) -> Iterator[Event]:
    """The stream the rig plays: `station simulate`'s for these arguments, with the rig's
    own faults (`parse_rig_faults`) applied."""
    from drivers.sim.stream import simulate

    rates = dict(faults or {})
    garbled = rates.pop("garbled", 0.0)
    events = simulate(seed, faults=rates, gated=gated, **simulate_options)
    return with_garbled(events, garbled, random.Random(seed))


class ShoeEncoder:
    """The bytes a shoe reader with this configuration sends for each reader event."""

    def __init__(self, config: ReaderConfig, codec: Codec | None = None) -> None:
        self.config = config
        self.codec = codec if codec is not None else make_codec(config.codec)

    def on_the_line(self, event: Event) -> bool:
        """Whether the shoe sends `event` (else the dealer or supervisor does, by the API):
        what its reader reports, and with decision buttons the dealer's decisions that
        follow the rules (the button has no hand: the station takes the turn that waits)."""
        if event.get("actor") == "reader":
            return True
        return (
            event["type"] == "decision"
            and self.config.decision_draw is not None
            and "fault" not in event
        )

    def frame(self, payload: str) -> bytes:
        config = self.config
        return encode_frame(config.framing, payload.encode("ascii"), config.prefix, config.suffix)

    def encode(self, event: Event) -> bytes:
        """A card, the cut card, a decision (the shoe's draw / stand button), a no-read
        (`card: null`), or a garbled card's frame."""
        if event["type"] == "cut":
            return self.frame(self.config.cut_card)
        if event["type"] == "decision":
            payload = self.config.decision_draw if event["draw"] else self.config.decision_stand
            if payload is None:
                raise RigError(
                    "this shoe has no decision buttons: set [reader] decision_draw and "
                    "decision_stand (or --decision-draw/--decision-stand)"
                )
            return self.frame(payload)
        if "garbled" in event:
            return self.garble(self.frame(self.codec.encode(event["garbled"])))
        if event.get("card") is None:
            return self.frame(self.config.no_read)
        return self.frame(self.codec.encode(event["card"]))

    def garble(self, frame: bytes) -> bytes:
        """Line noise on a frame: the block check flipped (stx-etx), or a non-ASCII byte in
        the payload (line), so no codec can read it as a card."""
        if self.config.framing == "stx-etx":
            return frame[:-1] + bytes([frame[-1] ^ 0xFF])
        middle = len(self.config.prefix) + 1
        return frame[:middle] + b"\xff" + frame[middle:]


def post_event(station: str, token: str, event: Event, patience: float = 30.0) -> Any:
    """POST one event to the station's `/api/events` and return its verdict.

    A station that is still starting (connection refused, or 503 until its journal is
    replayed) is retried for `patience` seconds; any other refusal stops the rig.
    """
    request = urllib.request.Request(
        station.rstrip("/") + "/api/events",
        # Who acts is the token's: the station refuses an `actor` in a body (422).
        data=orjson.dumps({k: v for k, v in event.items() if k != "actor"}),
        method="POST",
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
    )
    deadline = time.monotonic() + patience
    while True:
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return orjson.loads(answer.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")[:500]
            if exc.code != 503 or time.monotonic() > deadline:
                raise RigError(
                    f"the station refused {event['type']} ({exc.code}): {detail}"
                ) from None
        except (urllib.error.URLError, OSError) as exc:
            if time.monotonic() > deadline:
                reason = getattr(exc, "reason", exc)
                raise RigError(f"cannot reach the station at {station}: {reason}") from None
        time.sleep(0.2)


@dataclass
class Rig:
    """Plays events into `port` at a dealer's `pace`; reports each step to `report`."""

    port: PtyPort
    encoder: ShoeEncoder
    report: Callable[[Mapping[str, Any]], None]
    pace: float = 1.0
    unplug_for: float = 1.0
    station: str | None = None
    token: str = ""
    sleep: Callable[[float], None] = time.sleep
    note: Callable[[str], None] = lambda message: None

    def play(self, events: Iterator[Event]) -> int:
        """Play every event; the number played (sent on the line or to the station)."""
        played = 0
        self._wait_reader()  # a shoe with no reader on the line would play to nobody
        for seq, event in enumerate(events, start=1):
            row: dict[str, Any] = {"seq": seq, "event": event}
            if event.get("actor") == "reader" and event["type"] == "fault":
                self._pause(played)
                self.unplug()
                row["via"] = "unplug"
            elif self.encoder.on_the_line(event):
                data = self.encoder.encode(event)
                self._pause(played)
                self._wait_reader()
                self.port.write(data)
                row.update(via="serial", bytes=data.hex())
            elif self.station is not None:
                self._pause(played)
                row.update(via="api", verdict=post_event(self.station, self.token, event))
            else:
                row["via"] = "skipped"
            if row["via"] != "skipped":
                played += 1
            received = self.port.read()
            if received:
                row["shoe_received"] = received.hex()  # the station's card-stop command
            self.report(row)
        return played

    def unplug(self) -> None:
        """The reader's cable is pulled, then plugged back in: the driver must notice,
        report a fault, and reconnect by itself (we wait until it has). The cable comes out
        between cards: after the reader has taken in the last one."""
        self.port.drain()
        self.port.unplug()
        self.sleep(self.unplug_for)
        self.port.plug()
        self._wait_reader()

    def _wait_reader(self) -> None:
        if not self.port.reader_attached():
            self.note(f"waiting for a reader to open {self.port.link or self.port.slave_name}")
            self.port.wait_reader()

    def _pause(self, played: int) -> None:
        if played and self.pace > 0:
            self.sleep(self.pace)
