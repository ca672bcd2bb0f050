"""`station calibrate camera|report|clip` and `station scan`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from calibration.synthetic import make_clip, shuffled
from drivers.recognition.ranksuit import RankSuitModel
from station.cli import main
from tests.camera.kit import TEST_SCENE, labelled, model_file, references


def test_calibrate_camera_builds_a_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "paris.npz"
    assert main(["calibrate", "camera", "--reference", str(references("paris")),
                 "--out", str(out), "--min-confidence", "0.6"]) == 0
    assert "52 cards" in capsys.readouterr().out
    model = RankSuitModel.load(out)
    assert model.min_confidence == 0.6 and len(model.cards) == 52


def test_calibrate_camera_refuses_an_incomplete_reference_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    refs = tmp_path / "refs"
    shutil.copytree(references("anglo"), refs)
    (refs / "7H.png").unlink()
    (refs / "notes.txt").write_text("the 7H is lost")
    assert main(["calibrate", "camera", "--reference", str(refs), "--out",
                 str(tmp_path / "m.npz")]) == 2  # fmt: skip
    assert "no reference photo for 1 card(s): 7H" in capsys.readouterr().err
    shutil.copy(refs / "AS.png", refs / "joker.png")
    assert main(["calibrate", "camera", "--reference", str(refs), "--out",
                 str(tmp_path / "m.npz")]) == 2  # fmt: skip
    assert "'joker' is not a card code" in capsys.readouterr().err
    assert not (tmp_path / "m.npz").exists()


def test_calibrate_report_prints_accuracy_and_confusion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = str(model_file("tango"))
    assert main(["calibrate", "report", "--model", model, "--labelled",
                 str(labelled("tango"))]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "52 photos: 52 right (100.0%), 0 unreadable, 0 wrong" in out
    assert "confusion by rank" in out and "confusion by suit" in out
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    shutil.copy(labelled("tango") / "QH.png", mixed / "QH.png")
    shutil.copy(labelled("tango") / "QH.png", mixed / "KD-mislabelled.png")
    assert main(["calibrate", "report", "--model", model, "--labelled", str(mixed)]) == 1
    out = capsys.readouterr().out
    assert "2 photos: 1 right (50.0%)" in out
    assert "WRONG KD-mislabelled.png: KD read as QH" in out


def test_calibrate_clip_finds_the_region_and_the_level(capsys: pytest.CaptureFixture[str]) -> None:
    clip, truth = make_clip("anglo", shuffled(21, 6), TEST_SCENE)
    assert main(["calibrate", "clip", "--source", str(clip)]) == 0
    out = capsys.readouterr().out
    assert f"{len(truth)} card passages" in out
    roi_line = next(line for line in out.splitlines() if line.startswith("roi = "))
    x, y, w, h = json.loads(roi_line.split("=")[1].split("(")[0])
    centre = (TEST_SCENE.width / 2, TEST_SCENE.height / 2)
    assert x < centre[0] < x + w and y < centre[1] < y + h
    assert w < TEST_SCENE.width and h <= TEST_SCENE.height
    level = int(next(line for line in out.splitlines() if line.startswith("level")).split()[2])
    assert 60 < level < 220


def test_calibrate_clip_saves_what_the_camera_sees(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import cv2

    clip, _ = make_clip("anglo", shuffled(21, 6), TEST_SCENE)
    shot = tmp_path / "view.png"
    assert main(["calibrate", "clip", "--source", str(clip), "--snapshot", str(shot),
                 "--model", str(model_file("anglo"))]) == 0  # fmt: skip
    assert f"snapshot: {shot}" in capsys.readouterr().out
    image = cv2.imread(str(shot))
    assert image is not None and image.shape[0] == TEST_SCENE.height
    assert image.shape[1] > TEST_SCENE.width  # the frame, and the straightened card beside it


def test_scan_prints_one_json_line_per_card(capsys: pytest.CaptureFixture[str]) -> None:
    cards = shuffled(22, 6)
    clip, truth = make_clip("paris", cards, TEST_SCENE)
    assert main(["scan", "--source", str(clip), "--model", str(model_file("paris"))]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["card"] for r in rows] == cards
    assert all(set(r) == {"card", "frame", "confidence"} for r in rows)
    assert all(t.rest <= r["frame"] < t.leave for r, t in zip(rows, truth, strict=True))


def test_scan_with_a_region_of_interest(capsys: pytest.CaptureFixture[str]) -> None:
    cards = shuffled(23, 3)
    clip, _ = make_clip("anglo", cards, TEST_SCENE)
    assert main(["scan", "--source", str(clip), "--model", str(model_file("anglo")),
                 "--roi", "90,20,300,320"]) == 0  # fmt: skip
    assert [json.loads(x)["card"] for x in capsys.readouterr().out.splitlines()] == cards


@pytest.mark.parametrize(("args", "message"), [
    (["--source", "x.avi"], "give --model MODEL (rank-suit) or --barcode CODEC"),
    (["--source", "/nonexistent.avi", "--barcode", "text"], "no video file /nonexistent.avi"),
    (["--source", "x.avi", "--barcode", "morse"], "morse"),
    (["--source", "x.avi", "--model", "/none.npz"], "no model file /none.npz"),
    (["--source", "x.avi", "--barcode", "text", "--roi", "1,2"], "--roi: expected"),
])
def test_scan_refuses_bad_arguments(args: list[str], message: str,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan", *args]) == 2
    assert message in capsys.readouterr().err
