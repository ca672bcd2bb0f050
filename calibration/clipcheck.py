"""Find or check the region of interest and the passage thresholds on a short clip.

The level that separates card stock from felt is Otsu's over the clip; the detector
is then run with it, and the region of interest suggested is where the cards came to
rest (with a margin). The report says how many passages were seen, so a clip of N
cards that shows another count means the thresholds need a look.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from drivers.recognition import Image, Reading, Recogniser
from drivers.recognition.cardfind import Quad, aspect, find_card, straighten
from drivers.recognition.passage import PassageDetector, PassageSettings, thumbnail
from drivers.recognition.source import crop, frames, open_source


class _Locator:
    """A recogniser that reads nothing but remembers where the card lay (and, if asked,
    the first card it saw, for a snapshot)."""

    name = "locator"

    def __init__(self) -> None:
        self.boxes: list[tuple[int, int, int, int]] = []
        self.first: tuple[Image, Quad] | None = None

    def read(self, image: Image) -> Reading:
        quad = find_card(image)
        if quad is not None:
            x, y, w, h = cv2.boundingRect(quad.astype(np.int32))
            self.boxes.append((x, y, w, h))
            if self.first is None:
                self.first = (image.copy(), quad)
        return Reading("AS", 1.0)


@dataclass
class ClipCheck:
    frames: int
    frame_size: tuple[int, int]
    settings: PassageSettings
    passages: int
    roi: tuple[int, int, int, int] | None
    motion_floor: float
    notes: list[str] = field(default_factory=list)
    #: The first card that came to rest and its outline (in the checked region).
    first: tuple[Image, Quad] | None = None

    def lines(self) -> list[str]:
        s = self.settings
        out = [
            f"{self.frames} frames of {self.frame_size[0]}x{self.frame_size[1]}: "
            f"{self.passages} card passages",
            f"level = {s.level}   (darkest-channel level of card stock, Otsu over the clip)",
            f"presence = {s.presence}   motion = {s.motion}   (motion when nothing moves: "
            f"{self.motion_floor:.4f})",
        ]
        if self.roi is not None:
            out.append(f"roi = {list(self.roi)}   (where the cards came to rest, with a margin)")
        out.extend(f"note: {n}" for n in self.notes)
        return out


#: Bytes of frames kept for the clip's two looks (the level over all of it, then the
#: detector with that level): a live camera cannot be read twice, so the frames are kept.
MEMORY_BUDGET = 1 << 30


def check(
    source: str,
    roi: tuple[int, int, int, int] | None = None,
    settings: PassageSettings | None = None,
    limit: int = 3000,
    budget: int = MEMORY_BUDGET,
) -> ClipCheck:
    capture = open_source(source)
    clip: list[Image] = []
    kept, cut = 0, False
    try:
        for _, frame in zip(range(limit), frames(capture), strict=False):
            clip.append(crop(frame, roi))
            kept += clip[-1].nbytes
            if kept >= budget:
                cut = True
                break
    finally:
        capture.release()
    if not clip:
        raise ValueError(f"{source}: no frames")
    h, w = clip[0].shape[:2]
    thumbs = np.concatenate([thumbnail(f) for f in clip])
    level, _ = cv2.threshold(thumbs, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    base = settings or PassageSettings()
    tuned = base.model_copy(update={"level": int(level)})
    locator = _Locator()
    detector = PassageDetector(locator, tuned)
    passages, floor = 0, []
    empty_before = False
    for i, f in enumerate(clip):
        if detector.feed(f, i) is not None:
            passages += 1
        m = detector.last_measure
        empty = m.coverage < 0.001  # no card stock at all in view
        if empty and empty_before:
            floor.append(m.moving)
        empty_before = empty
    notes = []
    if cut:
        limit_mib = budget >> 20
        notes.append(
            f"only the first {len(clip)} frames were checked (frames kept are "
            f"limited to {limit_mib} MiB): give a --roi, or a shorter clip"
        )
    motion_floor = float(np.percentile(floor, 95)) if floor else 0.0
    if motion_floor > tuned.motion / 2:
        notes.append(
            "the empty view flickers close to the motion threshold: raise `change` "
            "or `motion`, or steady the light"
        )
    if level < 60:
        notes.append(
            "little contrast between the cards and the felt: more light, or a "
            "darker cloth under the camera"
        )
    suggestion = None
    if locator.boxes:
        boxes = np.array(locator.boxes)
        x0, y0 = boxes[:, 0].min(), boxes[:, 1].min()
        x1, y1 = (boxes[:, 0] + boxes[:, 2]).max(), (boxes[:, 1] + boxes[:, 3]).max()
        mx, my = (x1 - x0) // 6, (y1 - y0) // 6
        ox, oy = (roi[0], roi[1]) if roi else (0, 0)
        left, top = max(int(x0 - mx), 0), max(int(y0 - my), 0)
        right, bottom = min(int(x1 + mx), w), min(int(y1 + my), h)
        suggestion = (ox + left, oy + top, right - left, bottom - top)
    else:
        notes.append("no card came to rest in view: check the camera and the clip")
    return ClipCheck(
        len(clip), (w, h), tuned, passages, suggestion, motion_floor, notes, locator.first
    )


def snapshot(result: ClipCheck, recogniser: Recogniser | None = None) -> Image:
    """What the camera sees: the first card at rest with its outline, the suggested
    region of interest, the card straightened, and what the recogniser made of it."""
    if result.first is None:
        raise ValueError("no card came to rest in the clip: nothing to show")
    frame, quad = result.first
    view = frame.copy()
    if result.roi is not None:
        x, y, w, h = result.roi
        cv2.rectangle(view, (x, y), (x + w, y + h), (0, 215, 255), 2)
        cv2.putText(
            view,
            "roi",
            (x + 4, y + 18),
            cv2.FONT_HERSHEY_SIMPLEX,
            0.55,
            (0, 215, 255),
            1,
            cv2.LINE_AA,
        )
    cv2.polylines(view, [quad.astype(np.int32)], True, (255, 120, 0), 2, cv2.LINE_AA)
    cv2.circle(view, tuple(int(v) for v in quad[0]), 5, (0, 0, 255), -1)
    height = view.shape[0]
    card_w = round(height * 0.45 / aspect(quad))
    straight = straighten(frame, quad, (card_w, round(height * 0.45)))
    panel = np.full((height, card_w + 20, 3), 30, np.uint8)
    panel[10 : 10 + straight.shape[0], 10 : 10 + card_w] = straight
    label = "straightened"
    if recogniser is not None:
        reading = recogniser.read(frame)
        label = f"{reading.card or 'unreadable'} {reading.confidence:.2f}"
    cv2.putText(
        panel,
        label,
        (10, straight.shape[0] + 35),
        cv2.FONT_HERSHEY_SIMPLEX,
        0.6,
        (255, 255, 255),
        1,
        cv2.LINE_AA,
    )
    return np.hstack([view, panel])
