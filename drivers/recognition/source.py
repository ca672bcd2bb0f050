"""Where frames come from: `cv2.VideoCapture` on a device index (`0`), a video file, an
image sequence (`frames/%04d.png`) or a stream URL (`rtsp://...`, `http://...`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import cv2

from drivers.config import parse_roi
from drivers.recognition import Image

__all__ = ["SourceError", "crop", "frame_rate", "frames", "kind", "open_source", "parse_roi"]


class SourceError(ValueError):
    """A source that cannot be opened; the message says what was tried."""


def kind(spec: str) -> str:
    """`device`, `stream`, `sequence` or `file`: how `spec` is opened (and whether its end
    is the end: a file or a sequence ends, a device or a stream that stops has failed)."""
    if spec.isdigit():
        return "device"
    if "://" in spec:
        return "stream"
    if "%" in spec:
        return "sequence"
    return "file"


def open_source(spec: str) -> cv2.VideoCapture:
    """An opened capture for `spec` (see `kind`); SourceError if it cannot be opened."""
    how = kind(spec)
    if how == "file" and not Path(spec).is_file():
        raise SourceError(
            f"no video file {spec} (give a file, a device index such as 0, an "
            "image pattern such as frames/%04d.png, or a stream URL)"
        )
    if how == "device":
        capture = cv2.VideoCapture(int(spec))
    elif how == "sequence":
        capture = cv2.VideoCapture(spec, cv2.CAP_IMAGES)
    else:
        capture = cv2.VideoCapture(spec)
    if not capture.isOpened():
        capture.release()
        raise SourceError(f"OpenCV cannot open the {how} {spec}")
    return capture


def frame_rate(capture: cv2.VideoCapture) -> float:
    """The frames per second the source reports (0 when it does not say)."""
    fps = float(capture.get(cv2.CAP_PROP_FPS))
    return fps if 0 < fps < 1000 else 0.0


def frames(capture: cv2.VideoCapture) -> Iterator[Image]:
    """Frames until the source ends or fails."""
    while True:
        ok, frame = capture.read()
        if not ok or frame is None:
            return
        yield frame


def crop(frame: Image, roi: tuple[int, int, int, int] | None) -> Image:
    """The region of interest of `frame` (a view, no copy); SourceError if it is outside."""
    if roi is None:
        return frame
    x, y, w, h = roi
    fh, fw = frame.shape[:2]
    if x + w > fw or y + h > fh:
        raise SourceError(
            f"the region of interest {list(roi)} does not fit in a {fw}x{fh} "
            "frame; check `roi` with `station calibrate clip`"
        )
    return frame[y : y + h, x : x + w]
