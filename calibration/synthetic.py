"""Test footage from real card designs: what a camera over the shoe's mouth would film.

Debian's `gnome-cards-data` holds artists' card designs as SVG sheets (a 13x5 grid:
clubs, diamonds, hearts, spades, then jokers and the back). `render_deck` draws a sheet
with `rsvg-convert` and cuts the grid into 52 cards; `make_clip` films them: each card
slides into view, rests, and leaves, seen at an angle (perspective), with blur, sensor
noise, uneven light and JPEG artefacts, written as a video file that is read back
through `cv2.VideoCapture` like a real camera. The ground truth (which card, when it
came to rest) is returned next to the clip so accuracy and latency can be measured.

Everything is generated into a cache directory (`$STATION_CACHE`, else
`~/.cache/baccarat-station`), never committed: the designs come from the system package.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from station.core.cards import ALL_CARDS

Image = npt.NDArray[Any]

DESIGN_DIR = Path("/usr/share/aisleriot/cards")
#: The designs the recogniser's settings were tuned on (and the tests use).
TUNING_DESIGNS = ("anglo", "paris", "tango", "simplistic")
#: Designs kept out of all tuning: accuracy on them shows how the code generalises.
HELD_OUT_DESIGNS = ("dondorf", "ornamental", "bellot", "neoclassical", "plastic", "swiss-xvii")
#: Sheet rows and columns, in the order the gnome-cards-data sheets draw them.
SHEET_SUITS = "CDHS"
SHEET_RANKS = "A23456789TJQK"
CLIP_FOURCC = "MJPG"
#: The knobs of `Scene` added after footage was first cached (issue 12), and the version
#: of the code that films them (raise it when that changes what they film).
LATER_KNOBS = ("rest_spread", "shake", "nudge", "drift", "hand_frames")
FOOTAGE_VERSION = 1


class SyntheticError(RuntimeError):
    """The card designs or the renderer are missing: says which package to install."""


def cache_dir() -> Path:
    """Where rendered sheets and clips are kept between runs."""
    root = os.environ.get("STATION_CACHE") or Path.home() / ".cache" / "baccarat-station"
    path = Path(root) / "camera"
    path.mkdir(parents=True, exist_ok=True)
    return path


def design_names() -> list[str]:
    """The card designs installed by gnome-cards-data."""
    return sorted(p.name.removesuffix(".svgz") for p in DESIGN_DIR.glob("*.svgz"))


def render_deck(design: str, card_width: int = 160) -> dict[str, Image]:
    """The 52 cards of `design` as BGRA images about `card_width` pixels wide."""
    sheet_path = DESIGN_DIR / f"{design}.svgz"
    if not sheet_path.exists():
        raise SyntheticError(
            f"no card design {sheet_path}: run `apt-get install gnome-cards-data`"
            f" (installed designs: {', '.join(design_names()) or 'none'})"
        )
    png = cache_dir() / f"sheet-{design}-{card_width}.png"
    if not png.exists():
        if shutil.which("rsvg-convert") is None:
            raise SyntheticError("rsvg-convert is missing: run `apt-get install librsvg2-bin`")
        tmp = png.with_suffix(f".{os.getpid()}.tmp.png")
        subprocess.run(
            ["rsvg-convert", "-w", str(13 * card_width), "-o", str(tmp), str(sheet_path)],
            check=True,
        )
        tmp.replace(png)
    sheet = cv2.imread(str(png), cv2.IMREAD_UNCHANGED)
    if sheet is None or sheet.ndim != 3 or sheet.shape[2] != 4:
        raise SyntheticError(f"{png} is not an RGBA image; delete it and try again")
    rows, cols = 5, 13
    cell_h, cell_w = sheet.shape[0] / rows, sheet.shape[1] / cols
    deck: dict[str, Image] = {}
    for r, suit in enumerate(SHEET_SUITS):
        for c, rank in enumerate(SHEET_RANKS):
            cell = sheet[
                round(r * cell_h) : round((r + 1) * cell_h),
                round(c * cell_w) : round((c + 1) * cell_w),
            ]
            deck[rank + suit] = _trim(cell)
    return deck


def _trim(cell: Image) -> Image:
    """The card without the transparent margin around it in its grid cell."""
    ys, xs = np.nonzero(cell[:, :, 3] > 8)
    return np.ascontiguousarray(cell[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1])


@dataclass(frozen=True)
class Scene:
    """How the camera sees the landing spot; every mishap is a knob (0 turns it off)."""

    width: int = 480
    height: int = 360
    fps: float = 30.0
    #: Card width at rest, in pixels, before perspective.
    card_width: int = 120
    #: Empty frames before the first card.
    lead_frames: int = 5
    slide_frames: int = 6
    rest_frames: int = 8
    gap_frames: int = 3
    #: Perspective: how much narrower the far (top) edge of the view is, as a fraction.
    tilt: float = 0.15
    #: Random placement at rest: pixels of shift and degrees of turn.
    jitter: float = 10.0
    turn: float = 6.0
    focus_blur: float = 0.8
    motion_blur: bool = True
    noise: float = 4.0
    #: Light falls off to (1 - unevenness) at the darkest corner.
    unevenness: float = 0.35
    jpeg_quality: int = 60
    felt: tuple[int, int, int] = (45, 110, 40)
    seed: int = 1
    #: Up to this many more rest frames, drawn per card (rests of `rest_frames` to
    #: `rest_frames + rest_spread` frames).
    rest_spread: int = 0
    #: Pixels the whole picture may move from one frame to the next (a camera on a pole
    #: beside the table, shaken by the players).
    shake: float = 0.0
    #: Pixels a settled card is pushed halfway through its rest (then it rests again).
    nudge: float = 0.0
    #: Pixels per frame a card keeps sliding instead of resting (it never comes to rest).
    drift: float = 0.0
    #: The dealer's hand (a skin-coloured blob and its arm) lies over one side of the card
    #: from the frame after it arrives until `hand_frames` frames into its rest.
    hand_frames: int = 0

    def key(self) -> str:
        """A digest of the scene; the knobs added later count only when they are on, so
        footage cached before them keeps its name."""
        fields: dict[str, Any] = asdict(self)
        for name in LATER_KNOBS:
            if not fields[name]:
                del fields[name]
        if any(name in fields for name in LATER_KNOBS):
            fields["footage"] = FOOTAGE_VERSION
        return hashlib.sha1(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Passage:
    """The truth about one card in a clip: frame numbers start at 0."""

    card: str
    enter: int
    rest: int  # the first frame with the card at rest
    leave: int  # the first frame the card moves off again
    gone: int  # the first frame without the card


class Camera:
    """Films cards on the felt of `scene`: a fixed background, light and perspective."""

    def __init__(self, scene: Scene) -> None:
        self.scene = scene
        self.rng = np.random.default_rng(scene.seed)
        w, h = scene.width, scene.height
        felt: npt.NDArray[Any] = np.empty((h, w, 3), np.float32)
        felt[:] = scene.felt
        noise = self.rng.normal(0, 6, (h // 4 + 1, w // 4 + 1)).astype(np.float32)
        texture = cv2.resize(noise, (w, h), interpolation=cv2.INTER_LINEAR)
        self.background = felt + texture[:, :, None]
        gy, gx = np.mgrid[0:h, 0:w].astype(np.float32)
        cx, cy = self.rng.uniform(0.2, 0.8) * w, self.rng.uniform(0.2, 0.8) * h
        dist = np.hypot((gx - cx) / w, (gy - cy) / h) / np.hypot(0.8, 0.8)
        light = 1.0 - scene.unevenness * np.clip(dist, 0, 1) ** 1.5
        self.light = light[:, :, None].astype(np.float32)
        t = scene.tilt * w / 2
        src = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
        dst = np.array([[t, 0], [w - t, 0], [w, h], [0, h]], np.float32)
        self.perspective = cv2.getPerspectiveTransform(src, dst)
        #: The later knobs draw from their own generator, so footage made without them
        #: is the same as before they existed.
        self.extra = np.random.default_rng([scene.seed, 7])
        self.offset = np.zeros(2)

    def frame(
        self,
        card: Image | None,
        pose: tuple[float, float, float] = (0, 0, 0),
        speed: float = 0.0,
        hand: tuple[float, float, float] | None = None,
    ) -> Image:
        """One frame: `card` (BGRA) centred at pose (x, y, degrees) on the table plane,
        moving at `speed` pixels per frame (vertically, for the motion blur); `hand`
        (side -1 or 1, along -1 to 1, tone) lays a hand over that side of the card."""
        s = self.scene
        image: npt.NDArray[Any] = self.background.copy()
        if card is not None:
            ch, cw = card.shape[:2]
            scale = s.card_width / cw
            x, y, angle = pose
            rot = cv2.getRotationMatrix2D((cw / 2, ch / 2), angle, scale)
            rot[0, 2] += x - cw / 2
            rot[1, 2] += y - ch / 2
            place = self.perspective @ np.vstack([rot, [0, 0, 1]])
            layer = cv2.warpPerspective(
                card,
                place,
                (s.width, s.height),
                flags=cv2.INTER_AREA if scale < 0.7 else cv2.INTER_LINEAR,
            )
            alpha: npt.NDArray[Any] = layer[:, :, 3:4].astype(np.float32) / 255.0
            paint: npt.NDArray[Any] = layer[:, :, :3].astype(np.float32) * alpha
            if s.motion_blur and speed >= 2:  # the card smears along its path, not the felt
                length = min(int(speed * 0.6) | 1, 31)
                kernel = np.full((length, 1), 1.0 / length, np.float32)
                paint = cv2.filter2D(paint, -1, kernel)
                alpha = cv2.filter2D(alpha, -1, kernel)[:, :, None]
            image = image * (1 - alpha) + paint
            if hand is not None:
                image = self._hand(image, card.shape[1] * scale, pose, hand)
        image = image * self.light * float(self.rng.uniform(0.97, 1.03))
        if s.shake > 0:
            image = self._shaken(image)
        if s.focus_blur > 0:
            image = cv2.GaussianBlur(image, (0, 0), s.focus_blur)
        if s.noise > 0:
            image = image + self.rng.normal(0, s.noise, image.shape).astype(np.float32)
        out: Image = np.clip(image, 0, 255).astype(np.uint8)
        if s.jpeg_quality:
            _, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, s.jpeg_quality])
            out = np.asarray(cv2.imdecode(buf, cv2.IMREAD_COLOR))
        return out

    def _hand(
        self,
        image: Image,
        card_width: float,
        pose: tuple[float, float, float],
        hand: tuple[float, float, float],
    ) -> Image:
        """`image` with a hand over one long side of the card at `pose`, its arm reaching
        out of the picture on that side; skin (no card stock) of the given tone."""
        side, along, tone = hand
        x, y = pose[0], pose[1]
        point = self.perspective @ np.array([x, y, 1.0])
        cx, cy = point[0] / point[2], point[1] / point[2]
        hx = cx + side * card_width * 0.45
        hy = cy + along * card_width * 0.4
        mask = np.zeros(image.shape[:2], np.uint8)
        axes = (round(card_width * 0.3), round(card_width * 0.22))
        cv2.ellipse(mask, (round(hx), round(hy)), axes, 0, 0, 360, 255, -1)
        edge = 0 if side < 0 else image.shape[1]
        thick = round(card_width * 0.35)
        cv2.line(mask, (round(hx), round(hy)), (edge, round(hy + side * 20)), 255, thick)
        alpha = cv2.GaussianBlur(mask, (0, 0), 2).astype(np.float32)[:, :, None] / 255.0
        skin = np.array([100.0, 140.0, 200.0], np.float32) * tone
        out: Image = image * (1 - alpha) + skin * alpha
        return out

    def _shaken(self, image: Image) -> Image:
        """`image` moved by the camera's shake: each frame the picture moves by up to
        half to all of `shake` pixels from where it was, staying within two shakes of its
        place."""
        s = self.scene
        angle = self.extra.uniform(0, 2 * np.pi)
        step = self.extra.uniform(s.shake / 2, s.shake) * np.array([np.cos(angle), np.sin(angle)])
        if np.hypot(*(self.offset + step)) > 2 * s.shake:
            step = -step  # back towards its place
        self.offset = self.offset + step
        move = np.array([[1, 0, self.offset[0]], [0, 1, self.offset[1]]], np.float32)
        out: Image = cv2.warpAffine(
            image,
            move,
            (s.width, s.height),
            flags=cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_REFLECT,
        )
        return out

    def rest_pose(self) -> tuple[float, float, float]:
        s = self.scene
        return (
            s.width / 2 + self.rng.uniform(-s.jitter, s.jitter),
            s.height / 2 + self.rng.uniform(-s.jitter, s.jitter),
            self.rng.uniform(-s.turn, s.turn),
        )

    def still(self, card: Image) -> Image:
        """A photo of `card` at rest (a calibration reference, or a labelled test photo)."""
        return self.frame(card, self.rest_pose())


def film(
    scene: Scene, deck: dict[str, Image], cards: Sequence[str], write: Callable[[Image], None]
) -> list[Passage]:
    """Film `cards` one after another, handing each frame to `write`; the truth back."""
    camera = Camera(scene)
    s = scene
    passages: list[Passage] = []
    n = 0

    def emit(image: Image) -> None:
        nonlocal n
        write(image)
        n += 1

    for _ in range(s.lead_frames):
        emit(camera.frame(None))
    for code in cards:
        card = deck[code]
        x, y, angle = camera.rest_pose()
        card_h = s.card_width * card.shape[0] / card.shape[1]
        start_y, end_y = -card_h * 0.75, s.height + card_h * 0.75
        enter = n
        for i in range(1, s.slide_frames + 1):  # slides in from the shoe, slowing down
            t = i / s.slide_frames
            pos = start_y + (y - start_y) * (1 - (1 - t) ** 2)
            speed = 2 * (y - start_y) * (1 - t) / s.slide_frames
            emit(camera.frame(card, (x, pos, angle), speed))
        rest = n - 1 if s.slide_frames else n
        if not s.slide_frames:
            emit(camera.frame(card, (x, y, angle)))
        x, y = _rest(camera, card, (x, y, angle), emit)
        leave = n
        for i in range(1, s.slide_frames + 1):  # taken away, speeding up
            t = i / s.slide_frames
            pos = y + (end_y - y) * t**2
            speed = 2 * (end_y - y) * t / s.slide_frames
            emit(camera.frame(card, (x, pos, angle), speed))
        gone = n
        passages.append(Passage(code, enter, rest, leave, gone))
        for _ in range(s.gap_frames):
            emit(camera.frame(None))
    return passages


def _rest(
    camera: Camera,
    card: Image,
    pose: tuple[float, float, float],
    emit: Callable[[Image], None],
) -> tuple[float, float]:
    """The frames of a card at rest after the first (its last slide frame), with the
    scene's mishaps: a hand over it, a nudge halfway, or a slow slide instead of a rest.
    Where the card is at the end."""
    s = camera.scene
    x, y, angle = pose
    frames = s.rest_frames
    if s.rest_spread:
        frames += int(camera.extra.integers(0, s.rest_spread + 1))
    step = np.zeros(2)
    if s.drift:
        turn = camera.extra.uniform(0, 2 * np.pi)
        step = s.drift * np.array([np.cos(turn), np.sin(turn)])
    hand = None
    if s.hand_frames:
        side = -1.0 if camera.extra.uniform() < 0.5 else 1.0
        hand = (side, float(camera.extra.uniform(-1, 1)), float(camera.extra.uniform(0.8, 1.1)))
    push = np.zeros(2)
    if s.nudge:
        turn = camera.extra.uniform(0, 2 * np.pi)
        push = s.nudge * np.array([np.cos(turn), np.sin(turn)])
    halfway = frames // 2
    for i in range(frames - 1):
        if s.nudge and halfway <= i < halfway + 2:  # pushed over two frames
            x, y = x + push[0] / 2, y + push[1] / 2
        x, y = x + step[0], y + step[1]
        on = hand if i < s.hand_frames - 1 else None
        emit(camera.frame(card, (x, y, angle), float(np.hypot(*step)), on))
    return x, y


def make_clip(
    design: str,
    cards: Sequence[str],
    scene: Scene = Scene(),
    directory: Path | None = None,
    render_width: int = 0,
) -> tuple[Path, list[Passage]]:
    """A video file of `cards` of `design` (cached by content); its passages."""
    directory = directory or cache_dir()
    digest = hashlib.sha1(f"{design}|{','.join(cards)}|{scene.key()}|{render_width}".encode())
    path = directory / f"clip-{design}-{digest.hexdigest()[:12]}.avi"
    truth = path.with_suffix(".json")
    if path.exists() and truth.exists():
        rows = json.loads(truth.read_text())
        return path, [Passage(**row) for row in rows]
    deck = render_deck(design, render_width or _render_width(scene))
    tmp = path.with_suffix(f".{os.getpid()}.tmp.avi")
    writer = cv2.VideoWriter(
        str(tmp), cv2.VideoWriter.fourcc(*CLIP_FOURCC), scene.fps, (scene.width, scene.height)
    )
    if not writer.isOpened():
        raise SyntheticError(f"OpenCV cannot write {CLIP_FOURCC} video to {tmp}")
    try:
        passages = film(scene, deck, cards, writer.write)  # type: ignore[arg-type]
    finally:
        writer.release()
    tmp.replace(path)
    truth.write_text(json.dumps([asdict(p) for p in passages]))
    return path, passages


def _render_width(scene: Scene) -> int:
    """Render cards a little larger than they appear, as a camera's optics would."""
    return max(80, int(scene.card_width * 1.3))


def write_stills(
    design: str,
    directory: Path,
    scene: Scene = Scene(),
    cards: Sequence[str] = ALL_CARDS,
    suffix: str = "",
) -> Path:
    """One photo per card, named by card code (`AS.png`, or `AS{suffix}.png`): the
    reference photos of calibration, or a labelled set for `calibrate report`."""
    directory.mkdir(parents=True, exist_ok=True)
    deck = render_deck(design, _render_width(scene))
    camera = Camera(replace(scene, jpeg_quality=scene.jpeg_quality))
    for code in cards:
        cv2.imwrite(str(directory / f"{code}{suffix}.png"), camera.still(deck[code]))
    return directory


def shuffled(seed: int, count: int = 52) -> list[str]:
    """`count` cards in a seeded random order (whole decks, then part of one)."""
    rng = np.random.default_rng(seed)
    cards: list[str] = []
    while len(cards) < count:
        cards.extend(str(c) for c in rng.permutation(ALL_CARDS))
    return cards[:count]


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m calibration.synthetic DESIGN OUT.avi [N]`: a clip of N shuffled cards."""
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) not in (2, 3):
        print("usage: python -m calibration.synthetic DESIGN OUT.avi [CARDS]", file=sys.stderr)
        return 2
    count = int(args[2]) if len(args) == 3 else 52
    path, passages = make_clip(args[0], shuffled(1, count))
    out = Path(args[1])
    shutil.copyfile(path, out)
    rows: list[dict[str, Any]] = [asdict(p) for p in passages]
    out.with_suffix(".json").write_text(json.dumps(rows, indent=1))
    print(f"{out}: {len(passages)} cards of {args[0]}; truth in {out.with_suffix('.json')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
