"""`station calibrate camera|report|clip`: set up and check the camera reader.

With `--config FILE` the station's `[reader.camera]` settings are the defaults of the
options not given: `min_confidence` for `camera`, `model` and `min_confidence` for
`report`, `source` and `roi` for `clip`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from station.commands.common import add_config_option
from station.commands.options import EXIT_USAGE, fraction


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "calibrate",
        help="calibrate the camera reader",
        description="Build the rank-suit model from reference photos, measure "
        "it on labelled photos, check the ROI and thresholds on a "
        "clip.",
    )
    jobs = p.add_subparsers(dest="job", required=True, metavar="JOB")
    cam = jobs.add_parser(
        "camera",
        help="build a model from one photo of each card",
        description="One photo per card of the table's deck, named by card "
        "code (AS.png, TD.png, ...).",
    )
    cam.add_argument(
        "--reference",
        required=True,
        metavar="DIR",
        help="a folder with one photo of each card of the deck, named by card code "
        "(AS.png, TD.png, ...); required",
    )
    cam.add_argument(
        "--out", required=True, metavar="MODEL", help="the model file to write (.npz); required"
    )
    cam.add_argument(
        "--min-confidence",
        type=fraction,
        default=None,
        metavar="0-1",
        help="the model's threshold: below this match score (0 to 1) a card is unreadable "
        "(default: [reader.camera] min_confidence, else 0.5)",
    )
    rep = jobs.add_parser(
        "report",
        help="accuracy and confusion on labelled photos",
        description="Recognise every labelled photo with the camera reader's settings and "
        "report its accuracy and which cards it confuses.",
    )
    rep.add_argument(
        "--model",
        default=None,
        metavar="MODEL",
        help="the rank-suit model file to measure (.npz) (default: [reader.camera] model)",
    )
    rep.add_argument(
        "--labelled",
        required=True,
        metavar="DIR",
        help="a folder of photos named by card code (AS.png, AS-2.png, ...); required",
    )
    rep.add_argument(
        "--min-confidence",
        type=fraction,
        default=None,
        metavar="0-1",
        help="measure with this threshold instead (a match score, 0 to 1) (default: "
        "[reader.camera] min_confidence, else the model's own)",
    )
    clip = jobs.add_parser(
        "clip",
        help="find or check ROI and thresholds on a short clip",
        description="Also measures the camera's shake and the shortest rest a card made, "
        "says whether rest_time, read_frames and rest_pixels cover them and suggests values.",
    )
    clip.add_argument(
        "--source",
        default=None,
        metavar="SRC",
        help="a video file, image pattern or device index (default: [reader.camera] source)",
    )
    clip.add_argument(
        "--roi",
        default=None,
        metavar="X,Y,W,H",
        help="check this region of the frame, in pixels: left, top, width, height "
        "(default: [reader.camera] roi, else the whole frame)",
    )
    clip.add_argument(
        "--snapshot",
        default=None,
        metavar="PNG",
        help="save what the camera sees: the first card at rest, its outline, "
        "the suggested ROI and the card straightened (default: no snapshot)",
    )
    clip.add_argument(
        "--model",
        default=None,
        metavar="MODEL",
        help="a rank-suit model file (.npz) to also read the snapshot's card with (default: none)",
    )
    for job in (cam, rep, clip):
        add_config_option(job)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from calibration.references import PhotoError
    from drivers.recognition.ranksuit import ModelError
    from drivers.recognition.source import SourceError
    from station.commands.scan import configured_camera

    try:
        configured = configured_camera(args.config)
        if configured is not None:  # the options not given on the command line
            camera = configured[0]
            if args.job in ("camera", "report") and args.min_confidence is None:
                args.min_confidence = camera.min_confidence
            if args.job == "report" and args.model is None:
                args.model = camera.model or None
            if args.job == "clip":
                args.source = args.source or camera.source
                args.roi = camera.roi if args.roi is None else args.roi
                args.passage = camera.passage  # whether the station's settings cover it
        if args.job == "camera":
            return _camera(args)
        if args.job == "report":
            return _report(args)
        return _clip(args)
    except (PhotoError, ModelError, SourceError, ValueError) as exc:
        print(f"station calibrate {args.job}: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _camera(args: argparse.Namespace) -> int:
    from calibration.references import reference_set
    from drivers.recognition.ranksuit import RankSuitModel

    photos = reference_set(args.reference)
    model = RankSuitModel.build(photos, reference=str(args.reference))
    model = model.with_threshold(args.min_confidence)
    self_check = [c for c in model.cards if model.read(photos[c]).card != c]
    try:
        model.save(args.out)
    except OSError as exc:
        raise ValueError(f"cannot write {args.out}: {exc.strerror}") from None
    print(
        f"{args.out}: {len(model.cards)} cards, straightened to "
        f"{model.card_size[0]}x{model.card_size[1]}, min_confidence {model.min_confidence:g}"
    )
    if self_check:
        print(
            f"warning: the model does not read its own photo of {' '.join(self_check)}: "
            "retake those photos (the whole card, sharp, evenly lit)",
            file=sys.stderr,
        )
        return 1
    return 0


def _report(args: argparse.Namespace) -> int:
    from calibration.report import evaluate
    from drivers.recognition.ranksuit import RankSuitModel
    from station.commands.scan import missing

    if args.model is None:
        raise ValueError(missing("--model MODEL", "model"))
    model = RankSuitModel.load(args.model).with_threshold(args.min_confidence)
    report = evaluate(model, args.labelled)
    print("\n".join(report.lines()))
    return 1 if report.wrong else 0


def _clip(args: argparse.Namespace) -> int:
    from calibration.clipcheck import check
    from drivers.recognition.source import parse_roi
    from station.commands.scan import missing

    if not args.source:
        raise ValueError(missing("--source SRC", "source"))
    result = check(args.source, parse_roi(args.roi, "--roi"), getattr(args, "passage", None))
    print("\n".join(result.lines()))
    if args.snapshot:
        import cv2

        from calibration.clipcheck import snapshot
        from drivers.recognition.ranksuit import RankSuitModel

        model = RankSuitModel.load(args.model) if args.model else None
        if not cv2.imwrite(args.snapshot, snapshot(result, model)):
            raise ValueError(f"cannot write the snapshot {args.snapshot} (use a .png name)")
        print(f"snapshot: {args.snapshot}")
    return 0
