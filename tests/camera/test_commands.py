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


@pytest.mark.slow
def test_calibrate_camera_builds_a_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "paris.npz"
    assert (
        main(
            [
                "calibrate",
                "camera",
                "--reference",
                str(references("paris")),
                "--out",
                str(out),
                "--min-confidence",
                "0.6",
            ]
        )
        == 0
    )
    assert "52 cards" in capsys.readouterr().out
    model = RankSuitModel.load(out)
    assert model.min_confidence == 0.6 and len(model.cards) == 52
    nowhere = tmp_path / "no-such-dir" / "m.npz"
    assert (
        main(
            ["calibrate", "camera", "--reference", str(references("paris")), "--out", str(nowhere)]
        )
        == 2
    )
    assert f"cannot write {nowhere}: No such file or directory" in capsys.readouterr().err


def test_calibrate_camera_refuses_an_incomplete_reference_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    refs = tmp_path / "refs"
    shutil.copytree(references("anglo"), refs)
    (refs / "7H.png").unlink()
    (refs / "notes.txt").write_text("the 7H is lost")
    assert (
        main(["calibrate", "camera", "--reference", str(refs), "--out", str(tmp_path / "m.npz")])
        == 2
    )
    assert "no reference photo for 1 card(s): 7H" in capsys.readouterr().err
    shutil.copy(refs / "AS.png", refs / "joker.png")
    assert (
        main(["calibrate", "camera", "--reference", str(refs), "--out", str(tmp_path / "m.npz")])
        == 2
    )
    assert "'joker' is not a card code" in capsys.readouterr().err
    assert not (tmp_path / "m.npz").exists()


def test_calibrate_report_prints_accuracy_and_confusion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = str(model_file("tango"))
    assert (
        main(["calibrate", "report", "--model", model, "--labelled", str(labelled("tango"))]) == 0
    )
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
    assert (
        main(
            [
                "calibrate",
                "clip",
                "--source",
                str(clip),
                "--snapshot",
                str(shot),
                "--model",
                str(model_file("anglo")),
            ]
        )
        == 0
    )
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
    assert (
        main(
            [
                "scan",
                "--source",
                str(clip),
                "--model",
                str(model_file("anglo")),
                "--roi",
                "90,20,300,320",
            ]
        )
        == 0
    )
    assert [json.loads(x)["card"] for x in capsys.readouterr().out.splitlines()] == cards


class _Closed:
    """A stdout whose reader has gone (`| head`) or whose user pressed Ctrl-C."""

    def __init__(self, error: type[BaseException], fd: int) -> None:
        self.error, self.fd = error, fd
        self.buffer = self

    def write(self, data: bytes) -> int:
        raise self.error

    def flush(self) -> None:
        pass

    def fileno(self) -> int:
        return self.fd


@pytest.mark.parametrize(("error", "status"), [(BrokenPipeError, 0), (KeyboardInterrupt, 130)])
def test_scan_stops_quietly_when_its_output_goes_or_on_ctrl_c(
    error: type[BaseException],
    status: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    clip, _ = make_clip("anglo", shuffled(23, 3), TEST_SCENE)
    with open(tmp_path / "stdout", "wb") as sink:
        monkeypatch.setattr("sys.stdout", _Closed(error, sink.fileno()))
        assert main(["scan", "--source", str(clip), "--model", str(model_file("anglo"))]) == status
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--source", "x.avi"], "give --model MODEL (rank-suit) or --barcode CODEC"),
        (["--source", "/nonexistent.avi", "--barcode", "text"], "no video file /nonexistent.avi"),
        (["--source", "x.avi", "--barcode", "morse"], "morse"),
        (["--source", "x.avi", "--model", "/none.npz"], "no model file /none.npz"),
        (["--source", "x.avi", "--barcode", "text", "--roi", "1,2"], "--roi: expected"),
    ],
)
def test_scan_refuses_bad_arguments(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scan", *args]) == 2
    assert message in capsys.readouterr().err


def station_toml(tmp_path: Path, reader: str = 'driver = "camera"', **camera: object) -> Path:
    """A station config whose `[reader.camera]` holds `camera` (no table if empty)."""
    lines = ["[reader]", reader]
    if camera:
        lines.append("[reader.camera]")
        lines += [f"{key} = {json.dumps(value)}" for key, value in camera.items()]
    path = tmp_path / "station.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_scan_takes_the_camera_from_the_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cards = shuffled(24, 4)
    clip, _ = make_clip("anglo", cards, TEST_SCENE)
    model = str(model_file("anglo"))
    assert (
        main(
            [
                "scan",
                "--source",
                str(clip),
                "--model",
                model,
                "--roi",
                "90,20,300,320",
                "--level",
                "110",
            ]
        )
        == 0
    )
    explicit = capsys.readouterr().out
    config = station_toml(
        tmp_path, source=str(clip), model=model, roi=[90, 20, 300, 320], level=110
    )
    assert main(["scan", "--config", str(config)]) == 0
    assert capsys.readouterr().out == explicit
    assert [json.loads(x)["card"] for x in explicit.splitlines()] == cards


def test_scan_flags_win_over_the_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cards = shuffled(25, 3)
    clip, _ = make_clip("anglo", cards, TEST_SCENE)
    config = station_toml(
        tmp_path, source="/nonexistent.avi", model="/none.npz", min_confidence=0.999
    )
    assert main(["scan", "--config", str(config)]) == 2
    assert "no model file /none.npz" in capsys.readouterr().err
    assert main(["scan", "--config", str(config), "--model", str(model_file("anglo"))]) == 2
    assert "no video file /nonexistent.avi" in capsys.readouterr().err
    argv = [
        "scan",
        "--config",
        str(config),
        "--model",
        str(model_file("anglo")),
        "--source",
        str(clip),
    ]
    assert main(argv) == 0  # the config's min_confidence 0.999: cards are unreadable
    assert None in [json.loads(x)["card"] for x in capsys.readouterr().out.splitlines()]
    assert main([*argv, "--min-confidence", "0.5"]) == 0
    assert [json.loads(x)["card"] for x in capsys.readouterr().out.splitlines()] == cards


def test_scan_takes_the_codec_of_a_barcode_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from station.commands.scan import configured_camera

    config = station_toml(
        tmp_path,
        'driver = "camera"\ncodec = "index52"',
        source="/nonexistent.avi",
        recogniser="barcode",
    )
    configured = configured_camera(config)
    assert configured is not None
    assert configured[0].recogniser == "barcode" and configured[1] == "index52"
    assert configured_camera(None) is None
    assert main(["scan", "--config", str(config)]) == 2  # no --model or --barcode needed
    assert "no video file /nonexistent.avi" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("config", "args", "message"),
    [
        (
            None,
            ["--model", "m.npz"],
            "give --source SRC, or --config FILE with [reader.camera] source",
        ),
        (None, ["--source", "x.avi", "--model", "m.npz", "--barcode", "text"], "not both"),
        ("missing", [], "cannot read the config {dir}/missing.toml"),
        ('[reader]\ndriver = "sim"\n', [], "{dir}/station.toml: [reader.camera]: no such table"),
        ("[table]\ndecks = 8\n", [], "{dir}/station.toml: [reader.camera]: no such table"),
        (
            '[reader]\ndriver = "camera"\n[reader.camera]\nmodel = "m.npz"\n',
            ["--source", "x.avi"],
            "{dir}/station.toml: [reader.camera] source: required",
        ),
        (
            '[reader]\ndriver = "camera"\n[reader.camera]\nsource = "x.avi"\nroi = [1, 2]\n',
            [],
            "{dir}/station.toml: [reader.camera] roi: expected [x, y, width, height]",
        ),
        (
            '[reader]\ndriver = "camera"\n[reader.camera]\nsource = "x.avi"\n',
            [],
            "{dir}/station.toml: [reader.camera] model: required for the rank-suit recogniser",
        ),
        (
            '[reader]\ncodec = "morse"\n[reader.camera]\nsource = "x.avi"\n',
            [],
            "{dir}/station.toml: [reader] codec",
        ),
    ],
)
def test_scan_refuses_a_config_it_cannot_use(
    config: str | None,
    args: list[str],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if config == "missing":
        args = ["--config", str(tmp_path / "missing.toml"), *args]
    elif config is not None:
        (tmp_path / "station.toml").write_text(config)
        args = ["--config", str(tmp_path / "station.toml"), *args]
    assert main(["scan", *args]) == 2
    assert message.format(dir=tmp_path) in capsys.readouterr().err


@pytest.mark.slow
def test_calibrate_report_takes_the_model_from_the_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = station_toml(tmp_path, source="0", model=str(model_file("tango")), min_confidence=0.99)
    assert (
        main(
            [
                "calibrate",
                "report",
                "--config",
                str(config),
                "--labelled",
                str(labelled("tango")),
                "--min-confidence",
                "0.5",
            ]
        )
        == 0
    )
    assert "52 photos: 52 right (100.0%)" in capsys.readouterr().out
    assert (
        main(["calibrate", "report", "--config", str(config), "--labelled", str(labelled("tango"))])
        == 0
    )
    assert " 0 unreadable" not in capsys.readouterr().out  # the config's min_confidence 0.99
    barcode = station_toml(tmp_path, source="0", recogniser="barcode")
    assert (
        main(
            ["calibrate", "report", "--config", str(barcode), "--labelled", str(labelled("tango"))]
        )
        == 2
    )
    assert "give --model MODEL, or --config FILE with [reader.camera] model" in (
        capsys.readouterr().err
    )


def test_calibrate_clip_takes_the_source_and_roi_from_the_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clip, truth = make_clip("anglo", shuffled(21, 6), TEST_SCENE)
    assert main(["calibrate", "clip", "--source", str(clip), "--roi", "90,20,300,320"]) == 0
    explicit = capsys.readouterr().out
    config = station_toml(tmp_path, source=str(clip), model="m.npz", roi=[90, 20, 300, 320])
    assert main(["calibrate", "clip", "--config", str(config)]) == 0
    assert capsys.readouterr().out == explicit
    assert f"{len(truth)} card passages" in explicit
    assert main(["calibrate", "clip", "--config", str(config), "--roi", ""]) == 0
    assert capsys.readouterr().out != explicit  # --roi "" (whole frame) wins
    assert main(["calibrate", "clip"]) == 2
    assert "give --source SRC, or --config FILE" in capsys.readouterr().err
    assert main(["calibrate", "clip", "--config", str(tmp_path / "none.toml")]) == 2
    assert f"cannot read the config {tmp_path / 'none.toml'}" in capsys.readouterr().err


@pytest.mark.slow
def test_calibrate_camera_takes_min_confidence_from_the_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = station_toml(tmp_path, source="0", model="var/deck.npz", min_confidence=0.7)
    out = tmp_path / "anglo.npz"
    assert (
        main(
            [
                "calibrate",
                "camera",
                "--config",
                str(config),
                "--reference",
                str(references("anglo")),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert "min_confidence 0.7" in capsys.readouterr().out
    assert RankSuitModel.load(out).min_confidence == 0.7


def test_calibrate_clip_keeps_its_frames_within_a_memory_budget() -> None:
    """A long or high-resolution clip is checked on its first frames, and says so."""
    from calibration.clipcheck import check

    clip, _ = make_clip("anglo", shuffled(21, 2), TEST_SCENE)
    whole = check(str(clip))
    frame_bytes = TEST_SCENE.width * TEST_SCENE.height * 3
    cut = check(str(clip), budget=frame_bytes * 10)
    assert cut.frames == 10 < whole.frames
    assert any("only the first 10 frames were checked" in note for note in cut.notes)
    assert not any("only the first" in note for note in whole.notes)


def test_calibrate_clip_measures_the_shake_and_the_rests(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """It says how much the picture shakes, the shortest rest, whether the settings
    cover them, and what to set when they do not."""
    from dataclasses import replace

    steady, _ = make_clip("anglo", shuffled(21, 6), TEST_SCENE)
    assert main(["calibrate", "clip", "--source", str(steady)]) == 0
    out = capsys.readouterr().out
    assert "shake: the picture moves by up to 0." in out  # no shake but the weave's noise
    assert "need 3: covered" in out and "suggested" not in out
    shaky = replace(TEST_SCENE, fps=25.0, rest_frames=3, shake=3.0, seed=80)
    clip, _ = make_clip("anglo", shuffled(22, 4), shaky)
    assert main(["calibrate", "clip", "--source", str(clip)]) == 0
    out = capsys.readouterr().out
    shake = float(out.split("moves by up to ")[1].split()[0])
    assert 2.5 <= shake <= 3.5
    assert "at 25 fps" in out and "NOT covered" in out
    assert "suggested: read_frames = 2" in out
