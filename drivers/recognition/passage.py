"""The card-passage detector: one reading per physical card, however long it stays.

Each frame is shrunk to a small thumbnail of the region of interest and measured twice:
how much of it is card stock (bright in every channel), and how much changed since the
last frame. A card *arrives* when the coverage passes `presence`; it is *at rest* when
the picture has stopped changing for `stable_frames` frames and it does not touch the
edge of the region (it is wholly in view); then it is read. An unsure reading is tried
again on the next frames at rest, up to `read_frames` tries, and the last is reported
(unreadable) so the table suspends. A card that leaves without ever resting is reported
unreadable too: nothing passes unreported. After a reading, the card must *leave*
(coverage under half of `presence` for `gone_frames` frames) before the next one counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import cv2
import numpy as np

from drivers.config import PassageSettings as PassageSettings  # its home: the config model
from drivers.recognition import Image, Reading, Recogniser
from drivers.recognition.cardfind import brightness

#: Thumbnail width: enough to see a card come and go, small enough to cost nothing.
THUMB_WIDTH = 96


def thumbnail(roi: Image) -> Image:
    """The darkest-channel brightness of `roi`, shrunk to `THUMB_WIDTH` pixels wide."""
    h, w = roi.shape[:2]
    size = (THUMB_WIDTH, max(8, round(THUMB_WIDTH * h / w)))
    return brightness(cv2.resize(roi, size, interpolation=cv2.INTER_AREA))


class State(Enum):
    EMPTY = "empty"
    ARRIVING = "arriving"
    READ = "read"


@dataclass(frozen=True, slots=True)
class Passage:
    """A card that passed: its reading and the frame it was read on."""

    reading: Reading
    frame: int
    #: Frames of the card at rest before it was read (0: read on the first still frame;
    #: -1: it passed without coming to rest).
    waited: int


@dataclass(frozen=True, slots=True)
class Measure:
    coverage: float
    moving: float
    edge: float


class PassageDetector:
    """Feed it frames (the region of interest) in order; it returns a `Passage` on the
    frame a card is settled, None on every other frame."""

    def __init__(self, recogniser: Recogniser, settings: PassageSettings | None = None) -> None:
        self.recogniser = recogniser
        self.settings = settings or PassageSettings()
        self.state = State.EMPTY
        self._previous: Image | None = None
        self._still = 0
        self._tries = 0
        self._gone = 0
        self._last: Reading | None = None
        self.last_measure = Measure(0.0, 0.0, 0.0)

    def measure(self, roi: Image) -> Measure:
        """Coverage, motion and edge contact of this frame (and remember it)."""
        s = self.settings
        thumb = thumbnail(roi)
        card = thumb > s.level
        coverage = float(np.count_nonzero(card)) / card.size
        if self._previous is None or self._previous.shape != thumb.shape:
            moving = 1.0
        else:
            diff = cv2.absdiff(thumb, self._previous)
            moving = float(np.count_nonzero(diff > s.change)) / diff.size
        self._previous = thumb
        border = np.concatenate([card[0], card[-1], card[:, 0], card[:, -1]])
        edge = float(np.count_nonzero(border)) / border.size
        self.last_measure = Measure(coverage, moving, edge)
        return self.last_measure

    def feed(self, roi: Image, frame: int) -> Passage | None:
        s = self.settings
        m = self.measure(roi)
        present = m.coverage >= s.presence
        if self.state is State.EMPTY:
            if present:
                self.state, self._still, self._tries, self._last = State.ARRIVING, 0, 0, None
            else:
                return None
        if self.state is State.READ:
            self._gone = self._gone + 1 if m.coverage < s.presence / 2 else 0
            if self._gone >= s.gone_frames:
                self.state = State.EMPTY
            return None
        # ARRIVING: wait for the card to settle, wholly in view.
        if m.coverage < s.presence / 2:
            self.state = State.EMPTY
            last = self._last or Reading(None, 0.0, "the card passed without coming to rest")
            return Passage(last, frame, -1)
        if m.moving <= s.motion and m.edge <= s.edge:
            self._still += 1
        else:
            self._still = 0
        if self._still < s.stable_frames:
            return None
        reading = self.recogniser.read(roi)
        self._tries += 1
        self._last = reading
        if reading.card is not None or self._tries >= s.read_frames:
            self.state, self._gone = State.READ, 0
            return Passage(reading, frame, self._still - s.stable_frames)
        return None
