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

import threading
import time
from typing import Any

from drivers.base import ReaderSink
from drivers.config import RECOGNISERS, CameraSettings, ReaderConfig
from drivers.recognition import Recogniser
from drivers.recognition.scanner import Scanner, event
from drivers.recognition.source import SourceError, frame_rate, kind, open_source
from drivers.reconnect import DeviceError, ReconnectingReader
from station.shared.sections import ConfigError

__all__ = ["RECOGNISERS", "CameraReader", "CameraSettings", "make_recogniser"]


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


class CameraReader(ReconnectingReader[Any]):
    """The `camera` driver; see the module docstring. The reconnect loop is
    `ReconnectingReader`'s; this is the camera's own code."""

    name = "camera"
    reopening = "reopening"

    def __init__(self, config: ReaderConfig, settings: CameraSettings | None = None) -> None:
        self.config = config
        settings = settings if settings is not None else config.camera
        if settings is None:
            raise ConfigError(
                "[reader.camera]: required: the camera driver reads its "
                "settings there (see config/example.toml)"
            )
        self.settings = settings
        self.recogniser = make_recogniser(self.settings, config.codec)
        super().__init__(config.reconnect_min, config.reconnect_max)
        self._scanner: Scanner | None = None
        self.frames = 0
        self.passages = 0
        self.unreadable = 0
        self.fps = 0.0

    def status(self) -> dict[str, Any]:
        s = self.settings
        return {
            "driver": self.name,
            **self._link_status(),
            "source": s.source,
            "recogniser": s.recogniser,
            "frames": self.frames,
            "passages": self.passages,
            "unreadable": self.unreadable,
            "fps": round(self.fps, 1),
        }

    def send(self, data: bytes) -> bool:
        """A camera has no card stop to write to."""
        return False

    def run(self, sink: ReaderSink, stop: threading.Event) -> None:
        """Read until `stop`; one scanner for the whole run, so a card half-seen when the
        camera dropped out is still one card when it comes back."""
        self._scanner = Scanner(self.recogniser, self.settings.passage, self.settings.roi)
        super().run(sink, stop)

    def _open(self) -> Any:
        try:
            return open_source(self.settings.source)
        except SourceError as exc:
            raise DeviceError(str(exc)) from exc

    def _close(self, device: Any) -> None:
        device.release()

    def _device_name(self) -> str:
        return f"camera {self.settings.source}"

    def _identity(self) -> dict[str, Any]:
        return {"camera": self.settings.source}

    def _describe(self) -> str:
        return f"{self.settings.recogniser}, roi {self.settings.roi or 'whole frame'}"

    def _read(self, capture: Any, sink: ReaderSink, stop: threading.Event) -> str | None:
        """Frames until `stop` or the end of a video (None), or until the camera fails (a
        reason). A video file or an image sequence that ends has ended: it is never
        replayed, which would deal its cards twice."""
        scanner = self._scanner
        assert scanner is not None, "run() makes the scanner"
        ends = kind(self.settings.source) in ("file", "sequence")
        fps = frame_rate(capture)
        scanner.pace(fps)  # the rest a card needs is in seconds, whatever the camera's rate
        pace = 0.0
        if self.settings.realtime:
            pace = 1.0 / fps if fps > 0 else 0.0
        started, count = time.monotonic(), 0
        next_at = started
        while not stop.is_set():
            ok, frame = capture.read()
            if not ok or frame is None:
                if not ends:
                    return "stopped delivering frames"
                self._detail = f"{self.settings.source} ended after {self.frames} frames"
                sink.notice(
                    f"the video {self.settings.source} ended after {self.frames} "
                    f"frames ({self.passages} cards)",
                    frames=self.frames,
                )
                return None
            try:
                passage = scanner.feed(frame, self.frames)
            except SourceError as exc:
                self._fault(sink, str(exc))
                self._detail = str(exc)
                return None
            self._working(sink)
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
