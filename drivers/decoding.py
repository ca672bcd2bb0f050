"""What a reader's frame means at the table: a card, the cut card, a hand's decision (a
shoe's draw / stand buttons, `[reader] decision_draw` / `decision_stand`), or an
unreadable card.

Pure, like the framers, so the pair can be fuzzed together: every frame that is not a
known payload becomes `{"type": "card", "card": None}` with its bytes (`raw`, hex) and
the reason (`detail`), which suspends the table until a supervisor enters the card.
"""

from __future__ import annotations

from typing import Any

from drivers.codecs import Codec, make_codec
from drivers.config import ReaderConfig
from drivers.framing import Frame


class FrameDecoder:
    """Turns frames into replay-format events with the configured codec and tokens."""

    def __init__(self, config: ReaderConfig, codec: Codec | None = None) -> None:
        self.codec = codec if codec is not None else make_codec(config.codec)
        self.prefix = config.prefix
        self.suffix = config.suffix
        self.no_read = config.no_read.strip()
        self.cut_card = config.cut_card.strip()
        #: The payloads of the shoe's decision buttons: payload -> draw (none if unset).
        self.decisions: dict[str, bool] = {}
        if config.decision_draw is not None and config.decision_stand is not None:
            self.decisions = {
                config.decision_draw.strip(): True,
                config.decision_stand.strip(): False,
            }

    def event(self, frame: Frame) -> dict[str, Any] | None:
        """The table event for `frame`; None for the `tail` of an over-long line (already
        reported as one unreadable card: the caller journals it as a notice)."""
        if frame.kind == "tail":
            return None
        if frame.kind == "garbled":
            return unreadable(frame.raw, frame.problem)
        payload = frame.payload
        if self.prefix:
            if not payload.startswith(self.prefix):
                return unreadable(frame.raw, f"payload does not start with {self.prefix!r}")
            payload = payload[len(self.prefix) :]
        if self.suffix:
            if not payload.endswith(self.suffix):
                return unreadable(frame.raw, f"payload does not end with {self.suffix!r}")
            payload = payload[: -len(self.suffix)]
        try:
            text = payload.decode("ascii").strip()
        except UnicodeDecodeError:
            return unreadable(frame.raw, "payload is not ASCII")
        if text == self.no_read:
            return unreadable(frame.raw, f"the reader sent no-read ({self.no_read})")
        if text == self.cut_card:
            return {"type": "cut", "raw": frame.raw.hex(), "actor": "reader"}
        if text in self.decisions:
            # No hand: the decision goes to the hand whose turn it is (games.md, Decisions).
            draw = self.decisions[text]
            return {"type": "decision", "draw": draw, "raw": frame.raw.hex(), "actor": "reader"}
        card = self.codec.decode(text)
        if card is None:
            return unreadable(frame.raw, f"{text!r} is no card for codec {self.codec.name}")
        return {"type": "card", "card": card, "raw": frame.raw.hex(), "actor": "reader"}


def unreadable(raw: bytes, detail: str) -> dict[str, Any]:
    """An unreadable card: the table suspends and a supervisor enters the card by eye."""
    return {"type": "card", "card": None, "raw": raw.hex(), "detail": detail, "actor": "reader"}
