"""The card-passage detector: one reading per physical card, however long it stays.

Each frame is shrunk to a small picture of the region of interest and measured: how much
of it is card stock (bright in every channel), whether the card touches the region's
edge, how far the whole picture moved since the last frame (phase correlation on the
cloth around the card, so a camera shaken on its pole is not a moving card), and how far
the card moved *relative to the cloth*. A card *arrives* when the coverage passes
`presence`; it is *at rest* when it has stayed within `rest_pixels` of one place on the
cloth for `rest_time` seconds, wholly in view and uncovered (no hand over its edge);
then it is read. An unsure reading is tried again on the next frames at rest, up to
`read_frames` tries, and the last is reported (unreadable) so the table suspends. A
card's first frame over `presence` is judged by its move since the frame before, like
any other (it used to count as still whatever its move: cards were read mid-slide).

The rest test stays per frame, and its measure is made steady instead. A still card
under 3 px of shake seemed to move by up to 3.7 px a frame, and so restarted its rest
for a frame or two (139 ms to its reading instead of 70). That wobble was not the shake
left over: the shift measured on the cloth is within 0.3 px of the shift measured at
four times the size. It was the card's centre, measured on the 160-pixel picture: as
the shaken picture falls differently on its coarse pixels, the centre wanders and comes
back (frame-to-frame errors correlated -0.6). Measured on a picture at least twice as
fine (`FINE`), a settled card moves at most 2.5 px a frame under 1-3 px of shake (95% of
frames under 0.6 px), while a slow slide moves at least 4 px (5 px a frame). A rest
judged over a window of frames would not help: at 0.03 s the rest is one frame, so the
card is read on the frame after it stopped with two places to compare; forgiving a jump
there lets a slow slide through, and waiting for more frames is the delay to remove.

A card that leaves without being read at rest (it never settled: a slow slide, a hand
that never let go) is read from its sharpest frames seen whole and uncovered, with the
same confidence rules; only a card never seen well enough is reported unreadable.
Nothing passes unreported. After a reading, the card must *leave* (coverage under half
of `presence` for `gone_frames` frames) before the next one counts, so a card nudged
after it settled is still one card.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

import cv2
import numpy as np

from drivers.config import PassageSettings as PassageSettings  # its home: the config model
from drivers.recognition import Image, Reading, Recogniser
from drivers.recognition.cardfind import brightness

#: Thumbnail width: enough to see a card come and go, small enough to cost nothing.
THUMB_WIDTH = 96
#: Width of the picture the motion is measured on: the cloth's weave must survive it.
MEASURE_WIDTH = 160
#: The card's centre is measured on a picture at least this many times finer than the
#: measuring one (the region itself if it is not that much larger): on the measuring
#: picture a still card's centre wobbled by up to 0.9 of its pixels (3.7 pixels of a
#: 640-wide region) as the shaken picture fell differently on them; twice as fine, a
#: third of that (see the module's docstring).
FINE = 2
#: Frames per second assumed when the source does not say.
DEFAULT_FPS = 30.0
#: Below this phase-correlation peak the cloth shows no usable texture: no shift is
#: taken out (the card must then be still in the picture itself).
MIN_RESPONSE = 0.04
#: Skin in YCrCb (the usual Cr/Cb box): a hand over the card's edge.
SKIN_LOW = np.array([40, 135, 80], np.uint8)
SKIN_HIGH = np.array([250, 180, 130], np.uint8)
#: Share of the ring just outside the card that may be skin before it counts as covered.
COVERED = 0.03


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
    #: Frames of the card at rest before it was read, beyond the rest it needed (0: read
    #: as soon as it was at rest; -1: it passed without coming to rest).
    waited: int


@dataclass(frozen=True, slots=True)
class Measure:
    """What one frame showed (distances in pixels of the region of interest)."""

    coverage: float
    #: Share of the picture that changed by more than `change` once the shake is out.
    moving: float
    edge: float
    #: How far the whole picture moved since the last frame (the camera's shake).
    shake: float = 0.0
    #: How far the card moved on the cloth since the last frame (nan: no card then).
    drift: float = math.nan
    #: The card wholly in view and uncovered: fit to be read.
    whole: bool = False


@dataclass(frozen=True, slots=True)
class _Look:
    """The measuring picture of one frame."""

    small: Image  # the region shrunk, in colour
    bright: Image
    grey: Image
    weave: Image  # the cloth's texture (see `_weave`), float32
    card: Image  # card stock, 0/255
    centre: tuple[float, float] | None
    area: float


class PassageDetector:
    """Feed it frames (the region of interest) in order; it returns a `Passage` on the
    frame a card is read (at rest, or as it leaves), None on every other frame."""

    def __init__(
        self,
        recogniser: Recogniser,
        settings: PassageSettings | None = None,
        fps: float = DEFAULT_FPS,
    ) -> None:
        self.recogniser = recogniser
        self.settings = settings or PassageSettings()
        self.fps = fps
        #: Measure the shake on empty frames too (calibration); else only with a card.
        self.track_shake = False
        self.state = State.EMPTY
        self._previous: _Look | None = None
        self._cloth_skin: Image | None = None
        self._window: Image | None = None
        self._still = 0
        self._anchor = np.zeros(2)
        self._place = np.zeros(2)
        #: The card's last move on the cloth (region pixels), part of `_place`.
        self._step = np.zeros(2)
        self._tries = 0
        self._gone = 0
        self._last: Reading | None = None
        self._best: list[tuple[float, int, Image]] = []
        self.last_measure = Measure(0.0, 0.0, 0.0)

    @property
    def rest_frames(self) -> int:
        """Frames the card must stay still: `rest_time` at this source's frame rate."""
        fps = self.fps if self.fps > 0 else DEFAULT_FPS
        return max(1, math.ceil(self.settings.rest_time * fps - 1e-6))

    def _look(self, roi: Image) -> _Look:
        s = self.settings
        h, w = roi.shape[:2]
        size = (MEASURE_WIDTH, max(8, round(MEASURE_WIDTH * h / w)))
        small = cv2.resize(roi, size, interpolation=cv2.INTER_AREA)
        if small.ndim == 2:
            small = cv2.cvtColor(small, cv2.COLOR_GRAY2BGR)
        bright = brightness(small)
        grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
        card = np.where(bright > s.level, np.uint8(255), np.uint8(0))
        centre, area = None, 0.0
        if int(bright.max()) > s.level - 20:  # some card stock in view
            centre, area = _centre(roi, size, s.level)
        weave = _weave(grey)
        return _Look(small, bright, grey, weave, card, centre, area)

    def _shift(self, before: _Look, now: _Look) -> tuple[float, float]:
        """How far the picture moved from `before` to `now` (measuring pixels), from the
        cloth's weave alone: card stock of either frame is masked out, so a card sliding
        on a still cloth is not taken for the camera moving."""
        h, w = now.grey.shape
        if self._window is None or self._window.shape != (h, w):
            self._window = cv2.createHanningWindow((w, h), cv2.CV_32F)
        # Anything brighter than the cloth is left out: the card, and the smear of a card
        # sliding fast (dimmer than card stock): over 60% of card stock's level, or a third
        # of the way up to it from a light cloth (most of the region is cloth).
        level = self.settings.level
        cloth_level = float(np.median(now.bright[::4, ::4]))
        faint = max(level * 0.6, cloth_level + (level - cloth_level) / 3)
        card = np.where(cv2.bitwise_or(before.bright, now.bright) > faint, 255, 0)
        card = card.astype(np.uint8)
        # A court card's picture is dark but moves with the card: each shape's hull.
        contours, _ = cv2.findContours(card, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        for contour in contours:
            if len(contour) >= 3:
                cv2.fillConvexPoly(card, cv2.convexHull(contour), 255)
        cloth = cv2.dilate(card, np.ones((9, 9), np.uint8))
        keep = (cloth == 0).astype(np.float32)
        if float(keep.mean()) < 0.15:
            return (0.0, 0.0)
        a, b = before.weave, now.weave
        (dx, dy), response = cv2.phaseCorrelate(a * keep, b * keep, self._window)
        if response < MIN_RESPONSE or abs(dx) > w / 8 or abs(dy) > h / 8:
            return (0.0, 0.0)
        return _refine(a, b, keep, (float(dx), float(dy)))

    def measure(self, roi: Image) -> Measure:
        """Coverage, motion, shake and edge contact of this frame (and remember it)."""
        s = self.settings
        look = self._look(roi)
        scale = roi.shape[1] / look.bright.shape[1]  # region pixels per measuring pixel
        card = look.card > 0
        coverage = float(np.count_nonzero(card)) / card.size
        border = np.concatenate([card[0], card[-1], card[:, 0], card[:, -1]])
        edge = float(np.count_nonzero(border)) / border.size
        before = self._previous
        shake, drift, moving = 0.0, math.nan, 1.0
        if before is not None and before.bright.shape == look.bright.shape:
            dx, dy = (0.0, 0.0)
            if self.track_shake or look.centre is not None or before.centre is not None:
                dx, dy = self._shift(before, look)  # (only a card's motion needs it)
            shake = math.hypot(dx, dy) * scale
            back = np.array([[1, 0, dx], [0, 1, dy]], np.float32)
            h, w = look.bright.shape
            moved = cv2.warpAffine(
                before.bright, back, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
            )
            diff = cv2.absdiff(look.bright, moved)[2:-2, 2:-2]
            moving = float(np.count_nonzero(diff > s.change)) / diff.size
            if look.centre is not None and before.centre is not None:
                rx = look.centre[0] - before.centre[0] - dx
                ry = look.centre[1] - before.centre[1] - dy
                drift = math.hypot(rx, ry) * scale
                self._step = np.array([rx, ry]) * scale
                self._place = self._place + self._step
        whole = bool(look.centre is not None and edge <= s.edge and not self._covered(look))
        if coverage < 0.001:  # the empty cloth: what of it looks like skin is the cloth's
            self._learn_cloth(look)
        self._previous = look
        self.last_measure = Measure(coverage, moving, edge, shake, drift, whole)
        return self.last_measure

    def _learn_cloth(self, look: _Look) -> None:
        skin = cv2.inRange(cv2.cvtColor(look.small, cv2.COLOR_BGR2YCrCb), SKIN_LOW, SKIN_HIGH)
        self._cloth_skin = cv2.dilate(skin, np.ones((5, 5), np.uint8))

    def _covered(self, look: _Look) -> bool:
        """A hand over the card's edge: skin in the ring just outside the card's outline
        (a court card's own faces are inside it), where the empty cloth showed none."""
        contours, _ = cv2.findContours(look.card, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        if not contours:
            return False
        areas = [cv2.contourArea(c) for c in contours]
        largest = max(areas)
        pieces = [c for c, a in zip(contours, areas, strict=True) if a >= largest * 0.02]
        hull = cv2.convexHull(np.concatenate(pieces))
        inside = np.zeros_like(look.card)
        cv2.fillConvexPoly(inside, hull, 255)
        ring = cv2.subtract(cv2.dilate(inside, np.ones((7, 7), np.uint8)), inside)
        skin = cv2.inRange(cv2.cvtColor(look.small, cv2.COLOR_BGR2YCrCb), SKIN_LOW, SKIN_HIGH)
        if self._cloth_skin is not None and self._cloth_skin.shape == skin.shape:
            skin = cv2.subtract(skin, self._cloth_skin)
        on_ring = np.count_nonzero(cv2.bitwise_and(skin, ring))
        return bool(on_ring > max(3.0, COVERED * np.count_nonzero(ring)))

    def feed(self, roi: Image, frame: int) -> Passage | None:
        s = self.settings
        m = self.measure(roi)
        present = m.coverage >= s.presence
        if self.state is State.EMPTY:
            if not present:
                return None
            self.state, self._still, self._tries, self._last = State.ARRIVING, 0, 0, None
            self._best = []
            # Where it was a frame ago (seen, under `presence`): its first frame is judged
            # by its move since then, like any other, not taken as still.
            self._anchor = self._place - self._step
        if self.state is State.READ:
            self._gone = self._gone + 1 if m.coverage < s.presence / 2 else 0
            if self._gone >= s.gone_frames:
                self.state = State.EMPTY
            return None
        # ARRIVING: wait for the card to settle, wholly in view; keep its best frames.
        if m.coverage < s.presence / 2:
            self.state = State.EMPTY
            return Passage(self._read_best(), frame, -1)
        if m.whole:
            self._keep(roi, frame)
        away = float(np.hypot(*(self._place - self._anchor)))
        if not m.whole or math.isnan(m.drift) or away > s.rest_pixels:
            self._still, self._anchor = 0, self._place.copy()  # (again) not at rest
        else:
            self._still += 1
        need = self.rest_frames
        if self._still < need:
            return None
        reading = self.recogniser.read(roi)
        self._tries += 1
        self._last = reading
        if reading.card is not None or self._tries >= s.read_frames:
            self.state, self._gone = State.READ, 0
            return Passage(reading, frame, self._still - need)
        return None

    def _keep(self, roi: Image, frame: int) -> None:
        """Remember this frame if it is among the `read_frames` sharpest of the card."""
        look = self._previous
        assert look is not None
        ys, xs = np.nonzero(look.card)
        if ys.size == 0:  # only card stock's dim fringe in view
            return
        scale = roi.shape[1] / look.card.shape[1]
        y0, y1 = int(ys.min() * scale), int((ys.max() + 1) * scale)
        x0, x1 = int(xs.min() * scale), int((xs.max() + 1) * scale)
        grey = roi[y0:y1, x0:x1]
        if grey.ndim == 3:
            grey = cv2.cvtColor(grey, cv2.COLOR_BGR2GRAY)
        if grey.size == 0:
            return
        sharpness = float(cv2.Laplacian(grey, cv2.CV_32F).var())
        keep = self.settings.read_frames
        if len(self._best) >= keep and sharpness <= self._best[-1][0]:
            return
        self._best.append((sharpness, frame, roi.copy()))
        self._best.sort(key=lambda b: -b[0])
        del self._best[keep:]

    def _read_best(self) -> Reading:
        """The reading of a card that left without a reading at rest: its sharpest whole
        frames, best first, until one is sure; else why it is unreadable."""
        last = self._last
        for _, _, picture in self._best:
            reading = self.recogniser.read(picture)
            if reading.card is not None:
                self._best = []
                return reading
            last = reading
        seen = bool(self._best)
        self._best = []
        if last is not None:
            return last
        why = "the card passed without coming to rest"
        if not seen:
            why += " and was never seen whole and uncovered"
        return Reading(None, 0.0, why)


def _centre(
    roi: Image, size: tuple[int, int], level: int
) -> tuple[tuple[float, float] | None, float]:
    """The centre of the card stock in `roi`, in pixels of the measuring picture (of
    `size`), and its weight in those pixels: weighed on a soft ramp around `level`, so it
    follows the card by fractions of a pixel, and on a picture at least `FINE` times finer
    than the measuring one (shrunk by a whole factor: the fast way)."""
    h, w = roi.shape[:2]
    scale_x, scale_y = w / size[0], h / size[1]  # region pixels per measuring pixel
    step = max(1, int(scale_x // FINE))
    fine = roi
    if step > 1:
        fine = cv2.resize(roi, (w // step, h // step), interpolation=cv2.INTER_AREA)
    ramp = np.clip((brightness(fine).astype(np.float32) - (level - 20)) / 40, 0, 1)
    moments = cv2.moments(ramp)
    sx, sy = w / fine.shape[1], h / fine.shape[0]  # region pixels per fine pixel
    weight = moments["m00"] * sx * sy / (scale_x * scale_y)
    if weight < 4:
        return None, weight
    x = (moments["m10"] / moments["m00"] + 0.5) * sx / scale_x - 0.5
    y = (moments["m01"] / moments["m00"] + 0.5) * sy / scale_y - 0.5
    return (x, y), weight


def _weave(grey: Image) -> Image:
    """The fine texture of a picture (its detail minus its shading), as float32."""
    f = grey.astype(np.float32)
    out: Image = f - cv2.GaussianBlur(f, (0, 0), 2.0)
    return out


def _refine(
    before: Image, now: Image, keep: Image, start: tuple[float, float]
) -> tuple[float, float]:
    """The shift from `before` to `now` to a fraction of a pixel, from `start` (the phase
    correlation's, which the mask's own edges pull towards zero): a few Lucas-Kanade
    steps over the pixels to `keep` (the cloth)."""
    h, w = before.shape
    a = cv2.GaussianBlur(before, (0, 0), 1.0)
    b = cv2.GaussianBlur(now, (0, 0), 1.0)
    gx = cv2.Sobel(a, cv2.CV_32F, 1, 0, ksize=3) / 8
    gy = cv2.Sobel(a, cv2.CV_32F, 0, 1, ksize=3) / 8
    weight = keep.copy()
    weight[:4], weight[-4:], weight[:, :4], weight[:, -4:] = 0, 0, 0, 0
    sxx = float((weight * gx * gx).sum())
    sxy = float((weight * gx * gy).sum())
    syy = float((weight * gy * gy).sum())
    det = sxx * syy - sxy * sxy
    if det <= 1e-6 * max(sxx * syy, 1e-12):
        return start
    dx, dy = start
    for _ in range(3):
        back = np.array([[1, 0, dx], [0, 1, dy]], np.float32)
        moved = cv2.warpAffine(
            b,
            back,
            (w, h),
            flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
            borderMode=cv2.BORDER_REPLICATE,
        )
        e = (moved - a) * weight
        bx, by = -float((e * gx).sum()), -float((e * gy).sum())
        step_x = (syy * bx - sxy * by) / det
        step_y = (sxx * by - sxy * bx) / det
        dx, dy = dx + step_x, dy + step_y
        if abs(step_x) + abs(step_y) < 0.01:
            break
    return (dx, dy)
