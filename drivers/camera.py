"""The camera reader: cards read from pictures, one event per physical card.

Frames come from OpenCV (`[reader.camera] source`: a device index, a video file, an
image sequence or a stream URL), are cut to the region of interest, and go through the
card-passage detector (`drivers.recognition.passage`) with one of two recognisers:
`rank-suit` (templates of the table's own deck, made by `station calibrate camera`) or
`barcode` (pyzbar, decoded by the `[reader] codec`, as the serial reader does). Each
passage is a `card` event with the extra keys `frame` and `confidence`.

A camera that cannot be opened or stops delivering frames is a `fault`, then the reader
reopens it with the `[reader] reconnect_min/max` backoff. A video file or an image
sequence that ends has simply ended: it is said in the journal and never replayed
(replaying would deal its cards twice).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from drivers.base import ReaderSink
from drivers.config import ConfigError, ReaderConfig
from drivers.recognition import Recogniser
from drivers.recognition.passage import PassageSettings
from drivers.recognition.scanner import Scanner, event
from drivers.recognition.source import SourceError, kind, open_source, parse_roi

RECOGNISERS = ("rank-suit", "barcode")
_PASSAGE_KEYS = {f.name: f for f in dataclasses.fields(PassageSettings)}


@dataclass(frozen=True)
class CameraSettings:
    """`[reader.camera]`: where the frames come from and how cards are read."""

    source: str
    recogniser: str = "rank-suit"
    model: str = ""
    roi: tuple[int, int, int, int] | None = None
    #: Overrides the model's own threshold (rank-suit only).
    min_confidence: float | None = None
    #: Play a video file at its own frame rate (as a camera would) instead of at once.
    realtime: bool = False
    passage: PassageSettings = dataclasses.field(default_factory=PassageSettings)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> CameraSettings:
        own = {"source", "recogniser", "model", "roi", "min_confidence", "realtime"}
        allowed = ", ".join([*sorted(own), *_PASSAGE_KEYS])
        kwargs: dict[str, Any] = {}
        passage: dict[str, Any] = {}
        for key, value in values.items():
            where = f"[reader.camera] {key}"
            if key in _PASSAGE_KEYS:
                default = _PASSAGE_KEYS[key].default
                if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                    raise ConfigError(f"{where}: expected a number of at least 0, got {value!r}")
                if isinstance(default, int) and not isinstance(value, int):
                    raise ConfigError(f"{where}: expected a whole number, got {value!r}")
                passage[key] = value
            elif key == "roi":
                try:
                    kwargs[key] = parse_roi(value, where)
                except SourceError as exc:
                    raise ConfigError(str(exc)) from None
            elif key == "realtime":
                if not isinstance(value, bool):
                    raise ConfigError(f"{where}: expected true or false, got {value!r}")
                kwargs[key] = value
            elif key == "min_confidence":
                if (
                    isinstance(value, bool)
                    or not isinstance(value, int | float)
                    or not (0 <= value <= 1)
                ):
                    raise ConfigError(f"{where}: expected a number from 0 to 1, got {value!r}")
                kwargs[key] = float(value)
            elif key in own:
                if isinstance(value, int) and not isinstance(value, bool) and key == "source":
                    value = str(value)  # source = 0: the first camera
                if not isinstance(value, str):
                    raise ConfigError(f"{where}: expected a string, got {value!r}")
                kwargs[key] = value
            else:
                raise ConfigError(f"{where}: unknown key; the keys are {allowed}")
        if not kwargs.get("source"):
            raise ConfigError("[reader.camera] source: required: a device index (0), a video "
                              "file, an image pattern (frames/%04d.png) or a stream URL")
        settings = cls(**kwargs, passage=PassageSettings(**passage))
        if settings.recogniser not in RECOGNISERS:
            raise ConfigError(f"[reader.camera] recogniser: {settings.recogniser!r} is not "
                              f"allowed; choose one of {', '.join(RECOGNISERS)}")
        if settings.recogniser == "rank-suit" and not settings.model:
            raise ConfigError("[reader.camera] model: required for the rank-suit recogniser; "
                              "make one with `station calibrate camera --reference DIR --out "
                              "MODEL`")  # fmt: skip
        return settings


def make_recogniser(settings: CameraSettings, codec: str) -> Recogniser:
    """The recogniser `settings` names (raises ConfigError for a bad model)."""
    if settings.recogniser == "barcode":
        from drivers.codecs import make_codec
        from drivers.recognition.barcode import BarcodeRecogniser

        return BarcodeRecogniser(make_codec(codec))
    from drivers.recognition.ranksuit import ModelError, RankSuitModel

    try:
        model = RankSuitModel.load(settings.model)
    except ModelError as exc:
        raise ConfigError(f"[reader.camera] model: {exc}") from None
    return model.with_threshold(settings.min_confidence)


class CameraReader:
    """The `camera` driver; see the module docstring."""

    name = "camera"

    def __init__(self, config: ReaderConfig, settings: CameraSettings | None = None) -> None:
        self.config = config
        self.settings = settings or CameraSettings.from_mapping(config.options.get("camera", {}))
        self.recogniser = make_recogniser(self.settings, config.codec)
        self._connected = False
        self._detail = "not started"
        self.frames = 0
        self.passages = 0
        self.unreadable = 0
        self.faults = 0
        self.fps = 0.0

    def status(self) -> dict[str, Any]:
        s = self.settings
        return {"driver": self.name, "connected": self._connected, "detail": self._detail,
                "source": s.source, "recogniser": s.recogniser, "frames": self.frames,
                "passages": self.passages, "unreadable": self.unreadable,
                "faults": self.faults, "fps": round(self.fps, 1)}  # fmt: skip

    def send(self, data: bytes) -> bool:
        """A camera has no card stop to write to."""
        return False

    def run(self, sink: ReaderSink, stop: threading.Event) -> None:
        s = self.settings
        ends = kind(s.source) in ("file", "sequence")
        delay = self.config.reconnect_min
        down = False
        scanner = Scanner(self.recogniser, s.passage, s.roi)
        while not stop.is_set():
            try:
                capture = open_source(s.source)
            except SourceError as exc:
                if not down:
                    down = True
                    self._fault(sink, f"cannot open the camera: {exc}")
                self._detail = f"{exc}; retrying in {delay:g} s"
                sink.notice(f"camera {s.source} not open; retrying in {delay:g} s",
                            camera=s.source, error=str(exc), retry_in=delay)  # fmt: skip
                stop.wait(delay)
                delay = min(delay * 2, self.config.reconnect_max)
                continue
            self._connected = True
            self._detail = f"reading {s.source} ({s.recogniser})"
            sink.notice(f"camera {s.source} open ({s.recogniser}, roi {s.roi or 'whole frame'})",
                        camera=s.source, recogniser=s.recogniser)  # fmt: skip
            before = self.frames
            try:
                error = self._read(capture, scanner, sink, stop)
            finally:
                capture.release()
                self._connected = False
            if error is None:
                break
            if ends:
                self._detail = f"{s.source} ended after {self.frames} frames"
                sink.notice(f"the video {s.source} ended after {self.frames} frames "
                            f"({self.passages} cards)", frames=self.frames)  # fmt: skip
                stop.wait()
                break
            if self.frames > before:  # it was working: this is a new outage
                delay, down = self.config.reconnect_min, False
            if not down:  # one fault per outage, however often it opens and fails again
                down = True
                self._fault(sink, f"the camera {s.source} stopped delivering frames")
            sink.notice(f"reopening camera {s.source} in {delay:g} s", retry_in=delay)
            stop.wait(delay)
            delay = min(delay * 2, self.config.reconnect_max)
        self._detail = "stopped" if not self._detail.endswith("frames") else self._detail

    def _read(self, capture: Any, scanner: Scanner, sink: ReaderSink,
              stop: threading.Event) -> str | None:
        """Frames until `stop` (None) or the source ends or fails (a reason)."""
        pace = 0.0
        if self.settings.realtime:
            fps = float(capture.get(5))  # cv2.CAP_PROP_FPS
            pace = 1.0 / fps if fps > 0 else 0.0
        started, count = time.monotonic(), 0
        next_at = started
        while not stop.is_set():
            ok, frame = capture.read()
            if not ok or frame is None:
                return "no frame"
            try:
                passage = scanner.feed(frame, self.frames)
            except SourceError as exc:
                self._fault(sink, str(exc))
                stop.wait()
                return None
            self.frames += 1
            count += 1
            if passage is not None:
                self.passages += 1
                if passage.reading.card is None:
                    self.unreadable += 1
                sink.event(event(passage))
            now = time.monotonic()
            if now > started:
                self.fps = count / (now - started)
            if pace:
                next_at += pace
                if next_at > now:
                    stop.wait(next_at - now)
        return None

    def _fault(self, sink: ReaderSink, detail: str) -> None:
        self.faults += 1
        sink.event({"type": "fault", "detail": detail, "actor": "reader"})
