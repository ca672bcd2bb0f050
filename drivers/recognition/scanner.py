"""Frames in, card passages out: the region of interest, the passage detector and a
recogniser, as the live driver, `station scan` and the benchmark all use them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from drivers.recognition import Image, Recogniser
from drivers.recognition.passage import DEFAULT_FPS, Passage, PassageDetector, PassageSettings
from drivers.recognition.source import crop


@dataclass
class Scanner:
    recogniser: Recogniser
    settings: PassageSettings
    roi: tuple[int, int, int, int] | None = None
    #: The source's frame rate: the rest the detector waits for is in seconds.
    fps: float = DEFAULT_FPS

    def __post_init__(self) -> None:
        self.detector = PassageDetector(self.recogniser, self.settings, self.fps)

    def pace(self, fps: float) -> None:
        """The frame rate the source reports (ignored if it reports none)."""
        if fps > 0:
            self.fps = self.detector.fps = fps

    def feed(self, frame: Image, index: int) -> Passage | None:
        return self.detector.feed(crop(frame, self.roi), index)

    def scan(self, frames: Iterable[Image], start: int = 0) -> Iterator[Passage]:
        for index, frame in enumerate(frames, start):
            passage = self.feed(frame, index)
            if passage is not None:
                yield passage


def event(passage: Passage) -> dict[str, Any]:
    """The table event of a passage: a `card` with the extra keys `frame`, `confidence`
    (and `detail` for an unreadable card, `raw` for a barcode's payload)."""
    reading = passage.reading
    out: dict[str, Any] = {
        "type": "card",
        "card": reading.card,
        "frame": passage.frame,
        "confidence": reading.confidence,
    }
    if reading.card is None and reading.detail:
        out["detail"] = reading.detail
    if reading.raw is not None:
        out["raw"] = reading.raw
    return out
