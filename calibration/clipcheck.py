"""Find or check the region of interest and the passage thresholds on a short clip.

The level that separates card stock from felt is Otsu's over the clip; the detector
is then run with it, and the region of interest suggested is where the cards came to
rest (with a margin). The report says how many passages were seen, so a clip of N
cards that shows another count means the thresholds need a look.

It also measures what the rest detection needs: how much the picture shakes from frame
to frame (taken out before the card's own motion is measured), how still the cards lie
on the cloth once settled, and the shortest rest a card made; it says whether
`rest_time`, `read_frames` and `rest_pixels` cover them, and suggests values if not.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from drivers.recognition import Image, Reading, Recogniser
from drivers.recognition.cardfind import Quad, aspect, find_card, straighten
from drivers.recognition.passage import (
    DEFAULT_FPS,
    PassageDetector,
    PassageSettings,
    thumbnail,
)
from drivers.recognition.source import crop, frame_rate, frames, open_source


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


@dataclass(frozen=True)
class Rests:
    """What the clip showed of the cards at rest and the camera's shake."""

    fps: float
    #: The picture's own motion from one frame to the next, in pixels: its largest and
    #: the level 95% of the frames stay under.
    shake_max: float = 0.0
    shake_p95: float = 0.0
    #: How far a settled card moves on the cloth from frame to frame (95th percentile):
    #: what is left of the shake once taken out, plus the dealer's touch.
    card_jitter: float = 0.0
    #: Per card: the longest run of frames it lay still, wholly in view (0: never).
    rests: tuple[int, ...] = ()

    def needed(self, settings: PassageSettings) -> int:
        """Still frames a card needs to be read at rest with every try: the rest, then
        one more frame per further try at an unsure card."""
        detector = PassageDetector(_Locator(), settings, self.fps)
        return detector.rest_frames + settings.read_frames - 1

    def lines(self, settings: PassageSettings) -> list[str]:
        s = settings
        out = [
            f"shake: the picture moves by up to {self.shake_max:.1f} px a frame (95% of "
            f"frames under {self.shake_p95:.1f} px), taken out before a card's motion is "
            f"measured; a settled card moves {self.card_jitter:.1f} px on the cloth "
            f"(rest_pixels = {s.rest_pixels:g})"
        ]
        if not self.rests:
            return out
        rested = [r for r in self.rests if r > 0]
        never = len(self.rests) - len(rested)
        need = self.needed(s)
        suggest = []
        if rested:
            shortest = min(rested)
            out.append(
                f"rests: the shortest was {shortest} still frames ({shortest / self.fps:.2f} "
                f"s at {self.fps:g} fps); rest_time = {s.rest_time:g} s and read_frames = "
                f"{s.read_frames} need {need}: "
                + ("covered" if shortest >= need else "NOT covered")
            )
            if shortest < need:
                tries = max(1, min(s.read_frames, shortest))
                rest_frames = max(shortest - tries + 1, 1)
                if rest_frames < need - s.read_frames + 1:
                    suggest.append(f"rest_time = {(rest_frames - 0.5) / self.fps:.3f}")
                if tries < s.read_frames:
                    suggest.append(f"read_frames = {tries}")
        if never:
            out.append(
                f"{never} of {len(self.rests)} cards never came to rest: they are read "
                "from their sharpest frames as they leave"
            )
        if self.card_jitter > s.rest_pixels / 2:
            suggest.append(f"rest_pixels = {round(max(2 * self.card_jitter, 3.0), 1):g}")
        if suggest:
            out.append("suggested: " + "   ".join(suggest))
        if self.shake_max > 12:
            out.append(
                "note: the picture jumps by more than 12 px between frames: steady the "
                "camera's mount, cards may not be seen at rest"
            )
        return out


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
    rests: Rests = field(default_factory=lambda: Rests(DEFAULT_FPS))

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
        out.extend(self.rests.lines(s))
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
    fps = frame_rate(capture) or DEFAULT_FPS
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
    detector = PassageDetector(locator, tuned, fps)
    detector.track_shake = True
    passages, floor = 0, []
    empty_before = False
    shakes: list[float] = []
    jitter: list[float] = []
    steps: list[float] = []
    rests: list[int] = []
    run = longest = 0
    present = False
    for i, f in enumerate(clip):
        if detector.feed(f, i) is not None:
            passages += 1
        m = detector.last_measure
        if i:
            shakes.append(m.shake)
        # Each card's longest still run, whatever the detector did with it.
        if m.coverage >= tuned.presence:
            present = True
            if m.whole and not np.isnan(m.drift) and m.drift <= tuned.rest_pixels:
                run += 1
                steps.append(m.drift)
            else:
                if run >= 3:  # settled, not a slide slowing down
                    jitter.extend(steps)
                run, steps = 0, []
            longest = max(longest, run)
        elif present and m.coverage < tuned.presence / 2:
            rests.append(longest)
            if run >= 3:
                jitter.extend(steps)
            present, run, longest, steps = False, 0, 0, []
        empty = m.coverage < 0.001  # no card stock at all in view
        if empty and empty_before:
            floor.append(m.moving)
        empty_before = empty
    if present:
        rests.append(longest)
    measured = Rests(
        fps,
        max(shakes, default=0.0),
        float(np.percentile(shakes, 95)) if shakes else 0.0,
        float(np.percentile(jitter, 95)) if jitter else 0.0,
        tuple(rests),
    )
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
        len(clip), (w, h), tuned, passages, suggestion, motion_floor, notes, locator.first, measured
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
