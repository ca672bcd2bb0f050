"""The `camera` driver: config, events with `frame` and `confidence`, the end of a clip,
a camera that cannot be opened."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import cv2
import pytest

from calibration.synthetic import film, make_clip, shuffled
from drivers import create_reader
from drivers.camera import CameraReader
from drivers.codecs import make_codec
from drivers.config import from_mapping
from station.shared.sections import ConfigError
from tests.camera.kit import TEST_SCENE, model_file, needs_designs
from tests.camera.printing import coded_deck


class Sink:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.notices: list[tuple[str, dict[str, Any]]] = []

    def event(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    def notice(self, message: str, /, **details: Any) -> None:
        self.notices.append((message, details))


def drive(reader: Any, until: str, timeout: float = 60.0) -> Sink:
    """Run `reader` in a thread until a notice containing `until`, then stop it."""
    sink, stop = Sink(), threading.Event()
    thread = threading.Thread(target=reader.run, args=(sink, stop), daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not any(until in m for m, _ in sink.notices):
        assert time.monotonic() < deadline, sink.notices
        time.sleep(0.02)
    stop.set()
    thread.join(10)
    assert not thread.is_alive()
    return sink


def camera(**settings: Any) -> dict[str, Any]:
    return {"driver": "camera", "camera": settings}


def test_a_clip_is_read_card_by_card(tmp_path: Path) -> None:
    needs_designs()
    cards = shuffled(11, 8)
    clip, truth = make_clip("simplistic", cards, TEST_SCENE)
    reader = create_reader(
        from_mapping(camera(source=str(clip), model=str(model_file("simplistic"))))
    )
    assert isinstance(reader, CameraReader)
    sink = drive(reader, "ended")
    assert [e["card"] for e in sink.events] == cards
    assert all(e["type"] == "card" and 0 < e["confidence"] <= 1 for e in sink.events)
    assert [t.rest <= e["frame"] < t.leave for e, t in zip(sink.events, truth, strict=True)] == [
        True
    ] * 8
    status = reader.status()
    assert status["driver"] == "camera" and status["passages"] == 8
    assert status["frames"] == truth[-1].gone + TEST_SCENE.gap_frames
    assert "ended after" in status["detail"] and not status["connected"]
    assert reader.send(b"\x13") is False  # a camera has no card stop


@pytest.mark.slow
def test_barcodes_go_through_the_reader_codec(tmp_path: Path) -> None:
    needs_designs()
    codec = make_codec("suit-rank-4")
    cards = shuffled(12, 5)
    path = tmp_path / "coded.avi"
    writer = cv2.VideoWriter(
        str(path),
        cv2.VideoWriter.fourcc(*"MJPG"),
        TEST_SCENE.fps,
        (TEST_SCENE.width, TEST_SCENE.height),
    )
    film(TEST_SCENE, coded_deck("anglo", codec, 195), cards, writer.write)  # type: ignore[arg-type]
    writer.release()
    config = from_mapping(
        {
            "driver": "camera",
            "codec": "suit-rank-4",
            "camera": {"source": str(path), "recogniser": "barcode"},
        }
    )
    sink = drive(create_reader(config), "ended")
    assert [e["card"] for e in sink.events] == cards
    assert [e["raw"] for e in sink.events] == [codec.encode(c) for c in cards]


def test_an_image_sequence_is_a_source(tmp_path: Path) -> None:
    needs_designs()
    cards = shuffled(13, 3)
    clip, _ = make_clip("anglo", cards, TEST_SCENE)
    capture = cv2.VideoCapture(str(clip))
    n = 0
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        cv2.imwrite(str(tmp_path / f"f{n:04d}.png"), frame)
        n += 1
    reader = create_reader(
        from_mapping(camera(source=str(tmp_path / "f%04d.png"), model=str(model_file("anglo"))))
    )
    assert [e["card"] for e in drive(reader, "ended").events] == cards


def test_a_camera_that_cannot_be_opened_is_a_fault_then_retried(tmp_path: Path) -> None:
    needs_designs()
    config = from_mapping(
        {
            "driver": "camera",
            "reconnect_min": 0.05,
            "camera": {"source": "rtsp://127.0.0.1:9/none", "model": str(model_file("anglo"))},
        }
    )
    sink = drive(create_reader(config), "retrying in 0.1 s")
    assert len(sink.events) == 1  # one fault, however many retries
    fault = sink.events[0]
    assert fault["type"] == "fault" and "cannot open the camera" in fault["detail"]


class _Blind:
    """A camera that opens but never delivers a frame."""

    def get(self, prop: int) -> float:
        return 0.0

    def read(self) -> tuple[bool, None]:
        return False, None

    def release(self) -> None:
        pass


def test_a_camera_that_opens_but_sends_no_frames_is_one_fault_with_backoff(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("drivers.camera.open_source", lambda source: _Blind())
    config = from_mapping(
        {
            "driver": "camera",
            "reconnect_min": 0.01,
            "reconnect_max": 0.04,
            "camera": {"source": "0", "recogniser": "barcode"},
        }
    )
    sink = drive(create_reader(config), "reopening camera 0 in 0.04 s")
    assert [e["type"] for e in sink.events] == ["fault"]  # one fault, however many reopens
    assert "stopped delivering frames" in sink.events[0]["detail"]
    waits = [d["retry_in"] for m, d in sink.notices if m.startswith("reopening")]
    assert waits[:3] == [0.01, 0.02, 0.04]


def test_a_region_of_interest_outside_the_frame_is_a_fault() -> None:
    needs_designs()
    clip, _ = make_clip("anglo", shuffled(1, 1), TEST_SCENE)
    config = from_mapping(
        camera(source=str(clip), model=str(model_file("anglo")), roi=[400, 0, 200, 200])
    )
    reader = create_reader(config)
    sink, stop = Sink(), threading.Event()
    thread = threading.Thread(target=reader.run, args=(sink, stop), daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not sink.events:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    stop.set()
    thread.join(10)
    assert sink.events[0]["type"] == "fault"
    assert "does not fit in a 480x360 frame" in sink.events[0]["detail"]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"model": "m.npz"}, r"\[reader.camera\] source: required"),
        ({"source": "x.avi"}, r"\[reader.camera\] model: required for the rank-suit"),
        (
            {"source": "x.avi", "recogniser": "ocr"},
            r"'ocr' is not allowed; choose one of rank-suit",
        ),
        ({"source": "x.avi", "zoom": 2}, r"\[reader.camera\] zoom: unknown key"),
        ({"source": "x.avi", "roi": [1, 2, 3]}, r"roi: expected \[x, y, width, height\]"),
        ({"source": "x.avi", "gone_frames": 1.5}, "gone_frames: expected a whole number"),
        ({"source": "x.avi", "stable_frames": 1}, "stable_frames: .* write rest_time = 0.03"),
        ({"source": "x.avi", "rest_time": -1}, "rest_time: expected a number from 0 to 10"),
        ({"source": "x.avi", "rest_pixels": "3"}, "rest_pixels: expected a number"),
        ({"source": "x.avi", "presence": -1}, "presence: expected a number from 0 to 1, got -1"),
        ({"source": "x.avi", "level": True}, "level: expected a whole number, got True"),
        ({"source": 3.5}, r"source: expected a string, got 3.5"),
        ({"source": "x.avi", "min_confidence": 5}, "min_confidence: expected a number from 0 to 1"),
        ({"source": "x.avi", "model": "/nonexistent.npz"}, r"model: no model file /nonexistent"),
    ],
)
def test_settings_are_checked(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        create_reader(from_mapping(camera(**settings)))


def test_the_example_config_shows_every_camera_key() -> None:
    """The commented [reader.camera] block of config/example.toml, uncommented, is valid
    and names every setting with its default."""
    import tomllib

    from drivers.camera import CameraSettings
    from drivers.recognition.passage import PassageSettings

    text = (Path(__file__).resolve().parents[2] / "config" / "example.toml").read_text()
    block = text.split("# [reader.camera]\n", 1)[1].split("\n\n", 1)[0]
    lines = [line[2:] for line in block.splitlines() if not line.startswith("# #")]
    values = tomllib.loads("\n".join(lines))
    settings = CameraSettings.model_validate(values)
    assert settings.passage == PassageSettings()
    assert set(values) == set(CameraSettings.model_fields)  # the passage keys among them
